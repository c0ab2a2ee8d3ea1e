//! `check` in GitHub Actions: annotations parsed from the real tools' output, the human report
//! in groups, and the Markdown job summary.

use crate::common::{require_tool, Repo};

fn broken() -> Option<Repo> {
    if !require_tool("python3") || !require_tool("shellcheck") {
        return None;
    }
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n\
         [[gate]]\nname = \"shell\"\nglobs = [\"**/*.sh\"]\nrun = \"shellcheck --format=gcc {files}\"\n",
    );
    repo.write("pkg/ok.py", "x = 1\n");
    repo.write("pkg/bad.py", "def f(:\n    return 1\n");
    repo.write("bin/run.sh", "#!/bin/sh\necho $1\n");
    repo.commit_all();
    Some(repo)
}

#[test]
fn annotations_name_each_diagnostic_where_it_is() {
    let Some(repo) = broken() else { return };
    let run = repo.run(["check", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    let out = &run.stdout;
    assert!(
        out.contains("::error file=pkg/bad.py,line=1,title=python::SyntaxError: invalid syntax"),
        "{out}"
    );
    assert!(
        out.lines().any(
            |l| l.starts_with("::warning file=bin/run.sh,line=2,col=6,title=shell::")
                && l.contains("[SC2086]")
        ),
        "shellcheck's note is a warning where it is: {out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("::error title=shell::shell exit 1")),
        "and the failing gate itself is an error: {out}"
    );
    assert!(
        out.contains("::group::ralph-gate report\n") && out.contains("::endgroup::"),
        "{out}"
    );
    assert!(out.contains("::group::python (fail)"), "{out}");
    assert!(out.contains("FAIL"), "the human report is kept: {out}");
}

#[test]
fn github_actions_switches_the_format_and_writes_the_job_summary() {
    let Some(repo) = broken() else { return };
    let summary = repo.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = repo.run_env(
        ["check"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("::error file=pkg/bad.py"), "{run:?}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("earlier step\n## ralph-gate: failing"),
        "appended: {md}"
    );
    assert!(md.contains("| python | ❌ fail |"), "{md}");
    assert!(
        md.contains("### python") && md.contains("SyntaxError"),
        "{md}"
    );
    // An explicit format wins.
    let json = repo.run_env(["check", "--format", "json"], &[("GITHUB_ACTIONS", "true")]);
    assert!(json.stdout.trim_start().starts_with('{'), "{json:?}");
}

/// The `run` block of the action's check step, as the runner would execute it.
fn action_check_script() -> String {
    let action =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
    let start = action
        .find("    - name: ralph-gate check")
        .expect("the check step");
    let step = &action[start..];
    let run = step.find("      run: |\n").expect("a run block") + "      run: |\n".len();
    step[run..]
        .lines()
        .take_while(|l| l.starts_with("        ") || l.is_empty())
        .map(|l| l.strip_prefix("        ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn the_actions_check_step_runs_a_fresh_strict_check_and_fails_on_a_broken_file() {
    let Some(repo) = broken() else { return };
    let action =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
    assert!(
        action.contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\""),
        "installs itself at the action's ref"
    );
    for input in ["fresh", "strict"] {
        let at = action.find(&format!("  {input}:")).unwrap();
        assert!(
            action[at..]
                .lines()
                .take(4)
                .any(|l| l.trim() == "default: \"true\""),
            "{input} is on by default"
        );
    }
    let script = action_check_script();
    let path = repo.path().join("check.sh");
    std::fs::write(&path, &script).unwrap();
    if require_tool("shellcheck") {
        let sc = std::process::Command::new("shellcheck")
            .args(["-s", "bash"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            sc.status.success(),
            "{}",
            String::from_utf8_lossy(&sc.stdout)
        );
    }
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_ralph-gate"))
        .parent()
        .unwrap()
        .to_path_buf();
    let run = |args: &str, env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new("bash");
        // Only the action's own inputs decide strictness here, not the CI running these tests.
        cmd.env_remove("CI").env_remove("RALPH_GATE_STRICT");
        cmd.arg(&path)
            .current_dir(repo.path())
            .env("PATH", crate::common::Repo::path_with(&bin))
            .env("RALPH_GATE_ARGS", args)
            .env("RALPH_GATE_FRESH", "true")
            .env("RALPH_GATE_STRICT_INPUT", "true")
            .env("GITHUB_ACTIONS", "true");
        for (k, v) in env {
            cmd.env(k, v);
        }
        crate::common::finish(cmd.output().unwrap())
    };
    let out = run("", &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("::error file=pkg/bad.py"), "{out:?}");
    // A tool that is missing fails under the action's strict default.
    repo.config("[[gate]]\nname = \"needs\"\nglobs = [\"**/*.py\"]\nrun = \"true\"\nrequires = [\"no-such-tool-xyz\"]\n");
    let out = run("", &[]);
    assert_eq!(out.code, 1, "strict: {out:?}");
    let out = run("--gate needs", &[("RALPH_GATE_STRICT_INPUT", "false")]);
    assert_eq!(out.code, 0, "not strict, and args reach the check: {out:?}");
    // The base input: a committed weakening fails the step, annotated where it is.
    repo.config("[[gate]]\nname = \"unittest\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -m unittest -q\"\nscope = \"project\"\n");
    repo.write(
        "test_x.py",
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n",
    );
    repo.commit_all();
    repo.write("test_x.py", "import unittest\n\nclass T(unittest.TestCase):\n    @unittest.skip('later')\n    def test_a(self):\n        pass\n");
    repo.commit_all();
    let out = run("--gate integrity", &[("RALPH_GATE_BASE", "HEAD~1")]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("::error file=test_x.py,line=4"),
        "annotated on the line that weakens: {out:?}"
    );
}

#[test]
fn tsc_errors_in_a_monorepo_are_annotated_on_their_own_package_files() {
    let Some(repo) = crate::common::typescript_repo() else {
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
    let run = repo.run(["check", "--format", "github"]);
    assert_eq!(run.code, 1, "{run:?}");
    for p in ["a", "b"] {
        assert!(
            run.stdout.lines().any(|l| l.starts_with(&format!(
                "::error file=packages/{p}/src/index.ts,line=1,col=14,title=tsc::TS2322:"
            ))),
            "{}",
            run.stdout
        );
    }
}
