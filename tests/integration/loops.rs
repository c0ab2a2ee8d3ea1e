//! `ralph-gate loop start|status|list|cancel`, and their files as the plugin reads them.

use crate::common::Repo;
use crate::hooks::{python_repo, stop, PLUGIN_STATE};

#[test]
fn start_writes_the_plugins_format_and_a_second_loop_gets_an_id() {
    let repo = python_repo();
    // None yet: said on stderr, stdout stays one line per loop.
    let none = repo.run(["loop", "list"]);
    assert_eq!(none.code, 0, "{none:?}");
    assert!(
        none.stdout.is_empty() && none.stderr.contains("no loop"),
        "{none:?}"
    );
    let run = repo.run([
        "loop",
        "start",
        "--max-iterations",
        "7",
        "--promise",
        "SHIPPED",
        "Build",
        "the",
        "thing",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        &lines[..6],
        [
            "---",
            "active: true",
            "iteration: 1",
            "session_id: ",
            "max_iterations: 7",
            "completion_promise: \"SHIPPED\""
        ]
    );
    assert!(
        lines[6].starts_with("started_at: \"20") && lines[6].ends_with("Z\""),
        "{}",
        lines[6]
    );
    assert!(lines[7].starts_with("gates_pin: "), "{}", lines[7]);
    assert_eq!(&lines[8..], ["---", "", "Build the thing"]);

    repo.write("prompt.md", "Second task.\nWith two lines.\n");
    let run = repo.run([
        "loop",
        "start",
        "--prompt-file",
        "prompt.md",
        "--session",
        "sess-Z",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let list = repo.run(["loop", "list"]);
    let rows: Vec<&str> = list.stdout.lines().collect();
    assert_eq!(rows.len(), 2, "{list:?}");
    assert!(
        rows[0].starts_with("(main)\t1/7\tSHIPPED\t(unclaimed)"),
        "{list:?}"
    );
    let id = rows[1].split('\t').next().unwrap();
    assert_eq!(id.len(), 8, "{list:?}");
    assert!(
        rows[1].contains("1/unlimited\t(none)\tsess-Z") && rows[1].ends_with("Second task."),
        "{list:?}"
    );
    assert!(repo.exists(&format!(".claude/ralph-loop-{id}.local.md")));

    let status = repo.run(["loop", "status"]);
    assert!(
        status.stdout.contains("  promise    SHIPPED")
            && status.stdout.contains("  session    sess-Z"),
        "{status:?}"
    );

    let run = repo.on_terminal("person", "code", &["loop", "cancel"]);
    assert!(
        run.stdout.contains("cancelled") && !repo.exists(".claude/ralph-loop.local.md"),
        "{run:?}"
    );
    let run = repo.run(["loop", "cancel", "nope"]);
    assert_eq!(run.code, 2);
    let run = repo.on_terminal("person", "code", &["loop", "cancel", id]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(repo.run(["loop", "status"]).stdout, "ralph-gate: no loop\n");
}

#[test]
fn a_loop_started_by_ralph_gate_is_held_to_its_promise() {
    let repo = python_repo();
    assert_eq!(
        repo.run(["loop", "start", "--promise", "DONE", "Do it"])
            .code,
        0
    );
    let run = stop(&repo, "sess-Q", Some("done?"));
    assert!(run.stdout.contains("\"decision\":\"block\""), "{run:?}");
    let text = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    assert!(
        text.contains("session_id: sess-Q\n") && text.contains("iteration: 2\n"),
        "{text}"
    );
}

#[test]
fn a_second_session_with_its_own_loop_is_gated_separately() {
    let repo = python_repo();
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--session",
            "sess-B",
            "--promise",
            "B-DONE",
            "Other task"
        ])
        .code,
        0
    );
    let run = stop(&repo, "sess-B", Some("<promise>B-DONE</promise>"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap(),
        PLUGIN_STATE
    );
    assert_eq!(
        std::fs::read_dir(repo.path().join(".claude"))
            .unwrap()
            .count(),
        1,
        "sess-B's loop file is gone"
    );
}

#[test]
fn bad_loop_arguments_are_usage_errors() {
    let repo = Repo::git();
    assert_eq!(repo.run(["loop", "start"]).code, 2);
    assert_eq!(
        repo.run(["loop", "start", "--promise", "say \"hi\"", "x"])
            .code,
        2
    );
    assert_eq!(
        repo.run(["loop", "start", "--prompt-file", "missing.md"])
            .code,
        2
    );
    assert_eq!(repo.run(["loop", "cancel"]).code, 2, "nothing to cancel");
}

/// `loop start` without `--agent` makes the loop of the agent `init` set the project up for,
/// where that agent's stop hook finds it, and says so; among several it names the others.
#[test]
fn start_without_an_agent_follows_the_agent_the_project_is_set_up_for() {
    let repo = python_repo();
    let run = repo.run(["init", "--agent", "codex"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = repo.run(["loop", "start", "Fix", "it"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(repo.exists(".codex/ralph-loop.local.md"), "{run:?}");
    assert!(!repo.exists(".claude/ralph-loop.local.md"), "{run:?}");
    assert!(run.stdout.contains("agent: codex"), "{run:?}");
    let run = repo.on_terminal("person", "code", &["loop", "cancel"]);
    assert_eq!(run.code, 0, "{run:?}");

    let run = repo.run(["init", "--agent", "claude"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = repo.run(["loop", "start", "Fix", "it"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(repo.exists(".claude/ralph-loop.local.md"), "{run:?}");
    assert!(
        run.stdout.contains("set up for claude, codex") && run.stdout.contains("--agent codex"),
        "{run:?}"
    );
}

/// A `/goal` ralph-gate holds shows as a goal in `loop list`, `loop status`, `status` and
/// `doctor`: its condition, its agent and its judge's last word.
#[test]
fn a_held_goal_is_listed_as_a_goal_with_its_judges_last_word() {
    let repo = python_repo();
    let payload = goal_session(&repo);
    let run = repo.run_stdin(&["hook", "stop"], payload.to_string().as_bytes(), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("holds your goal"), "{run:?}");

    let list = repo.run(["loop", "list"]);
    assert!(
        list.stdout.contains("(goal)") && list.stdout.contains("pkg/bad.py compiles"),
        "{list:?}"
    );
    let status = repo.run(["loop", "status"]);
    assert!(
        status.stdout.contains("goal       pkg/bad.py compiles")
            && status.stdout.contains("agent      claude"),
        "{status:?}"
    );
    let status = repo.run(["status"]);
    assert!(
        status.stdout.contains("goal: pkg/bad.py compiles")
            && status
                .stdout
                .contains("its judge last said: bad.py still has a syntax error"),
        "{status:?}"
    );
    let doctor = repo.run(["doctor"]);
    assert!(
        doctor
            .stdout
            .contains("holds the claude session's own goal to the stop gates: pkg/bad.py compiles"),
        "{doctor:?}"
    );
}

/// A repository whose Python gate fails, a Claude Code transcript with a `/goal` on it, and
/// the Stop payload of that session's turn.
fn goal_session(repo: &crate::common::Repo) -> serde_json::Value {
    repo.config("[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n");
    repo.write("pkg/bad.py", "def f(:\n");
    repo.commit_all();
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let transcript = line(
        serde_json::json!({"type": "attachment", "attachment": {"type": "goal_status", "met": false, "sentinel": true, "condition": "pkg/bad.py compiles"}}),
    ) + &line(
        serde_json::json!({"type": "user", "promptId": "p1", "message": {"role": "user", "content": "/goal pkg/bad.py compiles"}}),
    ) + &line(
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Working on pkg/bad.py now."}]}}),
    ) + &line(
        serde_json::json!({"type": "attachment", "attachment": {"type": "goal_status", "met": false, "condition": "pkg/bad.py compiles", "reason": "bad.py still has a syntax error"}}),
    );
    repo.write("t.jsonl", &transcript);
    serde_json::json!({
        "session_id": "sess-G",
        "transcript_path": repo.path().join("t.jsonl"),
        "cwd": repo.path(),
        "prompt_id": "p1",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "Working on pkg/bad.py now."
    })
}

/// A held goal's turn that ends while ralph-gate still refuses its stop (here: Claude Code
/// overriding the hook at its cap) is journaled, and the session's next prompt, and only the
/// next, is told what is left.
#[test]
fn a_goal_turn_ended_on_the_cap_is_journaled_and_told_to_the_next_prompt() {
    let repo = python_repo();
    let mut payload = goal_session(&repo);
    for continuing in [false, true] {
        payload["stop_hook_active"] = continuing.into();
        let run = repo.run_stdin(&["hook", "stop"], payload.to_string().as_bytes(), &[]);
        assert!(run.stdout.contains("holds your goal"), "{run:?}");
    }
    let journal = || std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
    assert!(!journal().contains("goal_capped"), "{}", journal());
    // As Claude Code records its override of a hook that refused 8 stops in a row.
    let mut transcript = std::fs::read_to_string(repo.path().join("t.jsonl")).unwrap();
    transcript.push_str(&(serde_json::json!({"type": "system", "subtype": "informational", "content": "A hook blocked the turn from ending 9 consecutive times\u{2014}overriding and ending turn. For Stop/SubagentStop hooks, check stop_hook_active."}).to_string() + "\n"));
    repo.write("t.jsonl", &transcript);
    let prompt = serde_json::json!({
        "session_id": "sess-G",
        "transcript_path": repo.path().join("t.jsonl"),
        "cwd": repo.path(),
        "prompt_id": "p2",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on"
    });
    let run = repo.run_stdin(
        &["hook", "user-prompt-submit"],
        prompt.to_string().as_bytes(),
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let told = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        told.contains("cap on refused stops") && told.contains("failing stop gates: python"),
        "{told}"
    );
    let capped: Vec<String> = journal()
        .lines()
        .filter(|l| l.contains("\"goal_capped\""))
        .map(String::from)
        .collect();
    assert_eq!(capped.len(), 1, "{}", journal());
    assert!(capped[0].contains("python"), "{}", capped[0]);
    let again = repo.run_stdin(
        &["hook", "user-prompt-submit"],
        prompt.to_string().as_bytes(),
        &[],
    );
    assert_eq!(
        (again.code, again.stdout.trim()),
        (0, ""),
        "said once: {again:?}"
    );
}

/// Issue 39, item 7: a loop with no stop gate would end on the agent's first promise, having
/// checked nothing: `loop start` refuses it, says why, and writes no loop.
#[test]
fn a_loop_with_no_stop_gate_is_refused() {
    let repo = Repo::git();
    repo.write("README.md", "hi\n");
    repo.config(
        "[[gate]]\nname = \"edits\"\nglobs = [\"*.md\"]\nrun = \"true\"\nphases = [\"edit\"]\n",
    );
    let run = repo.run(["loop", "start", "--promise", "DONE", "Do it"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no stop gate"), "{run:?}");
    assert!(!repo.path().join(".claude").exists(), "no loop was written");
    repo.config("[[gate]]\nname = \"docs\"\nglobs = [\"*.md\"]\nrun = \"true\"\n");
    let run = repo.run(["loop", "start", "--promise", "DONE", "Do it"]);
    assert_eq!(run.code, 0, "{run:?}");
}
