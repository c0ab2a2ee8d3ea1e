//! The exit status must agree with the runner's own report (issue 37, item 2), with real
//! pytest. Each attack makes a failing suite exit 0 in a way the command's spelling does not
//! show, and the bare tool is run to prove it: pytest's own summary says "failed" (or says
//! nothing) while its exit status is 0. ralph-gate loads a listener into every pytest a gate
//! starts and fails the run. Each honest twin must pass unchanged, including a suite that
//! tests a pytest plugin with pytester (whose inner sessions fail on purpose) and a Python
//! that ignores `PYTHONPATH`.

use crate::common::{require_tool, Repo, Run};
use std::process::Command;

const CODE: &str = "def add(a, b):\n    return a - b\n";
// Not the same length as CODE: Python trusts a .pyc whose source has the same size and second.
const GOOD_CODE: &str = "def add(a, b):\n    return (a + b)\n";
const TEST: &str = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n";
const INI: &str = "[pytest]\npythonpath = .\ntestpaths = tests\n";

/// A project whose `add` is wrong, with its tests, and `extra` files on top.
fn project(run: &str, code: &str, extra: &[(&str, &str)]) -> Option<Repo> {
    if !require_tool("pytest") {
        return None;
    }
    let repo = Repo::git();
    repo.config(&crate::common::tests_gate(run))
        .write("pkg/__init__.py", "")
        .write("pkg/calc.py", code)
        .write("tests/test_calc.py", TEST)
        .write("pytest.ini", INI);
    for (path, text) in extra {
        repo.write(path, text);
    }
    repo.commit_all();
    Some(repo)
}

fn check(repo: &Repo) -> Run {
    repo.run(["check", "--no-cache"])
}

/// The attack works on the bare tool (exit 0 over a failing suite), and ralph-gate fails it,
/// saying why; then cached, and once more after the cache is warm.
fn caught(repo: &Repo, run: &str, bare_says: &str, why: &str) {
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "the attack makes the bare command pass: {text}");
    assert!(
        text.contains(bare_says),
        "bare pytest says {bare_says:?}: {text}"
    );
    for attempt in [check(repo), repo.run(["check"]), repo.run(["check"])] {
        assert_eq!(attempt.code, 1, "{attempt:?}");
        assert!(attempt.stdout.contains(why), "{why:?}: {attempt:?}");
    }
}

#[test]
fn a_conftest_that_rewrites_the_exit_status_fails() {
    let conftest = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n";
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, CODE, &[("conftest.py", conftest)]) else {
        return;
    };
    caught(
        &repo,
        run,
        "1 failed",
        "pytest reported 1 failed (tests/test_calc.py::test_add)",
    );
}

#[test]
fn code_under_test_that_exits_zero_midway_fails() {
    // The code under test ends the process with success when it is about to be wrong.
    let code = "import os\n\n\ndef add(a, b):\n    if a - b != a + b:\n        os._exit(0)\n    return a - b\n";
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, code, &[]) else {
        return;
    };
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        !text.contains("failed"),
        "pytest never got to say so: {text}"
    );
    let attempt = check(&repo);
    assert_eq!(attempt.code, 1, "{attempt:?}");
    assert!(
        attempt.stdout.contains("ended before its end"),
        "{attempt:?}"
    );
}

#[test]
fn an_atexit_hook_in_the_package_that_forces_zero_fails() {
    let init = "import atexit\nimport os\n\natexit.register(os._exit, 0)\n";
    let run = "python3 -m pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, CODE, &[("pkg/__init__.py", init)]) else {
        return;
    };
    caught(&repo, run, "1 failed", "pytest reported 1 failed");
}

#[test]
fn a_second_pytest_in_the_command_does_not_hide_the_first() {
    let second = "def test_other():\n    assert True\n";
    let run = "pytest -q -p no:cacheprovider tests/test_calc.py; pytest -q -p no:cacheprovider tests/test_other.py";
    let Some(repo) = project(run, CODE, &[("tests/test_other.py", second)]) else {
        return;
    };
    caught(&repo, run, "1 failed", "pytest reported 1 failed");
}

#[test]
fn pytest_exit_in_a_test_that_stops_the_run_with_zero_fails() {
    let first = "import pytest\n\n\ndef test_a_first():\n    pytest.exit('enough', returncode=0)\n";
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, CODE, &[("tests/test_a.py", first)]) else {
        return;
    };
    caught(&repo, run, "enough", "were never run");
}

#[test]
fn honest_suites_pass_and_failing_ones_fail_as_before() {
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, GOOD_CODE, &[]) else {
        return;
    };
    let (code, _) = repo.shell(run, &[]);
    assert_eq!(code, 0);
    let ok = check(&repo);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(!ok.stdout.contains("ralph-gate: pytest"), "{ok:?}");

    repo.write("pkg/calc.py", CODE);
    let (code, _) = repo.shell(run, &[]);
    assert_eq!(code, 1);
    let failing = check(&repo);
    assert_eq!(failing.code, 1, "{failing:?}");
    assert!(
        !failing.stdout.contains("exit status does not count"),
        "{failing:?}"
    );
}

