//! One module per subcommand: glue between the project, the planner, the runner and a reporter.

pub mod cache;
pub mod check;
pub mod dash;
pub mod docs;
pub mod doctor;
pub mod error;
pub mod gates;
pub mod hook;
pub mod init;
pub mod loops;
pub mod person;
pub mod start_tests;
pub mod status;

pub use error::AppError;
use ralph_config::Config;

/// Rejects `--gate` names the config does not define, listing the ones it does.
fn known_gates(config: &Config, wanted: &[String]) -> Result<(), AppError> {
    for name in wanted {
        if !config.gates.iter().any(|g| &g.name == name) {
            let known: Vec<&str> = config.gates.iter().map(|g| g.name.as_str()).collect();
            return Err(AppError::Usage(format!(
                "unknown gate `{name}`; the gates are: {}",
                if known.is_empty() {
                    "(none)".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// A gate's runs as planned on a project: one command as an example (one whose tool is
/// there, when any is) and its tool, and the runs that cannot start.
pub struct FirstRun {
    pub gate: String,
    pub runs: usize,
    pub command: String,
    /// The tool as found (path, version).
    pub tool: Option<String>,
    /// How many runs cannot start, and the first one's missing tool and what to do about
    /// it: a driver's note ("... not installed: run the install in examples/app"), or the
    /// gate's `install`.
    pub missing: Option<Missing>,
}

pub struct Missing {
    pub runs: usize,
    pub tool: String,
    pub why: Option<String>,
    pub install: Option<String>,
}

/// What each gate of `phase` would run on `project`, without running anything.
pub fn first_runs(
    project: &mut ralph_plan::project::Project,
    env: &ralph_base::env::Environment,
    phase: ralph_config::Phase,
) -> Vec<FirstRun> {
    let Ok(all) = project.all_files() else {
        return Vec::new();
    };
    let plan = project.plan(&all, &all, phase, &[]);
    let config = &project.config;
    ralph_runner::runner::with_context(config, env, ralph_runner::runner::Reuse::Everything, |cx| {
        plan.gates
            .iter()
            .filter(|pg| !pg.jobs.is_empty())
            .map(|pg| {
                let gate = &config.gates[pg.gate];
                let invs: Vec<_> = pg
                    .jobs
                    .iter()
                    .map(|job| (job, ralph_runner::runner::Invocation::new(cx, gate, job)))
                    .collect();
                let shown = invs
                    .iter()
                    .find(|(_, i)| i.missing.is_none())
                    .unwrap_or(&invs[0]);
                let unstartable: Vec<_> =
                    invs.iter().filter(|(_, i)| i.missing.is_some()).collect();
                let missing = unstartable.first().map(|(job, inv)| Missing {
                    runs: unstartable.len(),
                    tool: inv.missing.clone().unwrap_or_default(),
                    why: job.missing_note.clone(),
                    install: job
                        .missing_note
                        .is_none()
                        .then(|| gate.install.clone())
                        .flatten(),
                });
                FirstRun {
                    gate: gate.name.clone(),
                    runs: pg.jobs.len(),
                    command: shown.1.display.clone(),
                    tool: shown.1.shown_tools.first().map(ToString::to_string),
                    missing,
                }
            })
            .collect()
    })
}

/// "`tsc` is NOT installed (install: ...)" for a gate whose every run misses it, or "1 of
/// 2 runs cannot start: <the driver's note>".
pub fn cannot_start(m: &Missing, runs: usize) -> String {
    let what = match &m.why {
        Some(why) => why.clone(),
        None => format!(
            "`{}` is NOT installed{}",
            m.tool,
            m.install
                .as_ref()
                .map(|i| format!(" (install: {i})"))
                .unwrap_or_default()
        ),
    };
    match m.runs == runs {
        true => what,
        false => format!("{} of {runs} runs cannot start: {what}", m.runs),
    }
}
