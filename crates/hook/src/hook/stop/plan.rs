//! The whole decision of a stop, as a pure function of what [`super::gather`] found: the
//! verdict, the change to the loop file, and the journal's lines, for [`super::apply`] to
//! carry out. The loop's own judgement is `decide`; this is every decision around it.

use super::gather::{Found, Gated, LoopStop, Seen};
use super::{pins, Judged};
use crate::hook::decide::{self, Outcome, StateChange, StopFacts};
use crate::hook::promise::TextSource;
use crate::hook::{Ask, Verdict};
use crate::words;
use ralph_loop::journal::{self, Decision, Entry, LoopEvent};
use ralph_loop::loops::{self, Change};
use ralph_runner::runner::GateResult;
use ralph_surface::pin::Verdict as PinVerdict;
use std::path::Path;

/// What a stop does, in the order [`super::apply`] does it.
pub struct Plan<'a> {
    /// The loop file's change. When the loop is gone by the time it is made (cancelled while
    /// the gates ran), the stop says nothing and records nothing.
    pub change: Option<(&'a Path, Change<'a>)>,
    /// The journal's lines, after the change. A line that must be recorded (a stop
    /// decision) fails the stop when it cannot be: a stop nobody can audit is not let through.
    pub journal: Vec<Line>,
    pub verdict: Verdict,
    /// A loop's stop, judged: what `loop run` reads of it.
    pub judged: Option<Judged>,
}

/// One line for the journal, and whether the stop stands or falls with it.
pub struct Line {
    pub entry: Entry,
    pub must: bool,
}

impl Plan<'_> {
    fn answer(verdict: Verdict, journal: Vec<Line>) -> Self {
        Self {
            change: None,
            journal,
            verdict,
            judged: None,
        }
    }
}

/// Pure: the plan of the stop `ask` that found `found`.
pub fn of<'a>(ask: &Ask, found: &'a Found) -> Plan<'a> {
    match found {
        Found::RunIteration | Found::Gone => Plan::answer(Verdict::Silent, Vec::new()),
        Found::InsideCommand { command } => inside_command(ask, command),
        Found::Orphaned(orphans) => {
            let (reason, system) = words::state_gone(orphans);
            let session = &ask.session;
            let lines = orphans
                .iter()
                .map(|o| best_effort(loops::orphan_noticed(session, o)))
                .collect();
            Plan::answer(
                Verdict::Block {
                    reason,
                    system: Some(system),
                },
                lines,
            )
        }
        Found::NoLoop { unreadable, gated } => match gated {
            Some(gated) => plain_stop(ask, gated),
            None if unreadable.is_empty() => Plan::answer(Verdict::Silent, Vec::new()),
            None => Plan::answer(
                Verdict::Allow {
                    system: Some(words::unreadable_loops(unreadable)),
                },
                Vec::new(),
            ),
        },
        Found::GoalOver { path, why } => goal_over(ask, path, why),
        Found::Loop(stop) => of_loop(ask, stop),
    }
}

/// A stop from inside the session's shell command counts for nothing: refused, recorded.
fn inside_command(ask: &Ask, command: &str) -> Plan<'static> {
    let event = LoopEvent {
        session: loops::session_key(&ask.session),
        ..LoopEvent::new(
            format!("session {}", ask.session),
            "",
            format!(
                "a stop while the shell command `{}` ran: not counted",
                ralph_base::text::shorten(command, 300)
            ),
        )
    };
    Plan::answer(
        Verdict::Block {
            reason: words::stop_in_command(command),
            system: None,
        },
        vec![best_effort(Entry::Refused(event))],
    )
}

