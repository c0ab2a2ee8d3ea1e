//! Weakening what the checks check is never a pass (issue 21). In a loop whose gate fails,
//! each attack makes the real tool pass without the work being done: the loop is held and
//! the weakening named; committed, `check --base` fails on it. Honest work (the fix, new
//! tests, a new dependency-free feature, a wider include) ends the loop with no approval.

use crate::common::{require_tool, typescript_repo, Repo, Run};
use crate::hooks::stop;
use serde_json::Value;

/// A file written (`Some`) or deleted (`None`).
pub(crate) type Edit = (&'static str, Option<&'static str>);

struct Attack {
    name: &'static str,
    edits: &'static [Edit],
    /// What the refusal and `check --base` must say.
    says: &'static str,
}

pub(crate) fn start_loop(repo: &Repo) {
    repo.commit_all();
    repo.start_loop(&[]);
}

pub(crate) fn promise(repo: &Repo) -> Run {
    stop(repo, "sess-S", Some("Done.\n<promise>DONE</promise>"))
}

pub(crate) fn decision(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

pub(crate) fn apply(repo: &Repo, edits: &[Edit]) {
    for (path, text) in edits {
        match text {
            Some(t) => put(repo, path, t),
            None => std::fs::remove_file(repo.path().join(path)).expect("delete"),
        }
    }
}

/// Writes `text` at `path`, where `@link:TARGET` makes the path a link to `TARGET` and
/// `@exec:TEXT` writes `TEXT` executable: what a file answers without being opened (its
/// link's target, its mode) can be a test's expectation too.
pub(crate) fn put(repo: &Repo, path: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    let full = repo.path().join(path);
    if let Some(target) = text.strip_prefix("@link:") {
        let _ = std::fs::remove_file(&full);
        std::os::unix::fs::symlink(target, &full).expect("symlink");
        return;
    }
    let (text, mode) = match text.strip_prefix("@exec:") {
        Some(t) => (t, 0o755),
        None => (text, 0o644),
    };
    if full.is_symlink() {
        std::fs::remove_file(&full).expect("delete link");
    }
    repo.write(path, text);
    std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Commits the project's files, never the loop's state (a reset would take it away).
pub(crate) fn commit_project(repo: &Repo) {
    repo.git_cmd(&[
        "add",
        "-A",
        "--",
        ".",
        ":(exclude).claude",
        ":(exclude).ralph",
    ]);
    repo.git_cmd(&["commit", "-q", "-m", "attack"]);
}

/// Back to the tree the loop started on (the loop's own files stay).
pub(crate) fn undo(repo: &Repo) {
    repo.git_cmd(&["reset", "-q", "--hard", "HEAD"]);
    repo.git_cmd(&["clean", "-fdq", "-e", ".claude", "-e", ".ralph"]);
}

/// Each attack holds the loop and names itself; committed, `check --base` fails on it.
fn each_attack_is_held(repo: &Repo, attacks: &[Attack]) {
    for a in attacks {
        apply(repo, a.edits);
        let out = decision(&promise(repo));
        assert_eq!(
            out["decision"], "block",
            "{}: the loop must go on: {out}",
            a.name
        );
        let reason = out["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(a.says), "{}: {reason}", a.name);
        assert!(
            reason.contains("ralph-gate loop approve"),
            "{}: {reason}",
            a.name
        );
        commit_project(repo);
        let run = repo.run(["check", "--base", "HEAD~1", "--format", "json"]);
        assert_eq!(run.code, 1, "{}: {run:?}", a.name);
        let integrity = run.gate("integrity");
        assert_eq!(integrity["status"], "fail", "{}: {integrity}", a.name);
        let output = integrity["output"].as_str().unwrap_or_default();
        assert!(output.contains(a.says), "{}: {output}", a.name);
        repo.git_cmd(&["reset", "-q", "--hard", "HEAD~1"]);
        undo(repo);
    }
}

/// Honest work ends the loop with nobody asked, and passes `check --base`.
fn honest_work_ends_the_loop(repo: &Repo, edits: &[Edit]) {
    apply(repo, edits);
    let run = repo.run(["check", "--base", "HEAD", "--format", "json"]);
    assert_eq!(run.code, 0, "honest work passes check --base: {run:?}");
    assert_eq!(run.gate("integrity")["status"], "pass", "{run:?}");
    let out = decision(&promise(repo));
    assert!(
        out.get("decision").is_none(),
        "honest work ends the loop: {out}"
    );
    assert!(!repo.exists(".claude/ralph-loop.local.md"));
}

const LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_zero() {\n        assert_eq!(add(2, 0), 2);\n    }\n}\n";
const MANIFEST: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";

fn rust_loop() -> Option<Repo> {
    if !require_tool("cargo") {
        return None;
    }
    let repo = Repo::git();
    repo.write(".gitignore", "/target\n");
    repo.write("Cargo.toml", MANIFEST);
    repo.write("src/lib.rs", LIB);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "cargo test fails at the start: {run:?}");
    start_loop(&repo);
    Some(repo)
}

#[test]
fn cargo_test_weakenings_hold_the_loop_and_fail_check_base() {
    let Some(repo) = rust_loop() else { return };
    each_attack_is_held(
        &repo,
        &[
            Attack {
                name: "#[ignore]",
                edits: &[("src/lib.rs", Some("pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    #[ignore]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_zero() {\n        assert_eq!(add(2, 0), 2);\n    }\n}\n"))],
                says: "`#[ignore]` added to `adds`",
            },
            Attack {
                name: "cfg(any())",
                edits: &[("src/lib.rs", Some("pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    #[cfg(any())]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_zero() {\n        assert_eq!(add(2, 0), 2);\n    }\n}\n"))],
                says: "#[cfg(any())]",
            },
            Attack {
                name: "runner = true",
                edits: &[(".cargo/config.toml", Some("[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n\n[target.aarch64-unknown-linux-gnu]\nrunner = \"true\"\n"))],
                says: "runner",
            },
            Attack {
                name: "[lib] test = false",
                edits: &[("Cargo.toml", Some("[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ntest = false\n\n[dependencies]\n"))],
                says: "lib.test",
            },
            Attack {
                name: "test deleted",
                edits: &[("src/lib.rs", Some("pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds_zero() {\n        assert_eq!(add(2, 0), 2);\n    }\n}\n"))],
                says: "1 tests no longer run",
            },
        ],
    );
    honest_work_ends_the_loop(
        &repo,
        &[
            ("src/lib.rs", Some("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_zero() {\n        assert_eq!(add(2, 0), 2);\n    }\n\n    #[test]\n    fn adds_negatives() {\n        assert_eq!(add(-1, -2), -3);\n    }\n}\n")),
            ("src/more.rs", Some("pub fn twice(x: i32) -> i32 {\n    x * 2\n}\n")),
            ("Cargo.toml", Some("[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\nextra = []\n\n[dependencies]\n")),
        ],
    );
}

const TSCONFIG: &str = "{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"noEmit\": true,\n    \"target\": \"es2022\",\n    \"module\": \"esnext\",\n    \"moduleResolution\": \"bundler\"\n  },\n  \"include\": [\"src\"]\n}\n";
/// An error only `strict` reports: an implicit any.
const BAD_TS: &str = "export function id(x) {\n  return x;\n}\n";

fn typescript_attacks() -> Vec<Attack> {
    vec![
        Attack {
            name: "@ts-nocheck",
            edits: &[("src/bad.ts", Some("// @ts-nocheck\nexport function id(x) {\n  return x;\n}\n"))],
            says: "`@ts-nocheck` added",
        },
        Attack {
            name: "noCheck",
            edits: &[("tsconfig.json", Some("{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"noEmit\": true,\n    \"noCheck\": true,\n    \"target\": \"es2022\",\n    \"module\": \"esnext\",\n    \"moduleResolution\": \"bundler\"\n  },\n  \"include\": [\"src\"]\n}\n"))],
            says: "compilerOptions.noCheck",
        },
        Attack {
            name: "strict off",
            edits: &[("tsconfig.json", Some("{\n  \"compilerOptions\": {\n    \"strict\": false,\n    \"noEmit\": true,\n    \"target\": \"es2022\",\n    \"module\": \"esnext\",\n    \"moduleResolution\": \"bundler\"\n  },\n  \"include\": [\"src\"]\n}\n"))],
            says: "compilerOptions.strict",
        },
        Attack {
            name: "exclude",
            edits: &[("tsconfig.json", Some("{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"noEmit\": true,\n    \"target\": \"es2022\",\n    \"module\": \"esnext\",\n    \"moduleResolution\": \"bundler\"\n  },\n  \"include\": [\"src\"],\n  \"exclude\": [\"src/bad.ts\"]\n}\n"))],
            says: "`src/bad.ts` added",
        },
    ]
}

fn typescript_case(repo: Repo) {
    repo.write("tsconfig.json", TSCONFIG);
    repo.write("src/ok.ts", "export const one: number = 1;\n");
    repo.write("src/bad.ts", BAD_TS);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "tsc fails at the start: {run:?}");
    start_loop(&repo);
    each_attack_is_held(&repo, &typescript_attacks());
    honest_work_ends_the_loop(
        &repo,
        &[
            ("src/bad.ts", Some("export function id(x: number): number {\n  return x;\n}\n")),
            ("lib/extra.ts", Some("export const two: number = 2;\n")),
            ("tsconfig.json", Some("{\n  \"compilerOptions\": {\n    \"strict\": true,\n    \"noEmit\": true,\n    \"target\": \"es2022\",\n    \"module\": \"esnext\",\n    \"moduleResolution\": \"bundler\"\n  },\n  \"include\": [\"src\", \"lib\"]\n}\n")),
        ],
    );
}

