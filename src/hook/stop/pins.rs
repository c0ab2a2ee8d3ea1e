//! A stop's view of the loop's pin: how the stop gates in force compare with the ones the
//! loop started with, what the agent is told when they were weakened, and pinning again.

use crate::config::Config;
use crate::loop_state::LoopState;
use crate::pin::{self, store::Store, Pin, Verdict as PinVerdict};
use std::path::Path;

pub struct Pinning {
    pub verdict: PinVerdict,
    /// The stop gates as resolved now.
    pub now: Pin,
    pub store: Store,
}

impl Pinning {
    /// Compares the gates in force with this loop's pin (state file and copy); what a person
    /// should know goes to `notes`.
    pub fn judge(
        ws: &Path,
        loop_file: &str,
        state: &LoopState,
        config: &Config,
        notes: &mut Vec<String>,
    ) -> Self {
        let store = Store::for_workspace(ws);
        let now = pin::of(config);
        let verdict = match store.read(loop_file) {
            Ok(copy) => {
                // A copy left by an earlier loop of the same file name is not this loop's.
                // It is said, since a state file rewritten with a new start time looks the same.
                let (mine, earlier) = match copy {
                    Some(c) if c.started_at == state.started_at => (Some(c), None),
                    other => (None, other),
                };
                if let Some(e) = earlier {
                    notes.push(format!(
                        "a pin of an earlier loop in {loop_file} (started {}) remained; this loop (started {}) is judged without it",
                        e.started_at.as_deref().unwrap_or("?"),
                        state.started_at.as_deref().unwrap_or("?")
                    ));
                }
                pin::judge(state.gates_pin.as_deref(), mine.as_ref(), &now)
            }
            Err(e) => PinVerdict::Tampered(format!("the pin's copy cannot be read: {e}")),
        };
        if let PinVerdict::Tampered(why) = &verdict {
            notes.push(format!("pin tampered: {why}"));
        }
        Self {
            verdict,
            now,
            store,
        }
    }

    /// Pins the gates in force: the state file's line (in `state`, written by the caller)
    /// and the copy.
    pub fn repin(&self, loop_file: &str, state: &mut LoopState) -> std::io::Result<()> {
        state.set_pin(&self.now.digest);
        self.store.write(
            loop_file,
            &pin::Record {
                pin: self.now.clone(),
                started_at: state.started_at.clone(),
                session: state.session_id.clone(),
            },
        )
    }
}

/// The words the agent reads when the gates in force are not the pinned ones.
pub fn hold_reason(verdict: &PinVerdict) -> Option<String> {
    let approve = "Only a person may accept this, by running `ralph-gate loop approve` in their own terminal; do not run it yourself, and do not edit the config, the loop's state or ralph-gate's files to get out of the loop. Put the gates back as they were, or finish the task and let a person decide.";
    if !verdict.holds() {
        return None;
    }
    match verdict {
        PinVerdict::Weaker(changes) => Some(format!(
            "The stop gates changed since this loop started, in ways that could let failing work pass:\n{}\n{approve}",
            changes
                .iter()
                .map(|c| format!("- {c}"))
                .collect::<Vec<_>>()
                .join("\n")
        )),
        PinVerdict::Tampered(why) => Some(format!(
            "The record of the gates this loop started with was altered: {why}.\n{approve}"
        )),
        _ => None,
    }
}

pub fn word(verdict: &PinVerdict) -> &'static str {
    match verdict {
        PinVerdict::Same => "same",
        PinVerdict::First => "pinned",
        PinVerdict::Reworded => "reworded",
        PinVerdict::Stronger(_) => "strengthened",
        PinVerdict::Weaker(_) => "weakened",
        PinVerdict::Tampered(_) => "tampered",
    }
}
