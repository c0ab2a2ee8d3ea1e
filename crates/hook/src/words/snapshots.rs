//! The texts an agent reads, whole, on the report formats' fixed results
//! (`ralph_runner::report::sample`). A change to any byte shows as a snapshot diff
//! (`src/words/snapshots/`); accept an intended one with
//! `INSTA_UPDATE=always cargo test -p ralph-hook snapshots`.

use crate::hook::decide::{decide, StopFacts};
use crate::words as agent;
use ralph_loop::loops::LoopState;
use ralph_runner::report::sample::results;
use ralph_runner::runner::GateResult;

#[test]
fn agent_edit_feedback_and_missing_tool() {
    let r = results();
    let feedback = agent::edit_feedback("src/a.ts", &r, false, agent::TEXT_CAP).unwrap();
    let (notice, _) = agent::missing_notice("a.sh", &r, &[]).unwrap();
    insta::assert_snapshot!(format!("{feedback}\n---\n{notice}"));
}

#[test]
fn agent_refusals() {
    let r = results();
    let state = LoopState::new(
        "Fix the types.",
        10,
        Some("DONE"),
        "s",
        None,
        "t",
        ralph_base::agent::Agent::Claude,
    );
    let facts = StopFacts {
        state: &state,
        promise_seen: Some("DONE"),
        results: &r,
        ci: false,
        unchanged_stops: 2,
        stuck_after: 5,
        hold: Some("The stop gates changed since this loop started.".into()),
        promise_misplaced: false,
        blocks_in_a_row: 3,
        block_cap: 8,
        goal: None,
    };
    let d = decide(&facts);
    let failing: Vec<&GateResult> = r.iter().filter(|g| g.failed()).collect();
    let (plain, plain_system) = agent::plain_stop(&failing);
    insta::assert_snapshot!(format!(
        "{}\n--- system: {}\n--- why: {}\n---\n{plain}\n--- system: {plain_system}",
        d.output.reason().unwrap_or_default(),
        d.output.system().unwrap_or_default(),
        d.why
    ));
}
