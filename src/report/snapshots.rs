//! Every output format, whole, on one fixed set of results: the human report, JSON, JUnit,
//! GitHub's workflow commands and job summary, and the texts an agent reads. A change to any
//! byte of them shows as a snapshot diff (`src/report/snapshots/`); accept an intended one
//! with `INSTA_UPDATE=always cargo test --lib snapshots` (or `cargo insta review`).

use super::{agent, github, human, json, junit, RunInfo};
use crate::hook::decide::{decide, StopFacts};
use crate::loops::LoopState;
use crate::runner::{GateResult, GateStatus, RunDetail, ToolInfo};
use std::time::Duration;

fn tool(name: &str) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        path: format!("/usr/bin/{name}"),
        runs: None,
        version: Some("1.0.0".into()),
    }
}

/// A pass, a failure with tsc's output over two runs, a skip for a missing tool, a gate with
/// no files.
fn results() -> Vec<GateResult> {
    let tsc_error =
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n";
    vec![
        GateResult {
            gate: 0,
            name: "python".into(),
            status: GateStatus::Pass,
            duration: Duration::from_millis(120),
            total: Duration::from_millis(120),
            files: 3,
            runs: 1,
            command: "python3 -m py_compile a.py b.py c.py".into(),
            tools: vec![tool("python3")],
            ..Default::default()
        },
        GateResult {
            gate: 1,
            name: "typescript".into(),
            status: GateStatus::Fail,
            duration: Duration::from_millis(2400),
            total: Duration::from_millis(3100),
            files: 12,
            runs: 2,
            command: "tsc -b .ralph/tsc/b-1/tsconfig.json".into(),
            output: tsc_error.into(),
            exit_code: Some(2),
            run_details: vec![
                RunDetail {
                    dir: ".".into(),
                    label: Some("tsconfig.json".into()),
                    command: "tsc -b .ralph/tsc/b-1/tsconfig.json".into(),
                    status: GateStatus::Fail,
                    exit_code: Some(2),
                    duration: Duration::from_millis(2400),
                    cpu: None,
                    cached: false,
                    not_cached: None,
                    tools: vec![tool("tsc")],
                },
                RunDetail {
                    dir: "web".into(),
                    label: Some("web/tsconfig.json".into()),
                    command: "tsc -b .ralph/tsc/b-2/tsconfig.json".into(),
                    status: GateStatus::Pass,
                    exit_code: Some(0),
                    duration: Duration::from_millis(700),
                    cpu: None,
                    cached: true,
                    not_cached: None,
                    tools: vec![tool("tsc")],
                },
            ],
            tools: vec![tool("tsc")],
            ..Default::default()
        },
        GateResult {
            gate: 2,
            name: "shellcheck".into(),
            status: GateStatus::Skipped,
            files: 2,
            runs: 1,
            command: "shellcheck a.sh b.sh".into(),
            reason: Some("requires `shellcheck`, which is not on PATH".into()),
            missing: Some("shellcheck".into()),
            install: Some("apt-get install shellcheck".into()),
            ..Default::default()
        },
        GateResult {
            gate: 3,
            name: "go".into(),
            status: GateStatus::NoFiles,
            command: "go vet ./...".into(),
            ..Default::default()
        },
    ]
}

fn info(ci: bool) -> RunInfo {
    RunInfo {
        ci,
        output_limit: 4000,
        duration: Duration::from_millis(2500),
        config: Some("/p/ralph.toml".into()),
        presets: vec![("python".into(), Some("3 .py files".into()))],
    }
}

const PREAMBLE: &str =
    "ralph-gate: /p/ralph.toml\nralph-gate: 17 files with 4 gates for phase check\n";

#[test]
fn human() {
    let r = results();
    insta::assert_snapshot!(human::render(
        PREAMBLE,
        &r,
        &[0, 1, 2, 3],
        false,
        &info(false)
    ));
}

#[test]
fn human_quiet_under_ci() {
    let r = results();
    insta::assert_snapshot!(human::render(
        PREAMBLE,
        &r,
        &[0, 1, 2, 3],
        true,
        &info(true)
    ));
}

#[test]
fn json() {
    insta::assert_snapshot!(json::render(&results(), &info(false)));
}

#[test]
fn junit() {
    insta::assert_snapshot!(junit::render(&results(), &info(false)));
}

#[test]
fn github() {
    let r = results();
    let human = human::render(PREAMBLE, &r, &[0, 1, 2, 3], false, &info(false));
    insta::assert_snapshot!(github::render(&r, &info(false), &human));
}

#[test]
fn github_job_summary() {
    insta::assert_snapshot!(github::summary(&results(), &info(true)));
}

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
        crate::agent::Agent::Claude,
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