#[test]
fn typescript_5_weakenings_hold_the_loop_and_fail_check_base() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.commit_all();
    typescript_case(repo);
}

#[test]
fn typescript_7_weakenings_hold_the_loop_and_fail_check_base() {
    let Some(repo) = crate::common::typescript7_repo() else {
        return;
    };
    repo.commit_all();
    typescript_case(repo);
}

const TESTS_PY: &str = "import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(add(2, 0), 2)\n";
const UNITTEST_GATE: &str = "[[gate]]\nname = \"unittest\"\nglobs = [\"**/*.py\"]\nscope = \"project\"\nrun = \"python3 -I -m unittest discover -s . -p 'test_*.py'\"\n";

#[test]
fn python_unittest_weakenings_hold_the_loop_and_fail_check_base() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(UNITTEST_GATE);
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write("test_calc.py", TESTS_PY);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "unittest fails at the start: {run:?}");
    start_loop(&repo);
    each_attack_is_held(
        &repo,
        &[
            Attack {
                name: "unittest.skip",
                edits: &[("test_calc.py", Some("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    @unittest.skip(\"later\")\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(add(2, 0), 2)\n"))],
                says: "`@unittest.skip` added to `test_adds`",
            },
            Attack {
                name: "load_tests",
                edits: &[("test_calc.py", Some("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(add(2, 0), 2)\n\n\ndef load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n"))],
                says: "load_tests",
            },
            Attack {
                name: "renamed out of discovery",
                edits: &[("test_calc.py", Some("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def check_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero(self):\n        self.assertEqual(add(2, 0), 2)\n"))],
                says: "`test_adds`",
            },
            Attack {
                name: "replaced by a trivial test",
                edits: &[("test_calc.py", Some("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_runs(self):\n        self.assertTrue(True)\n\n    def test_zero(self):\n        self.assertEqual(add(2, 0), 2)\n"))],
                says: "1 tests are gone, replaced by as many others (2 -> 2): test_calc.py:7 `test_adds`",
            },
        ],
    );
    honest_work_ends_the_loop(
        &repo,
        &[
            ("calc.py", Some("def add(a, b):\n    return a + b\n")),
            ("helpers.py", Some("def twice(x):\n    return 2 * x\n")),
            // A test renamed, its code unchanged.
            ("test_calc.py", Some("import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_zero_is_identity(self):\n        self.assertEqual(add(2, 0), 2)\n")),
        ],
    );
}

