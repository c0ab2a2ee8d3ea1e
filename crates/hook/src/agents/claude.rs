//! Claude Code (and the agents that copied its hook protocol field for field: Qwen Code,
//! Factory Droid; Codex's output schema is a subset of it). claude-code-hooks.md.

use super::{base, path_field, text, Agent, Answer, Event, PayloadError};
use crate::guard::Call;
use crate::hook::promise;
use crate::hook::{Ask, Verdict};
use serde_json::{json, Map, Value};

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let mut ask = base(v, "session_id");
    match event {
        Event::Edit => {
            ask.edited = edited(v).into_iter().collect();
            // A shell command's effect on what decides the loop's end is checked after it.
            ask.call = call(v).filter(|c| matches!(c, Call::Bash(_)));
        }
        Event::Stop => {
            let transcript = text(v, "transcript_path").map(std::path::PathBuf::from);
            let (t, source) = promise::last_text(
                text(v, "last_assistant_message").as_deref(),
                transcript.as_deref(),
            );
            ask.final_text = t;
            ask.text_source = source;
            ask.goal = transcript.map(|transcript| ralph_loop::goals::Source::Claude {
                transcript,
                prompt_id: text(v, "prompt_id"),
                last_message: text(v, "last_assistant_message"),
            });
        }
        Event::Guard => ask.call = call(v),
        // The files every edit tool of the batch wrote.
        Event::Batch => {
            ask.edited = v
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(edited)
                .collect();
        }
        Event::Prompt => ask.transcript = text(v, "transcript_path").map(std::path::PathBuf::from),
        Event::Response => return Err(PayloadError::NoSuchEvent(Agent::Claude)),
    }
    Ok(ask)
}

/// The file an edit tool wrote.
pub fn edited(v: &Value) -> Option<std::path::PathBuf> {
    let key = match v.get("tool_name")?.as_str()? {
        "Write" | "Edit" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        _ => return None,
    };
    path_field(v.get("tool_input"), key)
}

fn call(v: &Value) -> Option<Call> {
    let input = v.get("tool_input");
    let field = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    Some(match v.get("tool_name")?.as_str()? {
        "Write" | "Edit" | "MultiEdit" => Call::Edit(field("file_path")?),
        "NotebookEdit" => Call::Edit(field("notebook_path")?),
        "Bash" => Call::Bash(field("command")?),
        _ => Call::Other,
    })
}

/// Claude's answer format: `decision`/`reason` for a stop, `hookSpecificOutput` for context
/// and permissions, `systemMessage` for the user.
pub fn answer(agent: Agent, event: Event, verdict: &Verdict) -> Answer {
    let mut out = Map::new();
    let event_name = match (agent, event) {
        (_, Event::Guard) => "PreToolUse",
        (_, Event::Prompt) => "UserPromptSubmit",
        (_, Event::Batch) => "PostToolBatch",
        _ => "PostToolUse",
    };
    match verdict {
        Verdict::Silent => return Answer::nothing(),
        Verdict::Context { text, .. } => {
            out.insert(
                "hookSpecificOutput".into(),
                json!({"hookEventName": event_name, "additionalContext": text}),
            );
        }
        Verdict::Block { reason, .. } => {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
        }
        Verdict::Allow { .. } => {}
        Verdict::Deny { reason } => {
            out.insert(
                "hookSpecificOutput".into(),
                json!({"hookEventName": "PreToolUse", "permissionDecision": "deny",
                       "permissionDecisionReason": reason}),
            );
        }
    }
    if let Some(s) = verdict.system() {
        out.insert("systemMessage".into(), json!(s));
    }
    if out.is_empty() {
        return Answer::nothing();
    }
    Answer::json(Value::Object(out))
}
