//! One fixed set of results for the report formats' snapshot tests, here and in the crates
//! above (the texts an agent reads are worded from the same results): a pass, a failure with
//! tsc's output over two runs, a skip for a missing tool, a gate with no files.

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

/// A pass, a failure with tsc's output over three runs (one skipped), a skip for a missing tool, a gate with
/// no files.
pub fn results() -> Vec<GateResult> {
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
            runs: 3,
            command: "tsc -b .ralph/tsc/b-1/tsconfig.json".into(),
            output: tsc_error.into(),
            exit_code: Some(2),
            run_details: tsc_runs(),
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

/// The sample's tsc runs: one fails, one passes from the cache, one cannot start.
fn tsc_runs() -> Vec<RunDetail> {
    vec![
        RunDetail {
            dir: ".".into(),
            label: Some("tsconfig.json".into()),
            command: "tsc -b .ralph/tsc/b-1/tsconfig.json".into(),
            status: GateStatus::Fail,
            exit_code: Some(2),
            duration: Duration::from_millis(2400),
            tools: vec![tool("tsc")],
            ..Default::default()
        },
        RunDetail {
            dir: "web".into(),
            label: Some("web/tsconfig.json".into()),
            command: "tsc -b .ralph/tsc/b-2/tsconfig.json".into(),
            status: GateStatus::Pass,
            exit_code: Some(0),
            duration: Duration::from_millis(700),
            cached: true,
            tools: vec![tool("tsc")],
            ..Default::default()
        },
        RunDetail {
            dir: "examples/app".into(),
            label: Some("examples/app/tsconfig.json".into()),
            command: "examples/app/node_modules/typescript/bin/tsc -p examples/app/tsconfig.json".into(),
            status: GateStatus::Skipped,
            skipped: Some("the dependencies of examples/app/package.json are not installed: run the package manager's install in examples/app".into()),
            ..Default::default()
        },
    ]
}
