use super::*;
use crate::words::TEXT_CAP;
use ralph_runner::runner::GateStatus;
use std::time::Duration;

fn state(iteration: u64, max: u64, promise: Option<&str>) -> LoopState {
    let mut s = LoopState::new(
        "Build the parser.\nMake the tests pass.",
        max,
        promise,
        "s1",
        None,
        "t",
        ralph_base::agent::Agent::Claude,
    );
    s.set_iteration(iteration);
    s
}

fn gate(name: &str, status: GateStatus) -> GateResult {
    GateResult {
        gate: 0,
        name: name.into(),
        status,
        duration: Duration::from_millis(3),
        files: 2,
        runs: 1,
        command: format!("{name} ."),
        output: if status == GateStatus::Fail {
            format!("{name}: error E1 in a.rs")
        } else {
            String::new()
        },
        exit_code: (status == GateStatus::Fail).then_some(1),
        reason: None,
        optional: false,
        cached: false,
        ..Default::default()
    }
}

fn facts<'a>(
    s: &'a LoopState,
    promise: Option<&'a str>,
    results: &'a [GateResult],
    unchanged: u32,
) -> StopFacts<'a> {
    StopFacts {
        state: s,
        promise_seen: promise,
        results,
        ci: false,
        unchanged_stops: unchanged,
        stuck_after: 3,
        hold: None,
        promise_misplaced: false,
        blocks_in_a_row: 0,
        block_cap: 8,
        goal: None,
    }
}

#[test]
fn promise_with_passing_gates_completes() {
    let s = state(4, 10, Some("DONE"));
    let results = [
        gate("tests", GateStatus::Pass),
        GateResult {
            optional: true,
            ..gate("lint", GateStatus::NoFiles)
        },
    ];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    assert_eq!(d.outcome, Outcome::Completed);
    assert!(!d.blocks());
    assert_eq!(d.state, StateChange::Remove);
    assert_eq!(d.output, Verdict::Allow { system: None });
}

#[test]
fn a_stop_gate_that_verified_nothing_cannot_grant_completion() {
    let s = state(4, 10, Some("DONE"));
    for unchecked in [
        gate("lint", GateStatus::NoFiles),
        GateResult {
            missing: Some("shellcheck".into()),
            install: Some("apt-get install shellcheck".into()),
            ..gate("lint", GateStatus::Skipped)
        },
    ] {
        let results = [gate("tests", GateStatus::Pass), unchecked];
        let d = decide(&facts(&s, Some("DONE"), &results, 0));
        assert_eq!(
            d.outcome,
            Outcome::PromiseRefused,
            "{:?}",
            results[1].status
        );
        let reason = d.output.reason().unwrap();
        assert!(reason.contains("verified nothing: lint"), "{reason}");
        assert!(reason.contains("optional = true"), "{reason}");
    }
    let d = decide(&facts(
        &s,
        Some("DONE"),
        &[GateResult {
            missing: Some("shellcheck".into()),
            install: Some("apt-get install shellcheck".into()),
            ..gate("lint", GateStatus::Skipped)
        }],
        0,
    ));
    assert!(d
        .output
        .reason()
        .unwrap()
        .contains("install it: apt-get install shellcheck"));
}

#[test]
fn a_hold_refuses_the_promise_and_says_who_may_lift_it() {
    let s = state(2, 10, Some("DONE"));
    let results = [gate("tests", GateStatus::Pass)];
    let held = StopFacts {
        hold: Some("stop gate `tests`: command changed. A person accepts it with `ralph-gate loop approve`.".into()),
        ..facts(&s, Some("DONE"), &results, 0)
    };
    let d = decide(&held);
    assert_eq!(d.outcome, Outcome::PromiseRefused);
    let reason = d.output.reason().unwrap();
    assert!(
        reason.contains("the checks changed since this loop started"),
        "{reason}"
    );
    assert!(reason.contains("loop approve"), "{reason}");
}

#[test]
fn a_promise_that_does_not_end_the_message_is_explained() {
    let s = state(2, 10, Some("DONE"));
    let results = [gate("tests", GateStatus::Pass)];
    let d = decide(&StopFacts {
        promise_misplaced: true,
        ..facts(&s, None, &results, 0)
    });
    assert_eq!(d.outcome, Outcome::Continue);
    let reason = d.output.reason().unwrap();
    assert!(reason.contains("must END the final message"), "{reason}");
}

