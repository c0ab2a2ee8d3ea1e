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
    if !asked(config, env.strict(), results) {
        return;
    }
    let then = "when the loop started";
    match at_start(project, env, deadline, start) {
        Ok(((failures, unstarted), changed)) => {
            let strict = env.strict();
            notes.extend(baseline::excuse(
                config,
                strict,
                (&failures, &changed, then),
                results,
            ));
            let unstarted = (&unstarted, changed.as_slice(), then);
            notes.extend(baseline::excuse_unstarted(strict, unstarted, results));
        }
        Err(why) => notes.push(format!("baseline not known: {why}")),
    }
}

/// Whether the start tree's runs are worth taking: a baseline gate fails, or a stop gate
/// checked only part of the project.
pub fn asked(config: &ralph_config::Config, strict: bool, results: &[GateResult]) -> bool {
    let partly = |r: &GateResult| !strict && !r.optional && baseline::unstarted(r).is_some();
    baseline::asked(config, strict, results) || results.iter().any(partly)
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
) -> Result<((StartFailures, differential::Tests), Vec<String>), Unknown> {
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
        Some((store, key)) => super::start_tests::at_stop(store, key, deadline, take)
            .map(|kept| (kept.failures, kept.unstarted)),
        None => take().map(|runs| (runs.failures, runs.unstarted)),
    }?;
    // An install removed or changed since is a change there: a run that could not start at
    // the end may have started at the start (the start's runs may be taken only now).
    let changed = start.prepared.changed_with_ignored(start.tree)?;
    Ok((failures, changed))
}
