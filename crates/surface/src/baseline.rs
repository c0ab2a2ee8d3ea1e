//! A baseline for gates a project lists in `baseline = [...]`: such a gate failing at a stop
//! that would end a loop does not hold it when it fails exactly as it failed on the loop's
//! start tree, in files the loop did not change. The findings a project already had (old
//! warnings in files nobody touched) then do not trap the first loop; a new one holds it.
//!
//! Decided by what the tool said, not by a parser of its findings: every line of its output
//! now must be among the lines it printed at the start, as many times; none may name a file
//! changed since the start (a finding in a file the agent touched is the agent's); and the
//! exit status must be the start's. A finding in a file nobody changed cannot move, so a
//! line that names a place (`a.ts(12,5)`, `a.sh:2:1`, `  3:7  error`) must be there exactly;
//! only a line naming none (a summary, a count, a time) may differ in its numbers. Anything
//! else (a new message, one more of the same, a finding moved to another line, a crash,
//! another exit) is a failure as it always was. Pure: outputs in, a verdict out.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How a gate failed on a loop's start tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartFailure {
    pub exit: Option<i32>,
    pub output: String,
    /// The tests its runners said failed, when they said (`GateResult::failed_tests_now`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_tests: Option<BTreeSet<String>>,
}

/// The gates that failed on a start tree, by name.
pub type StartFailures = BTreeMap<String, StartFailure>;

/// A line as compared: colour codes and surrounding blanks removed; in a line that names no
/// place (see [`names_a_place`]), each run of digits one `#`.
fn normalized(line: &str) -> String {
    let plain = ralph_base::text::strip_ansi(line);
    let plain = plain.trim();
    if names_a_place(plain) {
        return plain.to_string();
    }
    let mut out = String::with_capacity(plain.len());
    let mut in_number = false;
    for c in plain.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            out.push(c);
            in_number = false;
        }
    }
    out
}

/// True when `line` names a line of a file, the way the tools do: `:12`, `(12,5)`, or a
/// line that begins `12:5` (a finding under its file's heading).
fn names_a_place(line: &str) -> bool {
    let b = line.as_bytes();
    let digit_after = |i: usize| b.get(i + 1).is_some_and(u8::is_ascii_digit);
    let leading = line.split(':').next().is_some_and(|h| {
        !h.is_empty() && h.bytes().all(|c| c.is_ascii_digit()) && digit_after(h.len())
    });
    leading
        || b.iter()
            .enumerate()
            .any(|(i, c)| matches!(c, b':' | b'(') && digit_after(i))
}

fn lines(output: &str) -> Vec<String> {
    output
        .lines()
        .map(normalized)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Whether a gate that now fails with `exit` and `output` fails only as it did at the start
/// (`start`), naming none of `changed` (paths relative to the project root, changed since
/// the start). `None` when it does; else the first line that is new, for the report.
/// Where its test runners said which tests failed, then and now (`failed_now`), the tests
/// decide, not the lines: a loop that made one of two old failures pass changed the
/// runner's progress line and its summary, and failed nothing new.
pub fn new_since_start(
    start: &StartFailure,
    (exit, output): (Option<i32>, &str),
    failed_now: Option<&BTreeSet<String>>,
    changed: &[String],
) -> Option<String> {
    if exit != start.exit {
        return Some(format!(
            "the exit status is {} (at the start: {})",
            exit.map_or("none".into(), |c| c.to_string()),
            start.exit.map_or("none".into(), |c| c.to_string())
        ));
    }
    let by_tests = start.failed_tests.as_ref().zip(failed_now);
    if let Some((then, now)) = by_tests.filter(|(_, now)| !now.is_empty()) {
        if let Some(new) = now.difference(then).next() {
            return Some(format!("{new} failed, and did not at the start"));
        }
        return output
            .lines()
            .find(|l| changed.iter().any(|c| names(&normalized(l), c)))
            .map(|l| l.trim().to_string());
    }
    let mut left: BTreeMap<String, usize> = BTreeMap::new();
    for l in lines(&start.output) {
        *left.entry(l).or_default() += 1;
    }
    for (raw, line) in output.lines().zip(output.lines().map(normalized)) {
        if line.is_empty() {
            continue;
        }
        if changed.iter().any(|c| names(&line, c)) {
            return Some(raw.trim().to_string());
        }
        match left.get_mut(&line) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return Some(raw.trim().to_string()),
        }
    }
    None
}

