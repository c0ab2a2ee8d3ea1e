//! `ralph-gate check`: run the gates over a selection of files and report. Its settings are
//! settled once ([`Settings::resolve`]); the run hands the runner's events to a
//! [`Reporter`], which writes the chosen format.

use super::known_gates;
use crate::commands::AppError;
use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_base::text::plural;
use ralph_config::{Config, Phase};
use ralph_plan::files::{self, Selection};
use ralph_plan::project::Project;
use ralph_runner::cache::readers;
use ralph_runner::report::reporter::{Reporter, Style};
use ralph_runner::report::{github, Format, RunInfo, Summary};
use ralph_runner::runner::{self, Reuse};
use ralph_runner::staged::Hidden;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `check`'s options as given on the command line (built by `cli`).
#[derive(Debug, Clone)]
pub struct Options {
    pub paths: Vec<std::path::PathBuf>,
    pub staged: bool,
    pub changed: Option<String>,
    /// Compare the verification surface with this revision's.
    pub base: Option<String>,
    pub gates: Vec<String>,
    pub phase: Phase,
    pub jobs: Option<usize>,
    pub format: Option<Format>,
    pub quiet: bool,
    pub no_cache: bool,
    pub strict: bool,
}

/// Which of stdout and stderr are terminals.
pub struct Terminals {
    pub stdout: bool,
    pub stderr: bool,
}

/// Everything `check` decides before it runs, from the command line, the environment and the
/// config: one place for every default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub selection: Selection,
    pub phase: Phase,
    pub gates: Vec<String>,
    pub jobs: usize,
    pub format: Format,
    pub color: bool,
    pub quiet: bool,
    /// Live progress on stderr.
    pub progress: bool,
    /// A missing tool fails (`--strict`, CI, `RALPH_GATE_STRICT`).
    pub strict: bool,
    pub reuse: Reuse,
    /// Compare the verification surface with this revision.
    pub base: Option<String>,
    /// The base was not asked for but implied (`--staged`: HEAD): with no such commit yet
    /// (the first commit), there is nothing to compare with.
    pub base_implied: bool,
}

const IMPLIED_BASE: &str = "HEAD";

impl Settings {
    /// Pure: the settings of a `check` with `args` under `env` and `config`.
    pub fn resolve(args: &Options, env: &Environment, config: &Config, tty: &Terminals) -> Self {
        let selection = if !args.paths.is_empty() {
            Selection::Paths(args.paths.clone())
        } else if args.staged {
            Selection::Staged
        } else if let Some(rev) = &args.changed {
            Selection::Changed(rev.clone())
        } else {
            Selection::All
        };
        // Under GitHub Actions the report speaks its workflow commands unless asked otherwise.
        let format = args.format.unwrap_or(if env.github_actions {
            Format::Github
        } else {
            Format::Human
        });
        let human = format == Format::Human;
        Settings {
            selection,
            phase: args.phase,
            gates: args.gates.clone(),
            jobs: args.jobs.filter(|n| *n > 0).unwrap_or(config.settings.jobs),
            format,
            color: human && tty.stdout && !env.no_color,
            quiet: args.quiet,
            // Live progress only for a person: a terminal on stderr, the human format.
            progress: human && tty.stderr && !args.quiet && !env.github_actions,
            strict: args.strict || env.strict(),
            reuse: if args.no_cache {
                Reuse::Off
            } else {
                Reuse::Everything
            },
            // A commit is checked against the commit it follows: `--staged` (the pre-commit
            // hook) compares the index with HEAD unless told another base.
            base: args
                .base
                .clone()
                .or_else(|| args.staged.then(|| IMPLIED_BASE.to_string())),
            base_implied: args.base.is_none() && args.staged,
        }
    }
}

pub fn run(project: &mut Project, args: &Options, env: &Environment) -> Result<u8, AppError> {
    let tty = Terminals {
        stdout: std::io::stdout().is_terminal(),
        stderr: std::io::stderr().is_terminal(),
    };
    let settings = Settings::resolve(args, env, &project.config, &tty);
    check(project, &settings, env)
}

