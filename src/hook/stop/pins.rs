//! A stop's view of the loop's pin: how the stop gates in force compare with the ones the
//! loop started with, what the agent is told when they were weakened, and pinning again.

use crate::config::Config;
use crate::loops::LoopState;
use crate::pin::{self, store::Store, Pin, Verdict as PinVerdict};
use crate::state::Layout;

pub struct Pinning {
    pub verdict: PinVerdict,
    /// The stop gates as resolved now.
    pub now: Pin,
}

impl Pinning {
    /// Compares the gates in force with this loop's pin (state file and copy); what a person
    /// should know goes to `notes`.
    pub fn judge(
        layout: &Layout,
        loop_file: &str,
        state: &LoopState,
        config: &Config,
        notes: &mut Vec<String>,
    ) -> Self {
        let store = Store::of(layout);
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
        Self { verdict, now }
    }

    /// The gates to pin again at this stop, when the verdict says so.
    pub fn repin(&self) -> Option<&Pin> {
        self.verdict.repins().then_some(&self.now)
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
