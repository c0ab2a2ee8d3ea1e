//! A gate's result from its runs' outcomes.

use super::job::Outcome;
use super::process::Exit;
use super::{GateResult, GateStatus, RunDetail, ToolInfo};
use crate::config::Gate;
use std::time::Duration;

pub fn gate_result(index: usize, gate: &Gate, files: usize, done: Vec<Outcome>) -> GateResult {
    let base = GateResult {
        gate: index,
        name: gate.name.clone(),
        status: GateStatus::NoFiles,
        duration: Duration::ZERO,
        total: Duration::ZERO,
        files,
        runs: done.len(),
        command: gate.command_text(),
        output: String::new(),
        exit_code: None,
        reason: None,
        optional: gate.optional,
        cached: false,
        install: None,
        missing: None,
        run_details: Vec::new(),
        tools: Vec::new(),
    };
    if done.is_empty() {
        if gate.require_files {
            return GateResult {
                status: GateStatus::Fail,
                reason: Some("checked 0 files, and the gate has require_files = true".into()),
                ..base
            };
        }
        return base;
    }
    let bad = |o: &Outcome| !matches!(o.exit, Some(Exit::Code(0)) | None);
    let any_bad = done.iter().any(bad);
    let timed_out = done.iter().any(|o| o.exit == Some(Exit::TimedOut));
    let skipped = done.iter().find_map(|o| o.skipped_because.clone());
    let status = if timed_out {
        GateStatus::Timeout
    } else if any_bad {
        GateStatus::Fail
    } else if skipped.is_some() {
        GateStatus::Skipped
    } else {
        GateStatus::Pass
    };
    let budget_hit = done
        .iter()
        .any(|o| o.exit == Some(Exit::TimedOut) && o.cut_by_budget);
    let cached_timeout = done
        .iter()
        .any(|o| o.exit == Some(Exit::TimedOut) && o.cached);
    let reason = if budget_hit {
        Some("stopped: the hook's time budget ran out before this gate finished".to_string())
    } else if timed_out {
        Some(format!(
            "timed out after {}{}",
            crate::config::duration::display(gate.timeout),
            if cached_timeout {
                " on these same inputs before (not re-run: change a file, or raise `timeout`)"
            } else {
                ""
            }
        ))
    } else if let Some(Exit::SpawnFailed(m)) = done
        .iter()
        .find_map(|o| o.exit.clone().filter(|e| matches!(e, Exit::SpawnFailed(_))))
    {
        Some(m)
    } else if let Some(Exit::Signal(sig)) = done
        .iter()
        .find_map(|o| o.exit.clone().filter(|e| matches!(e, Exit::Signal(_))))
    {
        Some(format!("killed by signal {sig}"))
    } else {
        skipped
    };
    let exit_code = done.iter().find_map(|o| match o.exit {
        Some(Exit::Code(c)) if c != 0 => Some(c),
        _ => None,
    });
    let shown: Vec<&Outcome> = if any_bad {
        done.iter().filter(|o| bad(o)).collect()
    } else {
        done.iter().collect()
    };
    let output = if shown.len() == 1 {
        shown[0].output.clone()
    } else {
        shown
            .iter()
            .filter(|o| !o.output.is_empty())
            .map(|o| format!("$ {}\n{}", o.command, o.output))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A gate that exits 0 can still say it checked nothing ("0 tests ran"): `fail_on`.
    let matched = (status == GateStatus::Pass)
        .then(|| {
            let plain = crate::text::strip_ansi(&output);
            gate.fail_on
                .iter()
                .find(|p| p.is_match(&plain))
                .map(|p| p.as_str().to_string())
        })
        .flatten();
    let (status, reason) = match matched {
        Some(p) => (
            GateStatus::Fail,
            Some(format!(
                "exited 0, but its output matched fail_on pattern `{p}`"
            )),
        ),
        None => (status, reason),
    };
    let first_start = done.iter().map(|o| o.started).min();
    let last_end = done.iter().map(|o| o.started + o.duration).max();
    let wall = match (first_start, last_end) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    };
    let mut tools: Vec<ToolInfo> = Vec::new();
    for t in done.iter().flat_map(|o| o.tools.iter()) {
        if !tools.contains(t) {
            tools.push(t.clone());
        }
    }
    let run_details = done
        .iter()
        .map(|o| RunDetail {
            dir: if o.dir.as_os_str().is_empty() {
                ".".into()
            } else {
                o.dir.display().to_string()
            },
            label: o.label.clone(),
            command: o.command.clone(),
            status: o.status(),
            exit_code: match o.exit {
                Some(Exit::Code(c)) => Some(c),
                _ => None,
            },
            duration: o.duration,
            cached: o.cached,
            not_cached: o.not_cached.clone(),
            tools: o.tools.clone(),
        })
        .collect();
    GateResult {
        cached: done.iter().all(|o| o.cached),
        status,
        duration: wall,
        total: done.iter().map(|o| o.duration).sum(),
        command: shown
            .first()
            .map_or(base.command.clone(), |o| o.command.clone()),
        output,
        exit_code,
        install: (status == GateStatus::Skipped)
            .then(|| gate.install.clone())
            .flatten(),
        missing: (status == GateStatus::Skipped)
            .then(|| done.iter().find_map(|o| o.missing.clone()))
            .flatten(),
        reason,
        run_details,
        tools,
        ..base
    }
}