/// Runs `settings`' gates on `project` and reports; the exit code says whether all pass.
fn check(project: &mut Project, s: &Settings, env: &Environment) -> Result<u8, AppError> {
    let started = Instant::now();
    // With `--base`, `integrity` names the comparison: `--gate integrity` runs it alone.
    let asks_integrity = s.gates.is_empty() || s.gates.iter().any(|g| g == integrity::NAME);
    let named: Vec<String> = s
        .gates
        .iter()
        .filter(|g| s.base.is_none() || *g != integrity::NAME)
        .cloned()
        .collect();
    known_gates(&project.config, &named)?;
    let hidden = set_aside(project, &s.selection)?;
    // A commit holds no file git does not track: such a file is in no `{files}` of it (a
    // file `git rm --cached` left on disk), and a run that reads one fails, naming it.
    let untracked = (s.selection == Selection::Staged)
        .then(|| untracked(project.root()))
        .flatten();
    let mut universe = project.all_files()?;
    if let Some(out) = &untracked {
        universe.retain(|f| !out.contains(f));
    }
    let (files, plan) = planned(project, s, &universe)?;
    let against = if asks_integrity {
        base_comparison(project, s, &universe, env)?
    } else {
        None
    };
    let config = &project.config;
    let mut order: Vec<usize> = plan.gates.iter().map(|g| g.gate).collect();
    if against.is_some() {
        order.push(integrity::INDEX);
    }
    let preamble = preamble(project, files.len(), plan.gates.len(), s.phase, &hidden);
    let style = style(s, order, preamble, config, env);
    let active = plan.gates.iter().filter(|g| !g.jobs.is_empty()).count();
    let mut reporter = Reporter::start(style, active);
    let name = |gate: usize| config.gates[gate].name.clone();
    let limits = limits(s, untracked, against.is_some());
    let mut results =
        ralph_runner::results::run_recorded(config, &plan, &limits, env, s.reuse, s.phase, &|e| {
            reporter.event(&e, &name)
        });
    // Only a run of every gate on every file has results to compare a differential run with.
    let whole = s.selection == Selection::All && s.gates.is_empty();
    let against =
        against.map(|a| integrity::by_effect(a, (project, whole), env, s.phase, &mut results));
    if let Some(a) = &against {
        let r = integrity::result(a, s.selection == Selection::Staged);
        reporter.event(&runner::Event::Finished(&r), &name);
        results.push(r);
    }
    reporter.pause();
    if let Some(h) = hidden {
        for message in h.restore() {
            note(&message);
        }
    }
    let info = run_info(config, s.strict, started);
    reporter.finish(&results, &info)?;
    if let Some(path) = &env.github_step_summary {
        job_summary(path, &results, &info);
    }
    let said = checked_nothing(config, s, &results);
    for line in &said {
        note(line);
    }
    let nothing_fails = s.strict && !said.is_empty();
    Ok(if Summary::of(&results, s.strict).ok() && !nothing_fails {
        exit::SUCCESS
    } else {
        exit::GATE_FAILED
    })
}

/// The selected files and the plan for them. For a commit's or a change's files
/// (`--staged`, `--changed`) also: the files that plan the runs whose last observation read
/// one of the files changed or removed (a script that sources an edited library, a project
/// that type-checks an edited `.js` through `checkJs`, tests whose deleted conftest.py they
/// read), which no gate's glob names; and, run whole, the gates no observed run has told
/// about and the project gates a removed file was checked by.
fn planned(
    project: &mut Project,
    s: &Settings,
    universe: &[PathBuf],
) -> Result<(Vec<PathBuf>, ralph_plan::plan::Plan), AppError> {
    let (files, unopenable, whole) = match &s.selection {
        Selection::All => (
            universe.to_vec(),
            project.listing()?.unopenable.clone(),
            Vec::new(),
        ),
        other => {
            let selected = files::select_listing(project.root(), &project.cwd, other)?;
            let (asked, whole) = beyond_globs(project, (other, s), &selected.files, universe)?;
            let mut files = selected.files;
            files.extend(asked);
            files.sort();
            files.dedup();
            (files, selected.unopenable, whole)
        }
    };
    let mut plan = project.plan_with_unopenable(&files, universe, &unopenable, s.phase, &s.gates);
    if !whole.is_empty() {
        plan = plan.with_gates_of(project.plan(universe, universe, s.phase, &whole));
    }
    Ok((files, plan))
}

/// For a commit or a change: the files that plan the runs that read one of its files (those
/// `changed` and those it removes), and the gates (of those asked for) to run whole.
fn beyond_globs(
    project: &Project,
    (selection, s): (&Selection, &Settings),
    changed: &[PathBuf],
    universe: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<String>), AppError> {
    if !matches!(selection, Selection::Staged | Selection::Changed(_)) {
        return Ok((Vec::new(), Vec::new()));
    }
    let root = project.root();
    let gone = files::removed(root, selection)?;
    let beside = files::beside(root, selection);
    let touched: Vec<PathBuf> = changed
        .iter()
        .chain(&gone)
        .chain(&beside)
        .cloned()
        .collect();
    let head = |p: &Path| files::head(&root.join(p));
    let cfg = &project.config;
    let mut reach = readers::Reach::of(cfg, (root, s.phase), &touched, &head);
    // A project gate's run read the removed file (a module, a conftest.py): its folder's
    // run must be made again without it.
    reach.whole.extend(cfg.gates.iter().filter(|g| {
        g.runs_in(s.phase)
            && g.scope == ralph_config::Scope::Project
            && gone.iter().any(|p| g.matches_file(p, &|_| None))
    }));
    let asked = reach.files(cfg, universe, &head);
    let names = reach.whole_names(&s.gates);
    Ok((asked, names))
}