/// Ends the loop of a goal that holds nothing any more, and lets the stop through.
fn goal_over<'a>(ask: &Ask, path: &'a Path, why: &str) -> Plan<'a> {
    let event = LoopEvent {
        session: loops::session_key(&ask.session),
        ..LoopEvent::new(
            format!("{} goal", ask.agent),
            &loops::key(path),
            format!("the goal was {why}: ralph-gate no longer holds it"),
        )
    };
    Plan {
        change: Some((path, Change::End)),
        journal: vec![best_effort(Entry::GoalOver(event))],
        verdict: Verdict::Allow {
            system: Some(format!(
                "ralph-gate: the goal was {why}; its hold on the stop gates ended"
            )),
        },
        judged: None,
    }
}

/// `gate_every_stop` without a loop: the stop gates must pass before the agent may stop, but
/// there is no promise, prompt or iteration count.
fn plain_stop(ask: &Ask, gated: &Gated) -> Plan<'static> {
    let failing: Vec<&GateResult> = gated
        .results
        .iter()
        .filter(|r| r.counts_as_failure(gated.ci))
        .collect();
    let verdict = if failing.is_empty() {
        Verdict::Silent
    } else {
        let (reason, system) = words::plain_stop(&failing);
        Verdict::Block {
            reason,
            system: Some(system),
        }
    };
    let blocks = verdict.blocks();
    let stop = journal::Stop {
        agent: ask.agent,
        block_cap: gated.block_cap,
        session: ask.session.clone(),
        loop_file: String::new(),
        iteration: 0,
        promise_expected: None,
        promise_seen: None,
        promise_source: TextSource::None,
        stop_hook_active: ask.continuing,
        unchanged_stops: 0,
        blocks_in_a_row: 0,
        pin: String::new(),
        gates: journal_gates(&gated.results, gated.ci),
        decision: decision_of(blocks),
        outcome: if blocks {
            Outcome::Continue
        } else {
            Outcome::Completed
        },
        why: if blocks {
            "no loop; gate_every_stop and gates fail"
        } else {
            "no loop; gate_every_stop and every gate passes"
        }
        .into(),
        notes: Vec::new(),
        goal_verdict: None,
    };
    Plan::answer(verdict, vec![must(Entry::Stop(Box::new(stop)))])
}

/// A loop's stop: the loop's own judgement (`decide`), the loop advanced or ended, the stop
/// recorded.
fn of_loop<'a>(ask: &Ask, stop: &'a LoopStop) -> Plan<'a> {
    let LoopStop {
        path, state, goal, ..
    } = stop;
    let seen = match &stop.seen {
        Ok(seen) => seen,
        Err(e) => return config_fails(state, e),
    };
    let facts = StopFacts {
        state,
        promise_seen: seen.promise.as_deref(),
        results: &seen.results,
        ci: seen.ci,
        unchanged_stops: seen.progress.unchanged_stops,
        stuck_after: stop.stuck_after,
        hold: seen.hold.clone(),
        promise_misplaced: seen.misplaced,
        blocks_in_a_row: seen.progress.blocks_in_a_row,
        block_cap: seen.block_cap,
        goal: goal.as_ref(),
    };
    let decision = decide::decide(&facts);
    let change = match decision.state {
        StateChange::Remove => Change::End,
        StateChange::SetIteration(to) => Change::Advance {
            to,
            progress: &seen.progress,
            repin: seen.pinning.repin(),
            goal_seen: goal.as_ref().map(|g| g.mark),
        },
    };
    let failed: Vec<&GateResult> = seen
        .results
        .iter()
        .filter(|r| r.counts_as_failure(seen.ci))
        .collect();
    let verdict_of_goal = goal.as_ref().and_then(|g| g.verdict.clone());
    let entry = stop_entry(ask, state, seen, &decision, verdict_of_goal);
    Plan {
        change: Some((path, change)),
        journal: vec![must(Entry::Stop(Box::new(entry)))],
        verdict: decision.output.clone(),
        judged: Some(Judged {
            errors: words::failing_gates(&failed, words::TEXT_CAP),
            failing: failed.iter().map(|r| r.name.clone()).collect(),
            hold: seen.hold.clone(),
            decision,
        }),
    }
}

