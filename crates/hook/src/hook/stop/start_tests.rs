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
use ralph_surface::differential::{self, RunError, StartRuns};
use ralph_surface::pin::store::{KeptStart, Store};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn lock_path(store: &Store, key: &str) -> PathBuf {
    store.dir().join("start-tests").join(format!("{key}.lock"))
}

/// The start tree's runs kept under `key` (its tests, those that failed, how the gates
/// that failed failed, the runs that could not start), else those a job taking them now
/// keeps (waited for until `deadline`), else taken now with `take` and kept.
pub fn at_stop(
    store: &Store,
    key: &str,
    deadline: Instant,
    take: impl FnOnce() -> Result<StartRuns, RunError>,
) -> Result<KeptStart, RunError> {
    if let Some(k) = store.kept_start(key) {
        return Ok(k);
    }
    let _turn = ralph_base::atomic::lock_until(&lock_path(store, key), Some(deadline));
    if let Some(k) = store.kept_start(key) {
        return Ok(k);
    }
    let taken = KeptStart::from(take()?);
    store.keep_start_tests(key, &taken);
    Ok(taken)
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
    if store.kept_start(&key).is_some() {
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
    store.keep_start_tests(&key, &KeptStart::from(runs));
    Ok(())
}