/// Turns each failing gate of `results` that `config` lists in `baseline` and that fails as
/// it did in `failures` (a start tree's or a base's, named by `then`), naming none of
/// `changed`, into a pass that says so. Returns, for the report, why each other one still
/// fails.
pub fn excuse(
    config: &ralph_config::Config,
    strict: bool,
    (failures, changed, then): (&StartFailures, &[String], &str),
    results: &mut [ralph_runner::runner::GateResult],
) -> Vec<String> {
    let mut notes = Vec::new();
    let asks = |r: &ralph_runner::runner::GateResult| {
        r.counts_as_failure(strict) && config.gates.get(r.gate).is_some_and(|g| g.baseline)
    };
    for r in results.iter_mut().filter(|r| asks(r)) {
        let Some(was) = failures.get(&r.name) else {
            notes.push(format!("baseline: {} passed {then}", r.name));
            continue;
        };
        let failed_now = r.failed_tests_now(strict);
        match new_since_start(was, (r.exit_code, &r.output), failed_now.as_ref(), changed) {
            Some(new) => notes.push(format!(
                "baseline: {} says what it did not {then}: {new}",
                r.name
            )),
            None => {
                let why = format!("fails only as it failed {then}, in files not changed since");
                notes.push(format!("baseline: {} {why}: not counted", r.name));
                r.status = ralph_runner::runner::GateStatus::Pass;
                r.reason = Some(format!("{why} (baseline)"));
            }
        }
    }
    notes
}

/// Pure: the runs of a gate that checked only part of the project (some of its runs ran,
/// the others could not start: a nested project whose own install is missing), by name
/// (what the run covers, else its folder), with their folders (that of a file it covers);
/// `None` for any other result.
pub fn unstarted(r: &ralph_runner::runner::GateResult) -> Option<Vec<(String, String)>> {
    use ralph_runner::runner::GateStatus;
    let skipped = could_not_start(r);
    let some_ran = skipped.len() < r.run_details.len();
    let partly = r.status == GateStatus::Skipped && r.unverified.is_empty() && some_ran;
    (partly && !skipped.is_empty()).then_some(skipped)
}

/// Pure: the runs of a gate that could not start, whatever the others did, by name, with
/// their folders (see [`unstarted`]).
pub fn could_not_start(r: &ralph_runner::runner::GateResult) -> Vec<(String, String)> {
    r.run_details
        .iter()
        .filter(|d| d.skipped.is_some())
        .map(|d| match &d.label {
            // What it covers is a file (a tsconfig): its folder is the run's.
            Some(label) => {
                let path = std::path::Path::new(label);
                let folder = match path.extension() {
                    Some(_) => path.parent().map(|p| p.to_string_lossy().into_owned()),
                    None => Some(label.clone()),
                };
                let folder = folder
                    .filter(|f| !f.is_empty())
                    .unwrap_or_else(|| ".".into());
                (label.clone(), folder)
            }
            None => (d.dir.clone(), d.dir.clone()),
        })
        .collect()
}

/// Names of runs, by gate.
pub type Runs = BTreeMap<String, std::collections::BTreeSet<String>>;

