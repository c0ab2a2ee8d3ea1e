//! `ralph-gate doctor` in a temporary HOME: each conflict found and explained, exit 1; a
//! clean setup passes.

use crate::common::{Repo, Run};

fn doctor(repo: &Repo, home: &std::path::Path) -> Run {
    repo.run_env(["doctor"], &[("HOME", home.to_str().unwrap())])
}

/// A project set up as `init --absolute` leaves it, with a gate that passes.
fn clean() -> (Repo, tempfile::TempDir) {
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"txt\"\nglobs = [\"*.txt\"]\nrun = \"true\"\n");
    repo.write("a.txt", "x");
    repo.commit_all();
    let home = tempfile::tempdir().unwrap();
    let run = repo.run_env(
        ["init", "--absolute"],
        &[("HOME", home.path().to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{run:?}");
    (repo, home)
}

#[test]
fn a_clean_setup_has_no_problem() {
    let (repo, home) = clean();
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("no problem found"), "{run:?}");
    assert!(
        run.stdout
            .contains("Stop hook timeout 900 s > stop budget 600 s"),
        "{run:?}"
    );
}

#[test]
fn the_official_plugin_beside_ralph_gate_is_a_problem_and_init_warns() {
    let (repo, home) = clean();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"ralph-loop@claude-plugins-official": true}}"#,
    )
    .unwrap();
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("official ralph-loop plugin is enabled"),
        "{run:?}"
    );
    let init = repo.run_env(
        ["init", "--absolute"],
        &[("HOME", home.path().to_str().unwrap())],
    );
    assert!(
        init.stdout
            .contains("warning: the official ralph-loop plugin"),
        "{init:?}"
    );
    let start = repo.run_env(
        ["loop", "start", "x"],
        &[("HOME", home.path().to_str().unwrap())],
    );
    assert!(
        start
            .stdout
            .contains("warning: the official ralph-loop plugin"),
        "{start:?}"
    );
}

#[test]
fn hooks_registered_twice_are_a_problem() {
    let (repo, home) = clean();
    let settings = std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap();
    repo.write(".claude/settings.local.json", &settings);
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("Stop hook is registered 2 times"),
        "{run:?}"
    );
}

#[test]
fn a_hook_not_on_path_and_a_short_timeout_are_problems() {
    let (repo, home) = clean();
    repo.write(
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ralph-gate hook stop", "timeout": 60}]}]}}"#,
    );
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("runs `ralph-gate`, which is not on this PATH"),
        "{run:?}"
    );
    assert!(run.stdout.contains("times out after 60 s"), "{run:?}");
}

#[test]
fn a_missing_tool_leftovers_and_a_changed_config_are_problems() {
    let (repo, home) = clean();
    let h = home.path().to_str().unwrap();
    assert_eq!(
        repo.run_env(
            ["loop", "start", "--session", "s", "Do it."],
            &[("HOME", h)]
        )
        .code,
        0
    );
    repo.config(
        "[[gate]]\nname = \"txt\"\nglobs = [\"*.txt\"]\nrun = \"no-such-tool-xyz {files}\"\nrequires = [\"no-such-tool-xyz\"]\n",
    );
    repo.write(".ralph/progress/ralph-loop-gone.local.md.json", "{}");
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("stop gate `txt`: `no-such-tool-xyz` is NOT installed"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("the stop gates changed since it started"),
        "{run:?}"
    );
    assert!(run.stdout.contains("command changed"), "{run:?}");
    assert!(
        run.stdout
            .contains("is left from a loop that no longer exists"),
        "{run:?}"
    );
}

#[test]
fn an_agent_that_tried_to_cancel_its_loop_is_shown() {
    let (repo, home) = clean();
    let h = home.path().to_str().unwrap();
    assert_eq!(
        repo.run_env(["loop", "start", "Do it."], &[("HOME", h)])
            .code,
        0
    );
    let run = repo.run_env(
        ["loop", "cancel"],
        &[("HOME", h), ("CLAUDE_CODE_SESSION_ID", "agent-7")],
    );
    assert_eq!(run.code, 2, "refused: {run:?}");
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("refused ralph-loop.local.md by session agent-7: `loop cancel`"),
        "{run:?}"
    );
}

