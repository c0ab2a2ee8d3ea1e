//! Cursor (not on npm: every fact here is UNCONFIRMED, from secondary sources, see
//! agent-hooks.md). `afterFileEdit` names `file_path`; `stop` carries no final message, so
//! ralph-gate also registers `afterAgentResponse` and keeps the reply's text per
//! conversation; a refusal is a `followup_message`, which Cursor sends as the next user
//! message, up to the hook's `loop_limit`.

use super::{path_field, text, Agent, Answer, Event, PayloadError};
use crate::hook::promise::TextSource;
use crate::hook::{Ask, Verdict};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let roots = v.get("workspace_roots").and_then(Value::as_array);
    let mut ask = Ask {
        session: text(v, "conversation_id").unwrap_or_default(),
        cwd: roots
            .and_then(|r| r.first())
            .and_then(Value::as_str)
            .or_else(|| v.get("cwd").and_then(Value::as_str))
            .map(PathBuf::from),
        continuing: v.get("loop_count").and_then(Value::as_u64).unwrap_or(0) > 0,
        ..Default::default()
    };
    match event {
        Event::Edit => {
            ask.edited = path_field(Some(v), "file_path")
                .or_else(|| path_field(v.get("tool_input"), "file_path"))
                .into_iter()
                .collect();
        }
        Event::Stop => {
            // The reply its `afterAgentResponse` hook kept is preferred: the hook reads it from
            // the workspace's state (see `commands::hook`), which an adapter does not know.
            if let Some(t) = text(v, "transcript_path") {
                ask.final_text = super::droid::last_message(Path::new(&t));
                ask.text_source = TextSource::Transcript;
            }
        }
        Event::Response => {
            ask.final_text = text(v, "text");
            ask.text_source = TextSource::Recorded;
        }
        Event::Guard | Event::Prompt | Event::Batch => {
            return Err(PayloadError::NoSuchEvent(Agent::Cursor))
        }
    }
    Ok(ask)
}

pub fn answer(event: Event, verdict: &Verdict) -> Answer {
    match (event, verdict) {
        (_, Verdict::Context { text, .. }) => Answer::json(json!({"additional_context": text})),
        (_, Verdict::Block { reason, .. }) => Answer::json(json!({"followup_message": reason})),
        _ => Answer::nothing(),
    }
}
