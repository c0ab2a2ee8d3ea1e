//! Presets that reach "done" (issue 39, item 5): with no config, the project's own tests run
//! before a loop may end and in `check`, where the project configures them (pytest named by
//! its config, a package.json test script, Go's tests), never after each edit, and the
//! verdict is the bare tool's on the same tree. Projects that configure no runner get none.

use crate::common::{require_tool, Repo};
use crate::surface::{decision, promise};

/// `check` and the bare command agree on the tree: both fail, then both pass once `fix`
/// is applied; `gate` is the preset's gate; the tree is left as it was.
fn agrees_with_the_bare_tool(repo: &Repo, gate: &str, bare: &str, fix: (&str, &str)) {
    repo.commit_all();
    let run = repo.run(["check", "--no-cache", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.gate(gate)["status"], "fail", "{run:?}");
    let (_, dirty) = repo.shell("git status --porcelain", &[]);
    assert_eq!(dirty, "", "a check leaves the tree as it found it");
    let (code, text) = repo.shell(bare, &[]);
    assert_ne!(code, 0, "the bare tool fails too: {text}");
    // The edit phase does not run a test suite.
    let edit = repo.run(["check", "--phase", "edit", "--no-cache"]);
    assert!(!edit.stdout.contains(&format!("  {gate} ")), "{edit:?}");
    repo.write(fix.0, fix.1);
    let (code, text) = repo.shell(bare, &[]);
    assert_eq!(code, 0, "the bare tool passes when fixed: {text}");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(&format!("PASS  {gate}")), "{run:?}");
}

/// A flat pytest project (pytest named in pyproject.toml) whose `add` returns `body`, and
/// its one test, `test_adds`.
pub(crate) fn pytest_project(body: &str) -> Repo {
    let repo = Repo::git();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"0\"\n\n[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    )
    .write("calc.py", &format!("def add(a, b):\n    {body}\n"))
    .write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n",
    );
    repo
}

#[test]
fn pytest_named_by_the_projects_config_runs_its_tests() {
    if !require_tool("python3") || !require_tool("pytest") {
        return;
    }
    let repo = Repo::git();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"calc\"\nversion = \"0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\n",
    )
    .write("src/calc.py", "def add(a, b):\n    return a - b\n")
    .write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_adds():\n    assert add(1, 2) == 3\n",
    );
    agrees_with_the_bare_tool(
        &repo,
        "pytest",
        // No bytecode written: the fix has the broken line's size, and Python takes a
        // `.pyc` of the same size and second for current.
        "PYTHONDONTWRITEBYTECODE=1 pytest -q -p no:cacheprovider",
        ("src/calc.py", "def add(a, b):\n    return a + b\n"),
    );
}

#[test]
fn test_files_with_no_runner_configured_get_no_test_gate() {
    if !require_tool("python3") {
        return;
    }
    // unittest's layout, npm's placeholder test script: nothing says which runner, or the
    // script only fails. A guess would fail clean trees.
    let repo = Repo::git();
    repo.write("pyproject.toml", "[project]\nname = \"calc\"\nversion = \"0\"\n")
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_calc.py",
            "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_adds(self):\n        pass\n",
        )
        .write(
            "package.json",
            "{\"name\": \"x\", \"scripts\": {\"test\": \"echo \\\"Error: no test specified\\\" && exit 1\"}}\n",
        );
    let run = repo.run(["gates"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("pytest"), "{run:?}");
    assert!(!run.stdout.contains("npm-test"), "{run:?}");
}

#[test]
fn a_package_test_script_runs_before_the_loop_may_end() {
    if !require_tool("node") || !require_tool("npm") {
        return;
    }
    let repo = Repo::git();
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"private\": true, \"type\": \"module\", \"scripts\": {\"test\": \"node --test\"}}\n",
    )
    .write("calc.js", "export const add = (a, b) => a - b;\n")
    .write(
        "test/calc.test.js",
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.js';\n\ntest('adds', () => assert.equal(add(1, 2), 3));\n",
    );
    agrees_with_the_bare_tool(
        &repo,
        "npm-test",
        "npm test",
        ("calc.js", "export const add = (a, b) => a + b;\n"),
    );
}