/// Turns each stop gate of `results` that checked only part of the project into a pass
/// that says so, where each run that could not start could not start on the start tree
/// either (`unstarted_then`, by gate) and no file the loop changed lies in its folder: what
/// was never checked is not the loop's to check, and nothing of the loop's went there. Not
/// under `strict` (CI), where a gate that checked part fails as before.
pub fn excuse_unstarted(
    strict: bool,
    (unstarted_then, changed, then): (&Runs, &[String], &str),
    results: &mut [ralph_runner::runner::GateResult],
) -> Vec<String> {
    let mut notes = Vec::new();
    for r in results.iter_mut().filter(|r| !strict && !r.optional) {
        let Some(runs) = unstarted(r) else {
            continue;
        };
        let before = unstarted_then.get(&r.name);
        let old = runs
            .iter()
            .all(|(name, _)| before.is_some_and(|b| b.contains(name)));
        let inside = |dir: &str| {
            dir == "."
                || changed
                    .iter()
                    .any(|f| std::path::Path::new(f).starts_with(dir))
        };
        let touched = runs.iter().any(|(_, dir)| inside(dir));
        let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
        if !old || touched {
            let why = if old {
                "a file the loop changed is there"
            } else {
                "it ran then"
            };
            notes.push(format!(
                "{}: {} could not start ({why})",
                r.name,
                names.join(", ")
            ));
            continue;
        }
        let why = format!(
            "checked all but {}, which could not start {then} either, and no file changed there",
            names.join(", ")
        );
        notes.push(format!("{}: {why}: not counted", r.name));
        r.status = ralph_runner::runner::GateStatus::Pass;
        r.reason = Some(why);
    }
    notes
}

/// True when a gate of `results` the config lists in `baseline` fails: worth the start
/// tree's or the base's runs.
pub fn asked(
    config: &ralph_config::Config,
    strict: bool,
    results: &[ralph_runner::runner::GateResult],
) -> bool {
    results.iter().any(|r| {
        r.counts_as_failure(strict) && config.gates.get(r.gate).is_some_and(|g| g.baseline)
    })
}

