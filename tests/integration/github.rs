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
