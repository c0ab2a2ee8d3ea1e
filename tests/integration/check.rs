//! `ralph-gate check` and `ralph-gate gates`: formats, exit codes, filters, skipped tools.

use crate::common::{require_tool, Repo};

const TODO_GATE: &str =
    "[[gate]]\nname = \"no-todo\"\nglobs = [\"*.txt\"]\nrun = '! grep -n TODO {files}'\n";

fn todo_repo() -> Repo {
    let repo = Repo::git();
    repo.config(TODO_GATE);
    repo.write("notes/a.txt", "fine\n")
        .write("notes/b.txt", "TODO: fix\n");
    repo
}

#[test]
fn json_report_follows_the_documented_schema() {
    let run = todo_repo().run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    assert_eq!(report["schema"], "ralph-gate.check.v1");
    assert_eq!(report["ok"], false);
    assert!(report["duration_ms"].is_u64());
    assert!(report["config"].as_str().unwrap().ends_with("ralph.toml"));
    assert_eq!(report["summary"]["failed"], 1);
    assert_eq!(report["summary"]["failing"], 1);
    let gate = run.gate("no-todo");
    assert_eq!(gate["status"], "fail");
    assert_eq!(gate["counts_as_failure"], true);
    assert_eq!(gate["files"], 2);
    assert_eq!(gate["runs"], 1);
    assert_eq!(gate["exit_code"], 1);
    assert_eq!(gate["command"], "! grep -n TODO notes/a.txt notes/b.txt");
    assert_eq!(gate["output"], "notes/b.txt:1:TODO: fix\n");
    assert!(gate["duration_ms"].is_u64());
}

#[test]
fn junit_report_is_well_formed_with_one_testcase_per_gate() {
    if !require_tool("python3") {
        return;
    }
    let repo = todo_repo();
    repo.config(&format!(
        "{TODO_GATE}[[gate]]\nname = \"ok & <fine>\"\nglobs = [\"*.txt\"]\nrun = 'true'\n"
    ));
    let run = repo.run(["check", "--format", "junit"]);
    assert_eq!(run.code, 1, "{run:?}");
    // Parse it with a real XML parser and read the counts back.
    let script = "import sys, xml.etree.ElementTree as E\nr = E.fromstring(sys.stdin.read())\ncases = r.findall('.//testcase')\nprint(r.get('tests'), r.get('failures'), len(cases), ','.join(c.get('name') for c in cases), len(r.findall('.//failure')))";
    let mut py = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    py.stdin
        .take()
        .unwrap()
        .write_all(run.stdout.as_bytes())
        .unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(out.status.success(), "not valid XML:\n{}", run.stdout);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "2 1 2 no-todo,ok & <fine> 1"
    );
}

#[test]
fn human_report_has_a_line_per_gate_and_a_summary() {
    let run = todo_repo().run(["check"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("FAIL  no-todo"), "{run:?}");
    assert!(run.stdout.contains("│ notes/b.txt:1:TODO: fix"), "{run:?}");
    assert!(
        run.stdout.contains("0 passed, 1 failed (1 gate,"),
        "{run:?}"
    );
}

#[test]
fn quiet_prints_nothing_on_success_and_the_failure_otherwise() {
    let repo = todo_repo();
    let run = repo.run(["check", "--quiet"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("FAIL  no-todo") && !run.stdout.contains("no ralph.toml"),
        "{run:?}"
    );
    repo.write("notes/b.txt", "done\n");
    let run = repo.run(["check", "--quiet"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
}

#[test]
fn a_missing_tool_skips_visibly_and_fails_under_ci_unless_optional() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    let gate = "[[gate]]\nname = \"exotic\"\nglobs = [\"*.txt\"]\nrun = 'no-such-tool-4711 {files}'\nrequires = [\"no-such-tool-4711\"]\n";
    repo.config(gate);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("SKIP  exotic"), "{run:?}");
    assert!(
        run.stdout.contains("requires `no-such-tool-4711`"),
        "{run:?}"
    );

    let run = repo.run_env(["check", "--format", "json"], &[("CI", "true")]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.gate("exotic")["status"], "skipped");
    assert_eq!(run.gate("exotic")["counts_as_failure"], true);

    repo.config(&format!("{gate}optional = true\n"));
    let run = repo.run_env(["check"], &[("CI", "true")]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_command_that_is_not_installed_and_not_declared_fails_with_the_shells_message() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"typo\"\nglobs = [\"*.txt\"]\nrun = 'no-such-tool-4711 {files}'\n",
    );
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.gate("typo")["exit_code"], 127);
    assert!(
        run.gate("typo")["output"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{run:?}"
    );
}

#[test]
fn gate_filter_runs_only_the_named_gate_and_rejects_unknown_names() {
    let repo = todo_repo();
    repo.config(&format!(
        "{TODO_GATE}[[gate]]\nname = \"other\"\nglobs = [\"*.txt\"]\nrun = 'true'\n"
    ));
    let run = repo.run(["check", "--gate", "other", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["gates"].as_array().unwrap().len(), 1);
    let run = repo.run(["check", "--gate", "nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("unknown gate `nope`") && run.stderr.contains("no-todo, other"),
        "{run:?}"
    );
}

#[test]
fn phase_selects_gates() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"edit-only\"\nglobs = [\"*.txt\"]\nrun = 'false'\nphases = [\"edit\"]\n",
    );
    assert_eq!(repo.run(["check"]).code, 0);
    assert_eq!(repo.run(["check", "--phase", "edit"]).code, 1);
}

#[test]
fn a_gate_with_no_matching_files_is_reported_and_passes() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"py\"\nglobs = [\"*.py\"]\nrun = 'false {files}'\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.gate("py")["status"], "no_files");
    assert_eq!(run.gate("py")["files"], 0);
}

#[test]
fn config_is_found_from_a_subfolder_and_paths_stay_relative_to_it() {
    let repo = todo_repo();
    let mut cmd = repo.cmd();
    cmd.current_dir(repo.path().join("notes"))
        .args(["check", "b.txt", "--format", "json"]);
    let run = crate::common::finish(cmd.output().unwrap());
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.gate("no-todo")["command"], "! grep -n TODO notes/b.txt");
}

