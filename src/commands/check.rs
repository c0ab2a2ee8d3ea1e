//! `ralph-gate check`: run the gates over a selection of files and report.

use super::known_gates;
use crate::app::AppError;
use crate::cli::CheckArgs;
use crate::env::Environment;
use crate::exit;
use crate::files::{self, Selection};
use crate::plan::{self, Filter};
use crate::project::Project;
use crate::report::{human::Human, json, junit, Format, RunInfo, Summary};
use std::io::{IsTerminal, Write};
use std::time::Instant;

pub fn run(project: &mut Project, args: &CheckArgs, env: &Environment) -> Result<u8, AppError> {
    let started = Instant::now();
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
    let files = match selection {
        Selection::All => project.all_files()?,
        ref other => files::select(project.root(), &project.cwd, other)?,
    };
    let config = &project.config;
    let root = config.root.clone();
    let plan = plan::plan(
        config,
        &files,
        &Filter {
            phase: args.phase,
            only: &args.gates,
        },
        &|rel| root.join(rel).is_file(),
        plan::ARG_BUDGET,
    );
    let jobs = match args.jobs {
        Some(n) if n > 0 => n,
        _ => config.settings.jobs,
    };

    let stdout = std::io::stdout();
    let color = args.format == Format::Human && stdout.is_terminal() && !env.no_color;
    let order: Vec<usize> = plan.gates.iter().map(|g| g.gate).collect();
    let human = (args.format == Format::Human).then(|| {
        Human::new(
            std::io::stdout(),
            order,
            color,
            args.quiet,
            env.ci,
            config.settings.output_limit,
        )
    });
    let results = {
        if let Some(h) = &human {
            if !args.quiet {
                let mut out = std::io::stdout().lock();
                writeln!(out, "ralph-gate: {}", project.describe_config())?;
                writeln!(
                    out,
                    "ralph-gate: {} with {} for phase {}",
                    crate::report::text::plural(files.len(), "file", "files"),
                    crate::report::text::plural(plan.gates.len(), "gate", "gates"),
                    args.phase.as_str()
                )?;
            }
            crate::runner::run(config, &plan, jobs, env, &|r| h.gate_finished(r))
        } else {
            crate::runner::run(config, &plan, jobs, env, &|_| {})
        }
    };

    let info = RunInfo {
        ci: env.ci,
        output_limit: config.settings.output_limit,
        duration: started.elapsed(),
        config: config.file.as_ref().map(|p| p.display().to_string()),
        presets: config
            .presets
            .iter()
            .map(|p| (p.name.to_string(), p.detected_by.clone()))
            .collect(),
    };
    match (args.format, human) {
        (Format::Human, Some(h)) => {
            h.finish(&results, &info);
        }
        (Format::Json, _) => std::io::stdout()
            .lock()
            .write_all(json::render(&results, &info).as_bytes())?,
        (Format::Junit, _) => std::io::stdout()
            .lock()
            .write_all(junit::render(&results, &info).as_bytes())?,
        (Format::Human, None) => unreachable!("human reporter exists for human format"),
    }
    Ok(if Summary::of(&results, env.ci).ok() {
        exit::SUCCESS
    } else {
        exit::GATE_FAILED
    })
}