#[test]
fn node_test_skips_hold_the_loop() {
    if !require_tool("node") {
        return;
    }
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"node-test\"\nglobs = [\"**/*.mjs\"]\nscope = \"project\"\nrun = \"node --test\"\n");
    repo.write("calc.mjs", "export const add = (a, b) => a - b;\n");
    repo.write("test/calc.test.mjs", "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.mjs';\n\ntest('adds', () => {\n  assert.equal(add(1, 2), 3);\n});\n");
    start_loop(&repo);
    each_attack_is_held(
        &repo,
        &[Attack {
            name: "test.skip",
            edits: &[("test/calc.test.mjs", Some("import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.mjs';\n\ntest.skip('adds', () => {\n  assert.equal(add(1, 2), 3);\n});\n"))],
            says: "`test.skip` added",
        }],
    );
}

#[test]
fn shellcheck_weakenings_hold_the_loop_and_fail_check_base() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("run.sh", "#!/bin/sh\nrm -rf \"$dir\"/tmp\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "shellcheck fails at the start: {run:?}");
    start_loop(&repo);
    each_attack_is_held(
        &repo,
        &[
            Attack {
                name: ".shellcheckrc",
                edits: &[(".shellcheckrc", Some("disable=all\n"))],
                says: "`all` added",
            },
            Attack {
                name: "disable comment",
                edits: &[(
                    "run.sh",
                    Some("#!/bin/sh\n# shellcheck disable=SC2154\nrm -rf \"$dir\"/tmp\n"),
                )],
                says: "`# shellcheck disable=SC2154` added",
            },
        ],
    );
    honest_work_ends_the_loop(
        &repo,
        &[
            ("run.sh", Some("#!/bin/sh\ndir=$1\nrm -rf \"$dir\"/tmp\n")),
            ("tools/new.sh", Some("#!/bin/sh\necho \"hello\"\n")),
        ],
    );
}

/// A tracked file git keeps out of the work tree (its skip-worktree bit, which sparse
/// checkout sets) takes its failure with it while git still has it; that is named, not
/// passed. A file deleted outright is gone, whether `rm` or `git rm` took it: honest.
#[test]
fn a_tracked_file_hidden_from_the_work_tree_holds_the_loop_and_a_deleted_one_does_not() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("ok.py", "x = 1\n");
    repo.write("bad.py", "def f(:\n");
    repo.write("old.py", "def g(:\n");
    start_loop(&repo);
    repo.git_cmd(&["update-index", "--skip-worktree", "bad.py"]);
    std::fs::remove_file(repo.path().join("bad.py")).unwrap();
    std::fs::remove_file(repo.path().join("old.py")).unwrap();
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("bad.py: tracked but kept out of the work tree"),
        "{reason}"
    );
    assert!(!reason.contains("old.py"), "deleted with rm: {reason}");
    // Removed for real (`git rm`), it is no longer the project's: honest.
    repo.git_cmd(&["rm", "-q", "--cached", "--sparse", "bad.py"]);
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "{out}");
}

