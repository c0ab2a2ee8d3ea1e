//! The Claude Code hooks, fed real-shaped JSON (shared/reference/claude-code-hooks.md) in
//! temporary git repositories with real tools.

use crate::common::{require_tool, without_pin, Repo, Run};
use serde_json::{json, Value};

/// The official plugin's state file, as `/ralph-loop` writes it (and its stop hook claims it).
pub const PLUGIN_STATE: &str = "---\nactive: true\niteration: 1\nsession_id: sess-A\nmax_iterations: 20\ncompletion_promise: \"DONE\"\nstarted_at: \"2026-11-21T10:00:00Z\"\n---\n\nMake every module compile.\nKeep the API.\n";

pub fn post_tool_use(repo: &Repo, tool: &str, tool_input: Value) -> Run {
    let input = json!({
        "session_id": "sess-A",
        "transcript_path": "/nonexistent/t.jsonl",
        "cwd": repo.path(),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"success": true},
        "tool_use_id": "toolu_01ABC",
        "duration_ms": 12,
        "prompt_id": "an unknown field that must be ignored"
    });
    repo.run_stdin(
        &["hook", "post-tool-use"],
        input.to_string().as_bytes(),
        &[],
    )
}

pub fn stop(repo: &Repo, session: &str, last_message: Option<&str>) -> Run {
    let mut input = json!({
        "session_id": session,
        "transcript_path": repo.path().join("no-transcript.jsonl"),
        "cwd": repo.path(),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": true
    });
    if let Some(m) = last_message {
        input["last_assistant_message"] = json!(m);
    }
    repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[])
}

fn output(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("hook stdout is not JSON ({e}): {run:?}"))
}

/// The additionalContext a post-tool-use answer carries.
fn context(run: &Run) -> String {
    output(run)["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string()
}

pub fn python_repo() -> Repo {
    let repo = Repo::git();
    repo.write("pkg/ok.py", "x = 1\n");
    repo.commit_all();
    repo
}

fn state(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).ok()
}

fn journal(repo: &Repo) -> Vec<Value> {
    std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("journal line is JSON"))
        .collect()
}

#[test]
fn editing_a_broken_python_file_returns_its_error_and_fixing_it_returns_nothing() {
    if !require_tool("python3") {
        return;
    }
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n    pass\n");
    let file = repo.path().join("pkg/bad.py");
    let run = post_tool_use(&repo, "Write", json!({"file_path": file, "content": "..."}));
    let out = output(&run);
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let ctx = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("[python-compile]")
            && ctx.contains("SyntaxError")
            && ctx.contains("pkg/bad.py"),
        "{ctx}"
    );
    assert!(ctx.chars().count() < 10_000);
    assert!(
        out.get("decision").is_none(),
        "feedback goes through additionalContext only"
    );

    repo.write("pkg/bad.py", "def f():\n    pass\n");
    let run = post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": file, "old_string": "(:", "new_string": "()"}),
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}

#[test]
fn shellcheck_findings_come_back_after_editing_a_script() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("run.sh", "#!/bin/sh\ncd $1\n");
    let run = post_tool_use(
        &repo,
        "MultiEdit",
        json!({"file_path": repo.path().join("run.sh"), "edits": []}),
    );
    let ctx = context(&run);
    assert!(ctx.contains("SC2164"), "{ctx}");
}

#[test]
fn other_tools_deleted_files_and_paths_outside_are_silent_no_ops() {
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n");
    let silent = |run: Run| {
        assert_eq!(
            (run.code, run.stdout.clone(), run.stderr.clone()),
            (0, String::new(), String::new()),
            "{run:?}"
        )
    };
    silent(post_tool_use(
        &repo,
        "Bash",
        json!({"command": "python3 pkg/bad.py"}),
    ));
    silent(post_tool_use(
        &repo,
        "Read",
        json!({"file_path": repo.path().join("pkg/bad.py")}),
    ));
    silent(post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("pkg/gone.py")}),
    ));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.py"), "def f(:\n").unwrap();
    silent(post_tool_use(
        &repo,
        "Write",
        json!({"file_path": outside.path().join("x.py")}),
    ));
    silent(post_tool_use(&repo, "Write", json!({"file_path": 42})));
}

