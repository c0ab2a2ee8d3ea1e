//! `--prd`: whether an iteration's story passes: nothing holds the run (its gates or
//! surface weakened), every stop gate passes on a run that trusts nothing stored (but for
//! those that already failed when the run began, until the last story), the story's own
//! gates pass, and its `verify` command exits 0. Only then does ralph-gate set its
//! `passes`.

use super::error::RunError;
use super::{child, cli::Invocation, prd::Story};
use ralph_base::env::Environment;
use ralph_config::Phase;
use ralph_plan::project::Project;
use ralph_runner::runner::{GateResult, Reuse};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a story's `verify` command may run.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(600);

/// Where a story is checked: the worktree, the config, the environment.
pub struct Place<'a> {
    pub root: &'a Path,
    pub config: Option<&'a Path>,
    pub env: &'a Environment,
}

/// The stop gates that failed when the run began. In the usual test-first shape the later
/// stories' tests fail from the start: such a gate does not hold a story that does not name
/// it, but it holds the last one, so the run is done only when every stop gate passes.
#[derive(Debug, Clone, Default)]
pub struct Before {
    failing: std::collections::BTreeSet<String>,
}

impl Before {
    /// Runs the stop gates on the tree as the run begins (stored results are as good as
    /// fresh ones here: they only excuse, and the last story runs everything afresh).
    pub fn of(d: &Place<'_>) -> Result<Before, RunError> {
        let mut project = Project::open(d.root, d.config)?;
        let deadline = Instant::now() + project.config.settings.hooks.stop_budget;
        let only = (Phase::Stop, &[][..]);
        let stop = crate::hook::stop::verify::gates(
            &mut project,
            d.env,
            deadline,
            only,
            Reuse::Everything,
        )?;
        let strict = d.env.strict();
        Ok(Before {
            failing: stop
                .iter()
                .filter(|r| r.counts_as_failure(strict))
                .map(|r| r.name.clone())
                .collect(),
        })
    }
}

/// Why the story does not pass (empty: it passes). `last`: no other story is open, so every
/// stop gate must pass, those that failed when the run began (`before`) too.
pub fn check(
    d: &Place<'_>,
    s: &Story,
    hold: Option<&str>,
    (before, last): (&Before, bool),
) -> Result<Vec<String>, RunError> {
    let mut failing: Vec<String> = hold.map(str::to_string).into_iter().collect();
    let mut project = Project::open(d.root, d.config)?;
    let deadline = Instant::now() + project.config.settings.hooks.stop_budget;
    let strict = d.env.strict();
    let unknown: Vec<&String> = s
        .gates
        .iter()
        .filter(|g| !project.config.gates.iter().any(|c| &c.name == *g))
        .collect();
    if !unknown.is_empty() {
        failing.push(format!(
            "the story names gates the config does not have: {}",
            unknown
                .iter()
                .map(|g| g.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let run = |project: &mut Project, phase: Phase, only: &[String]| {
        crate::hook::stop::verify::gates(project, d.env, deadline, (phase, only), Reuse::Nothing)
    };
    let stop = run(&mut project, Phase::Stop, &[])?;
    let excused =
        |r: &GateResult| !last && before.failing.contains(&r.name) && !s.gates.contains(&r.name);
    let held: Vec<GateResult> = stop.into_iter().filter(|r| !excused(r)).collect();
    failing.extend(failed("stop gate", &held, strict));
    if !s.gates.is_empty() {
        let own = run(&mut project, Phase::Check, &s.gates)?;
        failing.extend(failed("story gate", &own, strict));
    }
    if let Some(cmd) = &s.verify {
        failing.extend(verify(d, cmd)?);
    }
    Ok(failing)
}

fn failed(what: &str, results: &[GateResult], strict: bool) -> Vec<String> {
    let unverified = crate::hook::decide::unverified(results, strict);
    results
        .iter()
        .filter(|r| r.counts_as_failure(strict))
        .map(|r| format!("{what} `{}` fails", r.name))
        .chain(
            unverified
                .iter()
                .map(|r| format!("{what} `{}` verified nothing", r.name)),
        )
        .collect()
}

/// Runs the story's `verify` command with `sh -c` in the project.
fn verify(d: &Place<'_>, cmd: &str) -> Result<Vec<String>, RunError> {
    let work = tempfile::tempdir()?;
    let inv = Invocation {
        program: "sh".into(),
        args: vec!["-c".into(), cmd.into()],
    };
    let ended = child::run(&inv, d.root, &[], VERIFY_TIMEOUT, work.path())
        .map_err(|e| RunError::Refused(format!("the story's verify command: {e}")))?;
    Ok(match (ended.timed_out, ended.code) {
        (false, Some(0)) => Vec::new(),
        (true, _) => vec![format!(
            "`{cmd}` ran past {}",
            ralph_base::text::duration(VERIFY_TIMEOUT)
        )],
        (false, code) => vec![format!(
            "`{cmd}` failed (exit {}): {}",
            code.map_or("by a signal".to_string(), |c| c.to_string()),
            ralph_base::text::shorten(format!("{}{}", ended.stdout, ended.stderr).trim(), 400)
        )],
    })
}
