//! Reports say where and what ran (paths from the root, the real command, each run's time),
//! and a missing tool is never silent: SKIP with how to install it, a failure in strict
//! mode, and the agent told once per session.

use crate::common::{typescript_repo, which, Repo, Run};
use serde_json::json;

#[test]
fn two_packages_with_the_same_broken_file_are_told_apart() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    for p in ["a", "b"] {
        repo.write(
            format!("packages/{p}/tsconfig.json"),
            r#"{ "compilerOptions": { "strict": true }, "include": ["src"] }"#,
        );
        repo.write(
            format!("packages/{p}/src/index.ts"),
            "export const n: number = \"x\";\n",
        );
    }
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    for p in ["a", "b"] {
        assert!(
            run.stdout
                .contains(&format!("packages/{p}/src/index.ts(1,14): error TS2322")),
            "{run:?}"
        );
        assert!(
            run.stdout
                .contains(&format!("/tsc -p packages/{p}/tsconfig.json --noEmit")),
            "the command that ran, not the preset's text: {run:?}"
        );
    }
    assert!(!run.stdout.contains("if [ -f"), "{run:?}");
    assert!(run.stdout.contains("in 2 runs (total "), "{run:?}");
    for p in ["a", "b"] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.contains("FAIL") && l.ends_with(&format!("packages/{p}/tsconfig.json"))),
            "a line per run with its time: {run:?}"
        );
    }
    assert!(
        run.stdout
            .contains("tools: tsc = node_modules/typescript/bin/tsc"),
        "{run:?}"
    );
}

#[test]
fn a_run_in_a_subfolder_reports_paths_from_the_root() {
    let repo = Repo::git();
    for p in ["one", "two"] {
        repo.write(format!("{p}/marker"), "");
        repo.write(format!("{p}/src/index.txt"), "x\n");
    }
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nscope = \"project\"\nroot_markers = [\"marker\"]\nrun = 'echo \"src/index.txt:1:1: error: bad\"; echo \"note: src/index.txt is fine prose\"; exit 1'\n",
    );
    let run = repo.run(["check", "--format", "json"]);
    let out = run.gate("lint")["output"].as_str().unwrap().to_string();
    assert!(out.contains("one/src/index.txt:1:1: error: bad"), "{out}");
    assert!(out.contains("two/src/index.txt:1:1: error: bad"), "{out}");
    assert!(out.contains("note: src/index.txt is fine prose"), "{out}");
    assert!(out.contains("$ cd one && echo"), "{out}");
}

/// PATH with git and nothing else: every gate's tool is missing.
fn bare_path() -> (tempfile::TempDir, String) {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(which("git").expect("git"), bin.path().join("git")).unwrap();
    let path = bin.path().display().to_string();
    (bin, path)
}

#[test]
fn a_missing_tool_is_a_skip_with_its_install_hint_and_a_failure_when_strict() {
    let (_bin, path) = bare_path();
    let repo = Repo::git();
    repo.write("a.sh", "#!/bin/sh\necho hi\n");
    let run = repo.run_env(["check"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "a local run goes on: {run:?}");
    assert!(
        run.stdout.contains("SKIP  shellcheck")
            && run
                .stdout
                .contains("requires `shellcheck`, which is not on PATH")
            && run.stdout.contains("install: apt-get install shellcheck"),
        "{run:?}"
    );
    for (args, env) in [
        (vec!["check", "--strict"], vec![("PATH", path.as_str())]),
        (
            vec!["check"],
            vec![("PATH", path.as_str()), ("RALPH_GATE_STRICT", "1")],
        ),
        (vec!["check"], vec![("PATH", path.as_str()), ("CI", "true")]),
    ] {
        let run: Run = repo.run_env(&args, &env);
        assert_eq!(run.code, 1, "{args:?} {env:?}: {run:?}");
        assert!(run.stdout.contains("a failure in strict mode"), "{run:?}");
    }
    let json = repo.run_env(["check", "--format", "json"], &[("PATH", &path)]);
    let gate = json.gate("shellcheck");
    assert_eq!(
        (gate["status"].clone(), gate["install"].clone()),
        (
            json!("skipped"),
            json!("apt-get install shellcheck (Debian, Ubuntu), brew install shellcheck (macOS)")
        )
    );
}

#[test]
fn the_agent_is_told_once_per_session_that_a_tool_is_missing() {
    let (_bin, path) = bare_path();
    let repo = Repo::git();
    repo.write("a.sh", "#!/bin/sh\necho hi\n");
    let edit = |session: &str| {
        let input = json!({
            "session_id": session,
            "cwd": repo.path(),
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": repo.path().join("a.sh"), "content": ""},
        });
        repo.run_stdin(
            &["hook", "post-tool-use"],
            input.to_string().as_bytes(),
            &[("PATH", &path)],
        )
    };
    let first = edit("s-1");
    assert_eq!(first.code, 0, "{first:?}");
    let out: serde_json::Value = serde_json::from_str(&first.stdout).expect("JSON answer");
    let ctx = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("`shellcheck` is not installed, so the shellcheck gate did not check a.sh")
            && ctx.contains("Install it: apt-get install shellcheck"),
        "{ctx}"
    );
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("shellcheck"),
        "{out}"
    );
    let second = edit("s-1");
    assert_eq!(
        (second.code, second.stdout.as_str()),
        (0, ""),
        "said once: {second:?}"
    );
    let other = edit("s-2");
    assert!(
        other.stdout.contains("not installed"),
        "another session hears it: {other:?}"
    );
}

/// A batch gate with findings in many files, whose output must be cut: every file is named,
/// not only those in the kept head and tail (in the terminal, in JSON and to the agent).
#[test]
fn a_cut_output_still_names_every_file_with_findings() {
    let repo = Repo::git();
    for i in 0..60 {
        repo.write(format!("lib/s{i:02}.txt"), "x\n");
    }
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"**/*.txt\"]\nscope = \"batch\"\nrun = 'for f in {files}; do echo \"$f:1:1: warning: unused [X1]\"; printf \"%0200d\\n\" 0; done; exit 1'\n",
    );
    let run = repo.run(["check", "--all"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("findings in 60 files"), "{run:?}");
    assert!(
        run.stdout.contains("lib/s30.txt"),
        "a file from the cut middle: {run:?}"
    );
    let json = repo.run(["check", "--all", "--format", "json"]);
    assert!(json.gate("lint")["output"]
        .as_str()
        .unwrap()
        .contains("lib/s30.txt"));
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": repo.path().join("lib/s00.txt"), "old_string": "x", "new_string": "x"}),
    );
    assert!(hook.stdout.contains("[lint]"), "{hook:?}");
}