#[test]
fn a_broken_config_is_reported_to_the_agent_after_an_edit() {
    let repo = python_repo();
    repo.config(
        "[[gate]]\nname = \"x\"\nglobs = [\"*.py\"]\nrun = \"true\"\ntimeout = \"forever\"\n",
    );
    let run = post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("pkg/ok.py")}),
    );
    let ctx = context(&run);
    assert!(
        ctx.contains("could not load its config") && ctx.contains("ralph.toml:5"),
        "{ctx}"
    );
}

#[test]
fn the_edit_budget_bounds_a_slow_gate() {
    let repo = python_repo();
    repo.config("[hooks]\nedit_budget = \"1s\"\n[[gate]]\nname = \"slow\"\nglobs = [\"*.py\"]\nrun = \"sleep 30\"\ntimeout = \"5m\"\n");
    let run = post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("pkg/ok.py")}),
    );
    let ctx = context(&run);
    assert!(
        ctx.contains("[slow] stopped: the hook's time budget ran out"),
        "{ctx}"
    );
}

#[test]
fn the_stop_sequence_refuses_until_gates_pass_then_ends_the_loop() {
    if !require_tool("python3") {
        return;
    }
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    repo.write("pkg/bad.py", "def f(:\n");

    // No promise: blocked with the prompt, the failing gate and how to finish.
    let out = output(&stop(&repo, "sess-A", Some("I fixed some of it.")));
    assert_eq!(out["decision"], "block");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Make every module compile.\nKeep the API."),
        "{reason}"
    );
    assert!(reason.contains("SyntaxError"), "{reason}");
    assert!(reason.contains("<promise>DONE</promise>"), "{reason}");
    assert_eq!(
        out["systemMessage"],
        "ralph-gate: iteration 2/20, 1 gate failing"
    );
    let after = state(&repo).unwrap();
    assert!(
        after.contains("\ngates_pin: "),
        "the first stop pins the gates: {after}"
    );
    assert_eq!(
        without_pin(&after),
        PLUGIN_STATE.replace("iteration: 1", "iteration: 2"),
        "only the iteration line changes, and the pin is added"
    );

    // Promise, but a gate fails: refused.
    let out = output(&stop(
        &repo,
        "sess-A",
        Some("All done! <promise>DONE</promise>"),
    ));
    assert_eq!(out["decision"], "block");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .starts_with("ralph-gate refused your promise <promise>DONE</promise>"),
        "{out}"
    );
    assert!(state(&repo).unwrap().contains("iteration: 3"));

    // Fixed, and the promise: allowed, state removed.
    repo.write("pkg/bad.py", "def f():\n    pass\n");
    let run = stop(&repo, "sess-A", Some("Done.\n<promise>  DONE </promise>"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(state(&repo).is_none(), "state removed on completion");

    let entries = journal(&repo);
    let outcomes: Vec<&str> = entries
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["continue", "promise_refused", "completed"]);
    assert_eq!(entries[2]["decision"], "allow");
    assert_eq!(entries[2]["promise_seen"], "DONE");
    assert_eq!(entries[1]["gates"][0]["status"], "fail");
}

#[test]
fn the_bare_promise_word_does_not_end_the_loop() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let out = output(&stop(&repo, "sess-A", Some("DONE")));
    assert_eq!(out["decision"], "block");
    assert!(state(&repo).is_some());
}

#[test]
fn the_iteration_limit_ends_the_loop_and_says_what_still_fails() {
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n");
    repo.write(
        ".claude/ralph-loop.local.md",
        &PLUGIN_STATE.replace("iteration: 1", "iteration: 20"),
    );
    let out = output(&stop(&repo, "sess-A", Some("<promise>DONE</promise>")));
    assert!(out.get("decision").is_none(), "{out}");
    let msg = out["systemMessage"].as_str().unwrap();
    assert!(
        msg.contains("limit of 20 iterations unfinished") && msg.contains("python-compile"),
        "{msg}"
    );
    assert!(state(&repo).is_none());
    assert_eq!(journal(&repo)[0]["outcome"], "limit_reached");
}

