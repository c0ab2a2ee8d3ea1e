//! A baseline (issue 39, item 6): a gate listed in `baseline` holds a loop only for what it
//! did not say on the loop's start tree. Old findings in files the loop did not change do
//! not trap it; a new finding, one in a file the loop changed, or the baseline added during
//! the loop still hold it. ShellCheck, the real tool, at every step.

use crate::common::{require_tool, Repo};
use crate::surface::{decision, promise, start_loop};

const OLD: &str = "#!/bin/sh\ncd /tmp\necho old\n";
const TASK: &str = "#!/bin/sh\nunused=1\necho task\n";
const FIXED: &str = "#!/bin/sh\necho task\n";

/// A shell project with an old warning in `old.sh` and the loop's task in `task.sh`, both
/// failing ShellCheck at the start; `config` is its ralph.toml.
fn project(config: &str) -> Option<Repo> {
    if !require_tool("shellcheck") {
        return None;
    }
    let repo = Repo::git();
    repo.config(config)
        .write("old.sh", OLD)
        .write("task.sh", TASK);
    let first = repo.run(["check"]);
    assert_eq!(first.code, 1, "both scripts fail at the start: {first:?}");
    start_loop(&repo);
    Some(repo)
}

const WITH: &str = "presets = [\"shell\"]\nbaseline = [\"shellcheck\"]\n";

fn ends(repo: &Repo) {
    let out = decision(&promise(repo));
    assert!(out.get("decision").is_none(), "the loop ends: {out}");
}

fn held(repo: &Repo, naming: &str) {
    let out = decision(&promise(repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(naming), "{naming:?}: {reason}");
}

#[test]
fn old_findings_in_untouched_files_do_not_hold_the_loop_and_new_ones_do() {
    let Some(repo) = project(WITH) else {
        return;
    };
    // A new finding beside the fix holds.
    repo.write("task.sh", "#!/bin/sh\ncd /var\necho task\n");
    held(&repo, "task.sh");
    // The fix alone ends the loop: old.sh still has its old warning (the bare tool fails).
    repo.write("task.sh", FIXED);
    let (code, _) = repo.shell("shellcheck --severity=warning old.sh", &[]);
    assert_eq!(code, 1, "the old finding is still there");
    ends(&repo);
}

#[test]
fn a_finding_in_a_file_the_loop_changed_is_the_loops() {
    let Some(repo) = project(WITH) else {
        return;
    };
    // old.sh touched (a line added above its old finding, which stays as it was).
    repo.write("task.sh", FIXED)
        .write("old.sh", &OLD.replace("echo old", "echo old\necho more"));
    held(&repo, "old.sh");
    // One more of the same finding in an untouched file is new too.
    let Some(repo) = project(WITH) else {
        return;
    };
    repo.write("task.sh", FIXED).write("other.sh", OLD);
    held(&repo, "other.sh");
}

#[test]
fn without_a_baseline_or_with_one_added_during_the_loop_old_findings_hold() {
    let Some(repo) = project("presets = [\"shell\"]\n") else {
        return;
    };
    repo.write("task.sh", FIXED);
    held(&repo, "old.sh");
    // The agent adds the baseline itself: the stop gates changed since the start.
    repo.write("ralph.toml", WITH);
    held(&repo, "baseline");
}

#[test]
fn a_baseline_naming_no_gate_is_a_config_error() {
    let repo = Repo::git();
    repo.config("presets = [\"shell\"]\nbaseline = [\"shelcheck\"]\n")
        .write("a.sh", FIXED);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("ralph.toml:2:") && run.stderr.contains("baseline names `shelcheck`"),
        "{run:?}"
    );
}

#[test]
fn check_base_counts_only_what_the_change_brought() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.config(WITH)
        .write("old.sh", OLD)
        .write("task.sh", TASK);
    repo.commit_all();
    let (_, base) = repo.shell("git rev-parse HEAD", &[]);
    let base = base.trim();
    repo.write("task.sh", FIXED);
    repo.commit_all();
    let run = repo.run(["check", "--no-cache", "--base", base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("baseline: shellcheck fails only as it failed at"),
        "{run:?}"
    );
    // The same change with a new finding fails; so does the old one without a baseline.
    repo.write("task.sh", "#!/bin/sh\ncd /var\necho task\n");
    repo.commit_all();
    assert_eq!(repo.run(["check", "--no-cache", "--base", base]).code, 1);
    repo.write("task.sh", FIXED)
        .config("presets = [\"shell\"]\n");
    repo.commit_all();
    let run = repo.run(["check", "--no-cache", "--base", base]);
    assert_eq!(run.code, 1, "{run:?}");
}