#[test]
fn repeated_blocks_with_nothing_changed_name_the_work() {
    let s = state(5, 0, Some("DONE"));
    let results = [gate("tests", GateStatus::Fail)];
    let d = decide(&StopFacts {
        blocks_in_a_row: 3,
        ..facts(&s, Some("DONE"), &results, 0)
    });
    let reason = d.output.reason().unwrap();
    assert!(
        reason.contains("3 stops in a row with nothing changed"),
        "{reason}"
    );
    assert!(reason.contains("after 8 refused stops"), "{reason}");
    assert!(
        reason.contains("do the work: 1 gate is still failing (tests)"),
        "{reason}"
    );
}

#[test]
fn promise_with_a_failing_gate_is_refused_with_its_errors() {
    let s = state(2, 10, Some("DONE"));
    let results = [
        gate("tests", GateStatus::Fail),
        gate("lint", GateStatus::Pass),
    ];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    assert_eq!(d.outcome, Outcome::PromiseRefused);
    assert!(d.blocks());
    let reason = d.output.reason().unwrap();
    assert!(reason.starts_with("ralph-gate refused your promise <promise>DONE</promise>: 1 gate is still failing (tests)"), "{reason}");
    assert!(
        reason.contains("[tests] exit 1\n$ tests .\ntests: error E1 in a.rs"),
        "{reason}"
    );
    assert!(
        reason.contains("Build the parser."),
        "the task is repeated: {reason}"
    );
    assert_eq!(
        d.output.system(),
        Some("ralph-gate: iteration 3/10, 1 gate failing")
    );
    assert_eq!(d.state, StateChange::SetIteration(3));
}

#[test]
fn no_promise_blocks_with_the_prompt_failures_and_how_to_finish() {
    let s = state(1, 0, Some("ALL DONE"));
    let results = [gate("tsc", GateStatus::Fail)];
    let d = decide(&facts(&s, None, &results, 0));
    assert_eq!(d.outcome, Outcome::Continue);
    let reason = d.output.reason().unwrap();
    assert!(
        reason.starts_with("Build the parser.\nMake the tests pass."),
        "{reason}"
    );
    assert!(reason.contains("[tsc] exit 1"), "{reason}");
    assert!(
        reason
            .trim_end()
            .ends_with("then output <promise>ALL DONE</promise> (only when it is true)."),
        "{reason}"
    );
    assert_eq!(
        d.output.system(),
        Some("ralph-gate: iteration 2/∞, 1 gate failing")
    );
}

#[test]
fn a_wrong_promise_is_no_promise() {
    let s = state(1, 0, Some("DONE"));
    let d = decide(&facts(&s, Some("DONE!"), &[], 0));
    assert_eq!(d.outcome, Outcome::Continue);
}

#[test]
fn a_loop_without_a_promise_never_completes_by_text() {
    let s = state(1, 0, None);
    let d = decide(&facts(&s, Some("DONE"), &[], 0));
    assert_eq!(d.outcome, Outcome::Continue);
    assert!(d.output.reason().unwrap().contains("no completion promise"));
}

#[test]
fn iteration_limit_allows_and_names_what_still_fails() {
    let s = state(10, 10, Some("DONE"));
    let results = [gate("tests", GateStatus::Fail)];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    assert_eq!(d.outcome, Outcome::LimitReached);
    assert!(!d.blocks());
    assert_eq!(d.state, StateChange::Remove);
    let msg = d.output.system().unwrap();
    assert!(
        msg.contains("limit of 10 iterations unfinished") && msg.contains("tests"),
        "{msg}"
    );
}

#[test]
fn promise_and_passing_gates_win_even_at_the_limit() {
    let s = state(10, 10, Some("DONE"));
    assert_eq!(
        decide(&facts(&s, Some("DONE"), &[], 0)).outcome,
        Outcome::Completed
    );
}

#[test]
fn stuck_loop_is_stopped_after_the_configured_count() {
    let s = state(5, 0, Some("DONE"));
    let results = [gate("tests", GateStatus::Fail)];
    assert_eq!(
        decide(&facts(&s, None, &results, 2)).outcome,
        Outcome::Continue
    );
    let d = decide(&facts(&s, None, &results, 3));
    assert_eq!(d.outcome, Outcome::Stuck);
    assert!(d
        .output
        .system()
        .unwrap()
        .contains("stopped as stuck: 3 stops in a row"));
    let never = StopFacts {
        stuck_after: 0,
        ..facts(&s, None, &results, 50)
    };
    assert_eq!(decide(&never).outcome, Outcome::Continue);
}

