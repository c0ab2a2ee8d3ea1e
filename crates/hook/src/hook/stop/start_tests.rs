//! The tests the stop gates run on a loop's start tree: what "the tests that ran at the
//! start" are at its end, and how the gates that failed there failed (a baseline's). Taken
//! once per start tree and pinned gates (kept by that key in the pin store, so every stop
//! of every loop that starts on the same tree reuses them): by
//! `loop start`'s job in the background while the agent works, or else by the first stop
//! that needs them, which waits for a job already taking them rather than take them twice.

use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_config::Phase;
use ralph_plan::project::Project;
use ralph_surface::baseline::StartFailures;
use ralph_surface::differential::{self, RunError, StartRuns, Tests};
use ralph_surface::pin::store::Store;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn lock_path(store: &Store, key: &str) -> PathBuf {
    store.dir().join("start-tests").join(format!("{key}.lock"))
}

/// The start tree's tests kept under `key`, else those a job taking them now keeps (waited
/// for until `deadline`), else taken now with `take` and kept.
/// With the tests that failed there, where known (empty when the record does not say).
pub fn at_stop(
    store: &Store,
    key: &str,
    deadline: Instant,
    take: impl FnOnce() -> Result<StartRuns, RunError>,
) -> Result<(Tests, Tests), RunError> {
    kept_or_taken(store, key, deadline, take).map(|(tests, _, failed)| (tests, failed))
}

/// How the stop gates that failed on the start tree failed, kept under `key` with its tests
/// (or taken as [`at_stop`] takes them): what a baseline gate is compared with; and the
/// runs that could not start there (empty where the record does not say).
pub fn failures_at_stop(
    store: &Store,
    key: &str,
    deadline: Instant,
    take: impl FnOnce() -> Result<StartRuns, RunError>,
) -> Result<(StartFailures, Tests), RunError> {
    kept_or_taken(store, key, deadline, take).map(|(_, failures, _)| failures)
}

fn kept_or_taken(
    store: &Store,
    key: &str,
    deadline: Instant,
    take: impl FnOnce() -> Result<StartRuns, RunError>,
) -> Result<(Tests, (StartFailures, Tests), Tests), RunError> {
    let kept = || {
        let failed = store.start_failed(key).unwrap_or_default();
        let unstarted = store.start_unstarted(key).unwrap_or_default();
        let failures = (store.start_failures(key)?, unstarted);
        Some((store.start_tests(key)?, failures, failed))
    };
    if let Some(k) = kept() {
        return Ok(k);
    }
    let _turn = ralph_base::atomic::lock_until(&lock_path(store, key), Some(deadline));
    if let Some(k) = kept() {
        return Ok(k);
    }
    let taken = take()?;
    store.keep_start_tests(key, &taken);
    Ok((taken.tests, (taken.failures, taken.unstarted), taken.failed))
}

/// The background job `loop start` starts for the loop `loop_file`: takes and keeps its start
/// tree's tests, unless they are kept or another job is taking them.
pub fn in_background(
    env: &Environment,
    layout: &Layout,
    config: Option<&Path>,
    loop_file: &str,
) -> Result<(), RunError> {
    let store = Store::of(layout);
    let Some(record) = store.read(loop_file).ok().flatten() else {
        return Ok(());
    };
    let (Some(key), Some(tree)) = (record.start_key(), record.tree.as_deref()) else {
        return Ok(());
    };
    let Ok(Some(_mine)) = ralph_base::atomic::try_lock(&lock_path(&store, &key)) else {
        return Ok(());
    };
    if store.start_tests(&key).is_some() {
        return Ok(());
    }
    let root = match record.pin.root.as_str() {
        "" => layout.root(),
        pinned => Path::new(pinned),
    };
    let project = Project::open(root, config)?;
    let prepared = differential::prepare(root, (tree, record.ignored.as_ref()), (None, None))?;
    let far = Instant::now() + Duration::from_secs(24 * 3600);
    let runs = differential::start_runs(&project, env, (Phase::Stop, far), &prepared, tree)?;
    store.keep_start_tests(&key, &runs);
    Ok(())
}
