//! The JSON report. Schema `ralph-gate.check.v1`, documented in the README; fields are only
//! ever added, never renamed or removed, within a schema version.

use super::{RunInfo, Summary};
use crate::runner::{GateResult, GateStatus, ToolInfo};
use ralph_base::text::strip_ansi;
use serde::Serialize;

pub const SCHEMA: &str = "ralph-gate.check.v1";

#[derive(Serialize)]
struct Report<'a> {
    schema: &'static str,
    ok: bool,
    duration_ms: u128,
    config: Option<&'a str>,
    presets: Vec<Preset<'a>>,
    summary: Summary,
    gates: Vec<Gate<'a>>,
}

#[derive(Serialize)]
struct Preset<'a> {
    name: &'a str,
    detected_by: Option<&'a str>,
}

#[derive(Serialize)]
struct Gate<'a> {
    gate: &'a str,
    status: GateStatus,
    counts_as_failure: bool,
    duration_ms: u128,
    files: usize,
    runs: usize,
    command: &'a str,
    exit_code: Option<i32>,
    reason: Option<&'a str>,
    cached: bool,
    output: String,
    /// The runs' times added up (`duration_ms` is wall time).
    total_ms: u128,
    install: Option<&'a str>,
    tools: &'a [ToolInfo],
    run_details: Vec<Run<'a>>,
}

impl<'a> Gate<'a> {
    /// The JSON view of a gate's result: its output cut and uncoloured, and whether it counts
    /// as a failure in this run.
    fn of(r: &'a GateResult, info: &RunInfo) -> Self {
        Gate {
            gate: &r.name,
            status: r.status,
            counts_as_failure: r.counts_as_failure(info.ci),
            duration_ms: r.duration.as_millis(),
            files: r.files,
            runs: r.runs,
            command: &r.command,
            exit_code: r.exit_code,
            reason: r.reason.as_deref(),
            cached: r.cached,
            output: super::diagnostics::within(&strip_ansi(&r.output), info.output_limit),
            total_ms: r.total.as_millis(),
            install: r.install.as_deref(),
            tools: &r.tools,
            run_details: r
                .run_details
                .iter()
                .map(|d| Run {
                    dir: &d.dir,
                    label: d.label.as_deref(),
                    command: &d.command,
                    status: d.status,
                    exit_code: d.exit_code,
                    duration_ms: d.duration.as_millis(),
                    cached: d.cached,
                    skipped: d.skipped.as_deref(),
                    not_cached: d.not_cached.as_deref(),
                    tools: &d.tools,
                    tests: d.tests.as_deref(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct Run<'a> {
    dir: &'a str,
    label: Option<&'a str>,
    command: &'a str,
    status: GateStatus,
    exit_code: Option<i32>,
    duration_ms: u128,
    cached: bool,
    /// Why it did not run, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'a str>,
    not_cached: Option<&'a str>,
    tools: &'a [ToolInfo],
    /// The tests its runners said they ran, when it ran now.
    #[serde(skip_serializing_if = "Option::is_none")]
    tests: Option<&'a [String]>,
}

pub fn render(results: &[GateResult], info: &RunInfo) -> String {
    let summary = Summary::of(results, info.ci);
    let report = Report {
        schema: SCHEMA,
        ok: summary.ok(),
        duration_ms: info.duration.as_millis(),
        config: info.config.as_deref(),
        presets: info
            .presets
            .iter()
            .map(|(name, by)| Preset {
                name,
                detected_by: by.as_deref(),
            })
            .collect(),
        summary,
        gates: results.iter().map(|r| Gate::of(r, info)).collect(),
    };
    let mut text = serde_json::to_string_pretty(&report).expect("report serialises");
    text.push('\n');
    text
}