/// Fail closed: a loop may not end on a config nobody can check against. Nothing is changed
/// or recorded; the loop goes on.
fn config_fails<'a>(state: &loops::LoopState, e: &dyn std::fmt::Display) -> Plan<'a> {
    let (reason, system) = words::stop_config_error(&e);
    let verdict = Verdict::Block {
        reason,
        system: Some(system),
    };
    Plan {
        change: None,
        journal: Vec::new(),
        verdict: verdict.clone(),
        judged: Some(Judged {
            decision: decide::StopDecision {
                outcome: Outcome::Continue,
                output: verdict,
                state: StateChange::SetIteration(state.iteration),
                why: format!("the config does not load: {e}"),
            },
            failing: Vec::new(),
            errors: String::new(),
            hold: Some("the config does not load".into()),
        }),
    }
}

/// The journal's line for a loop's stop, with the notes a person should read.
fn stop_entry(
    ask: &Ask,
    state: &loops::LoopState,
    seen: &Seen,
    decision: &decide::StopDecision,
    goal_verdict: Option<String>,
) -> journal::Stop {
    journal::Stop {
        agent: ask.agent,
        block_cap: seen.block_cap,
        session: ask.session.clone(),
        loop_file: seen.loop_file.clone(),
        iteration: state.iteration,
        promise_expected: state.completion_promise.clone(),
        promise_seen: seen.promise.clone(),
        promise_source: ask.text_source,
        stop_hook_active: ask.continuing,
        unchanged_stops: seen.progress.unchanged_stops,
        blocks_in_a_row: seen.progress.blocks_in_a_row,
        pin: pins::word(&seen.pinning.verdict).to_string(),
        gates: journal_gates(&seen.results, seen.ci),
        decision: decision_of(decision.blocks()),
        outcome: decision.outcome,
        why: decision.why.clone(),
        notes: notes(seen, decision),
        goal_verdict,
    }
}

/// What the stop saw that a person should know, and what follows from its decision: a
/// refusal that likely meets the agent's cap on refusals in a row, gates strengthened.
fn notes(seen: &Seen, decision: &decide::StopDecision) -> Vec<String> {
    let mut notes = seen.notes.clone();
    let (cap, blocks) = (seen.block_cap, seen.progress.blocks_in_a_row);
    if decision.blocks() && cap > 0 && blocks >= cap {
        notes.push(format!(
            "{blocks} refusals in a row with nothing changed: the agent's stop-block cap ({cap}) likely ends its turn here, leaving the loop unfinished"
        ));
    }
    if let PinVerdict::Stronger(changes) = &seen.pinning.verdict {
        let each: Vec<String> = changes.iter().map(ToString::to_string).collect();
        notes.push(format!(
            "stop gates strengthened and pinned again: {}",
            each.join("; ")
        ));
    }
    notes
}

fn decision_of(blocks: bool) -> Decision {
    if blocks {
        Decision::Block
    } else {
        Decision::Allow
    }
}

fn journal_gates(results: &[GateResult], ci: bool) -> Vec<journal::Gate> {
    results.iter().map(|r| journal::Gate::of(r, ci)).collect()
}

fn must(entry: Entry) -> Line {
    Line { entry, must: true }
}

fn best_effort(entry: Entry) -> Line {
    Line { entry, must: false }
}