/// Whether `line` names the file `path` (relative): as a whole word of a path, so `b.sh`
/// does not name `lib.sh`.
fn names(line: &str, path: &str) -> bool {
    let path = normalized(path);
    line.match_indices(&path).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + path.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || "_-.".contains(c)));
        (edge(before) || before == Some('/')) && edge(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partly_checked(skipped_label: &str) -> ralph_runner::runner::GateResult {
        use ralph_runner::runner::{GateResult, GateStatus, RunDetail};
        let run = |dir: &str, label: Option<&str>, skipped: bool| RunDetail {
            dir: dir.into(),
            label: label.map(str::to_string),
            skipped: skipped.then(|| "not installed".to_string()),
            ..Default::default()
        };
        GateResult {
            name: "tsc".into(),
            status: GateStatus::Skipped,
            run_details: vec![
                run(".", Some("tsconfig.json"), false),
                run(".", Some(skipped_label), true),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn a_run_that_could_not_start_then_either_in_a_folder_nobody_touched_is_not_counted() {
        use ralph_runner::runner::GateStatus;
        let then: Runs = [(
            "tsc".to_string(),
            ["ex/app/tsconfig.json".to_string()].into(),
        )]
        .into();
        let mut ok = [partly_checked("ex/app/tsconfig.json")];
        let notes = excuse_unstarted(false, (&then, &["src/a.ts".into()], "then"), &mut ok);
        assert_eq!(ok[0].status, GateStatus::Pass, "{notes:?}");
        // A file changed in its folder; a run that started then; under CI: counted.
        for (changed, label, strict) in [
            ("ex/app/main.ts", "ex/app/tsconfig.json", false),
            ("src/a.ts", "ex/other/tsconfig.json", false),
            ("src/a.ts", "ex/app/tsconfig.json", true),
        ] {
            let mut r = [partly_checked(label)];
            excuse_unstarted(strict, (&then, &[changed.into()], "then"), &mut r);
            assert_eq!(
                r[0].status,
                GateStatus::Skipped,
                "{changed} {label} {strict}"
            );
        }
        // The root's own run could not start: its folder is every file's.
        let mut root = [partly_checked("tsconfig.build.json")];
        let then: Runs = [(
            "tsc".to_string(),
            ["tsconfig.build.json".to_string()].into(),
        )]
        .into();
        excuse_unstarted(false, (&then, &["src/a.ts".into()], "then"), &mut root);
        assert_eq!(root[0].status, GateStatus::Skipped);
    }

    fn start(output: &str) -> StartFailure {
        StartFailure {
            exit: Some(1),
            output: output.into(),
            failed_tests: None,
        }
    }

    const OLD: &str = "a.sh:3:1: warning: x appears unused. [SC2034]\nb.sh:7:5: warning: Use 'cd ... || exit'. [SC2164]\n";

    #[test]
    fn the_same_findings_are_old_and_a_summary_may_count_fewer() {
        let now = format!("{OLD}2 findings in 0.31s\n");
        let then = start(&format!("{OLD}2 findings in 0.29s\n"));
        assert_eq!(new_since_start(&then, (Some(1), &now), None, &[]), None);
        // Fewer is fine too: one was fixed, and the summary says 1.
        let fewer = "b.sh:7:5: warning: Use 'cd ... || exit'. [SC2164]\n1 findings in 0.3s\n";
        assert_eq!(new_since_start(&then, (Some(1), fewer), None, &[]), None);
    }

    #[test]
    fn a_finding_moved_to_another_line_of_an_unchanged_file_is_new() {
        // The file did not change, so the finding did not move: another one took its place.
        let moved = "a.sh:4:1: warning: x appears unused. [SC2034]\nb.sh:7:5: warning: Use 'cd ... || exit'. [SC2164]\n";
        assert!(new_since_start(&start(OLD), (Some(1), moved), None, &[])
            .is_some_and(|l| l.starts_with("a.sh:4:1")));
        for place in [
            "a.ts(12,5): error TS2322: x",
            "  3:7  error  'x' is unused",
            "a.py:2: error: x",
        ] {
            assert!(names_a_place(place), "{place}");
        }
        for none in [
            "Found 3 errors in 2 files (checked 10 source files)",
            "Done in 1.2s",
        ] {
            assert!(!names_a_place(none), "{none}");
        }
    }

    #[test]
    fn a_new_finding_one_more_of_the_same_or_another_exit_is_new() {
        let new = format!("{OLD}c.sh:1:1: warning: y appears unused. [SC2034]\n");
        assert!(new_since_start(&start(OLD), (Some(1), &new), None, &[])
            .is_some_and(|l| l.starts_with("c.sh:1:1")));
        let twice = format!("{OLD}a.sh:9:1: warning: x appears unused. [SC2034]\n");
        assert!(new_since_start(&start(OLD), (Some(1), &twice), None, &[]).is_some());
        assert!(new_since_start(&start(OLD), (Some(2), OLD), None, &[])
            .is_some_and(|w| w.contains("exit status is 2")));
    }

    #[test]
    fn a_finding_in_a_changed_file_is_the_changes() {
        let said = new_since_start(&start(OLD), (Some(1), OLD), None, &["b.sh".into()]);
        assert!(said.is_some_and(|l| l.starts_with("b.sh:7:5")));
        // A changed file whose name is part of another's is not named by it.
        assert_eq!(
            new_since_start(
                &start(OLD),
                (Some(1), OLD),
                None,
                &["ba.sh".into(), "sh".into()]
            ),
            None
        );
        assert!(names("src/b.sh:1: x", "b.sh"));
        assert!(!names("lib.sh:1: x", "b.sh"));
    }

    fn tests(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn where_the_runner_named_them_the_failed_tests_decide() {
        let then = StartFailure {
            exit: Some(1),
            output: "FF\nt.py::a failed\nt.py::b failed\n2 failed\n".into(),
            failed_tests: Some(tests(&["t.py::a", "t.py::b"])),
        };
        // One of the two made to pass: other lines, no new failure.
        let now = ".F\nt.py::b failed\n1 failed, 1 passed\n";
        let one = tests(&["t.py::b"]);
        assert_eq!(
            new_since_start(&then, (Some(1), now), Some(&one), &[]),
            None
        );
        // A test failing that passed then is new, whatever the lines.
        let other = tests(&["t.py::b", "u.py::c"]);
        let said = new_since_start(&then, (Some(1), now), Some(&other), &[]);
        assert!(said.is_some_and(|w| w.starts_with("u.py::c failed")));
        // An old test that now fails in a changed file is the loop's.
        let there = ".F\ncalc.py:3: in add\n1 failed, 1 passed\n";
        let said = new_since_start(&then, (Some(1), there), Some(&one), &["calc.py".into()]);
        assert!(said.is_some_and(|l| l.starts_with("calc.py:3")));
        // A failure no test is named for (a collection that broke, a status rewritten) is
        // read by its lines.
        let none = BTreeSet::new();
        assert!(new_since_start(&then, (Some(1), now), Some(&none), &[]).is_some());
    }
}