#[test]
fn optional_skipped_gates_fail_only_under_ci() {
    let s = state(1, 0, Some("DONE"));
    let results = [GateResult {
        optional: true,
        ..gate("tsc", GateStatus::Skipped)
    }];
    assert_eq!(
        decide(&facts(&s, Some("DONE"), &results, 0)).outcome,
        Outcome::Completed
    );
    let required = [gate("tsc", GateStatus::Skipped)];
    for ci in [false, true] {
        let f = StopFacts {
            ci,
            ..facts(&s, Some("DONE"), &required, 0)
        };
        assert_eq!(decide(&f).outcome, Outcome::PromiseRefused, "ci={ci}");
    }
}

#[test]
fn huge_failures_and_prompts_stay_under_the_cap() {
    let s = LoopState::new(
        &"prompt line\n".repeat(2000),
        0,
        Some("DONE"),
        "s1",
        None,
        "t",
        ralph_base::agent::Agent::Claude,
    );
    let mut big = gate("tests", GateStatus::Fail);
    big.output = "error\n".repeat(50_000);
    let results = vec![
        big.clone(),
        GateResult {
            name: "lint".into(),
            ..big
        },
    ];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    let reason = d.output.reason().unwrap();
    assert!(
        reason.chars().count() <= TEXT_CAP,
        "{}",
        reason.chars().count()
    );
    assert!(
        reason.contains("[tests]") && reason.contains("[lint]"),
        "both gates named"
    );
}

#[test]
fn a_refusal_at_the_largest_iteration_neither_panics_nor_wraps_to_zero() {
    // A hand-edited state file can hold any number; wrapping would restart the count.
    let s = state(u64::MAX, 0, Some("DONE"));
    let results = [gate("tests", GateStatus::Fail)];
    let d = decide(&facts(&s, Some("DONE"), &results, 1));
    assert!(d.blocks());
    assert_eq!(d.state, StateChange::SetIteration(u64::MAX));
}

fn goal(status: ralph_loop::goals::Status) -> ralph_loop::goals::Goal {
    ralph_loop::goals::Goal {
        condition: "a.py compiles".into(),
        status,
        verdict: None,
        mark: 0,
        ignored: None,
    }
}

#[test]
fn a_goal_needs_no_promise_and_is_held_while_a_gate_fails() {
    use ralph_loop::goals::Status;
    let s = state(1, 0, None);
    let failing = [gate("tests", GateStatus::Fail)];
    for status in [Status::Active, Status::MetThisTurn] {
        let g = goal(status);
        let d = decide(&StopFacts {
            goal: Some(&g),
            ..facts(&s, None, &failing, 1)
        });
        assert!(d.blocks(), "{d:?}");
        assert_eq!(d.outcome, Outcome::GoalRefused);
        let reason = d.output.reason().unwrap();
        assert!(
            reason.contains("holds your goal")
                && reason.contains("E1")
                && reason.contains(s.prompt()),
            "{reason}"
        );
        assert!(!reason.contains("<promise>"), "{reason}");
        assert_eq!(d.state, StateChange::SetIteration(2));
    }
}

#[test]
fn passing_gates_let_a_goal_stop_through_and_only_a_met_goal_ends_its_loop() {
    use ralph_loop::goals::Status;
    let s = state(3, 0, None);
    let passing = [gate("tests", GateStatus::Pass)];
    let active = goal(Status::Active);
    let d = decide(&StopFacts {
        goal: Some(&active),
        ..facts(&s, None, &passing, 1)
    });
    assert!(!d.blocks(), "{d:?}");
    assert_eq!(d.outcome, Outcome::GoalGoesOn);
    assert_eq!(d.state, StateChange::SetIteration(4), "still held");
    let met = goal(Status::MetThisTurn);
    let d = decide(&StopFacts {
        goal: Some(&met),
        ..facts(&s, None, &passing, 1)
    });
    assert_eq!(
        (d.outcome, d.state),
        (Outcome::Completed, StateChange::Remove)
    );
}
