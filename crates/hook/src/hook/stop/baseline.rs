//! At every stop of a loop: a gate the config lists in `baseline` that fails only as it
//! failed on the loop's start tree, in files the loop did not change, does not hold the
//! loop (ralph_surface::baseline decides). Its result reads as a pass that says so.

use ralph_base::env::Environment;
use ralph_plan::project::Project;
use ralph_runner::runner::GateResult;
use ralph_surface::baseline::{self, StartFailures};
use ralph_surface::differential::{self, Prepared};
use ralph_surface::pin::store::Store;
use std::time::Instant;

/// Where the start tree's runs are kept, and what to compare with.
pub struct Start<'a> {
    pub tree: &'a str,
    pub kept: Option<&'a (Store, String)>,
    pub prepared: &'a Prepared,
}

/// Turns each failing baseline gate of `results` that fails as at the start into a pass
/// saying so; notes why one that does not still fails.
pub fn excuse_old_failures(
    project: &Project,
    env: &Environment,
    deadline: Instant,
    start: &Start<'_>,
    results: &mut [GateResult],
    notes: &mut Vec<String>,
) {
    let config = &project.config;
    if !baseline::asked(config, env.strict(), results) {
        return;
    }
    match at_start(project, env, deadline, start) {
        Ok((failures, changed)) => notes.extend(baseline::excuse(
            config,
            env.strict(),
            (&failures, &changed, "when the loop started"),
            results,
        )),
        Err(why) => notes.push(format!("baseline not known: {why}")),
    }
}

/// Why the start tree's failures or the files changed since are not known.
#[derive(Debug, thiserror::Error)]
enum Unknown {
    #[error(transparent)]
    Run(#[from] differential::RunError),
    #[error(transparent)]
    Git(#[from] ralph_base::git::GitError),
}

/// How the gates failed on the start tree (kept by `loop start`'s job, else taken now) and
/// the files changed since.
fn at_start(
    project: &Project,
    env: &Environment,
    deadline: Instant,
    start: &Start<'_>,
) -> Result<(StartFailures, Vec<String>), Unknown> {
    let take = || {
        differential::start_runs(
            project,
            env,
            (ralph_config::Phase::Stop, deadline),
            start.prepared,
            start.tree,
        )
    };
    let failures = match start.kept {
        Some((store, key)) => super::start_tests::failures_at_stop(store, key, deadline, take),
        None => take().map(|runs| runs.failures),
    }?;
    let changed = start.prepared.changed_files(start.tree)?;
    Ok((failures, changed))
}