#[test]
fn a_stuck_loop_is_stopped_after_unchanged_stops() {
    let repo = python_repo();
    repo.config("presets = [\"python\"]\n[hooks]\nstuck_after = 2\n");
    repo.write("pkg/bad.py", "def f(:\n");
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    for _ in 0..2 {
        assert_eq!(
            output(&stop(&repo, "sess-A", Some("trying")))["decision"],
            "block"
        );
    }
    let out = output(&stop(&repo, "sess-A", Some("trying")));
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("stopped as stuck: 2 stops in a row"),
        "{out}"
    );
    assert!(state(&repo).is_none());

    // A change to the tree resets the count.
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    assert_eq!(
        output(&stop(&repo, "sess-A", Some("trying")))["decision"],
        "block"
    );
    repo.write("pkg/new.py", "y = 2\n");
    assert_eq!(
        output(&stop(&repo, "sess-A", Some("trying")))["decision"],
        "block"
    );
    assert_eq!(
        output(&stop(&repo, "sess-A", Some("trying")))["decision"],
        "block"
    );
    assert_eq!(journal(&repo).last().unwrap()["unchanged_stops"], 1);
}

#[test]
fn another_sessions_loop_is_not_ours_and_an_unclaimed_one_is_claimed() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let run = stop(&repo, "sess-B", Some("bye"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        state(&repo).unwrap(),
        PLUGIN_STATE,
        "another session's stop leaves the loop alone"
    );

    let unclaimed = PLUGIN_STATE.replace("session_id: sess-A", "session_id: ");
    repo.write(".claude/ralph-loop.local.md", &unclaimed);
    assert_eq!(
        output(&stop(&repo, "sess-B", Some("working")))["decision"],
        "block"
    );
    assert!(state(&repo).unwrap().contains("session_id: sess-B\n"));
    let run = stop(&repo, "sess-A", Some("bye"));
    assert_eq!(run.stdout, "", "now sess-B owns it: {run:?}");
}

#[test]
fn no_loop_means_stopping_is_allowed_silently_unless_every_stop_is_gated() {
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n");
    let run = stop(&repo, "sess-A", Some("bye"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(!repo.exists(".ralph"), "nothing written without a loop");
}

fn transcript_line(text: &str, sidechain: bool) -> String {
    json!({"type": "assistant", "isSidechain": sidechain, "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": text}]}}).to_string()
}

#[test]
fn the_last_assistant_message_wins_over_a_stale_or_missing_transcript() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    // The transcript still holds an older turn without the promise.
    repo.write("t.jsonl", &transcript_line("still working", false));
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "transcript_path": repo.path().join("t.jsonl"),
                       "stop_hook_active": false, "last_assistant_message": "<promise>DONE</promise>"});
    let run = repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(state(&repo).is_none());
}

#[test]
fn the_transcript_is_read_past_malformed_lines_control_characters_and_sidechains() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let lines = [
        transcript_line("first \u{0007}\u{0001} bell <promise>DONE</promise>", false),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}}).to_string(),
        transcript_line("a subagent said <promise>NOPE</promise>", true),
        // The same message's next block (one line per block, same id).
        json!({"type": "assistant", "message": {"id": "m", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]}}).to_string(),
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te".to_string(),
    ];
    repo.write("t.jsonl", &(lines.join("\n") + "\n"));
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "transcript_path": repo.path().join("t.jsonl"), "stop_hook_active": false});
    let run = repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let entry = &journal(&repo)[0];
    assert_eq!(entry["promise_source"], "transcript");
    assert_eq!(entry["outcome"], "completed");
}

#[test]
fn bad_stdin_is_explained_and_touches_no_state() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    for (input, expect) in [
        (&b""[..], "empty"),
        (&b"not json"[..], "not a valid JSON object"),
        (
            &br#"{"session_id": ["wrong", "type"]}"#[..],
            "`session_id` in the hook input must be a string",
        ),
        (&b"\xff\xfe\x00"[..], "not a valid JSON object"),
    ] {
        for hook in ["stop", "post-tool-use"] {
            let run = repo.run_stdin(&["hook", hook], input, &[]);
            assert_eq!(run.code, 1, "{hook} {input:?}: {run:?}");
            assert!(
                run.stderr.starts_with("ralph-gate hook: ") && run.stderr.contains(expect),
                "{run:?}"
            );
            assert_eq!(run.stdout, "");
        }
    }
    assert_eq!(state(&repo).unwrap(), PLUGIN_STATE);
    assert!(!repo.exists(".ralph"));
}

