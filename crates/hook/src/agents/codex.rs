//! OpenAI Codex CLI 0.169: `apply_patch` carries the files inside the patch text, relative to
//! `cwd`; the stop payload has `last_assistant_message`. Its output schema rejects unknown
//! keys, so it gets Claude's answer, which uses only keys Codex knows. agent-hooks.md.

use super::{base, patch, text, Agent, Event, PayloadError};
use crate::hook::{promise, Ask};
use serde_json::Value;

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let mut ask = base(v, "session_id");
    match event {
        Event::Edit => {
            if v.get("tool_name").and_then(Value::as_str) == Some("apply_patch") {
                let input = v.get("tool_input");
                let patch_text = input
                    .and_then(|i| {
                        i.get("command")
                            .or_else(|| i.get("patch"))
                            .or_else(|| i.get("input"))
                    })
                    .and_then(Value::as_str)
                    .or_else(|| input.and_then(Value::as_str))
                    .unwrap_or("");
                ask.edited = patch::written(patch_text);
            }
        }
        Event::Stop => {
            let message = text(v, "last_assistant_message");
            ask.text_source = if message.is_some() {
                promise::TextSource::LastAssistantMessage
            } else {
                promise::TextSource::None
            };
            ask.final_text = message;
            ask.goal = Some(ralph_loop::goals::Source::Codex {
                thread: ask.session.clone(),
                turn: text(v, "turn_id"),
                rollout: text(v, "transcript_path").map(Into::into),
            });
        }
        Event::Guard | Event::Response | Event::Prompt | Event::Batch => {
            return Err(PayloadError::NoSuchEvent(Agent::Codex))
        }
    }
    Ok(ask)
}