#[test]
fn tsc_old_errors_in_an_untouched_file_stay_and_errors_the_change_causes_there_hold() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.config("presets = [\"typescript\"]\nbaseline = [\"tsc\"]\n")
        .write(
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}, \"include\": [\"*.ts\"]}\n",
        )
        .write("lib.ts", "export function size(s: string): number {\n  return s.length;\n}\n")
        .write("old.ts", "import { size } from './lib';\nexport const n: number = size('x');\nexport const bad: number = 'old';\n")
        .write("task.ts", "export const t: number = 'task';\n");
    assert_eq!(repo.run(["check"]).code, 1);
    start_loop(&repo);
    // The change makes `size` return a string: old.ts (untouched) gets a new error.
    repo.write("task.ts", "export const t: number = 1;\n")
        .write(
            "lib.ts",
            "export function size(s: string): string {\n  return s;\n}\n",
        );
    held(&repo, "old.ts");
    // The fix alone ends the loop, old.ts's old error still there.
    repo.write(
        "lib.ts",
        "export function size(s: string): number {\n  return s.length;\n}\n",
    );
    ends(&repo);
}

#[test]
fn a_stop_with_no_promise_does_not_tell_the_agent_to_fix_old_findings() {
    let Some(repo) = project(WITH) else {
        return;
    };
    // Nothing changed: every finding is as at the start, none is shown as work.
    let out = decision(&crate::hooks::stop(&repo, "sess-S", Some("Looking.")));
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(!reason.contains("Failing gates"), "{reason}");
    // task.sh changed and still failing: the gate fails, naming it (with the whole output).
    repo.write("task.sh", "#!/bin/sh\nunused=2\necho task\n");
    let out = decision(&crate::hooks::stop(&repo, "sess-S", Some("Working on it.")));
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("Failing gates") && reason.contains("task.sh"),
        "{reason}"
    );
    // After it, nothing is left to fix: the agent is told it may finish.
    repo.write("task.sh", FIXED);
    let out = decision(&crate::hooks::stop(&repo, "sess-S", Some("Fixed.")));
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        !reason.contains("old.sh") && !reason.contains("failing"),
        "{reason}"
    );
}

/// An old failure whose output names the run's own temporary folder (pytest's `tmp_path`,
/// under the folder each run of a gate has to itself) is the same failure in every run:
/// found on python-dotenv 1.0.1's sdist, where two tests fail as root, and the loop was
/// held for them.
#[test]
fn an_old_failure_naming_the_runs_temporary_folder_is_old() {
    if !require_tool("pytest") {
        return;
    }
    let repo = Repo::git();
    repo.config("baseline = [\"pytest\"]\n\n[[gate]]\nname = \"pytest\"\nglobs = [\"**/*.py\"]\nscope = \"project\"\nrun = \"pytest -q -p no:cacheprovider\"\n")
        .write(".gitignore", "__pycache__/\n")
        .write("pytest.ini", "[pytest]\npythonpath = .\n")
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write("test_old.py", "def test_old(tmp_path):\n    assert not tmp_path.exists()\n")
        .write("test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
    let first = repo.run(["check"]);
    assert_eq!(first.code, 1, "the old test fails at the start: {first:?}");
    start_loop(&repo);
    repo.write("calc.py", "def add(a, b):\n    s = a + b\n    return s\n");
    let (code, _) = repo.shell("pytest -q -p no:cacheprovider test_old.py", &[]);
    assert_eq!(code, 1, "the old failure is still there");
    ends(&repo);
}

/// Where the test runner names the tests that failed, those decide: a loop that makes one
/// of two old failures pass changed pytest's progress line and summary, and was held for
/// lines that were new; a test that fails now and passed at the start still holds it.
#[test]
fn the_tests_that_failed_decide_where_the_runner_names_them() {
    if !require_tool("pytest") {
        return;
    }
    let project = || {
        let repo = Repo::git();
        repo.config("baseline = [\"pytest\"]\n\n[[gate]]\nname = \"pytest\"\nglobs = [\"**/*.py\"]\nscope = \"project\"\nrun = \"pytest -q -p no:cacheprovider\"\n")
            .write(".gitignore", "__pycache__/\n")
            .write("pytest.ini", "[pytest]\npythonpath = .\n")
            .write("calc.py", "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n")
            .write("test_old.py", "def test_old():\n    assert 1 == 2\n")
            .write("test_calc.py", "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n");
        assert_eq!(repo.run(["check"]).code, 1, "two tests fail at the start");
        start_loop(&repo);
        repo
    };
    let repo = project();
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    );
    ends(&repo);
    let repo = project();
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
    );
    held(&repo, "FAILED test_calc.py::test_mul");
}
