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

/// A gate's first run as planned on a project: the command and its tool.
pub struct FirstRun {
    pub gate: String,
    pub runs: usize,
    pub command: String,
    /// The tool as found (path, version), or the one that is not installed.
    pub tool: Option<String>,
    pub missing: Option<String>,
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
                let inv = ralph_runner::runner::Invocation::new(cx, gate, &pg.jobs[0]);
                FirstRun {
                    gate: gate.name.clone(),
                    runs: pg.jobs.len(),
                    command: inv.display.clone(),
                    tool: inv.shown_tools.first().map(ToString::to_string),
                    missing: inv.missing.clone(),
                    install: gate.install.clone(),
                }
            })
            .collect()
    })
}
