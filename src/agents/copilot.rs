//! GitHub Copilot CLI 1.0: camelCase payloads (`sessionId`, `toolName`, `toolArgs`); the edit
//! tools are `create` and `edit` (absolute `path`) or `apply_patch` (the patch as a string,
//! relative paths). `agentStop` carries no final message: it is the last `assistant.message`
//! of the session's `events.jsonl` (`transcriptPath`), already on disk when the hook runs.
//! Feedback is a top-level `additionalContext`; exit 2 does not block. agent-hooks.md.

use super::{patch, text, Agent, Answer, Event, PayloadError};
use crate::hook::promise::{self, TextSource};
use crate::hook::{Ask, Verdict};
use serde_json::{json, Value};
use std::path::Path;

pub fn ask(event: Event, v: &Value) -> Result<Ask, PayloadError> {
    let mut ask = Ask {
        session: text(v, "sessionId").unwrap_or_default(),
        cwd: text(v, "cwd").map(Into::into),
        continuing: v
            .get("stop_hook_active")
            .or_else(|| v.get("stopHookActive"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Default::default()
    };
    match event {
        Event::Edit => {
            let args = v.get("toolArgs");
            ask.edited = match v.get("toolName").and_then(Value::as_str).unwrap_or("") {
                "create" | "edit" | "str_replace" | "write" => args
                    .and_then(|a| a.get("path"))
                    .and_then(Value::as_str)
                    .map(|p| vec![p.into()])
                    .unwrap_or_default(),
                "apply_patch" => {
                    let text = args
                        .and_then(Value::as_str)
                        .or_else(|| args.and_then(|a| a.get("input")).and_then(Value::as_str))
                        .unwrap_or("");
                    patch::written(text)
                }
                _ => Vec::new(),
            };
        }
        Event::Stop => {
            let transcript = text(v, "transcriptPath").map(|t| expand_home(&t));
            ask.final_text = transcript.as_deref().and_then(last_message);
            ask.text_source = if ask.final_text.is_some() {
                TextSource::Transcript
            } else {
                TextSource::None
            };
        }
        Event::Guard | Event::Response => return Err(PayloadError::NoSuchEvent(Agent::Copilot)),
    }
    Ok(ask)
}

fn expand_home(p: &str) -> std::path::PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => p.into(),
    }
}

/// The final message: the last `assistant.message` event's `content`. A last message with no
/// text (tool requests only) is no final text: an earlier turn's promise is never read again.
pub fn last_message(path: &Path) -> Option<String> {
    let tail = promise::transcript_tail(path)?;
    let last = tail.lines().rev().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        (v.get("type")?.as_str()? == "assistant.message").then_some(v)
    })?;
    let content = last.get("data")?.get("content")?.as_str()?;
    (!content.trim().is_empty()).then(|| content.to_string())
}

pub fn answer(event: Event, verdict: &Verdict) -> Answer {
    match (event, verdict) {
        (_, Verdict::Context { text, .. }) => Answer::json(json!({"additionalContext": text})),
        (_, Verdict::Block { reason, .. }) => {
            Answer::json(json!({"decision": "block", "reason": reason}))
        }
        _ => Answer::nothing(),
    }
}
