//! The exit status must agree with the test binary's own report (issue 37, item 2), with real
//! `go test` and `cargo test`. Each attack makes a failing suite exit 0 through project code
//! the runner loads (a `TestMain`, a test, a panic hook), and the bare tool is run to prove
//! it: `go test` prints `ok`, `cargo test` exits 0, while the binary's own output says FAIL
//! or never reaches its summary. ralph-gate starts every test binary a gate's command starts
//! through its wrapper (`-exec`, cargo's runner) and fails the run; a loop whose final code
//! does this is held. The honest twins pass unchanged: `go run`, `go vet`, `-json`, doctests,
//! `cargo run`, a `harness = false` test, a project's own cargo runner.

use crate::common::{require_tool, Repo};
use crate::surface::{decision, promise};

fn gate(globs: &str, run: &str) -> String {
    format!("[[gate]]\nname = \"tests\"\nglobs = [{globs}]\nscope = \"project\"\nrun = \"{run}\"\n")
}

/// The attack works on the bare tool (exit 0, saying `bare_says`), and ralph-gate fails it,
/// saying why: uncached, cached, and from a warm cache.
fn caught(repo: &Repo, run: &str, bare_says: &str, why: &str) {
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "the attack makes the bare command pass: {text}");
    assert!(text.contains(bare_says), "bare says {bare_says:?}: {text}");
    for attempt in [
        repo.run(["check", "--no-cache"]),
        repo.run(["check"]),
        repo.run(["check"]),
    ] {
        assert_eq!(attempt.code, 1, "{attempt:?}");
        assert!(attempt.stdout.contains(why), "{why:?}: {attempt:?}");
    }
}

/// A loop started on the committed tree: its promised stop is held, naming why.
fn held_at_the_stop(repo: &Repo, why: &str) {
    repo.start_loop(&[]);
    let out = decision(&promise(repo));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(why), "{why:?}: {reason}");
}

fn passes(repo: &Repo, what: &str) {
    let run = repo.run(["check", "--no-cache"]);
    assert_eq!(run.code, 0, "{what}: {run:?}");
}

const GO_CODE: &str = "package calc\n\nfunc Add(a, b int) int { return a - b }\n";
const GO_GOOD: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n";
const GO_TEST: &str = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n";
const GO_RUN: &str = "go test ./...";

fn go_project(code: &str, extra: &[(&str, &str)]) -> Option<Repo> {
    if !require_tool("go") {
        return None;
    }
    let repo = Repo::git();
    repo.config(&gate("\"**/*.go\", \"go.mod\"", GO_RUN))
        .write("go.mod", "module example.com/calc\n\ngo 1.19\n")
        .write("calc.go", code)
        .write("calc_test.go", GO_TEST);
    for (path, text) in extra {
        repo.write(path, text);
    }
    repo.commit_all();
    Some(repo)
}

/// A `main_test.go` whose `TestMain` has `body` (with `os` and `testing` imported).
fn test_main(body: &str) -> String {
    format!("package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {{\n{body}}}\n")
}

#[test]
fn a_test_main_that_exits_zero_after_failures_fails() {
    let main = test_main("\tm.Run()\n\tos.Exit(0)\n");
    let Some(repo) = go_project(GO_CODE, &[("main_test.go", &main)]) else {
        return;
    };
    caught(
        &repo,
        GO_RUN,
        "ok  \texample.com/calc",
        "reported a failure (TestAdd)",
    );
    held_at_the_stop(&repo, "reported a failure (TestAdd)");
    // The honest twin: the code fixed, the same TestMain: the loop ends.
    repo.write("calc.go", GO_GOOD);
    passes(&repo, "fixed code");
    let out = decision(&promise(&repo));
    assert_ne!(out["decision"], "block", "{out}");
}

#[test]
fn a_test_main_that_never_runs_the_tests_fails() {
    let main = test_main("\tos.Exit(0)\n");
    let Some(repo) = go_project(GO_CODE, &[("main_test.go", &main)]) else {
        return;
    };
    caught(
        &repo,
        GO_RUN,
        "ok  \texample.com/calc",
        "without the testing package's PASS",
    );
}

