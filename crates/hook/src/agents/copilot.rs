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

pub fn ask(event: Event, v: &Value, home: Option<&Path>) -> Result<Ask, PayloadError> {
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
            let transcript = text(v, "transcriptPath").map(|t| expand_home(&t, home));
            if let (Some(t), Some(ts)) = (&transcript, v.get("timestamp").and_then(Value::as_u64)) {
                wait_for_stop_event(t, ts);
            }
            ask.final_text = transcript.as_deref().and_then(last_message);
            ask.text_source = if ask.final_text.is_some() {
                TextSource::Transcript
            } else {
                TextSource::None
            };
        }
        Event::Guard | Event::Response | Event::Prompt | Event::Batch => {
            return Err(PayloadError::NoSuchEvent(Agent::Copilot))
        }
    }
    Ok(ask)
}

fn expand_home(p: &str, home: Option<&Path>) -> std::path::PathBuf {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => p.into(),
    }
}

/// How long a stop waits for Copilot to finish writing the turn to its events file.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Copilot writes `events.jsonl` as it goes and runs `agentStop` hooks in parallel with
/// recording the stop (seen with Copilot 1.0.102: the first stop of a session could read a
/// file that did not yet hold the final message). The stop's own `hook.start` event, with
/// this payload's timestamp, comes after the final message: wait until it is there.
fn wait_for_stop_event(path: &Path, timestamp: u64) {
    let deadline = std::time::Instant::now() + FLUSH_WAIT;
    loop {
        let written = promise::transcript_tail(path).is_some_and(|tail| {
            tail.lines().rev().take(50).any(|line| {
                serde_json::from_str::<Value>(line).is_ok_and(|e| {
                    e["type"] == "hook.start"
                        && e["data"]["hookType"] == "agentStop"
                        && e["data"]["input"]["timestamp"].as_u64() == Some(timestamp)
                })
            })
        });
        if written || std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
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