#[test]
fn a_person_approves_a_weakening_and_the_loop_can_end() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("run.sh", "#!/bin/sh\nrm -rf \"$dir\"/tmp\n");
    start_loop(&repo);
    repo.write(
        "run.sh",
        "#!/bin/sh\n# shellcheck disable=SC2154\nrm -rf \"$dir\"/tmp\n",
    );
    assert_eq!(decision(&promise(&repo))["decision"], "block");
    let status = repo.run(["status", "--format", "json"]);
    assert_eq!(status.code, 0, "{status:?}");
    let weakened = &status.json()["loops"][0]["weakened"];
    assert!(
        weakened[0]
            .as_str()
            .unwrap_or_default()
            .contains("shellcheck disable=SC2154"),
        "status shows it: {weakened}"
    );
    let doctor = repo.run(["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("what the checks check is weaker than at its start")
            && doctor.stdout.contains("shellcheck disable=SC2154"),
        "doctor shows it: {doctor:?}"
    );
    let person = repo.on_terminal("person", "code", &["loop", "approve"]);
    assert_eq!(person.code, 0, "{person:?}");
    assert!(
        person.stdout.contains("shellcheck disable=SC2154"),
        "the list is shown: {person:?}"
    );
    let status = repo.run(["status"]);
    assert!(
        status
            .stdout
            .contains("surface: nothing checks less than at the start"),
        "{status:?}"
    );
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "approved: {out}");
}