/// The stop's whole decision checked on made-up facts (the fuzz target `stop_decision` and
/// its property test): `kind` picks what the stop found, `state` is the loop, `results` the
/// gates, `flags` the rest. Panics when a plan breaks a rule every stop must keep.
pub fn property(kind: u8, state: loops::LoopState, results: Vec<GateResult>, flags: u8) {
    let ci = flags & 1 == 1;
    let ask = Ask {
        session: "s".into(),
        continuing: flags & 2 == 2,
        ..Ask::default()
    };
    let failing = results.iter().any(|r| r.counts_as_failure(ci));
    let found = made_up(kind, state, results, flags);
    let plan = of(&ask, &found);
    let blocks = plan.verdict.blocks();
    let stops: Vec<&journal::Stop> = plan
        .journal
        .iter()
        .filter_map(|l| match &l.entry {
            Entry::Stop(s) => Some(s.as_ref()),
            _ => None,
        })
        .collect();
    // A stop decision is recorded as decided, and must be.
    for s in &stops {
        assert_eq!(
            s.decision == Decision::Block,
            blocks,
            "journal and verdict disagree"
        );
    }
    assert!(plan
        .journal
        .iter()
        .all(|l| l.must == matches!(l.entry, Entry::Stop(_))));
    match &found {
        Found::RunIteration | Found::Gone => {
            assert!(plan.verdict == Verdict::Silent && plan.journal.is_empty())
        }
        Found::InsideCommand { .. } | Found::Orphaned(_) => {
            assert!(
                blocks && plan.change.is_none(),
                "a stop that counts for nothing went through"
            )
        }
        Found::NoLoop { gated: Some(_), .. } => {
            assert_eq!(
                blocks, failing,
                "gate_every_stop let a failing gate through, or held a pass"
            );
            assert_eq!(stops.len(), 1);
        }
        Found::NoLoop { gated: None, .. } => assert!(!blocks),
        Found::GoalOver { .. } => {
            assert!(!blocks && matches!(plan.change, Some((_, Change::End))))
        }
        Found::Loop(stop) => loop_rules(&plan, stop, failing, &stops),
    }
}

/// What a stop found, made up from the property's inputs.
fn made_up(kind: u8, state: loops::LoopState, results: Vec<GateResult>, flags: u8) -> Found {
    use super::gather::Gated;
    let ci = flags & 1 == 1;
    match kind % 8 {
        0 => Found::RunIteration,
        1 => Found::Gone,
        2 => Found::InsideCommand {
            command: "ralph-gate hook stop".into(),
        },
        3 => Found::Orphaned(vec![loops::Orphan {
            loop_file: "ralph-loop.local.md".into(),
            started_at: "t".into(),
            session: String::new(),
        }]),
        4 => Found::NoLoop {
            unreadable: Vec::new(),
            gated: Some(Gated {
                results,
                block_cap: 8,
                ci,
            }),
        },
        5 => Found::NoLoop {
            unreadable: vec!["x".into()],
            gated: None,
        },
        6 => Found::GoalOver {
            path: "ralph-loop.local.md".into(),
            why: "cleared".into(),
        },
        _ => Found::Loop(Box::new(LoopStop {
            path: "ralph-loop.local.md".into(),
            seen: Ok(Seen::fixed(&state, results, flags)),
            state,
            goal: None,
            stuck_after: u32::from(flags >> 4),
            guard: None,
        })),
    }
}

/// A loop's plan: ended only when done, at its limit or stuck (or its goal goes on); a
/// refusal counts an iteration; one stop line.
fn loop_rules(plan: &Plan<'_>, stop: &LoopStop, failing: bool, stops: &[&journal::Stop]) {
    assert_eq!(stops.len(), 1, "one line per loop stop");
    let outcome = stops[0].outcome;
    match &plan.change {
        Some((_, Change::End)) => {
            assert!(!plan.verdict.blocks(), "a loop ended on a refusal");
            assert!(matches!(
                outcome,
                Outcome::Completed | Outcome::LimitReached | Outcome::Stuck
            ));
            if outcome == Outcome::Completed {
                let seen = stop.seen.as_ref().ok();
                assert!(
                    !failing && seen.is_some_and(|s| s.hold.is_none()),
                    "done while failing or held"
                );
            }
        }
        Some((_, Change::Advance { to, .. })) => {
            assert!(plan.verdict.blocks(), "a loop advanced on an allowed stop");
            assert_eq!(*to, stop.state.iteration.saturating_add(1));
        }
        None => panic!("a loop's stop changed nothing"),
    }
}
