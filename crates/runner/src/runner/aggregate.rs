//! A gate's result from its runs' outcomes.

use super::job::Outcome;
use super::process::Exit;
use super::{GateResult, GateStatus, RunDetail, ToolInfo};
use crate::observe::OfTests;
use ralph_config::Gate;
use ralph_plan::files::Unopenable;
use ralph_plan::plan::{Unchecked, Unverified};
use std::collections::HashSet;
use std::path::Path;
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
        unverified: Vec::new(),
        unopenable: Vec::new(),
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
    let any_bad = done.iter().any(bad);
    let shown: Vec<&Outcome> = if any_bad {
        done.iter().filter(|o| bad(o)).collect()
    } else {
        done.iter().collect()
    };
    let output = output(&shown);
    let (status, reason) = fail_on(gate, &output, status(&done), reason(gate, &done));
    GateResult {
        cached: done.iter().all(|o| o.cached),
        status,
        duration: wall(&done),
        total: done.iter().map(|o| o.duration).sum(),
        command: shown
            .first()
            .map_or(base.command.clone(), |o| o.command.clone()),
        output,
        exit_code: done.iter().find_map(|o| match o.exit {
            Some(Exit::Code(c)) if c != 0 => Some(c),
            _ => None,
        }),
        install: (status == GateStatus::Skipped)
            .then(|| install_hint(gate, &done))
            .flatten(),
        missing: (status == GateStatus::Skipped)
            .then(|| done.iter().find_map(|o| o.missing.clone()))
            .flatten(),
        reason,
        run_details: done.iter().map(detail).collect(),
        tools: tools(&done),
        ..base
    }
}

/// How to install what a skipped gate misses: the gate's own `install` for a tool it
/// requires, the runtime's for an interpreter or a driver's program (node for tsc).
fn install_hint(gate: &Gate, done: &[Outcome]) -> Option<String> {
    let mut skipped = done.iter().filter(|o| o.missing.is_some()).peekable();
    if skipped.peek().is_some() && skipped.all(|o| o.install_said) {
        return None;
    }
    let missing = done.iter().find_map(|o| o.missing.as_deref());
    match missing {
        Some(tool) if !gate.requires.iter().any(|r| r == tool) => {
            ralph_plan::tools::runtime_install(tool)
                .map(str::to_string)
                .or_else(|| gate.install.clone())
        }
        _ => gate.install.clone(),
    }
}

/// A run that did not exit 0 (and ran).
fn bad(o: &Outcome) -> bool {
    !matches!(o.exit, Some(Exit::Code(0)) | None)
}

/// The worst of the runs: a timeout, a failure, a skip, else a pass.
fn status(done: &[Outcome]) -> GateStatus {
    if done.iter().any(|o| o.exit == Some(Exit::TimedOut)) {
        GateStatus::Timeout
    } else if done.iter().any(bad) {
        GateStatus::Fail
    } else if done.iter().any(|o| o.skipped_because.is_some()) {
        GateStatus::Skipped
    } else {
        GateStatus::Pass
    }
}

/// Why the gate did not simply pass or fail, when there is more to say than an exit code.
fn reason(gate: &Gate, done: &[Outcome]) -> Option<String> {
    let timed_out = |o: &&Outcome| o.exit == Some(Exit::TimedOut);
    if done.iter().filter(timed_out).any(|o| o.cut_by_budget) {
        return Some("stopped: the hook's time budget ran out before this gate finished".into());
    }
    if done.iter().any(|o| timed_out(&o)) {
        return Some(format!(
            "timed out after {}{}",
            ralph_config::duration::display(gate.timeout),
            if done.iter().filter(timed_out).any(|o| o.cached) {
                " on these same inputs before (not re-run: change a file, or raise `timeout`)"
            } else {
                ""
            }
        ));
    }
    for o in done {
        match &o.exit {
            Some(Exit::SpawnFailed(e)) => return Some(e.to_string()),
            _ => continue,
        }
    }
    for o in done {
        if let Some(Exit::Signal(sig)) = o.exit {
            return Some(format!("killed by signal {sig}"));
        }
    }
    // A skip says why only when nothing failed: a failure's headline is its exit, and the
    // skipped run still shows, as SKIP, under it.
    match done.iter().any(bad) {
        true => None,
        false => done.iter().find_map(|o| o.skipped_because.clone()),
    }
}

/// True when `output` (colour codes removed) is several runs' output, each under its
/// command, the first being `command` (see [`output`]): a report that heads the output with
/// the command would show it twice.
pub fn names_its_commands(command: &str, output: &str) -> bool {
    output.starts_with(&format!("$ {command}\n"))
}