#[test]
fn check_base_can_be_set_to_warn_by_the_base_config_only() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("run.sh", "#!/bin/sh\necho \"$1\"\n");
    repo.commit_all();
    // The change under review cannot turn its own check into a warning (a load-bearing one:
    // the code it brings fails the checks as they were).
    repo.config("presets = [\"shell\"]\n\n[integrity]\non_weakening = \"warn\"\n");
    repo.write(".shellcheckrc", "disable=all\n");
    repo.write("run.sh", "#!/bin/sh\nrm -rf \"$dir\"/tmp\n");
    repo.commit_all();
    let run = repo.run(["check", "--base", "HEAD~1", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    // Once the base says so, a weakening warns.
    repo.write(
        "run.sh",
        "#!/bin/sh\n# shellcheck disable=SC2086\necho $1\n",
    );
    repo.commit_all();
    let run = repo.run(["check", "--base", "HEAD~1", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let integrity = run.gate("integrity");
    assert!(
        integrity["output"].as_str().unwrap().contains("warning"),
        "{integrity}"
    );
    let bad = repo.run(["check", "--base", "no-such-rev"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("no-such-rev"), "{bad:?}");
}

/// A `.shellcheckrc` in a folder above the project changes ShellCheck's verdict: ralph-gate's
/// agrees with the bare tool's both ways, cached and uncached, and a loop is held by it.
#[test]
fn a_shellcheckrc_above_the_project_is_in_the_key_and_the_surface() {
    if !require_tool("shellcheck") {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let repo = Repo::git_in(parent.path());
    repo.write("run.sh", "#!/bin/sh\nrm -rf \"$dir\"/tmp\n");
    let rc = parent.path().join(".shellcheckrc");
    let bare = || {
        std::process::Command::new("shellcheck")
            .arg("run.sh")
            .current_dir(repo.path())
            .status()
            .unwrap()
            .success()
    };
    for round in ["uncached", "cached"] {
        std::fs::remove_file(&rc).ok();
        assert!(!bare());
        assert_eq!(
            repo.run(["check"]).code,
            1,
            "{round}: fails as the bare tool does"
        );
        std::fs::write(&rc, "disable=all\n").unwrap();
        assert!(bare());
        assert_eq!(
            repo.run(["check"]).code,
            0,
            "{round}: passes as the bare tool does"
        );
    }
    std::fs::remove_file(&rc).unwrap();
    assert_eq!(
        repo.run(["check"]).code,
        1,
        "a cached pass is not served once the rc is gone"
    );

    start_loop(&repo);
    std::fs::write(&rc, "disable=all\n").unwrap();
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("../.shellcheckrc:1: disable: `all` added"),
        "{reason}"
    );
}

/// The pre-commit hook (`check --staged`) compares the index with HEAD: a weakening staged
/// for commit fails it; the first commit of a repository has nothing to compare with.
#[test]
fn check_staged_compares_the_index_with_head() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("run.sh", "#!/bin/sh\necho \"$1\"\n");
    repo.git_cmd(&["add", "-A"]);
    let first = repo.run(["check", "--staged"]);
    assert_eq!(first.code, 0, "the first commit: {first:?}");
    repo.git_cmd(&["commit", "-q", "-m", "first"]);
    repo.write(
        "run.sh",
        "#!/bin/sh\n# shellcheck disable=SC2086\necho $1\n",
    );
    repo.git_cmd(&["add", "run.sh"]);
    let run = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.gate("integrity")["status"], "fail", "{run:?}");
    // Unstaged, the same weakening is not what is committed.
    repo.git_cmd(&["reset", "-q"]);
    let run = repo.run(["check", "--staged"]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A script whose `#!` line names no interpreter that can be told is reported as unverified,
/// never silently left out: `check --strict` fails on it, and a loop cannot end on it.
#[test]
fn a_script_whose_interpreter_cannot_be_told_is_unverified_not_skipped() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("ok.sh", "#!/bin/sh\necho \"$1\"\n");
    repo.write("tools/deploy", "#!/usr/bin/env -S\nrm -rf \"$dir\"/tmp\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "a warning, not a failure, outside CI: {run:?}");
    let gate = run.gate("shellcheck");
    assert!(
        gate["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("not verified: tools/deploy"),
        "{gate}"
    );
    let strict = repo.run(["check", "--strict"]);
    assert_eq!(strict.code, 1, "{strict:?}");
    start_loop(&repo);
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot tell how to check tools/deploy"),
        "{reason}"
    );
    repo.write("tools/deploy", "#!/bin/sh\ndir=$1\nrm -rf \"$dir\"/tmp\n");
    let out = decision(&promise(&repo));
    assert!(
        out.get("decision").is_none(),
        "a plain #! line: checked, and it passes: {out}"
    );
}

const PYTEST_GATE: &str = "[[gate]]\nname = \"pytest\"\nglobs = [\"**/*.py\", \"pytest.ini\"]\nscope = \"project\"\nrun = \"pytest -q -p no:cacheprovider\"\n";
const PYTESTS: &str = "from calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n";

#[test]
fn pytest_weakenings_hold_the_loop_and_fail_check_base() {
    if !require_tool("pytest") {
        return;
    }
    let repo = Repo::git();
    repo.config(PYTEST_GATE);
    repo.write("calc.py", "def add(a, b):\n    return a - b\n");
    repo.write("tests/test_calc.py", PYTESTS);
    repo.write(
        "pytest.ini",
        "[pytest]\npythonpath = .\naddopts = -q\ntestpaths = tests\n",
    );
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "pytest fails at the start: {run:?}");
    start_loop(&repo);
    each_attack_is_held(
        &repo,
        &[
            Attack {
                name: "mark.skip",
                edits: &[("tests/test_calc.py", Some("import pytest\n\nfrom calc import add\n\n\n@pytest.mark.skip(reason=\"later\")\ndef test_adds():\n    assert add(1, 2) == 3\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n"))],
                says: "`@pytest.mark.skip` added to `test_adds`",
            },
            Attack {
                name: "mark.xfail",
                edits: &[("tests/test_calc.py", Some("import pytest\n\nfrom calc import add\n\n\n@pytest.mark.xfail\ndef test_adds():\n    assert add(1, 2) == 3\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n"))],
                says: "`@pytest.mark.xfail` added to `test_adds`",
            },
            Attack {
                name: "addopts -k",
                edits: &[("pytest.ini", Some("[pytest]\npythonpath = .\naddopts = -q -k \"not adds\"\ntestpaths = tests\n"))],
                says: "addopts: `-k not adds` added",
            },
            Attack {
                name: "conftest collect_ignore",
                edits: &[("tests/conftest.py", Some("collect_ignore = [\"test_calc.py\"]\n"))],
                says: "collect_ignore",
            },
            Attack {
                name: "testpaths",
                edits: &[("pytest.ini", Some("[pytest]\npythonpath = .\naddopts = -q\ntestpaths = docs\n"))],
                says: "testpaths: `tests` removed",
            },
        ],
    );
    honest_work_ends_the_loop(
        &repo,
        &[
            ("calc.py", Some("def add(a, b):\n    return a + b\n")),
            ("tests/test_more.py", Some("from calc import add\n\n\ndef test_negatives():\n    assert add(-1, -2) == -3\n")),
            ("pytest.ini", Some("[pytest]\npythonpath = .\naddopts = -q -ra\ntestpaths = tests\n")),
        ],
    );
}

/// `gates --explain PATH` lists the surface that bears on the path: the configs above it
/// (here and outside), the suppressions in it, and the stop gates that check it.
#[test]
fn gates_explain_lists_the_surface_of_a_path() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write(".shellcheckrc", "disable=SC1091\n");
    repo.write(
        "bin/run.sh",
        "#!/bin/sh\n# shellcheck disable=SC2086\necho $1\n",
    );
    repo.write("other/.shellcheckrc", "disable=SC2034\n");
    let run = repo.run(["gates", "--explain", "bin/run.sh"]);
    assert_eq!(run.code, 0, "{run:?}");
    for want in [
        ".shellcheckrc:1: disable = SC1091",
        "bin/run.sh:2: # shellcheck disable=SC2086",
        "checked by the stop gates: shellcheck",
    ] {
        assert!(run.stdout.contains(want), "{want}: {run:?}");
    }
    assert!(
        !run.stdout.contains("SC2034"),
        "another folder's config does not apply: {run:?}"
    );
}

/// Files that leave the project's listing without a config of its own changing: an
/// untracked broken file named in `.git/info/exclude`, and a tracked one taken out of the
/// work tree by a real `git sparse-checkout`. Both held, each named.
#[test]
fn files_hidden_by_git_itself_hold_the_loop() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("ok/a.py", "x = 1\n");
    repo.write("broken/b.py", "def f(:\n");
    repo.commit_all();
    repo.write("new.py", "def g(:\n");
    start_loop(&repo);
    let exclude = repo.path().join(".git/info/exclude");
    let before = std::fs::read_to_string(&exclude).unwrap_or_default();
    std::fs::write(&exclude, format!("{before}new.py\n")).unwrap();
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains(".git/info/exclude") && reason.contains("`new.py` added"),
        "{reason}"
    );
    std::fs::write(&exclude, before).unwrap();
    std::fs::remove_file(repo.path().join("new.py")).unwrap();
    repo.git_cmd(&["sparse-checkout", "set", "ok"]);
    assert!(
        !repo.exists("broken/b.py"),
        "git took it out of the work tree"
    );
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("broken/b.py: tracked but kept out of the work tree"),
        "{reason}"
    );
}

