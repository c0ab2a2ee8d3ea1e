//! The test suite cannot pass hollow: a test whose tool is missing fails and names it, unless
//! the tool is knowingly allowed to be missing, and then the skip is written where
//! `scripts/test` reports it after the run.

use crate::common::missing_unless;

#[test]
fn a_missing_tool_fails_the_test_and_names_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skipped.txt");
    let failed =
        std::panic::catch_unwind(|| missing_unless("no-such-tool", "not on PATH", "", &log));
    let message = failed.expect_err("a missing tool fails");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("needs `no-such-tool`"), "{message}");
    assert!(
        message.contains("RALPH_GATE_TEST_ALLOW_MISSING=no-such-tool"),
        "{message}"
    );
    assert!(!log.exists(), "nothing was skipped");
}

#[test]
fn an_allowed_missing_tool_is_a_recorded_skip() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skipped.txt");
    for allow in ["shellcheck,no-such-tool", "all"] {
        assert!(!missing_unless("no-such-tool", "not on PATH", allow, &log));
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains(
            "an_allowed_missing_tool_is_a_recorded_skip: skipped, `no-such-tool` is missing"
        ),
        "{text}"
    );
}

#[test]
fn the_test_script_installs_reports_and_lists_skips() {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test")).unwrap();
    let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")).unwrap();
    assert!(
        ci.contains("exec scripts/test"),
        "CI runs the README's test command"
    );
    for tool in [
        "shellcheck",
        "typescript@5",
        "claude",
        "codex",
        "copilot",
        "opencode",
        "qwen",
        "gemini",
        "droid",
        "prek",
    ] {
        assert!(script.contains(tool), "scripts/test sets up {tool}");
    }
    assert!(
        script.contains("skipped-tests.txt"),
        "the skips are listed after the run"
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("scripts/test"),
        "the README's test command is scripts/test"
    );
}

/// Every subcommand, as `--help` lists them.
fn subcommands(repo: &crate::common::Repo) -> Vec<String> {
    let help = repo.run(["--help"]).stdout;
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn completions_and_the_man_page_cover_every_subcommand() {
    let repo = crate::common::Repo::plain();
    let subs = subcommands(&repo);
    assert!(
        subs.len() >= 10 && subs.contains(&"doctor".to_string()),
        "{subs:?}"
    );
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = repo.run(["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        for s in &subs {
            assert!(
                run.stdout.contains(s.as_str()),
                "{shell} completion lacks `{s}`"
            );
        }
    }
    let man = repo.run(["man"]);
    assert_eq!(man.code, 0, "{man:?}");
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH ralph-gate"),
        "roff: {}",
        &man.stdout[..200.min(man.stdout.len())]
    );
    for s in &subs {
        assert!(
            man.stdout
                .contains(&format!(".SH \"RALPH-GATE {}\"", s.to_uppercase())),
            "the man page documents `{s}`"
        );
    }
    let bad = repo.run(["completions", "tcsh"]);
    assert_eq!(bad.code, 2, "{bad:?}");
}
