//! Gemini CLI 0.61: `AfterTool` (`write_file`, `replace`, with `file_path`) and `AfterAgent`,
//! whose final text is `prompt_response`. Context goes in `hookSpecificOutput`; a refusal is
//! `decision: "block"` with a reason sent back as a new prompt. agent-hooks.md.

use super::{base, path_field, text, Agent, Answer, Event, PayloadError};
use crate::hook::promise::TextSource;
use crate::hook::{Ask, Verdict};
use serde_json::{json, Map, Value};

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let mut ask = base(v, "session_id");
    match event {
        Event::Edit => {
            let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
            if matches!(tool, "write_file" | "replace") {
                ask.edited = path_field(v.get("tool_input"), "file_path")
                    .into_iter()
                    .collect();
            }
        }
        Event::Stop => {
            ask.final_text = text(v, "prompt_response");
            ask.text_source = if ask.final_text.is_some() {
                TextSource::LastAssistantMessage
            } else {
                TextSource::None
            };
        }
        Event::Guard | Event::Response | Event::Prompt | Event::Batch => {
            return Err(PayloadError::NoSuchEvent(Agent::Gemini))
        }
    }
    Ok(ask)
}

pub fn answer(event: Event, verdict: &Verdict) -> Answer {
    let mut out = Map::new();
    match verdict {
        Verdict::Context { text, .. } => {
            out.insert(
                "hookSpecificOutput".into(),
                json!({"hookEventName": if event == Event::Edit { "AfterTool" } else { "AfterAgent" },
                       "additionalContext": text}),
            );
        }
        Verdict::Block { reason, .. } => {
            out.insert("decision".into(), json!("block"));
            out.insert("reason".into(), json!(reason));
        }
        _ => {}
    }
    if let Some(s) = verdict.system() {
        out.insert("systemMessage".into(), json!(s));
    }
    if out.is_empty() {
        Answer::nothing()
    } else {
        Answer::json(Value::Object(out))
    }
}