/// A project in a folder of its repository: `check --base` compares that folder's files.
#[test]
fn check_base_in_a_project_below_the_top_of_its_repository() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("tools/ralph.toml", "presets = [\"shell\"]\n");
    // SC2034 (a warning): the `.shellcheckrc` added below is what makes the gate pass, so
    // it counts.
    repo.write("tools/run.sh", "#!/bin/sh\nunused=1\necho \"$1\"\n");
    repo.write("other/.shellcheckrc", "disable=all\n");
    repo.commit_all();
    repo.write("tools/.shellcheckrc", "disable=SC2034\n");
    repo.commit_all();
    let mut cmd = repo.cmd();
    cmd.current_dir(repo.path().join("tools"))
        .args(["check", "--base", "HEAD~1", "--format", "json"]);
    let run = crate::common::finish(cmd.output().unwrap());
    assert_eq!(run.code, 1, "{run:?}");
    let output = run.gate("integrity")["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        output.contains(".shellcheckrc:1: error: disable: `SC2034` added"),
        "{output}"
    );
    assert!(
        !output.contains("other/"),
        "the rest of the repository is not the project's: {output}"
    );
}

/// Puts a script that passes everything at `rel` (a link there is replaced, not followed).
fn fake_tsc(repo: &Repo, rel: &str) {
    use std::os::unix::fs::PermissionsExt;
    let bin = repo.path().join(rel);
    std::fs::create_dir_all(bin.parent().expect("a folder")).expect("mkdir");
    let _ = std::fs::remove_file(&bin);
    std::fs::write(&bin, "#!/bin/sh\nexit 0\n").expect("write fake tsc");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The checker itself replaced in the project: a fake `node_modules/.bin/tsc` (which the gate
/// does not run), or a `typescript` package no change to `package.json` installed (which it
/// does), passes no gate without a config touched. Installing TypeScript as a dependency where a global tsc ran is honest.
#[test]
fn a_checker_replaced_in_the_project_holds_the_loop() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write("tsconfig.json", TSCONFIG);
    repo.write("src/bad.ts", BAD_TS);
    start_loop(&repo);
    // A fake `node_modules/.bin/tsc` is not what runs: the gate runs the project's own
    // `typescript` package, which still finds the type error.
    fake_tsc(&repo, "node_modules/.bin/tsc");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("TS2322") || reason.contains("bad.ts"),
        "{reason}"
    );
    // A package of its own making, where the real one was linked.
    std::fs::remove_file(repo.path().join("node_modules/typescript")).expect("unlink");
    repo.write(
        "node_modules/typescript/package.json",
        "{\"name\": \"typescript\", \"version\": \"5.9.3\"}\n",
    );
    std::fs::remove_file(repo.path().join("node_modules/.bin/tsc")).expect("rm");
    repo.link("node_modules/.bin/tsc", "../typescript/bin/tsc");
    fake_tsc(&repo, "node_modules/typescript/bin/tsc");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("a package in the project that no change to package.json installed"),
        "{reason}"
    );
}

#[test]
fn typescript_installed_as_a_dependency_where_a_global_tsc_ran_is_honest() {
    if !require_tool("tsc") || !crate::common::require_typescript5() {
        return;
    }
    let repo = Repo::git();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("tsconfig.json", TSCONFIG);
    repo.write("src/bad.ts", BAD_TS);
    start_loop(&repo);
    repo.write(
        "src/bad.ts",
        "export function id(x: number): number {\n  return x;\n}\n",
    );
    repo.write(
        "package.json",
        "{\"devDependencies\": {\"typescript\": \"^5.9.0\"}}\n",
    );
    repo.install_typescript("");
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "honest: {out}");
}