#[test]
fn without_config_the_detected_presets_are_named() {
    let repo = Repo::git();
    repo.write("tools/run.sh", "#!/bin/sh\necho hi\n");
    let run = repo.run(["check"]);
    assert!(
        run.stdout.contains(
            "no ralph.toml; presets picked by project contents: shell (found tools/run.sh)"
        ),
        "{run:?}"
    );
    let run = repo.run(["gates"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains("shellcheck\n  from:     preset shell (gates/shell.toml)"),
        "{run:?}"
    );
}

#[test]
fn gates_lists_origin_lines_and_explain_shows_exact_commands() {
    let repo = todo_repo();
    repo.config(&format!("presets = [\"python\"]\n\n{TODO_GATE}"));
    let run = repo.run(["gates"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("no-todo\n  from:     "), "{run:?}");
    assert!(run.stdout.contains("ralph.toml:4"), "{run:?}");
    assert!(
        run.stdout
            .contains("python-compile\n  from:     preset python"),
        "{run:?}"
    );

    repo.write("my file.txt", "x\n");
    let run = repo.run(["gates", "--explain", "my file.txt", "x.rs"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "my file.txt\n  no-todo  [edit, stop, check]\n    $ ! grep -n TODO 'my file.txt'\n    cache:  on; the key holds 1 input file and the identity of grep"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("x.rs\n  no gate matches this path"),
        "{run:?}"
    );
}

#[test]
fn version_and_help_work() {
    let repo = Repo::plain();
    let run = repo.run(["--version"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.starts_with("ralph-gate "));
    let run = repo.run(["check", "--help"]);
    assert!(
        run.stdout.contains("--staged") && run.stdout.contains("--changed"),
        "{run:?}"
    );
    let run = repo.run(["check", "--format", "yaml"]);
    assert_eq!(run.code, 2, "usage errors exit 2: {run:?}");
}

#[test]
fn fail_on_fails_a_gate_that_exits_0_but_says_it_checked_nothing() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"tests\"\nglobs = [\"*.txt\"]\nrun = 'echo \"running 0 tests\"; echo \"test result: ok. 0 passed\"'\nfail_on = ['^running 0 tests$']\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("tests");
    assert_eq!(gate["status"], "fail");
    assert_eq!(
        gate["reason"],
        "exited 0, but its output matched fail_on pattern `^running 0 tests$`"
    );
    // The pattern is per line: the same words inside a longer line do not match.
    repo.config("[[gate]]\nname = \"tests\"\nglobs = [\"*.txt\"]\nrun = 'echo \"running 0 tests of 0, then running 12 tests\"'\nfail_on = ['^running 0 tests$']\n");
    assert_eq!(repo.run(["check"]).code, 0);
}

#[test]
fn a_bad_fail_on_pattern_is_a_config_error_at_its_line() {
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"t\"\nglobs = [\"*\"]\nrun = 'true'\nfail_on = ['(unclosed']\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("ralph.toml:5:")
            && run.stderr.contains("invalid fail_on pattern `(unclosed`"),
        "{run:?}"
    );
}

#[test]
fn require_files_fails_a_gate_that_matched_nothing() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"py-tests\"\nglobs = [\"tests/*.py\"]\nrun = 'true {files}'\nrequire_files = true\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.gate("py-tests")["reason"],
        "checked 0 files, and the gate has require_files = true"
    );
}

/// Issue 39, item 7: nothing checked is said aloud, and under `--strict` (CI) it fails: a
/// config with no gate, and a gate of the config whose globs match no file of the project
/// (a typo checks nothing forever). A commit that touches none of a gate's files is not
/// "nothing": `--staged` is judged by what it brings.
#[test]
fn checking_nothing_is_said_and_fails_under_strict() {
    let repo = Repo::git();
    repo.write("README.md", "hi\n");
    repo.config("# no gates yet\n");
    repo.commit_all();
    let none = repo.run(["check", "--strict"]);
    assert_ne!(none.code, 0, "{none:?}");
    assert!(none.stderr.contains("nothing was checked"), "{none:?}");
    repo.config("[[gate]]\nname = \"lint\"\nglobs = [\"*.rb\"]\nrun = \"true\"\n");
    let typo = repo.run(["check", "--strict"]);
    assert_ne!(typo.code, 0, "{typo:?}");
    assert!(
        typo.stderr.contains("`lint`") && typo.stderr.contains("matches no file"),
        "{typo:?}"
    );
    let relaxed = repo.run(["check"]);
    assert_eq!(
        relaxed.code, 0,
        "said, not failed, outside strict mode: {relaxed:?}"
    );
    assert!(relaxed.stderr.contains("matches no file"), "{relaxed:?}");
    repo.write("a.rb", "puts 1\n");
    assert_eq!(repo.run(["check", "--strict"]).code, 0);
    repo.commit_all();
    repo.write("README.md", "hello\n");
    repo.git_cmd(&["add", "README.md"]);
    let commit = repo.run(["check", "--staged", "--strict"]);
    assert_eq!(commit.code, 0, "a commit of no gate's files: {commit:?}");
}
