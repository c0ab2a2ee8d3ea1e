//! Qwen Code 0.24: Claude's protocol with Gemini's tool names (`write_file`, `edit`; the
//! matcher also takes `Write`/`Edit`). agent-hooks.md, "Qwen Code".

use super::{base, claude, path_field, Agent, Event, PayloadError};
use crate::hook::{promise, Ask};
use serde_json::Value;

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    match event {
        Event::Edit => {
            let mut ask = base(v, "session_id");
            let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
            if matches!(tool, "write_file" | "edit" | "Write" | "Edit") {
                ask.edited = path_field(v.get("tool_input"), "file_path")
                    .into_iter()
                    .collect();
            }
            Ok(ask)
        }
        Event::Stop => {
            let mut ask = claude::ask(Event::Stop, v)?;
            if ask.final_text.is_none() {
                ask.text_source = promise::TextSource::None;
            }
            Ok(ask)
        }
        Event::Guard | Event::Response | Event::Prompt | Event::Batch => {
            Err(PayloadError::NoSuchEvent(Agent::Qwen))
        }
    }
}
