//! `ralph-gate check`: run the gates over a selection of files and report.

use super::known_gates;
use crate::cli::CheckArgs;
use crate::commands::AppError;
use crate::env::Environment;
use crate::exit;
use crate::files::{self, Selection};
use crate::project::Project;
use crate::report::{
    github, human::Human, json, junit, progress::Progress, Format, RunInfo, Summary,
};
use crate::runner;
use crate::text::plural;
use std::io::{IsTerminal, Write};
use std::time::Instant;

pub fn run(project: &mut Project, args: &CheckArgs, env: &Environment) -> Result<u8, AppError> {
    let started = Instant::now();
    let strict = args.strict || env.strict();
    known_gates(&project.config, &args.gates)?;
    let selection = if !args.paths.is_empty() {
        Selection::Paths(args.paths.clone())
    } else if args.staged {
        Selection::Staged
    } else if let Some(rev) = &args.changed {
        Selection::Changed(rev.clone())
    } else {
        Selection::All
    };
    // A `check --staged` that was killed left unstaged work hidden: put it back first.
    for message in crate::staged::recover(project.root())? {
        note(&message);
    }
    let hidden = if selection == Selection::Staged && files::in_git(project.root()) {
        crate::staged::hide_unstaged(project.root())?
    } else {
        None
    };
    let universe = project.all_files()?;
    let files = match selection {
        Selection::All => universe.clone(),
        ref other => files::select(project.root(), &project.cwd, other)?,
    };
    let plan = project.plan(&files, &universe, args.phase, &args.gates);
    let config = &project.config;
    let jobs = match args.jobs {
        Some(n) if n > 0 => n,
        _ => config.settings.jobs,
    };

    let stdout = std::io::stdout();
    // Under GitHub Actions the report speaks its workflow commands unless asked otherwise.
    let format = args.format.unwrap_or(if env.github_actions {
        Format::Github
    } else {
        Format::Human
    });
    let color = format == Format::Human && stdout.is_terminal() && !env.no_color;
    let order: Vec<usize> = plan.gates.iter().map(|g| g.gate).collect();
    let human = (format == Format::Human).then(|| {
        Human::new(
            std::io::stdout(),
            order.clone(),
            color,
            args.quiet,
            strict,
            config.settings.output_limit,
        )
    });
    let preamble = format!(
        "ralph-gate: {}\nralph-gate: {} with {} for phase {}{}\n",
        project.describe_config(),
        plural(files.len(), "file", "files"),
        plural(plan.gates.len(), "gate", "gates"),
        args.phase.as_str(),
        match &hidden {
            Some(h) => format!(
                " (staged content: {} with unstaged changes are set aside until the run ends)",
                plural(h.count(), "file", "files")
            ),
            None => String::new(),
        }
    );
    if let Some(h) = &human {
        if !args.quiet {
            h.preamble(&preamble);
        }
    }
    // Live progress only for a person: a terminal on stderr, the human format, not quiet.
    let progress = (format == Format::Human
        && std::io::stderr().is_terminal()
        && !args.quiet
        && !env.github_actions)
        .then(|| Progress::start(plan.gates.iter().filter(|g| !g.jobs.is_empty()).count()));
    let on_event = |e: runner::Event<'_>| match e {
        runner::Event::Started(gate) => {
            if let Some(p) = &progress {
                p.started(&config.gates[gate].name);
            }
        }
        runner::Event::Finished(r) => {
            if let Some(p) = &progress {
                if r.runs > 0 {
                    p.finished(&r.name);
                }
            }
            if let Some(h) = &human {
                match &progress {
                    Some(p) => p.quiet_while(|| h.gate_finished(r)),
                    None => h.gate_finished(r),
                }
            }
        }
    };
    let limits = runner::Limits {
        jobs,
        deadline: None,
    };
    let results = crate::results::run_recorded(
        config,
        &plan,
        &limits,
        env,
        if args.no_cache {
            runner::Reuse::Nothing
        } else {
            runner::Reuse::Everything
        },
        args.phase,
        &on_event,
    );
    if let Some(p) = progress {
        p.finish();
    }
    if let Some(h) = hidden {
        for message in h.restore() {
            note(&message);
        }
    }
    let info = RunInfo {
        ci: strict,
        output_limit: config.settings.output_limit,
        duration: started.elapsed(),
        config: config.file.as_ref().map(|p| p.display().to_string()),
        presets: config
            .presets
            .iter()
            .map(|p| (p.name.to_string(), p.detected_by.clone()))
            .collect(),
    };
    match human {
        Some(h) => {
            h.finish(&results, &info);
        }
        None => {
            let text = match format {
                Format::Junit => junit::render(&results, &info),
                Format::Github => {
                    let human = Human::new(
                        Vec::new(),
                        order,
                        false,
                        args.quiet,
                        strict,
                        info.output_limit,
                    );
                    human.preamble(&preamble);
                    for r in &results {
                        human.gate_finished(r);
                    }
                    let text = String::from_utf8_lossy(&human.finish(&results, &info)).into_owned();
                    github::render(&results, &info, &text)
                }
                _ => json::render(&results, &info),
            };
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
    }
    if let Some(path) = &env.github_step_summary {
        // A summary that cannot be written must not change the verdict: say so and go on.
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(github::summary(&results, &info).as_bytes()));
        if let Err(e) = appended {
            note(&format!(
                "cannot append the job summary to {}: {e}",
                path.display()
            ));
        }
    }
    Ok(if Summary::of(&results, strict).ok() {
        exit::SUCCESS
    } else {
        exit::GATE_FAILED
    })
}

/// A line for the person at the terminal, outside the report (stdout may be JSON).
#[allow(clippy::print_stderr)]
fn note(message: &str) {
    eprintln!("ralph-gate: {message}");
}
