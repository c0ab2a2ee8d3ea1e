//! Factory Droid 0.225: Claude's protocol with its own edit tools (`Create`, `Edit` with
//! `file_path`; `ApplyPatch` with a Codex-style patch in `input`). Its stop payload has no
//! final message: the last assistant message of `transcript_path` is read (lines
//! `{"type":"message","message":{"role":"assistant","content":[...]}}`). agent-hooks.md.

use super::{base, claude, patch, path_field, text, Agent, Event, PayloadError};
use crate::hook::promise::{self, TextSource};
use crate::hook::Ask;
use serde_json::Value;
use std::path::Path;

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let mut ask = base(v, "session_id");
    match event {
        Event::Edit => {
            let input = v.get("tool_input");
            ask.edited = match v.get("tool_name").and_then(Value::as_str).unwrap_or("") {
                "Create" | "Edit" | "Write" | "MultiEdit" => {
                    path_field(input, "file_path").into_iter().collect()
                }
                "ApplyPatch" => patch::written(
                    input
                        .and_then(|i| i.get("input").or_else(|| i.get("patch")))
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                ),
                _ => Vec::new(),
            };
        }
        Event::Stop => {
            if let Some(m) = text(v, "last_assistant_message") {
                ask.final_text = Some(m);
                ask.text_source = TextSource::LastAssistantMessage;
            } else if let Some(t) = text(v, "transcript_path") {
                ask.final_text = last_message(Path::new(&t));
                ask.text_source = if ask.final_text.is_some() {
                    TextSource::Transcript
                } else {
                    TextSource::None
                };
            }
        }
        Event::Guard => return claude::ask(Event::Guard, v),
        Event::Response | Event::Prompt | Event::Batch => {
            return Err(PayloadError::NoSuchEvent(Agent::Droid))
        }
    }
    Ok(ask)
}

/// The text of the last assistant message (its text blocks joined, or its string content);
/// a last message with no text is no final text. Claude-format lines are read too.
pub fn last_message(path: &Path) -> Option<String> {
    let tail = promise::transcript_tail(path)?;
    let lines: Vec<&str> = tail.lines().collect();
    if let Some(t) = promise::last_message_text(&lines) {
        return Some(t);
    }
    let message = lines.iter().rev().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        let m = v.get("message")?.clone();
        (m.get("role")?.as_str()? == "assistant").then_some(m)
    })?;
    let content = message.get("content")?;
    let text = match content.as_str() {
        Some(s) => s.to_string(),
        None => content
            .as_array()?
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    (!text.trim().is_empty()).then_some(text)
}