/// How the report looks: the settings' choices, the gates in `order`, after `preamble`.
fn style(
    s: &Settings,
    order: Vec<usize>,
    preamble: String,
    config: &Config,
    env: &Environment,
) -> Style {
    Style {
        format: s.format,
        color: s.color,
        quiet: s.quiet,
        progress: s.progress,
        order,
        preamble,
        strict: s.strict,
        output_limit: config.settings.output_limit,
        columns: env.columns,
    }
}

/// How `check` runs its gates; `base`: against a base (`--base`).
fn limits(
    s: &Settings,
    untracked: Option<std::sync::Arc<std::collections::BTreeSet<PathBuf>>>,
    base: bool,
) -> runner::Limits {
    runner::Limits {
        jobs: s.jobs,
        deadline: None,
        cargo_target: None,
        // The backstop's verdict leans on no tool cache a run before it filled.
        private_tmp: base,
        untracked,
        // What the tests read is compared with what they read at the base, stored or not.
        observe: base,
        checkout_of: None,
    }
}

/// `--base REV`: the verification surface compared with the base's, when one is asked and
/// (for a base implied by CI) the revision exists.
fn base_comparison(
    project: &Project,
    s: &Settings,
    universe: &[PathBuf],
    env: &Environment,
) -> Result<Option<ralph_surface::surface::base::Against>, AppError> {
    let Some(rev) = s
        .base
        .as_ref()
        .filter(|rev| !s.base_implied || ralph_base::git::is_commit(project.root(), rev))
    else {
        return Ok(None);
    };
    let against = ralph_surface::surface::base::against(
        &project.config,
        rev,
        s.phase,
        universe.to_vec(),
        env,
    )
    .map_err(|source| AppError::Base {
        rev: rev.clone(),
        source,
    })?;
    Ok(Some(integrity::compare(
        against,
        &project.config,
        s.phase,
        universe,
    )))
}

/// The files git does not track and does not ignore (`check --staged`: what a commit leaves
/// out), the project's by their path from the root and those beside a project below the top
/// of its repository as `../x`; `None` outside git.
fn untracked(
    root: &std::path::Path,
) -> Option<std::sync::Arc<std::collections::BTreeSet<std::path::PathBuf>>> {
    let mut found: std::collections::BTreeSet<PathBuf> =
        ralph_base::git::untracked(root).ok()?.into_iter().collect();
    if let (Some(beside), Some(top)) = (files::Beside::of(root), ralph_base::git::toplevel(root)) {
        let all = ralph_base::git::untracked(&top).unwrap_or_default();
        found.extend(all.iter().filter_map(|p| beside.rel(&top.join(p))));
    }
    Some(std::sync::Arc::new(found))
}

mod integrity;

/// For `--staged`: a killed earlier run's hidden work is put back, then this run's unstaged
/// changes are set aside so the gates see the index.
fn set_aside(project: &Project, selection: &Selection) -> Result<Option<Hidden>, AppError> {
    for message in ralph_runner::staged::recover(project.root())? {
        note(&message);
    }
    if *selection == Selection::Staged && ralph_base::git::in_work_tree(project.root()) {
        Ok(ralph_runner::staged::hide_unstaged(project.root())?)
    } else {
        Ok(None)
    }
}

/// Which config and files are in play.
fn preamble(
    project: &Project,
    files: usize,
    gates: usize,
    phase: Phase,
    hidden: &Option<Hidden>,
) -> String {
    format!(
        "ralph-gate: {}\nralph-gate: {} with {} for phase {}{}\n",
        project.describe_config(),
        plural(files, "file", "files"),
        plural(gates, "gate", "gates"),
        phase.as_str(),
        match hidden {
            Some(h) => format!(
                " (staged content: the unstaged changes of {} are set aside until the run ends)",
                plural(h.count(), "file", "files")
            ),
            None => String::new(),
        }
    )
}

fn run_info(config: &Config, strict: bool, started: Instant) -> RunInfo {
    RunInfo {
        ci: strict,
        output_limit: config.settings.output_limit,
        duration: started.elapsed(),
        config: config.file.as_ref().map(|p| p.display().to_string()),
        presets: config
            .presets
            .iter()
            .map(|p| (p.name.to_string(), p.detected_by.clone()))
            .collect(),
    }
}

