//! The latest result of every gate, kept under `.ralph/results/` by every run (check or hook),
//! with its full coloured output, so `status` and the dashboard can show what ran last
//! without running anything. One file per gate, written atomically: runs in other processes
//! never leave a half-written record.

use crate::runner::{self, GateResult, GateStatus};
use ralph_base::atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub gate: String,
    pub status: GateStatus,
    pub duration_ms: u64,
    pub files: usize,
    pub runs: usize,
    pub cached: bool,
    pub command: String,
    pub exit_code: Option<i32>,
    pub reason: Option<String>,
    /// Whole, ANSI colour kept (as bounded by the runner's capture).
    pub output: String,
    /// What ran it: `check`, `edit` (post-tool-use) or `stop`.
    pub phase: String,
    /// Milliseconds since the Unix epoch.
    pub finished_at_ms: u64,
}

impl Record {
    /// The stored view of a gate's result: its whole coloured output, what ran it and when.
    pub fn of(r: &GateResult, phase: &str, finished_at_ms: u64) -> Self {
        Record {
            gate: r.name.clone(),
            status: r.status,
            duration_ms: r.duration.as_millis() as u64,
            files: r.files,
            runs: r.runs,
            cached: r.cached,
            command: r.command.clone(),
            exit_code: r.exit_code,
            reason: r.reason.clone(),
            output: r.output.clone(),
            phase: phase.to_string(),
            finished_at_ms,
        }
    }
}

pub fn dir(root: &Path) -> PathBuf {
    ralph_base::state::Layout::at(root).results()
}

/// Gate names are free text; the file name is a hash of the name, never the name itself.
fn file_for(root: &Path, gate: &str) -> PathBuf {
    dir(root).join(format!(
        "{}.json",
        &blake3::hash(gate.as_bytes()).to_hex()[..16]
    ))
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Records the gates that ran (gates with no files keep their previous record).
pub fn record(root: &Path, phase: &str, results: &[GateResult]) -> std::io::Result<()> {
    let at = now_ms();
    for r in results.iter().filter(|r| r.status != GateStatus::NoFiles) {
        let bytes = serde_json::to_vec(&Record::of(r, phase, at)).expect("records serialise");
        atomic::write(&file_for(root, &r.name), &bytes)?;
    }
    Ok(())
}

/// Every readable record; unreadable files are skipped (a record is a convenience, not state
/// anything depends on).
pub fn load(root: &Path) -> Vec<Record> {
    let Ok(entries) = std::fs::read_dir(dir(root)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect()
}

/// Runs `plan` the way every caller does: with the project's result cache (read as `reuse`
/// allows, never under `RALPH_GATE_NO_CACHE`; always written), then records each gate's latest result
/// in `.ralph/results` for `status` and the dashboard. A record that cannot be written does
/// not fail the run.
pub fn run_recorded(
    config: &ralph_config::Config,
    plan: &ralph_plan::plan::Plan,
    limits: &runner::Limits,
    env: &ralph_base::env::Environment,
    reuse: runner::Reuse,
    phase: ralph_config::Phase,
    on_event: &(dyn Fn(runner::Event<'_>) + Sync),
) -> Vec<GateResult> {
    let (results, plan) = runner::with_context(config, env, reuse, |cx| {
        let plan = runner::keeping_stored(cx, plan, limits);
        (runner::run(cx, &plan, limits, on_event), plan)
    });
    let _ = record(&config.root, phase.as_str(), &results);
    learn_costs(config, &plan, &results);
    results
}

/// Teaches the scheduler's costs what the runs that really ran took, and the splits it chose.
/// Nothing is read or written when every run was served from the cache.
fn learn_costs(
    config: &ralph_config::Config,
    plan: &ralph_plan::plan::Plan,
    results: &[GateResult],
) {
    let ran = |r: &runner::RunDetail| !r.cached && r.exit_code.is_some();
    if !results.iter().flat_map(|r| &r.run_details).any(ran) {
        return;
    }
    let mut costs = ralph_plan::costs::Costs::load(&config.root);
    for (planned, result) in plan.gates.iter().zip(results) {
        let gate = &config.gates[planned.gate];
        if let Some(parts) = planned.split {
            costs.chose(&gate.name, parts);
        }
        for (i, (job, detail)) in planned.jobs.iter().zip(&result.run_details).enumerate() {
            if !ran(detail) {
                continue;
            }
            let whole = ralph_plan::plan::whole(gate, job)
                .then(|| ralph_plan::costs::whole_id(&gate.name, &job.dir, job.label.as_deref()));
            // Edit feedback plans without costs: its one or two files are sized here.
            let kib = planned.kib.get(i).copied().unwrap_or_else(|| {
                job.kib(|p| std::fs::metadata(config.root.join(p)).map_or(0, |m| m.len()))
            });
            costs.learn(&ralph_plan::costs::Ran {
                gate: &gate.name,
                whole,
                kib,
                wall_ms: detail.duration.as_secs_f64() * 1000.0,
                cpu_ms: detail.cpu.map(|c| c.as_secs_f64() * 1000.0),
            });
        }
    }
    costs.save(&config.root);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(name: &str, status: GateStatus) -> GateResult {
        GateResult {
            gate: 0,
            name: name.into(),
            status,
            duration: Duration::from_millis(12),
            files: 3,
            runs: 1,
            command: "tsc".into(),
            output: "\x1b[31merror\x1b[0m TS2322".into(),
            exit_code: Some(2),
            reason: None,
            optional: false,
            cached: false,
            ..Default::default()
        }
    }

    #[test]
    fn records_round_trip_with_colour_and_hostile_names() {
        let dir = tempfile::tempdir().unwrap();
        let results = [
            result("tsc", GateStatus::Fail),
            result("../../$(x)", GateStatus::Pass),
            result("none", GateStatus::NoFiles),
        ];
        record(dir.path(), "edit", &results).unwrap();
        let mut got = load(dir.path());
        got.sort_by(|a, b| a.gate.cmp(&b.gate));
        assert_eq!(got.len(), 2, "a gate with no files keeps its old record");
        assert_eq!(got[0].gate, "../../$(x)");
        assert_eq!(got[1].output, "\x1b[31merror\x1b[0m TS2322");
        assert_eq!(got[1].phase, "edit");
        assert!(dir
            .path()
            .join(".ralph/results")
            .read_dir()
            .unwrap()
            .all(|e| e.unwrap().path().parent().unwrap().ends_with("results")));
    }

    #[test]
    fn a_later_run_replaces_the_record() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), "check", &[result("tsc", GateStatus::Fail)]).unwrap();
        record(dir.path(), "stop", &[result("tsc", GateStatus::Pass)]).unwrap();
        let got = load(dir.path());
        assert_eq!(
            (got.len(), got[0].status, got[0].phase.as_str()),
            (1, GateStatus::Pass, "stop")
        );
    }
}
