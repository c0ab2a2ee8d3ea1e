//! `ralph-gate hook stop`, in three steps. [`gather`] finds every fact of the stop: what the
//! session's shell commands changed is put back first, then the loop is claimed (a goal's
//! loop started at first sight), orphans, where a goal stands, the promise, the pin, the
//! surface, the gate results and the progress. [`plan`] decides the whole stop from them,
//! purely: the verdict, the loop's change and the journal's lines. [`apply`] carries the plan
//! out in one fixed order. [`judge`] is the same three steps for a loop's stop, shared with
//! `loop run`'s iterations.

mod apply;
mod baseline;
pub mod gather;
mod goal_loop;
pub mod pins;
pub mod plan;
pub mod start_tests;
pub mod verify;

use super::{Ask, Verdict};
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::loops::{self, LoopError};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error("cannot list the files of {}: {source}", root.display())]
    Files {
        root: PathBuf,
        #[source]
        source: ralph_plan::files::FilesError,
    },
    #[error("cannot append to {}: {source}", path.display())]
    Journal {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Judges a stop of the agent working in `base`, whose loops live in `layout`.
pub fn run(
    ask: &Ask,
    env: &Environment,
    layout: &Layout,
    base: &Path,
    config: Option<&Path>,
) -> Result<Verdict, StopError> {
    // `--config` names a file from where the hook runs, not from the loop's root.
    let config = config.map(|c| base.join(c));
    let at = Stopping {
        ask,
        env,
        layout,
        config: config.as_deref(),
        stuck_after: None,
    };
    let found = gather::stop(&at, base, Instant::now())?;
    let plan = plan::of(ask, &found);
    Ok(apply::carry_out(layout, plan)?.map_or(Verdict::Silent, |done| done.verdict))
}

/// A loop's stop, judged and carried out: what the loop was held to and what was found.
pub struct Judged {
    pub decision: super::decide::StopDecision,
    /// The stop gates that failed.
    pub failing: Vec<String>,
    /// Their errors, worded for an agent that starts afresh.
    pub errors: String,
    /// What holds the loop besides the gates (its pin or surface weakened, tampering).
    pub hold: Option<String>,
}

/// Who stops, where: the stop's ask, the workspace and the config to judge it with.
pub struct Stopping<'a> {
    pub ask: &'a Ask,
    pub env: &'a Environment,
    pub layout: &'a Layout,
    pub config: Option<&'a Path>,
    /// Stops in a row with nothing changed that end the loop as stuck (`None`: the config's
    /// `stuck_after`).
    pub stuck_after: Option<u32>,
}

/// Judges the stop of the loop at `loop_path` (read as `state`), carries the decision out
/// (state file, pin, journal) and returns it; `None` when the loop was cancelled while its
/// gates ran. The one judgement of "done" for a session's stop and for `loop run`'s
/// iterations alike.
pub fn judge(
    at: &Stopping<'_>,
    loop_path: &Path,
    state: &loops::LoopState,
    started: Instant,
    goal: Option<ralph_loop::goals::Goal>,
) -> Result<Option<Judged>, StopError> {
    let found = gather::Found::Loop(Box::new(gather::of_loop(
        at,
        loop_path.to_path_buf(),
        state.clone(),
        started,
        goal,
    )?));
    let plan = plan::of(at.ask, &found);
    Ok(apply::carry_out(at.layout, plan)?.and_then(|done| done.judged))
}
