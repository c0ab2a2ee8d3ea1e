//! Running the stop gates for a stop. A refusal may lean on stored results (they only speed
//! up a "no"); a completion never does: before a loop may end, every gate whose verdict came
//! from `.ralph/` runs again with nothing from `.ralph/` trusted (no stored result, no
//! remembered file stamp, no remembered tool answer), so a forged cache entry, a restored
//! mtime or a deleted `.ralph/` cannot turn a failure into a pass.

use ralph_base::env::Environment;
use ralph_config::Phase;
use ralph_plan::project::Project;
use ralph_runner::runner::{GateResult, Limits, Reuse};
use std::time::Instant;

pub fn stop_gates(
    project: &mut Project,
    env: &Environment,
    deadline: Instant,
    only: &[String],
    reuse: Reuse,
) -> Result<Vec<GateResult>, ralph_plan::files::FilesError> {
    gates(project, env, deadline, (Phase::Stop, only), reuse)
}

/// The gates of `phase` (only those named, when any are) on every project file.
pub fn gates(
    project: &mut Project,
    env: &Environment,
    deadline: Instant,
    (phase, only): (Phase, &[String]),
    reuse: Reuse,
) -> Result<Vec<GateResult>, ralph_plan::files::FilesError> {
    let listing = project.listing()?.clone();
    let all = &listing.files;
    let plan = project.plan_with_unopenable(all, all, &listing.unopenable, phase, only);
    let config = &project.config;
    let limits = Limits {
        jobs: config.settings.jobs,
        deadline: Some(deadline),
        cargo_target: Some(ralph_base::state::cargo_target(env, project.root())),
        private_tmp: true,
        untracked: None,
        observe: false,
        checkout_of: None,
    };
    Ok(ralph_runner::results::run_recorded(
        config,
        &plan,
        &limits,
        env,
        reuse,
        phase,
        &|_| {},
    ))
}

/// True when any of the gate's runs was answered from `.ralph/` rather than run now.
pub fn leaned_on_state(r: &GateResult) -> bool {
    r.cached || r.run_details.iter().any(|d| d.cached)
}

/// Runs again, trusting nothing, every gate in `results` whose verdict came from `.ralph/`,
/// and puts the fresh results in their place. Returns what a fresh run contradicted: each is
/// a stored "pass" that is not true, so the journal records it as tampering (or a gate whose
/// result is not a function of its inputs).
pub fn verify_fresh(
    project: &mut Project,
    env: &Environment,
    deadline: Instant,
    results: &mut [GateResult],
) -> Result<Vec<String>, ralph_plan::files::FilesError> {
    let stale: Vec<String> = results
        .iter()
        .filter(|r| leaned_on_state(r))
        .map(|r| r.name.clone())
        .collect();
    if stale.is_empty() {
        return Ok(Vec::new());
    }
    let fresh = stop_gates(project, env, deadline, &stale, Reuse::Nothing)?;
    let mut contradicted = Vec::new();
    for f in fresh {
        if let Some(old) = results.iter_mut().find(|r| r.name == f.name) {
            if f.counts_as_failure(env.strict()) && !old.counts_as_failure(env.strict()) {
                contradicted.push(format!(
                    "gate `{}`: the stored result said {}, a fresh run says {}: .ralph/cache was edited, or the gate's result is not decided by its inputs",
                    f.name,
                    old.status.label(),
                    f.status.label()
                ));
            }
            *old = f;
        }
    }
    Ok(contradicted)
}

/// The stop gates for a stop: from the cache, and when they would let the loop end
/// (`may_end`: the promise is made and nothing holds the loop), run again trusting nothing.
/// What a fresh run contradicted goes to `notes`.
pub fn for_stop(
    project: &mut Project,
    env: &Environment,
    deadline: Instant,
    may_end: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<GateResult>, ralph_plan::files::FilesError> {
    let mut results = stop_gates(project, env, deadline, &[], Reuse::Everything)?;
    let green = !results.iter().any(|r| r.counts_as_failure(env.strict()))
        && crate::hook::decide::unverified(&results, env.strict()).is_empty();
    if may_end && green {
        notes.extend(verify_fresh(project, env, deadline, &mut results)?);
    }
    Ok(results)
}