#[test]
fn go_tests_run_before_the_loop_may_end() {
    if !require_tool("go") {
        return;
    }
    let repo = Repo::git();
    repo.write("go.mod", "module example.com/calc\n\ngo 1.19\n")
        .write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
        .write(
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2\")\n\t}\n}\n",
        );
    agrees_with_the_bare_tool(
        &repo,
        "go-test",
        "go test ./...",
        (
            "calc.go",
            "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        ),
    );
}

/// A loop on `repo` (failing at the start) where the agent makes `edits`: the tests the
/// presets gave still hold the loop, and `check --base` at the start fails.
fn held_after(repo: &Repo, edits: &[(&str, &str)], bare: &str) {
    crate::surface::start_loop(repo);
    let (code, start) = repo.shell("git rev-parse HEAD", &[]);
    assert_eq!(code, 0);
    for (path, text) in edits {
        repo.write(path, text);
    }
    let (code, text) = repo.shell(bare, &[]);
    assert_eq!(code, 0, "the attack makes the bare command pass: {text}");
    let out = decision(&promise(repo));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run(["check", "--no-cache", "--base", start.trim()]);
    assert_eq!(ci.code, 1, "{ci:?}");
}

#[test]
fn the_evidence_that_gave_a_test_gate_cannot_take_it_away() {
    if !require_tool("python3") || !require_tool("pytest") {
        return;
    }
    // The pyproject named pytest; the agent drops the table: no preset gives pytest now,
    // and the bare command the loop's project ran (`ralph-gate check`) would pass.
    let repo = pytest_project("return a - b");
    held_after(
        &repo,
        &[(
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0\"\n",
        )],
        "true",
    );
}

#[test]
fn a_test_script_rewritten_to_pass_holds_the_loop() {
    if !require_tool("node") || !require_tool("npm") {
        return;
    }
    let repo = Repo::git();
    repo.write(
        "package.json",
        "{\"name\": \"calc\", \"private\": true, \"type\": \"module\", \"scripts\": {\"test\": \"node --test\"}}\n",
    )
    .write("calc.js", "export const add = (a, b) => a - b;\n")
    .write(
        "test/calc.test.js",
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../calc.js';\n\ntest('adds', () => assert.equal(add(1, 2), 3));\n",
    );
    held_after(
        &repo,
        &[(
            "package.json",
            "{\"name\": \"calc\", \"private\": true, \"type\": \"module\", \"scripts\": {\"test\": \"node --test || true\"}}\n",
        )],
        "npm test",
    );
}

#[test]
fn mypy_named_by_the_projects_config_checks_its_types() {
    if !require_tool("python3") {
        return;
    }
    let Some(wheels) = crate::observed::mypy_wheels() else {
        return;
    };
    let repo = Repo::git();
    repo.write(".gitignore", ".venv/\n")
        .write(
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0\"\n\n[tool.mypy]\nstrict = true\n",
        )
        .write(
            "calc.py",
            "def add(a: int, b: int) -> int:\n    return str(a + b)\n",
        );
    crate::observed::venv_with_mypy(&repo, &wheels);
    agrees_with_the_bare_tool(
        &repo,
        "mypy",
        ".venv/bin/mypy .",
        (
            "calc.py",
            "def add(a: int, b: int) -> int:\n    return a + b\n",
        ),
    );
}

#[test]
fn a_presets_gate_changed_in_one_field_keeps_the_rest() {
    // An example app with its own tsconfig and a type error; the library itself is clean.
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}, \"include\": [\"src\"]}\n",
    )
    .write("src/lib.ts", "export const one: number = 1;\n")
    .write(
        "examples/app/tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n",
    )
    .write("examples/app/main.ts", "export const bad: number = 'x';\n");
    repo.commit_all();
    assert_eq!(
        repo.run(["check", "--no-cache"]).code,
        1,
        "the example fails"
    );
    repo.config("presets = [\"auto\"]\n\n[[gate]]\nname = \"tsc\"\nexclude = [\"examples/**\"]\n");
    let run = repo.run(["check", "--no-cache"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("PASS  tsc"), "{run:?}");
    let gates = repo.run(["gates"]);
    assert!(gates.stdout.contains("examples/**"), "{gates:?}");
}

#[test]
fn a_pythonpath_put_in_front_of_the_code_holds_the_loop() {
    if !require_tool("python3") || !require_tool("pytest") {
        return;
    }
    // pytest's options in pyproject.toml (a file the preset's globs match, to run again when
    // it changes) are part of the checks: a correct copy of the module put first is held.
    let repo = pytest_project("return a - b");
    held_after(
        &repo,
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"calc\"\nversion = \"0\"\n\n[tool.pytest.ini_options]\npythonpath = [\"shadow\", \".\"]\n",
            ),
            ("shadow/calc.py", "def add(a, b):\n    return a + b\n"),
        ],
        // No bytecode written: the fix has the broken line's size, and Python takes a
        // `.pyc` of the same size and second for current.
        "PYTHONDONTWRITEBYTECODE=1 pytest -q -p no:cacheprovider",
    );
}
