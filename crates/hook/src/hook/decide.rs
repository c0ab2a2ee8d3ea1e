//! The Stop decision, as a pure function of what was seen: the loop, the promise, the gate
//! results and how long nothing has changed. No I/O here; `stop.rs` gathers the facts and
//! carries the decision out, and `words::stop` words it.

pub use crate::words::stop::Refusal;
pub use ralph_loop::journal::Outcome;

use super::Verdict;
use ralph_loop::loops::LoopState;
use ralph_runner::runner::GateResult;

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
    /// The loop holds the session's own goal, and where that goal stands: every stop of a
    /// held goal is its claim of done, and no promise is needed.
    pub goal: Option<&'a ralph_loop::goals::Goal>,
}

/// Stop gates that verified nothing: they matched no file, or their tool is missing. Such a
/// gate cannot grant completion unless the config marks it `optional`, or a loop could end
/// on gates that looked at nothing.
pub fn unverified(results: &[GateResult], ci: bool) -> Vec<&GateResult> {
    results
        .iter()
        .filter(|r| {
            !r.optional
                && !r.counts_as_failure(ci)
                && (!r.unverified.is_empty()
                    || matches!(
                        r.status,
                        ralph_runner::runner::GateStatus::NoFiles
                            | ralph_runner::runner::GateStatus::Skipped
                    ))
        })
        .collect()
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

/// How a stop is judged, before any wording.
#[derive(Debug)]
pub enum Judgement<'a> {
    /// Promise made, every stop gate passes and verified something, no hold.
    Complete,
    /// The iteration limit is reached: the loop ends unfinished with these gates failing.
    Limit { failing: Vec<&'a str> },
    /// Nothing changed for `stops` stops in a row: the loop ends as stuck.
    Stuck { stops: u32, failing: Vec<&'a str> },
    /// The loop goes on.
    Refuse(Refusal<'a>),
}

/// Pure: the stop's judgement from its facts.
pub fn judge<'a>(f: &'a StopFacts<'a>) -> Judgement<'a> {
    let failing: Vec<&GateResult> = f
        .results
        .iter()
        .filter(|r| r.counts_as_failure(f.ci))
        .collect();
    let expected = f
        .state
        .completion_promise
        .as_deref()
        .map(super::promise::normalize);
    let promised = f.goal.is_some()
        || matches!((&expected, f.promise_seen), (Some(e), Some(seen)) if e == seen);
    let unverified = unverified(f.results, f.ci);
    if promised && failing.is_empty() && unverified.is_empty() && f.hold.is_none() {
        return Judgement::Complete;
    }
    let names = || failing.iter().map(|r| r.name.as_str()).collect();
    if f.state.limit_reached() {
        return Judgement::Limit { failing: names() };
    }
    if f.stuck_after > 0 && f.unchanged_stops >= f.stuck_after {
        return Judgement::Stuck {
            stops: f.unchanged_stops,
            failing: names(),
        };
    }
    Judgement::Refuse(Refusal {
        next: f.state.iteration.saturating_add(1),
        max_iterations: f.state.max_iterations,
        expected,
        promised,
        failing,
        unverified,
        hold: f.hold.as_deref(),
        misplaced: f.promise_misplaced,
        blocks_in_a_row: f.blocks_in_a_row,
        block_cap: f.block_cap,
        goal: f.goal.map(|g| g.condition.as_str()),
        goal_ignored: f.goal.and_then(|g| g.ignored),
    })
}

/// The stop's judgement, worded for the agent, the user and the journal.
pub fn decide(f: &StopFacts<'_>) -> StopDecision {
    let decision = judged(f);
    // A goal still active goes on by its own judge: ralph-gate lets a stop through when the
    // gates pass but keeps holding the goal, so its pin is never taken again from a config
    // changed since. Its loop ends only when the goal is met (or over, in `hook::stop`).
    match (f.goal.map(|g| &g.status), decision.output.blocks()) {
        (Some(ralph_loop::goals::Status::Active), false) => StopDecision {
            outcome: Outcome::GoalGoesOn,
            state: StateChange::SetIteration(f.state.iteration.saturating_add(1)),
            why: format!("goal active; {}", decision.why),
            output: decision.output,
        },
        _ => decision,
    }
}

fn judged(f: &StopFacts<'_>) -> StopDecision {
    use crate::words::stop as words;
    match judge(f) {
        Judgement::Complete => allow(
            Outcome::Completed,
            None,
            if f.goal.is_some() {
                "goal: every stop gate passes".into()
            } else {
                "promise made and every stop gate passes".into()
            },
        ),
        Judgement::Limit { failing } => {
            let msg = words::limit(f.state.max_iterations, &failing);
            allow(Outcome::LimitReached, Some(msg.clone()), msg)
        }
        Judgement::Stuck { stops, failing } => {
            let msg = words::stuck(stops, &failing);
            allow(Outcome::Stuck, Some(msg.clone()), msg)
        }
        Judgement::Refuse(r) => {
            let text = words::refusal(&r, f.state.prompt());
            StopDecision {
                outcome: if r.goal.is_some() {
                    Outcome::GoalRefused
                } else if r.promised {
                    Outcome::PromiseRefused
                } else {
                    Outcome::Continue
                },
                output: Verdict::Block {
                    reason: text.reason,
                    system: Some(text.system),
                },
                state: StateChange::SetIteration(r.next),
                why: text.why,
            }
        }
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
