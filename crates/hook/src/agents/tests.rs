//! Each adapter against payloads in the shape its CLI sends them (agent-hooks.md: captured
//! from Codex 0.169.0 and Copilot 1.0.102 run offline; read from the npm packages of Gemini
//! CLI 0.61.0, Qwen Code 0.24.4 and Factory Droid 0.225.1; Cursor from secondary sources).

use super::*;
use crate::hook::promise::TextSource;
use serde_json::json;
use std::path::PathBuf;

fn paths(agent: Agent, v: Value) -> Vec<PathBuf> {
    ask(
        agent,
        Event::Edit,
        &v,
        &ralph_base::env::Environment::default(),
    )
    .unwrap()
    .edited
}

#[test]
fn edited_files_from_every_agents_edit_payload() {
    // Claude Code: Write/Edit/MultiEdit file_path, NotebookEdit notebook_path; others nothing.
    let w = json!({"session_id": "s", "tool_name": "Write", "tool_input": {"file_path": "/p/a.py", "content": "x"}});
    assert_eq!(paths(Agent::Claude, w), [PathBuf::from("/p/a.py")]);
    let nb = json!({"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/p/n.ipynb"}});
    assert_eq!(paths(Agent::Claude, nb), [PathBuf::from("/p/n.ipynb")]);
    let bash = json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}});
    assert!(paths(Agent::Claude, bash).is_empty());
    let bad = json!({"tool_name": "Write", "tool_input": {"file_path": 7}});
    assert!(paths(Agent::Claude, bad).is_empty());

    // Codex (captured): apply_patch, the files inside the patch, relative to cwd.
    let codex = json!({"session_id": "c1", "turn_id": "t1", "transcript_path": null, "cwd": "/repo",
        "hook_event_name": "PostToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
        "tool_name": "apply_patch",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: bad.py\n+def f(:\n*** Update File: ok.py\n@@\n-x = 1\n+x = 2\n*** Delete File: gone.py\n*** End Patch"},
        "tool_response": "Exit code: 0\nA bad.py\nM ok.py\n", "tool_use_id": "call_0"});
    let a = ask(
        Agent::Codex,
        Event::Edit,
        &codex,
        &ralph_base::env::Environment::default(),
    )
    .unwrap();
    assert_eq!(a.edited, [PathBuf::from("bad.py"), PathBuf::from("ok.py")]);
    assert_eq!(a.cwd, Some(PathBuf::from("/repo")));
    assert_eq!(a.session, "c1");

    // Copilot (captured): create/edit with an absolute path, apply_patch as a raw string.
    let create = json!({"sessionId": "k", "timestamp": 1795393866414u64, "cwd": "/repo", "toolName": "create",
        "toolArgs": {"path": "/repo/bad.py", "file_text": "def f(:\n"},
        "toolResult": {"resultType": "success", "textResultForLlm": "Created file /repo/bad.py"}});
    assert_eq!(
        paths(Agent::Copilot, create),
        [PathBuf::from("/repo/bad.py")]
    );
    let edit = json!({"sessionId": "k", "toolName": "edit", "toolArgs": {"path": "/repo/a.py", "old_str": "a", "new_str": "b"}});
    assert_eq!(paths(Agent::Copilot, edit), [PathBuf::from("/repo/a.py")]);
    let patch = json!({"sessionId": "k", "toolName": "apply_patch", "toolArgs": "*** Begin Patch\n*** Update File: src/x.py\n@@\n-a\n+b\n*** End Patch"});
    assert_eq!(paths(Agent::Copilot, patch), [PathBuf::from("src/x.py")]);
    let view = json!({"sessionId": "k", "toolName": "view", "toolArgs": {"path": "/repo/a.py"}});
    assert!(paths(Agent::Copilot, view).is_empty());

    // Gemini: AfterTool write_file / replace.
    let g = json!({"session_id": "g", "hook_event_name": "AfterTool", "timestamp": "2026-11-23T00:00:00Z",
        "tool_name": "replace", "tool_input": {"file_path": "/p/a.ts", "old_string": "a", "new_string": "b"},
        "tool_response": {"llmContent": "ok", "returnDisplay": "ok"}});
    assert_eq!(paths(Agent::Gemini, g), [PathBuf::from("/p/a.ts")]);

    // Qwen: write_file and edit (Claude names accepted by its matcher too).
    for tool in ["write_file", "edit", "Write"] {
        let q = json!({"session_id": "q", "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"file_path": "/p/a.sh", "content": "x"}, "tool_use_id": "u"});
        assert_eq!(paths(Agent::Qwen, q), [PathBuf::from("/p/a.sh")], "{tool}");
    }

    // Droid: Create/Edit file_path, ApplyPatch input.
    let c = json!({"session_id": "d", "tool_name": "Create", "tool_input": {"file_path": "/p/a.go", "content": "x"}});
    assert_eq!(paths(Agent::Droid, c), [PathBuf::from("/p/a.go")]);
    let ap = json!({"session_id": "d", "tool_name": "ApplyPatch", "tool_input": {"input": "*** Begin Patch\n*** Add File: n.go\n+x\n*** End Patch"}});
    assert_eq!(paths(Agent::Droid, ap), [PathBuf::from("n.go")]);

    // Cursor (UNCONFIRMED): afterFileEdit file_path, workspace root as cwd.
    let cur = json!({"conversation_id": "cv", "generation_id": "g", "hook_event_name": "afterFileEdit",
        "workspace_roots": ["/repo"], "file_path": "/repo/a.rs", "edits": [{"old_string": "a", "new_string": "b"}]});
    let a = ask(
        Agent::Cursor,
        Event::Edit,
        &cur,
        &ralph_base::env::Environment::default(),
    )
    .unwrap();
    assert_eq!(a.edited, [PathBuf::from("/repo/a.rs")]);
    assert_eq!(
        (a.cwd, a.session.as_str()),
        (Some(PathBuf::from("/repo")), "cv")
    );
}

#[test]
fn the_final_message_from_every_agents_stop() {
    let done = "All done.\n<promise>DONE</promise>";
    let claude = json!({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": done});
    let a = ask(
        Agent::Claude,
        Event::Stop,
        &claude,
        &ralph_base::env::Environment::default(),
    )
    .unwrap();
    assert_eq!((a.final_text.as_deref(), a.continuing), (Some(done), true));

    let codex = json!({"session_id": "c", "turn_id": "t", "cwd": "/r", "hook_event_name": "Stop", "model": "m",
        "permission_mode": "default", "stop_hook_active": false, "last_assistant_message": done});
    assert_eq!(
        ask(
            Agent::Codex,
            Event::Stop,
            &codex,
            &ralph_base::env::Environment::default()
        )
        .unwrap()
        .final_text
        .as_deref(),
        Some(done)
    );

    let gemini = json!({"session_id": "g", "hook_event_name": "AfterAgent", "prompt": "fix it",
        "prompt_response": done, "stop_hook_active": false});
    let a = ask(
        Agent::Gemini,
        Event::Stop,
        &gemini,
        &ralph_base::env::Environment::default(),
    )
    .unwrap();
    assert_eq!(
        a.final_text.as_deref(),
        Some(done),
        "Gemini's final text is prompt_response"
    );

    let qwen = json!({"session_id": "q", "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": done, "background_tasks": [], "crons": []});
    // Claude Code 2.1.330 sends background_tasks too (captured): still Claude's.
    let claude_now = json!({"session_id": "s", "hook_event_name": "Stop", "prompt_id": "p", "effort": {"level": "medium"},
        "stop_hook_active": false, "last_assistant_message": done, "background_tasks": [], "session_crons": []});
    assert_eq!(
        ask(
            Agent::Claude,
            Event::Stop,
            &claude_now,
            &ralph_base::env::Environment::default()
        )
        .unwrap()
        .final_text
        .as_deref(),
        Some(done)
    );
    assert_eq!(
        ask(
            Agent::Qwen,
            Event::Stop,
            &qwen,
            &ralph_base::env::Environment::default()
        )
        .unwrap()
        .final_text
        .as_deref(),
        Some(done)
    );

    // Copilot: no message in agentStop; the last assistant.message of events.jsonl.
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let lines = [
        json!({"type": "assistant.message", "data": {"content": "<promise>DONE</promise>", "toolRequests": []}, "id": "1"}),
        json!({"type": "tool.execution_complete", "data": {}}),
        json!({"type": "assistant.message", "data": {"content": done, "toolRequests": []}, "id": "2"}),
    ];
    std::fs::write(
        &events,
        lines
            .iter()
            .map(|l| l.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let stop = json!({"sessionId": "k", "timestamp": 1, "cwd": "/r", "transcriptPath": events, "stopReason": "end_turn", "stop_hook_active": false});
    let a = ask(
        Agent::Copilot,
        Event::Stop,
        &stop,
        &ralph_base::env::Environment::default(),
    )
    .unwrap();
    assert_eq!(
        (a.final_text.as_deref(), a.text_source),
        (Some(done), TextSource::Transcript)
    );
    // A last message of tool requests alone is no final text: the old promise is not reread.
    let tools_only = json!({"type": "assistant.message", "data": {"content": "", "toolRequests": [{"name": "edit"}]}});
    std::fs::write(&events, format!("{}\n{}\n", lines[2], tools_only)).unwrap();
    assert_eq!(
        ask(
            Agent::Copilot,
            Event::Stop,
            &stop,
            &ralph_base::env::Environment::default()
        )
        .unwrap()
        .final_text,
        None
    );

    // Droid: no message; the last assistant message of its transcript.
    let t = dir.path().join("droid.jsonl");
    std::fs::write(
        &t,
        format!(
            "{}\n{}\n",
            json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "go"}]}}),
            json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": done}]}})
        ),
    )
    .unwrap();
    let droid = json!({"session_id": "d", "transcript_path": t, "cwd": "/r", "permission_mode": "auto",
        "hook_event_name": "Stop", "message_id": "m", "stop_hook_active": false, "tool_execution_count": 3, "elapsed_time": 9});
    assert_eq!(
        ask(
            Agent::Droid,
            Event::Stop,
            &droid,
            &ralph_base::env::Environment::default()
        )
        .unwrap()
        .final_text
        .as_deref(),
        Some(done)
    );
}

#[test]
fn a_payload_of_another_agent_is_a_clear_error() {
    let codex = json!({"session_id": "c", "turn_id": "t", "hook_event_name": "Stop", "last_assistant_message": "x"});
    let e = ask(
        Agent::Claude,
        Event::Stop,
        &codex,
        &ralph_base::env::Environment::default(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        PayloadError::OtherAgent {
            named: Agent::Claude,
            found: Agent::Codex
        }
    );
    assert!(e.to_string().contains("--agent codex"), "{e}");
    let copilot = json!({"sessionId": "k", "toolName": "create", "toolArgs": {"path": "/a"}});
    assert!(ask(
        Agent::Gemini,
        Event::Edit,
        &copilot,
        &ralph_base::env::Environment::default()
    )
    .is_err());
    // A shape several agents share is not refused.
    let shared =
        json!({"session_id": "s", "hook_event_name": "Stop", "last_assistant_message": "x"});
    for agent in [Agent::Claude, Agent::Qwen, Agent::Droid] {
        assert!(
            ask(
                agent,
                Event::Stop,
                &shared,
                &ralph_base::env::Environment::default()
            )
            .is_ok(),
            "{agent}"
        );
    }
    assert_eq!(detect(&shared), None);
    let e = ask(
        Agent::Claude,
        Event::Stop,
        &json!({"session_id": ["wrong"]}),
        &ralph_base::env::Environment::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "`session_id` in the hook input must be a string"
    );
}

#[test]
fn each_agent_gets_its_own_answer_format() {
    let ctx = Verdict::Context {
        text: "fix a.py".into(),
        system: None,
    };
    let block = Verdict::Block {
        reason: "gates fail".into(),
        system: Some("iteration 2".into()),
    };
    let json_of =
        |a: Answer| -> Value { serde_json::from_str(&a.stdout.expect("an answer")).unwrap() };

    for agent in [Agent::Claude, Agent::Qwen, Agent::Droid, Agent::Codex] {
        let v = json_of(answer(agent, Event::Edit, &ctx));
        assert_eq!(
            v,
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "fix a.py"}}),
            "{agent}"
        );
        let v = json_of(answer(agent, Event::Stop, &block));
        assert_eq!(
            v,
            json!({"decision": "block", "reason": "gates fail", "systemMessage": "iteration 2"}),
            "{agent}"
        );
    }
    // Copilot ignores hookSpecificOutput: top-level additionalContext.
    assert_eq!(
        json_of(answer(Agent::Copilot, Event::Edit, &ctx)),
        json!({"additionalContext": "fix a.py"})
    );
    assert_eq!(
        json_of(answer(Agent::Copilot, Event::Stop, &block)),
        json!({"decision": "block", "reason": "gates fail"})
    );
    assert_eq!(
        json_of(answer(Agent::Gemini, Event::Edit, &ctx)),
        json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "fix a.py"}})
    );
    assert_eq!(
        json_of(answer(Agent::Cursor, Event::Stop, &block)),
        json!({"followup_message": "gates fail"})
    );
    let deny = Verdict::Deny {
        reason: "no".into(),
    };
    assert_eq!(
        json_of(answer(Agent::Claude, Event::Guard, &deny))["hookSpecificOutput"]
            ["permissionDecision"],
        "deny"
    );
    for agent in Agent::ALL {
        assert_eq!(
            answer(agent, Event::Stop, &Verdict::Silent),
            Answer::nothing(),
            "{agent}"
        );
    }
    // A stop that could not be checked is refused by JSON, whatever the exit code becomes
    // on the way (PowerShell turns 2 into 1; Copilot ignores it).
    for agent in Agent::ALL {
        let (a, stderr) = stop_error(agent, "broken");
        assert_eq!((a.code, stderr.as_deref()), (0, Some("broken")), "{agent}");
        let out = a.stdout.clone().unwrap_or_default();
        assert!(out.contains("broken"), "{agent}: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let blocks =
            v["decision"] == "block" || v["followup_message"].is_string() || v["continue"] == false;
        assert!(blocks, "{agent}: {out}");
    }
}
