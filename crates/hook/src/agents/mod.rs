//! One adapter per coding agent: each parses that agent's hook payloads into an agent-neutral
//! [`Ask`] and renders a [`Verdict`] in the agent's own answer format. The decisions live in
//! [`crate::hook`] and never see an agent's field names. Facts, with sources:
//! `shared/reference/claude-code-hooks.md` and `agent-hooks.md`.
//!
//! Adding an agent: one file here with `ask` and `answer`, a row in [`Agent`]'s tables, its
//! config shape in `commands/init/agents.rs`, and its tests.

mod claude;
mod codex;
mod copilot;
mod cursor;
mod droid;
mod gemini;
pub mod patch;
mod qwen;

use crate::hook::{Ask, Verdict};
pub use ralph_base::agent::{Agent, CURSOR_LOOP_LIMIT};
use serde_json::Value;
use std::path::Path;

/// Which hook event a call is, in ralph-gate's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// After a tool wrote files.
    Edit,
    /// The agent wants to end its turn.
    Stop,
    /// Before a tool runs.
    Guard,
    /// The agent's reply, for agents whose stop payload lacks it (Cursor).
    Response,
    /// The user submitted a prompt (Claude Code's UserPromptSubmit).
    Prompt,
    /// Every tool call of a batch has resolved (Claude Code's PostToolBatch).
    Batch,
}

/// What goes back to the agent: stdout (JSON) and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: Option<String>,
    pub code: u8,
}

impl Answer {
    pub fn json(v: Value) -> Self {
        Self {
            stdout: Some(v.to_string()),
            code: ralph_base::exit::SUCCESS,
        }
    }

    pub fn nothing() -> Self {
        Self {
            stdout: None,
            code: ralph_base::exit::SUCCESS,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    #[error("this payload comes from {found}, but the hook was registered with --agent {named}; register it with --agent {found} (`ralph-gate init --agent {found}`)")]
    OtherAgent { named: Agent, found: Agent },
    #[error("{0} has no such hook event in ralph-gate")]
    NoSuchEvent(Agent),
    #[error("`{field}` in the hook input must be {expected}")]
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
}

/// The agent a payload certainly comes from, by the marks only it sends; `None` when the
/// shape is shared (Claude, Qwen and Droid send the same fields for most events).
pub fn detect(v: &Value) -> Option<Agent> {
    let has = |k: &str| v.get(k).is_some();
    let event = v
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
    if has("conversation_id") || has("workspace_roots") {
        return Some(Agent::Cursor);
    }
    if has("sessionId") || has("toolName") || has("toolArgs") {
        return Some(Agent::Copilot);
    }
    if has("turn_id") {
        return Some(Agent::Codex);
    }
    if matches!(event, "AfterTool" | "AfterAgent" | "BeforeTool") || has("prompt_response") {
        return Some(Agent::Gemini);
    }
    if matches!(tool, "Create" | "ApplyPatch") || has("tool_execution_count") {
        return Some(Agent::Droid);
    }
    // Qwen Code sends Claude's fields, and Claude Code 2.1 sends Qwen's (`background_tasks`):
    // nothing tells them apart for certain.
    None
}

/// Parses `payload` as `agent`'s `event`. A payload that certainly comes from another agent
/// is an error that names both.
pub fn ask(
    agent: Agent,
    event: Event,
    payload: &Value,
    env: &ralph_base::env::Environment,
) -> Result<Ask, PayloadError> {
    check_types(payload)?;
    if let Some(found) = detect(payload).filter(|f| *f != agent) {
        return Err(PayloadError::OtherAgent {
            named: agent,
            found,
        });
    }
    let mut ask = match agent {
        Agent::Claude => claude::ask(event, payload),
        Agent::Codex => codex::ask(event, payload),
        Agent::Copilot => copilot::ask(event, payload, env.home.as_deref()),
        Agent::Gemini => gemini::ask(event, payload),
        Agent::Cursor => cursor::ask(event, payload),
        Agent::Qwen => qwen::ask(event, payload),
        Agent::Droid => droid::ask(event, payload),
        // The plugin in hooks/opencode/ speaks Claude's payloads.
        Agent::Opencode => claude::ask(event, payload),
    }?;
    ask.agent = agent;
    Ok(ask)
}

/// Renders `verdict` for `agent`'s `event`.
pub fn answer(agent: Agent, event: Event, verdict: &Verdict) -> Answer {
    if *verdict == Verdict::Silent {
        return Answer::nothing();
    }
    match agent {
        Agent::Claude | Agent::Qwen | Agent::Droid | Agent::Codex | Agent::Opencode => {
            claude::answer(agent, event, verdict)
        }
        Agent::Copilot => copilot::answer(event, verdict),
        Agent::Gemini => gemini::answer(event, verdict),
        Agent::Cursor => cursor::answer(event, verdict),
    }
}

/// How a stop that ralph-gate could not check is answered: refused, so a loop never ends on
/// an error, by a JSON block as every other decision is, never by the exit code alone:
/// Copilot ignores exit 2, and where a hook runs under PowerShell (Codex on Windows) exit 2
/// arrives as 1, a non-blocking error. The message also goes to stderr, for the person.
pub fn stop_error(agent: Agent, message: &str) -> (Answer, Option<String>) {
    let block = Verdict::Block {
        reason: message.to_string(),
        system: None,
    };
    (
        answer(agent, Event::Stop, &block),
        Some(message.to_string()),
    )
}

/// The fields every adapter reads must have the type the agents send: a wrong one is named,
/// never read as "absent".
fn check_types(v: &Value) -> Result<(), PayloadError> {
    const STRINGS: [&str; 12] = [
        "session_id",
        "sessionId",
        "conversation_id",
        "cwd",
        "transcript_path",
        "transcriptPath",
        "last_assistant_message",
        "prompt_response",
        "tool_name",
        "toolName",
        "file_path",
        "text",
    ];
    for field in STRINGS {
        if let Some(x) = v.get(field) {
            if !(x.is_string() || x.is_null()) {
                return Err(PayloadError::WrongType {
                    field,
                    expected: "a string",
                });
            }
        }
    }
    if let Some(x) = v.get("stop_hook_active") {
        if !(x.is_boolean() || x.is_null()) {
            return Err(PayloadError::WrongType {
                field: "stop_hook_active",
                expected: "true or false",
            });
        }
    }
    Ok(())
}

/// A string field of a JSON object.
fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The common fields: session and working folder.
fn base(v: &Value, session_key: &str) -> Ask {
    Ask {
        session: text(v, session_key).unwrap_or_default(),
        cwd: text(v, "cwd").map(Into::into),
        continuing: v
            .get("stop_hook_active")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        call_id: text(v, "tool_use_id").filter(|id| !id.is_empty()),
        call_timeout_ms: v
            .get("tool_input")
            .and_then(|i| i.get("timeout"))
            .and_then(Value::as_u64),
        ..Default::default()
    }
}

/// A file path field, when it names a file.
fn path_field(v: Option<&Value>, key: &str) -> Option<std::path::PathBuf> {
    let p = v?.get(key)?.as_str()?;
    (!p.is_empty()).then(|| Path::new(p).to_path_buf())
}

#[cfg(test)]
mod tests;
