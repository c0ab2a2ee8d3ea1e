use super::*;
use crate::runner::GateStatus;
use std::time::Duration;

fn state(iteration: u64, max: u64, promise: Option<&str>) -> LoopState {
    let mut s = LoopState::new(
        "Build the parser.\nMake the tests pass.",
        max,
        promise,
        "s1",
        None,
        "t",
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
    }
}

#[test]
fn promise_with_passing_gates_completes() {
    let s = state(4, 10, Some("DONE"));
    let results = [
        gate("tests", GateStatus::Pass),
        gate("lint", GateStatus::NoFiles),
    ];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    assert_eq!(d.outcome, Outcome::Completed);
    assert!(!d.blocks());
    assert_eq!(d.state, StateChange::Remove);
    assert_eq!(
        d.output.system_message.as_deref(),
        Some("ralph-gate: loop complete. Note: 1 stop gate checked 0 files: lint."),
        "passing on nothing checked is said"
    );
    assert_eq!(d.output.decision, None);
    let all_ran = [gate("tests", GateStatus::Pass)];
    assert_eq!(
        decide(&facts(&s, Some("DONE"), &all_ran, 0)).output,
        HookOutput::default(),
        "otherwise allowing prints nothing"
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
    let reason = d.output.reason.unwrap();
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
        d.output.system_message.as_deref(),
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
    let reason = d.output.reason.unwrap();
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
        d.output.system_message.as_deref(),
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
    assert!(d.output.reason.unwrap().contains("no completion promise"));
}

#[test]
fn iteration_limit_allows_and_names_what_still_fails() {
    let s = state(10, 10, Some("DONE"));
    let results = [gate("tests", GateStatus::Fail)];
    let d = decide(&facts(&s, Some("DONE"), &results, 0));
    assert_eq!(d.outcome, Outcome::LimitReached);
    assert!(!d.blocks());
    assert_eq!(d.state, StateChange::Remove);
    let msg = d.output.system_message.unwrap();
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
        .system_message
        .unwrap()
        .contains("stopped as stuck: 3 stops in a row"));
    let never = StopFacts {
        stuck_after: 0,
        ..facts(&s, None, &results, 50)
    };
    assert_eq!(decide(&never).outcome, Outcome::Continue);
}

#[test]
fn skipped_gates_fail_only_under_ci() {
    let s = state(1, 0, Some("DONE"));
    let results = [gate("tsc", GateStatus::Skipped)];
    assert_eq!(
        decide(&facts(&s, Some("DONE"), &results, 0)).outcome,
        Outcome::Completed
    );
    let ci = StopFacts {
        ci: true,
        ..facts(&s, Some("DONE"), &results, 0)
    };
    assert_eq!(decide(&ci).outcome, Outcome::PromiseRefused);
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
    let reason = d.output.reason.unwrap();
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