#[test]
fn a_corrupt_state_file_is_reported_and_left_as_it_is() {
    let repo = python_repo();
    let corrupt = PLUGIN_STATE.replace("iteration: 1", "iteration: one");
    repo.write(".claude/ralph-loop.local.md", &corrupt);
    let out = output(&stop(&repo, "sess-A", Some("bye")));
    assert!(
        out["systemMessage"]
            .as_str()
            .unwrap()
            .contains("`iteration` must be a whole number"),
        "{out}"
    );
    assert_eq!(state(&repo).unwrap(), corrupt);
}

#[test]
fn a_read_only_state_folder_blocks_instead_of_ending_the_loop() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    std::fs::write(
        repo.path().join(".ralph"),
        "a file where the folder should be",
    )
    .unwrap();
    let run = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    // A JSON block, not exit 2 alone: under PowerShell exit 2 arrives as 1 and fails open.
    assert_eq!(run.code, 0, "{run:?}");
    let out = output(&run);
    assert_eq!(out["decision"], "block", "{run:?}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("could not check this stop"),
        "{run:?}"
    );
    assert!(run.stderr.contains("could not check this stop"), "{run:?}");
    assert_eq!(state(&repo).unwrap(), PLUGIN_STATE);
}

#[test]
fn gate_every_stop_holds_a_plain_session_to_the_stop_gates() {
    let repo = python_repo();
    repo.config("presets = [\"python\"]\n[hooks]\ngate_every_stop = true\n");
    repo.write("pkg/bad.py", "def f(:\n");
    let out = output(&stop(&repo, "sess-A", Some("bye")));
    assert_eq!(out["decision"], "block");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("ralph-gate: 1 stop gate is failing") && reason.contains("SyntaxError"),
        "{reason}"
    );
    repo.write("pkg/bad.py", "def f():\n    pass\n");
    let run = stop(&repo, "sess-A", Some("bye"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let outcomes: Vec<String> = journal(&repo)
        .iter()
        .map(|e| e["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outcomes, ["block", "allow"]);
}

#[test]
fn concurrent_stops_neither_corrupt_nor_lose_state() {
    let repo = python_repo();
    // Eight identical stops would otherwise (rightly) end the loop as stuck.
    repo.config("presets = [\"python\"]\n[hooks]\nstuck_after = 0\n");
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| stop(&repo, "sess-A", Some("working"))))
            .collect();
        for h in handles {
            let run = h.join().unwrap();
            assert_eq!(output(&run)["decision"], "block", "{run:?}");
        }
    });
    let text = state(&repo).unwrap();
    assert_eq!(
        without_pin(&text),
        PLUGIN_STATE.replace("iteration: 1", "iteration: 9"),
        "each stop counted once, file intact"
    );
    assert_eq!(journal(&repo).len(), 8, "no journal line lost");
    let leftovers: Vec<_> = std::fs::read_dir(repo.path().join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left: {leftovers:?}");
}

#[test]
fn a_final_turn_of_tool_calls_does_not_reuse_an_earlier_promise() {
    // The official plugin's bug: the last text found may belong to an older turn.
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let lines = [
        json!({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "<promise>DONE</promise>"}]}}).to_string(),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "refused"}]}}).to_string(),
        json!({"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Edit", "input": {}}]}}).to_string(),
    ];
    repo.write("t.jsonl", &(lines.join("\n") + "\n"));
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "transcript_path": repo.path().join("t.jsonl"), "stop_hook_active": true});
    let out = output(&repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[]));
    assert_eq!(out["decision"], "block", "{out}");
    assert_eq!(journal(&repo)[0]["promise_seen"], serde_json::Value::Null);
}

#[test]
fn a_promise_quoted_in_prose_does_not_end_the_loop() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let out = output(&stop(
        &repo,
        "sess-A",
        Some("Once the tests pass I will write <promise>DONE</promise>; two still fail."),
    ));
    assert_eq!(out["decision"], "block", "{out}");
    assert!(state(&repo).is_some());
}

