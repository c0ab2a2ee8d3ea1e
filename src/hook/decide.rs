//! The Stop decision, as a pure function of what was seen: the loop, the promise, the gate
//! results and how long nothing has changed. No I/O here; `stop.rs` gathers the facts and
//! carries the decision out.

use super::post_tool_use::gate_section;
use super::protocol::{cap, TEXT_CAP};
use super::Verdict;
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
    /// Why this loop may not complete whatever the gates say (its pinned gates were weakened
    /// or the pin was edited), in words the agent can act on.
    pub hold: Option<String>,
    /// A `<promise>` tag is in the final message but does not end it.
    pub promise_misplaced: bool,
    /// Stops blocked in a row with nothing changed, this one included, and the agent's cap on
    /// them (0 = none): near the cap the reason says plainly what work is needed.
    pub blocks_in_a_row: u32,
    pub block_cap: u32,
}

/// Stop gates that verified nothing: they matched no file, or their tool is missing. Such a
/// gate cannot grant completion unless the config marks it `optional`, or a loop could end
/// on gates that looked at nothing.
pub fn unverified(results: &[GateResult], ci: bool) -> Vec<&GateResult> {
    results
        .iter()
        .filter(|r| {
            !r.optional
                && !counts_as_failure(r, ci)
                && matches!(
                    r.status,
                    crate::runner::GateStatus::NoFiles | crate::runner::GateStatus::Skipped
                )
        })
        .collect()
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
    pub output: Verdict,
    pub state: StateChange,
    /// One line for the journal.
    pub why: String,
}

impl StopDecision {
    pub fn blocks(&self) -> bool {
        self.output.blocks()
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

    let unverified = unverified(f.results, f.ci);
    if promised && failing.is_empty() && unverified.is_empty() && f.hold.is_none() {
        return allow(
            Outcome::Completed,
            None,
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
        crate::text::plural(failing.len(), "gate", "gates")
    );
    let finish = match &expected {
        Some(p) => format!("To finish: make every gate pass, then output <promise>{p}</promise> (only when it is true)."),
        None => "This loop has no completion promise; it ends at its iteration limit or when cancelled.".into(),
    };
    let prompt = cap(f.state.prompt(), PROMPT_CAP);
    let mut blockers: Vec<String> = Vec::new();
    if !failing.is_empty() {
        blockers.push(format!(
            "{} still failing ({names})",
            crate::text::plural(failing.len(), "gate is", "gates are")
        ));
    }
    let mut checks = String::new();
    if !unverified.is_empty() {
        let list: Vec<String> = unverified
            .iter()
            .map(|r| match (&r.missing, r.status) {
                (Some(tool), _) => format!(
                    "{} (its tool `{tool}` is not installed{})",
                    r.name,
                    r.install
                        .as_deref()
                        .map(|i| format!("; install it: {i}"))
                        .unwrap_or_default()
                ),
                _ => format!("{} (it matched no file)", r.name),
            })
            .collect();
        blockers.push(format!(
            "{} verified nothing: {}",
            crate::text::plural(unverified.len(), "stop gate", "stop gates"),
            list.join(", ")
        ));
        checks.push_str("\nA stop gate that checked nothing cannot grant completion. If that is expected, a person marks it `optional = true` in the config; do not change the config yourself.\n");
    }
    if let Some(hold) = &f.hold {
        blockers.push("the stop gates are not the ones this loop started with".into());
        checks.push_str(&format!("\n{hold}\n"));
    }
    let mut head = String::new();
    if f.promise_misplaced {
        head.push_str("ralph-gate: your final message contains a <promise> tag, but the tag must END the final message; nothing may follow it.\n");
    }
    let (outcome, why) = if promised {
        head.push_str(&format!(
            "ralph-gate refused your promise <promise>{}</promise>: {}. The loop goes on.\n",
            expected.as_deref().unwrap_or_default(),
            blockers.join("; ")
        ));
        (
            Outcome::PromiseRefused,
            format!("promise refused: {}", blockers.join("; ")),
        )
    } else {
        let why = if blockers.is_empty() {
            "no promise".to_string()
        } else {
            format!("no promise; {}", blockers.join("; "))
        };
        (Outcome::Continue, why)
    };
    if f.blocks_in_a_row >= 2 {
        let work = if blockers.is_empty() {
            match &expected {
                Some(p) => format!("every gate passes: if the task is done, end your final message with <promise>{p}</promise>"),
                None => "finish the task".into(),
            }
        } else {
            blockers.join("; ")
        };
        let cap_note = if f.block_cap > 0 {
            format!(" Your session ends its turn after {} refused stops in a row, and the loop would then stall unfinished.", f.block_cap)
        } else {
            String::new()
        };
        head.push_str(&format!(
            "ralph-gate: {} stops in a row with nothing changed.{cap_note} Stopping again does not help; do the work: {work}.\n",
            f.blocks_in_a_row
        ));
    }
    let head = if checks.is_empty() {
        head
    } else {
        format!("{head}{checks}")
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
    // Something to say beyond "go on" comes first; otherwise the task leads, as in the
    // official plugin.
    let reason = if !head.is_empty() {
        format!("{head}{gates}\nThe task, again:\n{prompt}\n\n{finish}")
    } else {
        format!("{prompt}\n{gates}\n{finish}")
    };
    StopDecision {
        outcome,
        output: Verdict::Block {
            reason: cap(&reason, TEXT_CAP),
            system: Some(system),
        },
        state: StateChange::SetIteration(next),
        why,
    }
}

fn allow(outcome: Outcome, system: Option<String>, why: String) -> StopDecision {
    StopDecision {
        outcome,
        output: Verdict::Allow { system },
        state: StateChange::Remove,
        why,
    }
}

#[cfg(test)]
mod tests;