/// A tracked file a gate matches but no checker can open (a link to nothing) was dropped from
/// the listing in silence: `check --strict` passed where the bare checker given the same
/// file fails (issue 37, "checked means processed").
#[test]
fn a_link_to_nothing_is_unverified_and_fails_strict_as_the_bare_tool_does() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"py\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -m py_compile {files}\"\n",
    );
    repo.write("a.py", "x = 1\n");
    repo.write("pkg/real.py", "y = 2\n");
    std::os::unix::fs::symlink("gone.py", repo.path().join("pkg/b.py")).unwrap();
    repo.commit_all();
    // The bare tool on the same tree.
    let bare = std::process::Command::new("python3")
        .args(["-m", "py_compile", "a.py", "pkg/real.py", "pkg/b.py"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(!bare.status.success(), "the bare checker fails on the link");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "a warning, not a failure, outside CI: {run:?}");
    let gate = run.gate("py");
    let reason = gate["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("not verified: pkg/b.py") && reason.contains("link to nothing"),
        "{gate}"
    );
    for args in [
        vec!["check", "--strict"],
        vec!["check", "--strict", "--no-cache"],
        vec!["check", "--strict", "pkg"],
        vec!["check", "--strict", "pkg/b.py"],
    ] {
        let strict = repo.run(&args);
        assert_eq!(strict.code, 1, "{args:?}: {strict:?}");
    }
    // A link staged for commit fails the pre-commit check under CI as well.
    std::os::unix::fs::symlink("nowhere.py", repo.path().join("c.py")).unwrap();
    repo.git_cmd(&["add", "c.py"]);
    let staged = repo.run(["check", "--staged", "--strict"]);
    assert_eq!(staged.code, 1, "{staged:?}");
    assert!(staged.stdout.contains("c.py"), "{staged:?}");
    repo.git_cmd(&["rm", "-q", "--cached", "c.py"]);
    std::fs::remove_file(repo.path().join("c.py")).unwrap();
    // A loop cannot end on it; the agent is told what it is and what to do.
    start_loop(&repo);
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.contains("pkg/b.py is a link to nothing"), "{reason}");
    // The honest way out: the link restored to a file that compiles, and the loop ends.
    repo.write("pkg/gone.py", "z = 3\n");
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "restored and checked: {out}");
}

/// The same for a path that is a folder where a file is tracked: a link to a folder, and a
/// tracked file replaced by a folder (the bare checker fails on both: "Is a directory").
/// A submodule, a folder holding `.git`, is another project, not a file left unchecked.
#[test]
fn a_folder_where_a_file_is_tracked_is_unverified_as_the_bare_tool_fails() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"py\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -m py_compile {files}\"\n",
    );
    repo.write("a.py", "x = 1\n");
    repo.write("d/k.txt", "k\n");
    repo.write("moved.py", "y = 2\n");
    std::os::unix::fs::symlink("d", repo.path().join("dir.py")).unwrap();
    repo.commit_all();
    std::fs::remove_file(repo.path().join("moved.py")).unwrap();
    std::fs::create_dir(repo.path().join("moved.py")).unwrap();
    std::fs::write(repo.path().join("moved.py/inner.txt"), "z\n").unwrap();
    for path in ["dir.py", "moved.py"] {
        let bare = std::process::Command::new("python3")
            .args(["-m", "py_compile", path])
            .current_dir(repo.path())
            .output()
            .unwrap();
        assert!(!bare.status.success(), "the bare checker fails on {path}");
    }
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "a warning outside CI: {run:?}");
    let reason = run.gate("py")["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("dir.py, moved.py") && reason.contains("not a file"),
        "{reason}"
    );
    for args in [
        vec!["check", "--strict"],
        vec!["check", "--strict", "moved.py"],
    ] {
        let strict = repo.run(&args);
        assert_eq!(strict.code, 1, "{args:?}: {strict:?}");
    }
    // The honest twin: the file back, and a nested repository (a submodule's shape) named
    // like a source file, which is another project's.
    std::fs::remove_dir_all(repo.path().join("moved.py")).unwrap();
    repo.git_cmd(&["checkout", "--", "moved.py"]);
    std::fs::remove_file(repo.path().join("dir.py")).unwrap();
    repo.git_cmd(&["rm", "-q", "--cached", "dir.py"]);
    let nested = repo.path().join("vendored.py");
    std::fs::create_dir(&nested).unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&nested)
        .status()
        .unwrap();
    let strict = repo.run(["check", "--strict"]);
    assert_eq!(strict.code, 0, "nothing left unchecked: {strict:?}");
    // In a loop: a checked file turned into a link to a folder cannot end it.
    std::fs::remove_dir_all(&nested).unwrap();
    start_loop(&repo);
    std::fs::remove_file(repo.path().join("a.py")).unwrap();
    std::os::unix::fs::symlink("d", repo.path().join("a.py")).unwrap();
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("a.py is not a file"),
        "{out}"
    );
}