#[test]
fn a_plugin_tested_with_pytester_passes_though_its_inner_runs_fail() {
    let conftest = "pytest_plugins = ['pytester']\n";
    let test = "def test_inline(pytester):\n    pytester.makepyfile('def test_x():\\n    assert 0\\n')\n    pytester.runpytest().assert_outcomes(failed=1)\n\n\ndef test_subprocess(pytester):\n    pytester.makepyfile('def test_y():\\n    assert 0\\n')\n    pytester.runpytest_subprocess().assert_outcomes(failed=1)\n";
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(
        run,
        GOOD_CODE,
        &[
            ("tests/conftest.py", conftest),
            ("tests/test_plugin.py", test),
        ],
    ) else {
        return;
    };
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "{text}");
    let ok = check(&repo);
    assert_eq!(ok.code, 0, "{ok:?}");
}

#[test]
fn a_python_that_ignores_pythonpath_still_runs_its_tests() {
    let run = "python3 -E -m pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, GOOD_CODE, &[]) else {
        return;
    };
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "{text}");
    let ok = check(&repo);
    assert_eq!(ok.code, 0, "{ok:?}");
    repo.write("pkg/calc.py", CODE);
    assert_eq!(check(&repo).code, 1);
}

/// Sets `path`'s modification time to `secs` seconds and `nanos` after the epoch.
fn set_mtime(path: &std::path::Path, secs: u64, nanos: u32) {
    let at = std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[test]
fn a_source_rewritten_in_the_second_its_bytecode_was_written_is_run_as_it_is() {
    // The same size as CODE: Python cannot tell them apart by size.
    let same_size = "def add(a, b):\n    return a + b\n";
    assert_eq!(same_size.len(), CODE.len());
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, same_size, &[]) else {
        return;
    };
    let second = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 100;
    let source = repo.path().join("pkg/calc.py");
    set_mtime(&source, second, 50_000_000);
    assert_eq!(repo.shell(run, &[]).0, 0, "right code, compiled");
    // Rewritten wrong in the same second, after its bytecode was written.
    repo.write("pkg/calc.py", CODE);
    let cache = repo.path().join("pkg/__pycache__");
    let pyc = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("calc."))
        .expect("pytest wrote calc's bytecode")
        .path();
    set_mtime(&pyc, second, 100_000_000);
    set_mtime(&source, second, 900_000_000);
    repo.commit_all();
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "the bare tool runs the old bytecode: {text}");
    let fresh = tempfile::tempdir().unwrap();
    let clone = fresh.path().join("clone");
    let cloned = Command::new("git")
        .args(["clone", "-q"])
        .arg(repo.path())
        .arg(&clone)
        .status()
        .unwrap();
    assert!(cloned.success());
    let truth = Command::new("sh")
        .args(["-c", run])
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .current_dir(&clone)
        .output()
        .unwrap();
    assert_eq!(
        truth.status.code(),
        Some(1),
        "a fresh clone fails: the truth"
    );
    let attempt = repo.run(["check"]);
    assert_eq!(attempt.code, 1, "{attempt:?}");
    assert!(attempt.stdout.contains("assert 0 == 4"), "{attempt:?}");
}

/// Found by the red team: what a test suite could do to the listener from inside pytest,
/// each with a conftest that sets the status to 0. A module of the project named like the
/// listener, a variable that once marked a nested session, a session posing as an xdist
/// worker: the listener still records, and the run fails.
#[test]
fn the_listener_cannot_be_stood_down_or_stood_in_for() {
    let zero = "import pytest\n\n\n@pytest.hookimpl(trylast=True)\ndef pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n";
    let shadow = zero.to_string();
    let nested = format!(
        "import os\nos.environ['RALPH_GATE_PYTEST_NESTED'] = '1'\nos.environ['RALPH_GATE_PYTEST_REPORTS'] = ''\n{zero}"
    );
    let worker = format!(
        "{zero}\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_configure(config):\n    config.workerinput = {{}}\n"
    );
    let run = "python3 -m pytest -q -p no:cacheprovider";
    let cases: [(&str, &str); 3] = [
        ("ralph_gate_told.py", shadow.as_str()),
        ("tests/conftest.py", nested.as_str()),
        ("tests/conftest.py", worker.as_str()),
    ];
    for (path, text) in cases {
        let extra: Vec<(&str, &str)> = if path == "ralph_gate_told.py" {
            vec![(path, text), ("tests/conftest.py", zero)]
        } else {
            vec![(path, text)]
        };
        let Some(repo) = project(run, CODE, &extra) else {
            return;
        };
        let (code, out) = repo.shell(run, &[]);
        assert_eq!(code, 0, "{path}: the bare command passes: {out}");
        let attempt = check(&repo);
        assert_eq!(attempt.code, 1, "{path}: {attempt:?}");
        assert!(
            attempt.stdout.contains("the exit status does not count"),
            "{path}: {attempt:?}"
        );
    }
}

/// A conftest that, when the listener is there, prints its module name and fails, hoping to
/// be run again without it, and otherwise sets the status to 0. The listener was imported,
/// so the failure is not taken for one to load it: the run fails.
#[test]
fn a_conftest_that_fakes_a_listener_load_failure_gets_no_run_without_it() {
    let conftest = "import os\nimport sys\n\nimport pytest\n\nopts = os.environ.get('PYTEST_ADDOPTS', '').split()\nif '-p' in opts:\n    print('Error importing plugin \"%s\"' % opts[opts.index('-p') + 1])\n    sys.exit(1)\n\n\n@pytest.hookimpl(trylast=True)\ndef pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n";
    let run = "pytest -q -p no:cacheprovider";
    let Some(repo) = project(run, CODE, &[("tests/conftest.py", conftest)]) else {
        return;
    };
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "the bare command passes: {text}");
    let attempt = check(&repo);
    assert_eq!(attempt.code, 1, "{attempt:?}");
}