#[test]
fn a_promise_in_the_transcript_but_not_in_the_last_message_is_not_made() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let line = json!({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "<promise>DONE</promise>"}]}}).to_string();
    repo.write("t.jsonl", &(line + "\n"));
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "transcript_path": repo.path().join("t.jsonl"),
                       "last_assistant_message": "Still working on it."});
    let out = output(&repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[]));
    assert_eq!(out["decision"], "block", "{out}");
}

#[test]
fn a_stop_gate_that_checked_nothing_cannot_grant_completion_unless_optional() {
    let repo = python_repo();
    let gate =
        "[[gate]]\nname = \"ts\"\nglobs = [\"*.ts\"]\nrun = 'false {files}'\nphases = [\"stop\"]\n";
    repo.config(gate);
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let out = output(&stop(&repo, "sess-A", Some("<promise>DONE</promise>")));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("1 stop gate verified nothing: ts (it matched no file)"),
        "{reason}"
    );
    assert!(state(&repo).is_some());

    // Marked optional in the config the loop started with: nothing to verify is fine. (A
    // person ends the first loop: a state file replaced by hand would be tampering.)
    assert_eq!(
        repo.on_terminal("person", "code", &["loop", "cancel"]).code,
        0
    );
    repo.config(&format!("{gate}optional = true\n"));
    repo.write(
        ".claude/ralph-loop.local.md",
        &PLUGIN_STATE.replace("10:00:00Z", "11:00:00Z"),
    );
    let run = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "allowed: {run:?}");
    assert!(state(&repo).is_none());
}

#[test]
fn a_broken_config_blocks_a_loops_stop_instead_of_ending_it() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    repo.config("[[gate]]\nname = \"x\"\nglobs = [\"*.py\"]\nrun = \"true\"\ntimeout = \"soon\"\n");
    let out = output(&stop(&repo, "sess-A", Some("<promise>DONE</promise>")));
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot load its config") && reason.contains("ralph.toml:5"),
        "{reason}"
    );
    assert!(state(&repo).is_some(), "the loop goes on");
}

#[test]
fn a_session_id_of_odd_bytes_keeps_its_loop_and_changes_no_field() {
    if !require_tool("python3") {
        return;
    }
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n");
    let unclaimed = PLUGIN_STATE.replace("session_id: sess-A\n", "");
    repo.write(".claude/ralph-loop.local.md", &unclaimed);
    // Written raw, this id would end the front matter and set a limit of 1; with a trailing
    // space it would not read back equal, and the loop would no longer be this session's.
    let odd = "sess A \n---\nmax_iterations: 1 ";
    for _ in 0..2 {
        let run = stop(&repo, odd, Some("<promise>DONE</promise>"));
        assert!(run.stdout.contains("\"block\""), "{run:?}");
    }
    let s = state(&repo).unwrap();
    assert!(
        s.contains("iteration: 3\n") && s.contains("max_iterations: 20\n"),
        "{s}"
    );
    assert!(
        s.ends_with("---\n\nMake every module compile.\nKeep the API.\n"),
        "{s}"
    );
}

#[test]
fn the_plugins_hooks_stand_down_where_settings_register_ralph_gate() {
    let repo = python_repo();
    repo.write("pkg/bad.py", "def f(:\n");
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "hook_event_name": "Stop",
                       "stop_hook_active": false, "last_assistant_message": "working"});
    let plugin = |repo: &Repo| {
        repo.run_stdin(
            &["hook", "stop", "--via", "plugin"],
            input.to_string().as_bytes(),
            &[("CLAUDE_PROJECT_DIR", repo.path().to_str().unwrap())],
        )
    };
    // Plugin alone: it acts.
    let run = plugin(&repo);
    assert!(run.stdout.contains("\"block\""), "{run:?}");
    assert!(state(&repo).unwrap().contains("iteration: 2"));
    // Settings register ralph-gate too: both run for one stop, only the settings' one acts.
    repo.write(
        ".claude/settings.json",
        include_str!("../../hooks/settings.json"),
    );
    let run = plugin(&repo);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let run = repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &[]);
    assert!(run.stdout.contains("\"block\""), "{run:?}");
    assert!(
        state(&repo).unwrap().contains("iteration: 3"),
        "one stop, one iteration"
    );
}