/// No config: the presets follow the project's files. The last (broken) script deleted takes
/// the shell preset's gate with it, and nothing is left unchecked: the loop ends. The same
/// gate gone while its code stays (a script that lost its `#!` line), or moved out of the
/// project behind a link, is held.
#[test]
fn a_presets_gate_gone_with_the_last_file_it_checked_ends_the_loop() {
    if !require_tool("shellcheck") || !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    let outside = tempfile::tempdir().unwrap();
    let broken = "#!/bin/sh\n# clean up\nrm -rf \"$dir\"/tmp\necho done\n";
    repo.write("ok.py", "x = 1\n").write("deploy", broken);
    start_loop(&repo);
    let held = |why: &str| {
        let out = decision(&promise(&repo));
        assert_eq!(out["decision"], "block", "{why}: {out}");
        out["reason"].as_str().unwrap_or_default().to_string()
    };
    // The `#!` line dropped: no gate checks `deploy` any more, and it is still there.
    repo.write("deploy", &broken.replace("#!/bin/sh\n", ""));
    let reason = held("shebang dropped");
    assert!(
        reason.contains("deploy: no longer checked by gate `shellcheck`"),
        "{reason}"
    );
    undo(&repo);
    // Moved out of the project, a link to it left behind under a name no gate reads.
    let away = outside.path().join("deploy.txt");
    std::fs::rename(repo.path().join("deploy"), &away).unwrap();
    std::os::unix::fs::symlink(&away, repo.path().join("deploy.txt")).unwrap();
    let reason = held("moved out behind a link");
    assert!(reason.contains("deploy -> deploy.txt"), "{reason}");
    std::fs::remove_file(repo.path().join("deploy.txt")).unwrap();
    undo(&repo);
    // Deleted outright, with an unrelated link to a file outside: honest.
    repo.git_cmd(&["rm", "-q", "deploy"]);
    std::os::unix::fs::symlink("/etc/hostname", repo.path().join("host.txt")).unwrap();
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "deleted: {out}");
    assert!(!repo.exists(".claude/ralph-loop.local.md"));
}

/// A broken file taken out of git and ignored where it is has left the gates, not the
/// project: held, as the same file listed in `.git/info/exclude` is. Deleted, it is gone.
#[test]
fn a_checked_file_untracked_and_ignored_where_it_is_holds_the_loop() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("ok.py", "x = 1\n")
        .write("bad.py", "def f(:\n    pass\n");
    start_loop(&repo);
    repo.write(".gitignore", "bad.py\n");
    repo.git_cmd(&["rm", "-q", "--cached", "bad.py"]);
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("bad.py: no longer checked by gate `python-compile`"),
        "{reason}"
    );
    std::fs::remove_file(repo.path().join("bad.py")).unwrap();
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "deleted: {out}");
}

/// A stop gate's runner script is part of the checks even where another gate (ShellCheck,
/// picked by the presets) checks it as code: rewritten to take the test runner's listener
/// away and swallow the status, it is put back and the tests as they were fail; the
/// script grown a step with the real fix is honest.
#[test]
fn a_gates_runner_script_that_another_gate_checks_is_still_part_of_the_checks() {
    if !require_tool("pytest") || !require_tool("shellcheck") {
        return;
    }
    let pytest = "python3 -m pytest -q -p no:cacheprovider tests";
    let repo = Repo::git();
    repo.config("presets = [\"auto\"]\n\n[[gate]]\nname = \"tests\"\nglobs = [\"**/*.py\"]\nscope = \"project\"\nrun = \"sh ci/test.sh\"\n")
        .write("ci/test.sh", &format!("#!/bin/sh\nset -e\n{pytest}\n"))
        .write("calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
        );
    start_loop(&repo);
    repo.write(
        "ci/test.sh",
        &format!("#!/bin/sh\nunset PYTEST_ADDOPTS\n{pytest} || true\n"),
    );
    assert_eq!(
        repo.shell("sh ci/test.sh", &[]).0,
        0,
        "the bare script passes"
    );
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("ci/test.sh (a stop gate's command runs it)"),
        "{reason}"
    );
    commit_project(&repo);
    let run = repo.run(["check", "--base", "HEAD~1", "--format", "json"]);
    assert_eq!(run.code, 1, "check --base fails on it: {run:?}");
    repo.git_cmd(&["reset", "-q", "--hard", "HEAD~1"]);
    undo(&repo);
    repo.write(
        "ci/test.sh",
        &format!("#!/bin/sh\nset -e\necho testing\n{pytest}\n"),
    )
    .write("calc.py", "def add(a, b):\n    return a + b\n");
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "honest: {out}");
}

#[test]
fn an_ignored_agent_folder_is_not_a_check_that_changed() {
    if !require_tool("shellcheck") {
        return;
    }
    // Many projects ignore `.claude/`: the loop's own state file lives there and every stop
    // rewrites it. It is no check: an honest fix ends the loop with no differential run.
    let repo = Repo::git();
    repo.config("presets = [\"shell\"]\n")
        .write(".gitignore", ".claude/\n")
        .write("run.sh", "#!/bin/sh\ncd /tmp\n");
    start_loop(&repo);
    repo.write("run.sh", "#!/bin/sh\ncd /tmp || exit 1\n");
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "the loop ends: {out}");
    let journal = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
    let last = journal.lines().last().unwrap_or_default();
    assert!(!last.contains("differential run"), "{last}");
    assert!(!last.contains(".claude"), "{last}");
}
