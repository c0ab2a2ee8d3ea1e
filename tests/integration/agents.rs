//! Every agent's hooks through the real binary, with payloads in the shape each CLI sends
//! (agent-hooks.md; Codex and Copilot captured from their CLIs run offline): the edit gate's
//! error comes back in the agent's own feedback field, a premature promise is refused the
//! agent's way, and the honest promise ends the loop, which lives in the agent's own folder.

use crate::common::{require_tool, Repo, Run};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const GATE: &str = "[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n";
const BROKEN: &str = "def f(:\n    return 1\n";
const FIXED: &str = "def f():\n    return 1\n";
const DONE: &str = "All fixed.\n<promise>DONE</promise>";

/// Builds each agent's payloads for one repository.
struct Agent {
    name: &'static str,
    edit: fn(&Path) -> Value,
    /// A stop whose final message is `text` (written to a transcript where the agent has one).
    stop: fn(&Path, &str) -> Value,
    /// Where the edit feedback is in the answer.
    feedback: fn(&Value) -> Option<String>,
    /// The refusal's reason in the answer.
    refusal: fn(&Value) -> Option<String>,
    folder: &'static str,
}

fn s(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn transcript(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
    let path = dir.join(".transcripts").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    path
}

fn agents() -> Vec<Agent> {
    vec![
        Agent {
            name: "claude",
            edit: |r| {
                json!({"session_id": "S", "cwd": r, "hook_event_name": "PostToolUse", "tool_name": "Write",
                             "tool_input": {"file_path": r.join("pkg/mod.py"), "content": BROKEN}})
            },
            stop: |r, t| {
                json!({"session_id": "S", "cwd": r, "hook_event_name": "Stop", "stop_hook_active": false,
                                "last_assistant_message": t, "background_tasks": []})
            },
            feedback: |v| s(&v["hookSpecificOutput"]["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".claude",
        },
        Agent {
            name: "codex",
            edit: |r| {
                json!({"session_id": "S", "turn_id": "t1", "transcript_path": null, "cwd": r,
                             "hook_event_name": "PostToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
                             "tool_name": "apply_patch",
                             "tool_input": {"command": "*** Begin Patch\n*** Update File: pkg/mod.py\n@@\n-x\n+y\n*** End Patch"},
                             "tool_response": "Exit code: 0\nM pkg/mod.py\n", "tool_use_id": "call_0"})
            },
            stop: |r, t| {
                json!({"session_id": "S", "turn_id": "t2", "transcript_path": null, "cwd": r, "hook_event_name": "Stop",
                                "model": "gpt-5.5", "permission_mode": "bypassPermissions", "stop_hook_active": false,
                                "last_assistant_message": t})
            },
            feedback: |v| s(&v["hookSpecificOutput"]["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".codex",
        },
        Agent {
            name: "copilot",
            edit: |r| {
                json!({"sessionId": "S", "timestamp": 1795393866414u64, "cwd": r, "toolName": "create",
                             "toolArgs": {"path": r.join("pkg/mod.py"), "file_text": BROKEN},
                             "toolResult": {"resultType": "success", "textResultForLlm": "Created file"}})
            },
            stop: |r, t| {
                let events = transcript(
                    r,
                    "events.jsonl",
                    &[
                        json!({"type": "user.message", "data": {"content": "fix it"}}),
                        json!({"type": "assistant.message", "data": {"content": t, "toolRequests": []}, "id": "m"}),
                    ],
                );
                json!({"sessionId": "S", "timestamp": 1795393866999u64, "cwd": r, "transcriptPath": events,
                       "stopReason": "end_turn", "stop_hook_active": false})
            },
            feedback: |v| s(&v["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".copilot",
        },
        Agent {
            name: "gemini",
            edit: |r| {
                json!({"session_id": "S", "transcript_path": "", "cwd": r, "hook_event_name": "AfterTool",
                             "timestamp": "2026-11-23T00:00:00Z", "tool_name": "write_file",
                             "tool_input": {"file_path": r.join("pkg/mod.py"), "content": BROKEN},
                             "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}})
            },
            stop: |r, t| {
                json!({"session_id": "S", "transcript_path": "", "cwd": r, "hook_event_name": "AfterAgent",
                                "timestamp": "2026-11-23T00:00:01Z", "prompt": "fix it", "prompt_response": t,
                                "stop_hook_active": false})
            },
            feedback: |v| s(&v["hookSpecificOutput"]["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".gemini",
        },
        Agent {
            name: "qwen",
            edit: |r| {
                json!({"session_id": "S", "transcript_path": "", "cwd": r, "hook_event_name": "PostToolUse",
                             "timestamp": "2026-11-23T00:00:00Z", "permission_mode": "default", "tool_name": "write_file",
                             "tool_input": {"file_path": r.join("pkg/mod.py"), "content": BROKEN},
                             "tool_response": {}, "tool_use_id": "u1"})
            },
            stop: |r, t| {
                json!({"session_id": "S", "cwd": r, "hook_event_name": "Stop", "stop_hook_active": false,
                                "last_assistant_message": t, "background_tasks": [], "crons": []})
            },
            feedback: |v| s(&v["hookSpecificOutput"]["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".qwen",
        },
        Agent {
            name: "droid",
            edit: |r| {
                json!({"session_id": "S", "cwd": r, "hook_event_name": "PostToolUse", "tool_name": "Create",
                             "tool_input": {"file_path": r.join("pkg/mod.py"), "content": BROKEN}})
            },
            stop: |r, t| {
                let path = transcript(
                    r,
                    "droid.jsonl",
                    &[
                        json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]}}),
                        json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": t}]}}),
                    ],
                );
                json!({"session_id": "S", "transcript_path": path, "cwd": r, "permission_mode": "auto",
                       "hook_event_name": "Stop", "message_id": "m1", "stop_hook_active": false,
                       "tool_execution_count": 2, "elapsed_time": 10})
            },
            feedback: |v| s(&v["hookSpecificOutput"]["additionalContext"]),
            refusal: |v| {
                (v["decision"] == "block")
                    .then(|| s(&v["reason"]))
                    .flatten()
            },
            folder: ".factory",
        },
        Agent {
            name: "cursor",
            edit: |r| {
                json!({"conversation_id": "S", "generation_id": "g1", "hook_event_name": "afterFileEdit",
                             "workspace_roots": [r], "file_path": r.join("pkg/mod.py"),
                             "edits": [{"old_string": "", "new_string": BROKEN}]})
            },
            // The reply reaches ralph-gate through afterAgentResponse, sent by `stop_cursor`.
            stop: |r, _| {
                json!({"conversation_id": "S", "generation_id": "g2", "hook_event_name": "stop",
                                "workspace_roots": [r], "status": "completed", "loop_count": 0})
            },
            feedback: |v| s(&v["additional_context"]),
            refusal: |v| s(&v["followup_message"]),
            folder: ".cursor",
        },
    ]
}

fn hook(repo: &Repo, event: &str, agent: &str, payload: &Value) -> Run {
    repo.run_stdin(
        &["hook", event, "--agent", agent],
        payload.to_string().as_bytes(),
        &[],
    )
}

fn answer(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

fn stop(repo: &Repo, a: &Agent, text: &str) -> Run {
    if a.name == "cursor" {
        let reply = json!({"conversation_id": "S", "hook_event_name": "afterAgentResponse",
                           "workspace_roots": [repo.path()], "text": text});
        let run = hook(repo, "agent-response", "cursor", &reply);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    }
    hook(repo, "stop", a.name, &(a.stop)(repo.path(), text))
}

#[test]
fn every_agent_gets_edit_feedback_a_refusal_and_an_honest_end() {
    if !require_tool("python3") {
        return;
    }
    for a in agents() {
        let repo = Repo::git();
        repo.config(GATE);
        repo.write("pkg/mod.py", FIXED);
        repo.commit_all();
        let run = repo.run([
            "loop",
            "start",
            "--agent",
            a.name,
            "--promise",
            "DONE",
            "Fix pkg/mod.py.",
        ]);
        assert_eq!(run.code, 0, "{}: {run:?}", a.name);
        assert!(
            repo.exists(&format!("{}/ralph-loop.local.md", a.folder)),
            "{}",
            a.name
        );
        if a.name != "claude" {
            assert!(
                !repo.exists(".claude"),
                "{}: a loop of another agent writes no .claude/",
                a.name
            );
        }

        repo.write("pkg/mod.py", BROKEN);
        let out = answer(&hook(
            &repo,
            "post-tool-use",
            a.name,
            &(a.edit)(repo.path()),
        ));
        let fb = (a.feedback)(&out).unwrap_or_else(|| panic!("{}: feedback in {out}", a.name));
        assert!(
            fb.contains("SyntaxError") && fb.contains("pkg/mod.py"),
            "{}: {fb}",
            a.name
        );

        let out = answer(&stop(&repo, &a, DONE));
        let reason = (a.refusal)(&out).unwrap_or_else(|| panic!("{}: a refusal in {out}", a.name));
        assert!(
            reason.contains("refused your promise") && reason.contains("SyntaxError"),
            "{}: {reason}",
            a.name
        );

        repo.write("pkg/mod.py", FIXED);
        let run = stop(&repo, &a, DONE);
        let out = answer(&run);
        assert!(
            (a.refusal)(&out).is_none(),
            "{}: the honest promise ends the loop: {out}",
            a.name
        );
        assert!(
            !repo.exists(&format!("{}/ralph-loop.local.md", a.folder)),
            "{}",
            a.name
        );
        let journal = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
        let last: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
        assert_eq!(
            (last["agent"].as_str(), last["outcome"].as_str()),
            (Some(a.name), Some("completed"))
        );
    }
}

#[test]
fn loops_of_two_agents_never_capture_each_others_stops() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/mod.py", BROKEN);
    repo.commit_all();
    for agent in ["claude", "codex"] {
        let run = repo.run([
            "loop",
            "start",
            "--agent",
            agent,
            "--promise",
            "DONE",
            "Fix it.",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
    }
    let all = agents();
    let codex = all.iter().find(|a| a.name == "codex").unwrap();
    let out = answer(&stop(&repo, codex, "working"));
    assert_eq!(out["decision"], "block");
    let claude_loop =
        std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    let codex_loop =
        std::fs::read_to_string(repo.path().join(".codex/ralph-loop.local.md")).unwrap();
    assert!(
        claude_loop.contains("iteration: 1\n"),
        "Codex's stop left Claude's loop alone: {claude_loop}"
    );
    assert!(
        codex_loop.contains("iteration: 2\n") && codex_loop.contains("agent: codex"),
        "{codex_loop}"
    );
    let status = repo.run(["loop", "list"]);
    assert_eq!(status.stdout.lines().count(), 2, "{status:?}");
}

#[test]
fn a_payload_from_another_agent_is_a_clear_error() {
    let repo = Repo::git();
    let codex = json!({"session_id": "S", "turn_id": "t", "cwd": repo.path(), "hook_event_name": "Stop", "last_assistant_message": "x"});
    let run = hook(&repo, "stop", "claude", &codex);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("comes from codex") && run.stderr.contains("--agent codex"),
        "{run:?}"
    );
    let copilot = json!({"sessionId": "S", "toolName": "create", "toolArgs": {"path": "/x"}});
    let run = hook(&repo, "post-tool-use", "gemini", &copilot);
    assert!(run.stderr.contains("comes from copilot"), "{run:?}");
}

#[test]
fn a_stop_without_a_final_message_ends_once_the_gates_pass() {
    // The bug: for agents whose stop carries no message, the loop blocked forever. Copilot
    // with a transcript that holds the promise ends; one whose last message is not the
    // promise goes on.
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/mod.py", FIXED);
    repo.commit_all();
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--agent",
            "copilot",
            "--promise",
            "DONE",
            "Go."
        ])
        .code,
        0
    );
    let all = agents();
    let copilot = all.iter().find(|a| a.name == "copilot").unwrap();
    assert_eq!(
        answer(&stop(&repo, copilot, "Still working."))["decision"],
        "block"
    );
    assert_eq!(answer(&stop(&repo, copilot, DONE)), Value::Null);
    assert!(!repo.exists(".copilot/ralph-loop.local.md"));
}

#[test]
fn init_writes_each_agents_config_in_its_own_place_once() {
    let repo = Repo::git();
    repo.write("app.py", "x = 1\n");
    let home = tempfile::tempdir().unwrap();
    let h = [("HOME", home.path().to_str().unwrap())];
    let run = repo.run_env(["init", "--agent", "codex"], &h);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains(".codex/hooks.json (codex): added the PostToolUse and Stop hooks"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("trust"),
        "Codex's trust step is said: {run:?}"
    );
    assert!(
        !repo.exists(".claude/settings.json"),
        "only the agent asked for"
    );
    let codex: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        codex["hooks"]["Stop"][0]["hooks"][0]["command"],
        "ralph-gate hook stop --agent codex"
    );

    let run = repo.run_env(["init", "--agent", "all"], &h);
    assert_eq!(run.code, 0, "{run:?}");
    for file in [
        ".claude/settings.json",
        ".codex/hooks.json",
        ".github/hooks/ralph-gate.json",
        ".gemini/settings.json",
        ".cursor/hooks.json",
        ".qwen/settings.json",
        ".factory/hooks.json",
    ] {
        let text = std::fs::read_to_string(repo.path().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap();
        let events = if file == ".factory/hooks.json" {
            &v
        } else {
            &v["hooks"]
        };
        assert!(
            events.is_object() && events.as_object().unwrap().values().any(|e| e.is_array()),
            "{file}: {v}"
        );
    }
    let gitignore = std::fs::read_to_string(repo.path().join(".gitignore")).unwrap();
    assert!(
        gitignore.contains(".codex/ralph-loop*.local.md")
            && gitignore.contains(".claude/ralph-loop*.local.md"),
        "{gitignore}"
    );
    let snapshot = |r: &Repo| {
        [
            ".codex/hooks.json",
            ".gemini/settings.json",
            ".github/hooks/ralph-gate.json",
            ".gitignore",
        ]
        .map(|f| std::fs::read_to_string(r.path().join(f)).unwrap())
    };
    let before = snapshot(&repo);
    let again = repo.run_env(["init", "--agent", "all"], &h);
    assert_eq!(again.code, 0);
    assert_eq!(snapshot(&repo), before, "a second init changes nothing");

    // Without --agent, init finds the agents a project already uses.
    let other = Repo::git();
    std::fs::create_dir_all(other.path().join(".gemini")).unwrap();
    let run = other.run_env(["init"], &h);
    assert!(
        run.stdout
            .contains("agents found in this project besides Claude Code: gemini"),
        "{run:?}"
    );
    assert!(other.exists(".gemini/settings.json") && other.exists(".claude/settings.json"));
    let bad = repo.run_env(["init", "--agent", "emacs"], &h);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("unknown agent `emacs`"), "{bad:?}");
}

/// Cursor's reply is kept by one hook and read by another: both must use the same workspace,
/// also when Cursor's workspace root is a folder inside the git repository (the reply was
/// written at the git top but looked for in the payload's folder, so the promise was lost).
#[test]
fn a_cursor_reply_kept_in_a_subfolder_workspace_is_read_at_its_stop() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("app/pkg/mod.py", FIXED);
    repo.commit_all();
    let run = repo.run([
        "loop",
        "start",
        "--agent",
        "cursor",
        "--promise",
        "DONE",
        "Fix it.",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let root = repo.path().join("app");
    let reply = json!({"conversation_id": "S", "hook_event_name": "afterAgentResponse",
                       "workspace_roots": [root], "text": DONE});
    assert_eq!(hook(&repo, "agent-response", "cursor", &reply).code, 0);
    let stop = json!({"conversation_id": "S", "generation_id": "g2", "hook_event_name": "stop",
                      "workspace_roots": [root], "status": "completed", "loop_count": 0});
    let out = answer(&hook(&repo, "stop", "cursor", &stop));
    assert!(
        out.get("followup_message").is_none(),
        "the kept promise ends the loop: {out}"
    );
    assert!(!repo.exists(".cursor/ralph-loop.local.md"));
}
