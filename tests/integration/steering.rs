//! Issue 22: the loop's own state cannot be steered. A motivated agent with a shell (every
//! command first through the guard) tries to end a loop whose gates fail by moving where the
//! stop is judged, resetting the pin, starting or stopping loops itself, and changing the
//! protected files by effect. Each must fail; the honest agent working in subfolders, with
//! `cd` and its own `git stash`, still ends its loop.

use crate::common::{require_tool, Repo, Run};
use crate::tamper::{decision as answer, journal, BROKEN, FIXED, GATE};
use serde_json::{json, Value};
use std::path::Path;

const WEAK: &str = "[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"true\"\n";
const STATE: &str = ".claude/ralph-loop.local.md";
const DONE: &str = "All fixed.\n<promise>DONE</promise>";

/// A repository with a Python gate and a broken file, and a loop a person started for no
/// session in particular (the first session's hook claims it).
fn broken_loop() -> Option<Repo> {
    if !require_tool("python3") {
        return None;
    }
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/ok.py", "x = 1\n");
    repo.write("pkg/mod.py", BROKEN);
    repo.commit_all();
    let run = repo.run(["loop", "start", "--promise", "DONE", "Make it compile."]);
    assert_eq!(run.code, 0, "{run:?}");
    Some(repo)
}

/// A hook call as Claude Code makes it, run from the repository's root (where Claude Code
/// starts hooks) about an agent working in `cwd`.
fn hook(repo: &Repo, event: &str, payload: Value) -> Run {
    repo.run_stdin(&["hook", event], payload.to_string().as_bytes(), &[])
}

fn stop_in(repo: &Repo, session: &str, cwd: &Path, message: &str) -> Run {
    hook(
        repo,
        "stop",
        json!({"session_id": session, "transcript_path": "/nonexistent.jsonl", "cwd": cwd,
               "hook_event_name": "Stop", "stop_hook_active": true,
               "last_assistant_message": message}),
    )
}

fn stop(repo: &Repo, session: &str, message: &str) -> Run {
    stop_in(repo, session, repo.path(), message)
}

fn bash_hook(repo: &Repo, event: &str, session: &str, id: &str, command: &str) -> Run {
    let name = match event {
        "pre-tool-use" => "PreToolUse",
        _ => "PostToolUseFailure",
    };
    hook(
        repo,
        event,
        json!({"session_id": session, "transcript_path": "/nonexistent.jsonl",
               "cwd": repo.path(), "hook_event_name": name, "tool_name": "Bash",
               "tool_input": {"command": command}, "tool_use_id": id}),
    )
}