#[test]
fn init_keeps_file_modes_and_writes_new_files_0644() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::git();
    repo.write(".gitignore", "target/\n");
    std::fs::set_permissions(
        repo.path().join(".gitignore"),
        std::fs::Permissions::from_mode(0o664),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = repo.run_env(["init"], &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(run.code, 0, "{run:?}");
    let mode = |rel: &str| {
        std::fs::metadata(repo.path().join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(".gitignore"), 0o664, "an existing file keeps its mode");
    assert_eq!(mode("ralph.toml"), 0o644);
    assert_eq!(mode(".claude/settings.json"), 0o644);
}

#[test]
fn init_adds_no_settings_hooks_when_the_plugin_is_enabled() {
    let repo = Repo::git();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"enabledPlugins": {"ralph-gate@ralph-gate": true}}"#,
    )
    .unwrap();
    let run = repo.run_env(["init"], &[("HOME", home.path().to_str().unwrap())]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("the ralph-gate plugin is enabled"),
        "{run:?}"
    );
    assert!(!repo.exists(".claude/settings.json"), "{run:?}");
}

/// `--config` names the config doctor checks: its stop gates' tools are the ones looked for
/// (doctor used to plan the workspace's own ralph.toml whatever `--config` said).
#[test]
fn doctor_checks_the_config_it_is_given() {
    let (repo, home) = clean();
    repo.write(
        "ci/strict.toml",
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nrun = \"no-such-linter-xyz {files}\"\nrequires = [\"no-such-linter-xyz\"]\n",
    );
    repo.write("ci/notes.txt", "x");
    let h = home.path().to_str().unwrap();
    assert_eq!(
        doctor(&repo, home.path()).code,
        0,
        "the workspace's config is fine"
    );
    let run = repo.run_env(["doctor", "--config", "ci/strict.toml"], &[("HOME", h)]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("stop gate `lint`: `no-such-linter-xyz` is NOT installed"),
        "{run:?}"
    );
}

/// An edit gate whose last run took most of the edit budget is a problem, with the ways out.
#[test]
fn an_edit_gate_close_to_the_edit_budget_is_reported() {
    let repo = Repo::git();
    repo.write("a.sh", "true\n");
    repo.config(
        "[hooks]\nedit_budget = \"3s\"\n\n[[gate]]\nname = \"slow\"\nglobs = [\"*.sh\"]\nrun = 'sleep 2'\n",
    );
    let quiet = repo.run(["doctor"]);
    assert!(
        !quiet.stdout.contains("edit gate `slow`"),
        "no run yet: {quiet:?}"
    );
    let run = repo.run(["check", "--phase", "edit", "--all"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doctor = repo.run(["doctor"]);
    assert!(
        doctor.stdout.contains(
            "edit gate `slow` took 2 s on its last edit run, against the 3 s edit budget"
        ) && doctor.stdout.contains("phases = [\"stop\", \"check\"]"),
        "{doctor:?}"
    );
}

/// Whether runs are observed is said, and, in a build without the observer (the portable
/// configuration, `--no-default-features`), what follows: no result is stored, so a change to
/// a file no model names (a helper's executable bit) is never served a stale pass.
#[test]
fn doctor_says_whether_inputs_are_observed_and_an_unobserved_build_stores_nothing() {
    let (repo, home) = clean();
    let run = doctor(&repo, home.path());
    let observed = cfg!(all(target_os = "linux", feature = "observe"));
    let said = if observed {
        "inputs: observed as each gate runs"
    } else {
        "inputs: not observed here (this build does not observe runs"
    };
    assert!(run.stdout.contains(said), "{run:?}");
    repo.config("[[gate]]\nname = \"t\"\nglobs = [\"check.sh\"]\nscope = \"project\"\nrun = \"sh check.sh\"\n");
    repo.write("check.sh", "./tools/ping\n");
    crate::common::write_exe(&repo.path().join("tools/ping"), "#!/bin/sh\nexit 0\n");
    let first = repo.run(["check", "--format", "json"]);
    assert_eq!(first.gate("t")["status"], "pass", "{first:?}");
    let stored = first.gate("t")["run_details"][0]["not_cached"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_eq!(
        stored.contains("runs cannot be observed here"),
        !observed,
        "{first:?}"
    );
    let explain = repo.run(["gates", "--explain", "check.sh"]);
    assert_eq!(
        explain.stdout.contains("inputs: not observed"),
        !observed,
        "{explain:?}"
    );
}

/// `init` writes Claude Code's hooks in exec form (`command` + `args`, no shell); doctor
/// asks the real `claude` on PATH whether it is new enough to start them so.
#[test]
fn doctor_asks_claude_code_whether_it_starts_hooks_in_exec_form() {
    if !crate::common::require_tool("claude") {
        return;
    }
    let (repo, home) = clean();
    let settings = std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap();
    assert!(settings.contains("\"args\""), "{settings}");
    let run = doctor(&repo, home.path());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("starts the hooks in") && run.stdout.contains("(exec form)"),
        "{run:?}"
    );
}
