//! The Stop decision, as a pure function of what was seen: the loop, the promise, the gate
//! results and how long nothing has changed. No I/O here; `stop.rs` gathers the facts and
//! carries the decision out.

use super::post_tool_use::gate_section;
use super::protocol::{cap, HookOutput, TEXT_CAP};
use crate::loop_state::LoopState;
use crate::report::counts_as_failure;
use crate::runner::GateResult;

/// Everything the decision depends on.
pub struct StopFacts<'a> {
    pub state: &'a LoopState,
    /// The normalised text inside the agent's first `<promise>` tag, if any.
    pub promise_seen: Option<&'a str>,
    /// The stop-phase gates' results (gates with no files included).
    pub results: &'a [GateResult],
    pub ci: bool,
    /// Stops in a row, this one included, with the same working tree and the same failures.
    pub unchanged_stops: u32,
    /// 0 = never stop a loop as stuck.
    pub stuck_after: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Promise made and every gate passes: the loop ends.
    Completed,
    /// The iteration limit is reached: the loop ends unfinished.
    LimitReached,
    /// Nothing changed for too many stops: the loop ends as stuck.
    Stuck,
    /// The promise was made but gates fail: refused, the loop goes on.
    PromiseRefused,
    /// No promise yet: the loop goes on.
    Continue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateChange {
    Remove,
    SetIteration(u64),
}

#[derive(Debug, Clone)]
pub struct StopDecision {
    pub outcome: Outcome,
    pub output: HookOutput,
    pub state: StateChange,
    /// One line for the journal.
    pub why: String,
}

impl StopDecision {
    pub fn blocks(&self) -> bool {
        self.output.decision == Some("block")
    }
}

/// Characters of the prompt repeated to the agent; a longer prompt is cut and the agent told
/// where the whole of it is.
const PROMPT_CAP: usize = 4000;

pub fn decide(f: &StopFacts<'_>) -> StopDecision {
    let failing: Vec<&GateResult> = f
        .results
        .iter()
        .filter(|r| counts_as_failure(r, f.ci))
        .collect();
    let expected = f
        .state
        .completion_promise
        .as_deref()
        .map(super::promise::normalize);
    let promised = matches!((&expected, f.promise_seen), (Some(e), Some(seen)) if e == seen);
    let names = failing
        .iter()
        .map(|r| r.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");

    if promised && failing.is_empty() {
        // Passing because nothing was checked is worth saying out loud.
        let unchecked: Vec<&str> = f
            .results
            .iter()
            .filter(|r| r.status == crate::runner::GateStatus::NoFiles)
            .map(|r| r.name.as_str())
            .collect();
        let note = (!unchecked.is_empty()).then(|| {
            format!(
                "ralph-gate: loop complete. Note: {} checked 0 files: {}.",
                crate::report::text::plural(unchecked.len(), "stop gate", "stop gates"),
                unchecked.join(", ")
            )
        });
        return allow(
            Outcome::Completed,
            note,
            "promise made and every stop gate passes".into(),
        );
    }
    if f.state.limit_reached() {
        let msg = if failing.is_empty() {
            format!("ralph-gate: the loop reached its limit of {} iterations unfinished (no promise); every gate passes.", f.state.max_iterations)
        } else {
            format!("ralph-gate: the loop reached its limit of {} iterations unfinished; still failing: {names}.", f.state.max_iterations)
        };
        return allow(Outcome::LimitReached, Some(msg.clone()), msg);
    }
    if f.stuck_after > 0 && f.unchanged_stops >= f.stuck_after {
        let msg = format!(
            "ralph-gate: the loop was stopped as stuck: {} stops in a row with no change to the working tree and the same gate results{}.",
            f.unchanged_stops,
            if failing.is_empty() { String::new() } else { format!(" (failing: {names})") }
        );
        return allow(Outcome::Stuck, Some(msg.clone()), msg);
    }

    let next = f.state.iteration.saturating_add(1);
    let of = if f.state.max_iterations > 0 {
        f.state.max_iterations.to_string()
    } else {
        "∞".into()
    };
    let system = format!(
        "ralph-gate: iteration {next}/{of}, {} failing",
        crate::report::text::plural(failing.len(), "gate", "gates")
    );
    let finish = match &expected {
        Some(p) => format!("To finish: make every gate pass, then output <promise>{p}</promise> (only when it is true)."),
        None => "This loop has no completion promise; it ends at its iteration limit or when cancelled.".into(),
    };
    let prompt = cap(f.state.prompt(), PROMPT_CAP);
    let (outcome, head, why) = if promised {
        (
            Outcome::PromiseRefused,
            format!(
                "ralph-gate refused your promise <promise>{}</promise>: {} still failing ({names}). The loop goes on until they pass.\n",
                expected.as_deref().unwrap_or_default(),
                crate::report::text::plural(failing.len(), "gate is", "gates are")
            ),
            format!("promise refused: failing {names}"),
        )
    } else {
        let why = if failing.is_empty() {
            "no promise".to_string()
        } else {
            format!("no promise; failing {names}")
        };
        (Outcome::Continue, String::new(), why)
    };
    let room = TEXT_CAP.saturating_sub(head.len() + prompt.len() + finish.len() + 200);
    let mut gates = String::new();
    if !failing.is_empty() {
        gates.push_str("\nFailing gates:\n");
        let per = (room / failing.len()).max(300);
        for r in &failing {
            gates.push_str(&gate_section(r, per));
        }
    }
    let reason = if promised {
        format!("{head}{gates}\nThe task, again:\n{prompt}\n\n{finish}")
    } else {
        format!("{prompt}\n{gates}\n{finish}")
    };
    StopDecision {
        outcome,
        output: HookOutput {
            decision: Some("block"),
            reason: Some(cap(&reason, TEXT_CAP)),
            system_message: Some(system),
            ..Default::default()
        },
        state: StateChange::SetIteration(next),
        why,
    }
}

fn allow(outcome: Outcome, system: Option<String>, why: String) -> StopDecision {
    StopDecision {
        outcome,
        output: HookOutput {
            system_message: system,
            ..Default::default()
        },
        state: StateChange::Remove,
        why,
    }
}

#[cfg(test)]
mod tests;