#[test]
fn honest_go_commands_pass_unchanged() {
    let app = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"FAIL\") }\n";
    // Found by the red team: code under test that prints a line of its own reading FAIL.
    let report = "package report\n\nimport \"fmt\"\n\nfunc Report(ok bool) {\n\tif ok {\n\t\tfmt.Println(\"PASS\")\n\t} else {\n\t\tfmt.Println(\"FAIL\")\n\t}\n}\n";
    let report_test = "package report\n\nimport \"testing\"\n\nfunc TestReport(t *testing.T) {\n\tReport(true)\n\tReport(false)\n}\n";
    let Some(repo) = go_project(
        GO_GOOD,
        &[
            ("cmd/app/main.go", app),
            ("empty/e.go", "package empty\n"),
            ("report/r.go", report),
            ("report/r_test.go", report_test),
        ],
    ) else {
        return;
    };
    // `go run` shares the -exec; a package without tests, `-json`, `go vet`, the user's own
    // GOFLAGS: all as the bare tools say.
    let run = "go test -json ./... >/dev/null && go test -count=1 ./... && go run ./cmd/app && go vet ./...";
    assert_eq!(repo.shell(run, &[]).0, 0);
    repo.config(&format!(
        "{}[gate.env]\nGOFLAGS = \"-count=1\"\n",
        gate("\"**/*.go\", \"go.mod\"", run)
    ));
    passes(&repo, "honest go commands");
    // And a failing test still fails, as before.
    repo.config(&gate("\"**/*.go\", \"go.mod\"", GO_RUN));
    repo.write("calc.go", GO_CODE);
    let run = repo.run(["check", "--no-cache"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("--- FAIL: TestAdd"), "{run:?}");
}

const RS_CODE: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
const RS_GOOD: &str = "/// ```\n/// assert_eq!(calc::add(1, 2), 3);\n/// ```\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";
const RS_RUN: &str = "cargo test -q";

fn rust_project(code: &str, test: &str) -> Option<Repo> {
    if !require_tool("cargo") {
        return None;
    }
    let repo = Repo::git();
    repo.config(&gate("\"**/*.rs\", \"Cargo.toml\"", RS_RUN))
        .write(
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write(".gitignore", "target/\n")
        .write("src/lib.rs", code)
        .write("tests/calc.rs", test);
    repo.commit_all();
    Some(repo)
}

/// A test that ends the binary with success before the failing one finishes.
const EXITS: &str = "#[test]\nfn a_setup() {\n    std::thread::sleep(std::time::Duration::from_millis(50));\n    std::process::exit(0);\n}\n\n#[test]\nfn b_adds() {\n    std::thread::sleep(std::time::Duration::from_millis(300));\n    assert_eq!(calc::add(1, 2), 3);\n}\n";

#[test]
fn a_rust_test_that_exits_zero_midway_fails() {
    let Some(repo) = rust_project(RS_CODE, EXITS) else {
        return;
    };
    caught(
        &repo,
        RS_RUN,
        "running 2 tests",
        "before libtest's `test result:` line",
    );
    held_at_the_stop(&repo, "before libtest's `test result:` line");
}

#[test]
fn a_panic_hook_that_exits_zero_fails() {
    // Not listed anywhere: the first test installs a hook that turns any panic into success.
    let test = "#[test]\nfn a_setup() {\n    std::panic::set_hook(Box::new(|_| std::process::exit(0)));\n}\n\n#[test]\nfn b_adds() {\n    std::thread::sleep(std::time::Duration::from_millis(200));\n    assert_eq!(calc::add(1, 2), 3);\n}\n";
    let Some(repo) = rust_project(RS_CODE, test) else {
        return;
    };
    caught(
        &repo,
        RS_RUN,
        "running 2 tests",
        "before libtest's `test result:` line",
    );
}

#[test]
fn honest_cargo_commands_pass_unchanged() {
    let test = "#[test]\nfn adds() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n";
    let Some(repo) = rust_project(RS_GOOD, test) else {
        return;
    };
    // `cargo run` shares the runner: a program that prints libtest's first line is not a
    // test binary. A `harness = false` test prints what it likes. Doctests run.
    repo.write("src/main.rs", "fn main() {\n    println!(\"running 2 tests\");\n}\n")
        .write(
            "Cargo.toml",
            "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[[test]]\nname = \"plain\"\nharness = false\n",
        )
        .write(
            "tests/plain.rs",
            "fn main() {\n    println!(\"plain harness: 1 check ok\");\n}\n",
        );
    let run = "cargo test -q && cargo run -q";
    assert_eq!(repo.shell(run, &[]).0, 0);
    repo.config(&gate("\"**/*.rs\", \"Cargo.toml\"", run));
    passes(&repo, "honest cargo commands");
    // A project that runs its binaries its own way keeps it.
    repo.write(
        ".cargo/config.toml",
        "[target.'cfg(all())']\nrunner = \"env RALPH_TEST_RUNNER=1\"\n",
    );
    passes(&repo, "the project's own runner");
    // And a failing test still fails, as before.
    repo.write("src/lib.rs", RS_CODE);
    let run = repo.run(["check", "--no-cache"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("test result: FAILED"), "{run:?}");
}