/// The output shown: one run's as it is, several runs' each under its command.
fn output(shown: &[&Outcome]) -> String {
    if shown.len() == 1 {
        return shown[0].output.clone();
    }
    shown
        .iter()
        .filter(|o| !o.output.is_empty())
        .map(|o| format!("$ {}\n{}", o.command, o.output))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A gate that exits 0 can still say it checked nothing ("0 tests ran"): `fail_on`.
fn fail_on(
    gate: &Gate,
    output: &str,
    status: GateStatus,
    reason: Option<String>,
) -> (GateStatus, Option<String>) {
    if status != GateStatus::Pass {
        return (status, reason);
    }
    let plain = ralph_base::text::strip_ansi(output);
    match gate.fail_on.iter().find(|p| p.is_match(&plain)) {
        Some(p) => (
            GateStatus::Fail,
            Some(format!(
                "exited 0, but its output matched fail_on pattern `{}`",
                p.as_str()
            )),
        ),
        None => (status, reason),
    }
}

/// From the first run's start to the last run's end.
fn wall(done: &[Outcome]) -> Duration {
    let first_start = done.iter().map(|o| o.started).min();
    let last_end = done.iter().map(|o| o.started + o.duration).max();
    match (first_start, last_end) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    }
}

/// Every tool the runs used, once each.
fn tools(done: &[Outcome]) -> Vec<ToolInfo> {
    let mut tools: Vec<ToolInfo> = Vec::new();
    for t in done.iter().flat_map(|o| o.tools.iter()) {
        if !tools.contains(t) {
            tools.push(t.clone());
        }
    }
    tools
}

fn detail(o: &Outcome) -> RunDetail {
    RunDetail {
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
        cpu: o.cpu,
        cached: o.cached,
        skipped: o.skipped_because.clone(),
        not_cached: o.not_cached.clone(),
        tools: o.tools.clone(),
        outside: o.outside.clone(),
        read: o.read.clone(),
        linked: o.linked.clone(),
        wrote: o.wrote.clone(),
        loaded: o.loaded.clone(),
        of_tests: o.of_tests.clone(),
        tests: o.tests.clone(),
        failed_tests: o.failed_tests.clone(),
        subtests: o.subtests.clone(),
    }
}

/// Of `files` (relative to `root`), those the gate's tests did not process as their data:
/// a file its tests' code opened or asked of (a link's target read as a case, whether a
/// flag file is there) was processed, though no checker could open it. A tool's walk
/// asking of a link to nothing is not the tests' and processes nothing.
pub fn unprocessed(files: &[Unverified], result: &GateResult, root: &Path) -> Vec<Unverified> {
    let named: HashSet<&Path> = result
        .run_details
        .iter()
        .flat_map(|d| &d.of_tests)
        .filter(|(_, part)| matches!(part, OfTests::Read | OfTests::Listed))
        .map(|(path, _)| path.as_path())
        .collect();
    files
        .iter()
        .filter(|f| !named.contains(root.join(&f.path).as_path()))
        .cloned()
        .collect()
}

/// Paths no run of the gate checked join the result, and its reason says why.
pub fn note_unverified(result: &mut GateResult, files: &[Unverified]) {
    if files.is_empty() {
        return;
    }
    result.unverified = files.iter().map(|f| f.path.display().to_string()).collect();
    let named = |why: Unchecked| -> Vec<String> {
        files
            .iter()
            .filter(|f| f.why == why)
            .map(|f| f.path.display().to_string())
            .collect()
    };
    result.unopenable = files
        .iter()
        .filter_map(|f| match f.why {
            Unchecked::Unopenable(why) => Some((f.path.display().to_string(), why)),
            Unchecked::Interpreter => None,
        })
        .collect();
    let mut notes = Vec::new();
    for (why, said) in [
        (Unchecked::Interpreter, "the #! line names no interpreter that can be told; give the file a plain #! line or an extension"),
        (Unchecked::Unopenable(Unopenable::DanglingLink), "a link to nothing: no checker can open it; restore its target or remove the link"),
        (Unchecked::Unopenable(Unopenable::NotAFile), "not a file (a folder, or a link to one): no checker can open it; put the file back or stop tracking the path"),
    ] {
        let paths = named(why);
        if !paths.is_empty() {
            notes.push(format!("not verified: {} ({said})", paths.join(", ")));
        }
    }
    let note = notes.join("; ");
    result.reason = Some(match result.reason.take() {
        Some(r) => format!("{r}; {note}"),
        None => note,
    });
}