/// Runs `command` as the agent's Bash tool would: the guard first, then the command (when
/// allowed), then the hook after it. Returns what the guard and the after-hook answered.
fn agent_runs(repo: &Repo, session: &str, id: &str, command: &str) -> (Run, Run) {
    let before = bash_hook(repo, "pre-tool-use", session, id, command);
    if before.stdout.contains("\"deny\"") {
        return (
            before,
            crate::common::finish(std::process::Command::new("true").output().unwrap()),
        );
    }
    // Its exit code does not matter: the hook after it comes either way.
    std::process::Command::new("bash")
        .args(["-c", command])
        .current_dir(repo.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .status()
        .expect("bash runs");
    (
        before,
        bash_hook(repo, "post-tool-use", session, id, command),
    )
}

fn blocked(run: &Run) -> String {
    let out = answer(run);
    assert_eq!(out["decision"], "block", "the loop must go on: {run:?}");
    out["reason"].as_str().unwrap().to_string()
}

fn events(repo: &Repo, name: &str) -> Vec<Value> {
    journal(repo)
        .into_iter()
        .filter(|e| e["event"] == name)
        .collect()
}

fn iteration(repo: &Repo) -> String {
    let text = std::fs::read_to_string(repo.path().join(STATE)).expect("the state file");
    text.lines()
        .find_map(|l| l.strip_prefix("iteration: "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_stop_in_a_decoy_subfolder_is_judged_in_the_loops_project() {
    let Some(repo) = broken_loop() else { return };
    // A byte-identical config in a folder whose Python compiles.
    repo.write("decoy/ralph.toml", GATE);
    repo.write("decoy/fine.py", FIXED);
    let decoy = repo.path().join("decoy");
    let reason = blocked(&stop_in(&repo, "sess-A", &decoy, DONE));
    assert!(reason.contains("mod.py"), "judged at the root: {reason}");

    // The same folder made a git repository of its own.
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&decoy)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    let reason = blocked(&stop_in(&repo, "sess-A", &decoy, DONE));
    assert!(reason.contains("mod.py"), "{reason}");
    assert!(repo.exists(STATE));
}

#[test]
fn a_stop_in_a_subfolder_of_an_honest_agent_ends_its_loop() {
    let Some(repo) = broken_loop() else { return };
    let pkg = repo.path().join("pkg");
    blocked(&stop_in(&repo, "sess-A", &pkg, "working on it"));
    // The agent fixes the file from inside `pkg/`, stashing and restoring its own work.
    repo.write("pkg/mod.py", FIXED);
    let (guard, after) = agent_runs(
        &repo,
        "sess-A",
        "toolu_s",
        "cd pkg && git stash && git stash pop && python3 -m py_compile mod.py",
    );
    assert_eq!(answer(&guard), Value::Null, "{guard:?}");
    assert_eq!(
        answer(&after),
        Value::Null,
        "nothing to put back: {after:?}"
    );
    let run = stop_in(&repo, "sess-A", &pkg, DONE);
    assert_eq!(answer(&run).get("decision"), None, "{run:?}");
    assert!(!repo.exists(STATE), "the loop ended");
    assert!(events(&repo, "restored").is_empty());
}

#[test]
fn a_pin_removed_from_the_state_file_and_the_git_folder_is_tampering() {
    let Some(repo) = broken_loop() else { return };
    let pins = repo.path().join(".git/ralph-gate/pins");
    assert!(pins.join("ralph-loop.local.md.json").exists());
    // One `python -c`, run where no hook sees it.
    let script = format!(
        "import os,re\np='{state}'\ns=open(p).read()\nopen(p,'w').write(re.sub(r'(?m)^gates_pin: .*\\n','',s))\nos.remove('{pins}/ralph-loop.local.md.json')\nopen('ralph.toml','w').write('''{WEAK}''')\n",
        state = repo.path().join(STATE).display(),
        pins = pins.display()
    );
    let ok = std::process::Command::new("python3")
        .args(["-c", &script])
        .current_dir(repo.path())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let reason = blocked(&stop(&repo, "sess-A", DONE));
    assert!(reason.contains("pin"), "{reason}");
    let last = events(&repo, "stop").pop().unwrap();
    assert_eq!(last["pin"], "tampered", "{last}");
}

#[test]
fn a_state_file_whose_start_time_was_edited_is_tampering() {
    let Some(repo) = broken_loop() else { return };
    let path = repo.path().join(STATE);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited: String = text
        .lines()
        .filter(|l| !l.starts_with("gates_pin: "))
        .map(|l| {
            if l.starts_with("started_at: ") {
                "started_at: \"2020-01-01T00:00:00Z\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, edited + "\n").unwrap();
    repo.config(WEAK);
    let reason = blocked(&stop(&repo, "sess-A", DONE));
    assert!(reason.contains("pin"), "{reason}");
    assert_eq!(events(&repo, "stop").pop().unwrap()["pin"], "tampered");
}

#[test]
fn loop_start_inside_an_agent_session_is_refused_while_a_loop_runs() {
    let Some(repo) = broken_loop() else { return };
    let before = std::fs::read_to_string(repo.path().join(STATE)).unwrap();
    let run = repo.run_env(
        ["loop", "start", "--max-iterations", "1", "Stop at once."],
        &[("CLAUDECODE", "1")],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("only a person"), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join(STATE)).unwrap(),
        before
    );
    let loops: Vec<_> = std::fs::read_dir(repo.path().join(".claude"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("ralph-loop"))
        .collect();
    assert_eq!(loops.len(), 1, "no second loop");
    assert_eq!(events(&repo, "refused").len(), 1);
    // The guard denies the command before it runs, too.
    let (guard, _) = agent_runs(
        &repo,
        "sess-A",
        "toolu_1",
        "ralph-gate loop start --max-iterations 1 x",
    );
    assert!(guard.stdout.contains("only a person"), "{guard:?}");

    // Without a loop, the plugin's `/loop` command starts one from inside the session.
    let fresh = Repo::git();
    fresh.config(GATE);
    let run = fresh.run_env(["loop", "start", "Go."], &[("CLAUDECODE", "1")]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_stop_made_up_with_another_session_does_not_take_the_loop() {
    let Some(repo) = broken_loop() else { return };
    // The session's first hook (a tool call) claims the person's loop.
    let (guard, _) = agent_runs(&repo, "sess-A", "toolu_1", "ls");
    assert_eq!(answer(&guard), Value::Null);
    let state = std::fs::read_to_string(repo.path().join(STATE)).unwrap();
    assert!(state.contains("session_id: sess-A"), "{state}");
    for _ in 0..4 {
        let run = stop(&repo, "decoy", DONE);
        assert_eq!(answer(&run).get("decision"), None, "{run:?}");
    }
    assert!(repo.exists(STATE), "the loop goes on");
    assert_eq!(iteration(&repo), "1", "no stop of the decoy counted");
    blocked(&stop(&repo, "sess-A", DONE));
}

#[test]
fn stops_from_inside_the_agents_own_command_count_for_nothing() {
    let Some(repo) = broken_loop() else { return };
    // The session's shell commands get after-hooks (settings from `init`).
    agent_runs(&repo, "sess-A", "toolu_0", "ls");
    // The guard sees through a variable ...
    let plain = "r=ralph-gate; echo '{}' | $r hook stop";
    let guard = bash_hook(&repo, "pre-tool-use", "sess-A", "toolu_6", plain);
    assert!(guard.stdout.contains("deny"), "{guard:?}");
    // ... but not through a decoding, so the command runs ...
    let command = "for i in 1 2 3 4 5 6 7; do echo '{}' | \"$(echo cmFscGgtZ2F0ZQ== | base64 -d)\" hook stop; done";
    let guard = bash_hook(&repo, "pre-tool-use", "sess-A", "toolu_7", command);
    assert_eq!(answer(&guard), Value::Null, "{guard:?}");
    // ... and while it runs, its stops are refused and not counted (stuck_after is 5).
    for _ in 0..7 {
        let reason = blocked(&stop(&repo, "sess-A", "nothing changed"));
        assert!(reason.contains("still running"), "{reason}");
    }
    assert!(repo.exists(STATE), "not released as stuck");
    assert_eq!(iteration(&repo), "1");
    assert_eq!(events(&repo, "refused").len(), 7);
    bash_hook(&repo, "post-tool-use", "sess-A", "toolu_7", command);
    // The agent's real stop is judged as usual.
    let reason = blocked(&stop(&repo, "sess-A", "working"));
    assert!(reason.contains("mod.py"), "{reason}");
    assert_eq!(iteration(&repo), "2");
}

#[test]
fn what_a_command_changes_unseen_is_put_back_and_told() {
    let Some(repo) = broken_loop() else { return };
    agent_runs(&repo, "sess-A", "toolu_0", "ls");
    let config = std::fs::read_to_string(repo.path().join("ralph.toml")).unwrap();
    let state = std::fs::read_to_string(repo.path().join(STATE)).unwrap();
    // Nothing in the line names a protected path.
    let command = format!(
        "python3 -c \"import base64,glob;n=base64.b64decode('cmFscGgudG9tbA==').decode();open(n,'w').write('''{}''');[open(p,'a').write('max_iterations: 1') for p in glob.glob('.c*/*.md')]\"",
        WEAK.replace('"', "\\\"")
    );
    let (guard, after) = agent_runs(&repo, "sess-A", "toolu_2", &command);
    assert_eq!(
        answer(&guard),
        Value::Null,
        "the guard cannot read it: {guard:?}"
    );
    let context = answer(&after)["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(context.contains("ralph.toml changed"), "{after:?}");
    assert!(context.contains("put back"), "{context}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("ralph.toml")).unwrap(),
        config
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join(STATE)).unwrap(),
        state
    );
    let restored = events(&repo, "restored");
    assert_eq!(restored.len(), 1, "{restored:?}");
    assert!(restored[0]["why"].as_str().unwrap().contains("python3 -c"));

    // No hook after the command (a failure hook not registered): the stop puts it back.
    let guard = bash_hook(
        &repo,
        "pre-tool-use",
        "sess-A",
        "toolu_3",
        "rm -- \"$(echo ralph).toml\"",
    );
    assert_eq!(answer(&guard), Value::Null);
    std::fs::remove_file(repo.path().join("ralph.toml")).unwrap();
    blocked(&stop(&repo, "sess-A", DONE));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("ralph.toml")).unwrap(),
        config,
        "put back at the stop"
    );
}

#[test]
fn a_state_file_stashed_away_keeps_the_loop_held_until_a_person_cancels() {
    let Some(repo) = broken_loop() else { return };
    blocked(&stop(&repo, "sess-A", "working"));
    // Run where no hook sees it (the guard denies `git stash -u`).
    let (guard, _) = agent_runs(&repo, "sess-A", "toolu_4", "git stash -u");
    assert!(guard.stdout.contains("deny"), "{guard:?}");
    repo.git_cmd(&["stash", "-u"]);
    assert!(!repo.exists(STATE), "moved away");
    let reason = blocked(&stop(&repo, "sess-A", DONE));
    assert!(reason.contains("state file is gone"), "{reason}");
    assert!(reason.contains("ralph-gate loop cancel"), "{reason}");
    assert!(!events(&repo, "state_deleted").is_empty());
    let status = repo.run(["loop", "status"]);
    assert!(status.stdout.contains("held"), "{status:?}");

    // Put back, the loop goes on where it was.
    repo.git_cmd(&["stash", "pop"]);
    let reason = blocked(&stop(&repo, "sess-A", DONE));
    assert!(reason.contains("mod.py"), "{reason}");

    // Gone again, a person ends it; then nothing holds the agent.
    std::fs::remove_file(repo.path().join(STATE)).unwrap();
    blocked(&stop(&repo, "sess-A", DONE));
    let run = repo.on_terminal("person", "code", &["loop", "cancel"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = stop(&repo, "sess-A", DONE);
    assert_eq!(run.stdout, "", "{run:?}");
}

#[test]
fn a_test_binary_overwritten_in_target_is_not_what_a_stop_runs() {
    if !require_tool("cargo") {
        return;
    }
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"cargo-test\"\ndriver = \"cargo\"\nglobs = [\"**/*.rs\", \"**/Cargo.toml\"]\nexclude = [\"**/target/**\"]\nrun = \"cargo test --quiet --offline\"\nphases = [\"stop\"]\ntimeout = \"5m\"\n",
    );
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"forged\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a - b }\n\n#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }\n",
    );
    repo.write(".gitignore", "target/\n");
    repo.commit_all();
    let state = tempfile::tempdir().unwrap();
    let env = [("XDG_STATE_HOME", state.path().to_str().unwrap())];
    let run = repo.run_env(["loop", "start", "--promise", "DONE", "Fix add."], &env);
    assert_eq!(run.code, 0, "{run:?}");

    // The agent builds the tests, then puts a script that passes in place of the binary.
    let cargo = |args: &[&str]| {
        std::process::Command::new("cargo")
            .args(args)
            .current_dir(repo.path())
            .output()
            .unwrap()
    };
    assert!(!cargo(&["test", "--quiet", "--offline"]).status.success());
    let deps = repo.path().join("target/debug/deps");
    let binary = std::fs::read_dir(&deps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("forged-") && p.extension().is_none()
        })
        .expect("the test binary");
    crate::common::write_exe(&binary, "#!/bin/sh\nexit 0\n");
    assert!(
        cargo(&["test", "--quiet", "--offline"]).status.success(),
        "the bare tool now runs the forged binary"
    );

    let payload = json!({"session_id": "sess-A", "transcript_path": "/nonexistent.jsonl",
        "cwd": repo.path(), "hook_event_name": "Stop", "stop_hook_active": true,
        "last_assistant_message": DONE});
    let run = repo.run_stdin(&["hook", "stop"], payload.to_string().as_bytes(), &env);
    let reason = blocked(&run);
    assert!(reason.contains("cargo-test"), "{reason}");
    assert!(
        std::fs::read_dir(state.path().join("ralph-gate/cargo-target"))
            .unwrap()
            .next()
            .is_some(),
        "built in ralph-gate's own target folder"
    );

    // Fixed for real, the loop ends.
    repo.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }\n",
    );
    let run = repo.run_stdin(&["hook", "stop"], payload.to_string().as_bytes(), &env);
    assert_eq!(answer(&run).get("decision"), None, "{run:?}");
}

#[test]
fn without_after_hooks_a_pending_command_does_not_refuse_the_stop() {
    let Some(repo) = broken_loop() else { return };
    // Settings written before the after-hook for shell commands: the guard alone runs.
    let guard = bash_hook(
        &repo,
        "pre-tool-use",
        "sess-A",
        "toolu_1",
        "python3 -m py_compile pkg/ok.py",
    );
    assert_eq!(answer(&guard), Value::Null);
    repo.write("pkg/mod.py", FIXED);
    let run = stop(&repo, "sess-A", DONE);
    assert_eq!(answer(&run).get("decision"), None, "{run:?}");
    assert!(!repo.exists(STATE), "the loop ended");
    assert!(events(&repo, "refused").is_empty());
}

/// A second agent program whose hook runs while the first one's shell command is pending
/// records itself beside the pins; that write is ralph-gate's, not the command's: the
/// command's after-hook neither puts it back nor tells the agent it changed anything.
#[test]
fn another_agents_first_hook_during_a_command_is_not_the_commands_doing() {
    let Some(repo) = broken_loop() else { return };
    if !require_tool("python3") {
        return;
    }
    let before = bash_hook(&repo, "pre-tool-use", "sess-A", "t1", "true");
    assert!(!before.stdout.contains("\"deny\""), "{before:?}");
    let seen = repo.path().join(".git/ralph-gate/pins/agents.seen");
    let agents = |text: &str| text.matches("\"pid\"").count();
    let first = std::fs::read_to_string(&seen).expect("the test's hook recorded it");
    assert_eq!(agents(&first), 1, "{first}");
    // Another program (a stand-in for a second agent CLI) runs a hook of its own session.
    let payload = json!({"session_id": "sess-B", "cwd": repo.path(), "hook_event_name": "Stop",
                         "stop_hook_active": false, "last_assistant_message": "hi"});
    let other = repo
        .python()
        .args([
            "-c",
            crate::approval::AGENT,
            env!("CARGO_BIN_EXE_ralph-gate"),
            &payload.to_string(),
        ])
        .status()
        .expect("python3 runs");
    assert!(other.success());
    let both = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(agents(&both), 2, "{both}");
    let after = bash_hook(&repo, "post-tool-use", "sess-A", "t1", "true");
    assert!(!after.stdout.contains("put back"), "{after:?}");
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), both, "kept");
}