/// Appends the Markdown job summary. One that cannot be written must not change the
/// verdict: it is said and the run goes on.
fn job_summary(path: &std::path::Path, results: &[runner::GateResult], info: &RunInfo) {
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(github::summary(results, info).as_bytes()));
    if let Err(e) = appended {
        note(&format!(
            "cannot append the job summary to {}: {e}",
            path.display()
        ));
    }
}

/// What checked nothing, said aloud (a failure under `--strict`/CI, where a green run must
/// mean something was checked): no gate at all for the phase, or, in a run of the whole
/// project, a gate of the config file whose globs match none of its files (a typo in a
/// glob checks nothing forever). Presets' gates are picked by the files there are.
fn checked_nothing(config: &Config, s: &Settings, results: &[runner::GateResult]) -> Vec<String> {
    if results.is_empty() {
        return vec![format!(
            "no gate runs in phase {}: nothing was checked (add gates to ralph.toml, or remove it for the presets){}",
            s.phase.as_str(),
            if s.strict { "; a failure in strict mode" } else { "" }
        )];
    }
    if s.selection != Selection::All || !s.gates.is_empty() {
        return Vec::new();
    }
    results
        .iter()
        .filter(|r| r.status == runner::GateStatus::NoFiles && r.gate < config.gates.len())
        .filter(|r| {
            matches!(
                config.gates[r.gate].origin,
                ralph_config::Origin::File { .. }
            )
        })
        .map(|r| {
            let g = &config.gates[r.gate];
            format!(
                "gate `{}` ({}) matches no file of the project (globs {}): it checks nothing{}",
                g.name,
                g.origin,
                g.globs.join(" "),
                if s.strict {
                    "; a failure in strict mode"
                } else {
                    ""
                }
            )
        })
        .collect()
}

/// A line for the person at the terminal, outside the report (stdout may be JSON).
#[allow(clippy::print_stderr)]
fn note(message: &str) {
    eprintln!("ralph-gate: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settle(argv: &[&str], env: &Environment, tty: (bool, bool)) -> Settings {
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        let crate::cli::Command::Check(args) = cli.command else {
            panic!("not a check")
        };
        let args = Options::from(args);
        let file =
            ralph_config::parse(std::path::Path::new("/p/ralph.toml"), String::new()).unwrap();
        let config = ralph_config::resolve("/p".into(), Some(file), &mut Vec::new).unwrap();
        Settings::resolve(
            &args,
            env,
            &config,
            &Terminals {
                stdout: tty.0,
                stderr: tty.1,
            },
        )
    }

    #[test]
    fn defaults_follow_the_terminal_and_the_environment() {
        let plain = Environment::default();
        let s = settle(&["ralph-gate", "check"], &plain, (true, true));
        assert_eq!(
            (s.format, s.color, s.progress, s.strict),
            (Format::Human, true, true, false)
        );
        assert_eq!(s.selection, Selection::All);
        let piped = settle(&["ralph-gate", "check"], &plain, (false, false));
        assert_eq!((piped.color, piped.progress), (false, false));
        let gha = Environment {
            github_actions: true,
            ci: true,
            ..Environment::default()
        };
        let s = settle(&["ralph-gate", "check"], &gha, (true, true));
        assert_eq!(
            (s.format, s.color, s.progress, s.strict),
            (Format::Github, false, false, true)
        );
        let s = settle(
            &["ralph-gate", "check", "--format", "json"],
            &gha,
            (true, true),
        );
        assert_eq!(s.format, Format::Json, "an explicit format wins");
        let no_color = Environment {
            no_color: true,
            ..Environment::default()
        };
        assert!(!settle(&["ralph-gate", "check"], &no_color, (true, true)).color);
    }

    #[test]
    fn selection_jobs_and_reuse_are_settled_once() {
        let env = Environment::default();
        let s = settle(
            &["ralph-gate", "check", "--changed", "-j", "3", "--no-cache"],
            &env,
            (false, false),
        );
        assert_eq!(s.selection, Selection::Changed("HEAD".into()));
        assert_eq!((s.jobs, s.reuse), (3, Reuse::Off));
        let s = settle(
            &["ralph-gate", "check", "-j", "0", "--staged", "-q"],
            &env,
            (true, true),
        );
        assert_eq!(s.selection, Selection::Staged);
        assert_eq!(
            (s.base.as_deref(), s.base_implied),
            (Some("HEAD"), true),
            "a commit is compared with the one it follows"
        );
        assert!(s.jobs > 0, "-j 0 means the config's jobs");
        assert!(!s.progress, "quiet draws no progress");
    }
}
