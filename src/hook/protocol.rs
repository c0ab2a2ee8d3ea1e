//! Claude Code hook input and output, as documented in shared/reference/claude-code-hooks.md.
//! Input is read once, parsed into typed values, and unknown fields are ignored: Claude Code
//! adds fields over time and must never be refused for it.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::PathBuf;

/// Claude Code stores a longer string in a file and shows the model a 2 KB preview, so every
/// string we send stays well below its 10,000-character cap.
pub const TEXT_CAP: usize = 8000;

/// More stdin than any real hook input; reading stops here so a runaway writer cannot make
/// ralph-gate use unbounded memory.
pub const STDIN_LIMIT: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Value>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read the hook input from stdin: {0}")]
    Read(std::io::Error),
    #[error("the hook input on stdin is empty; Claude Code sends a JSON object")]
    Empty,
    #[error("the hook input is larger than {STDIN_LIMIT} bytes")]
    TooLarge,
    #[error("the hook input is not a valid JSON object: {0} (line {1}, column {2})")]
    Json(String, usize, usize),
}

pub fn read_stdin() -> Result<HookInput, InputError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(STDIN_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(InputError::Read)?;
    if bytes.len() as u64 > STDIN_LIMIT {
        return Err(InputError::TooLarge);
    }
    parse(&bytes)
}

/// Pure: bytes to a typed input.
pub fn parse(bytes: &[u8]) -> Result<HookInput, InputError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::Empty);
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        InputError::Json(msg, e.line(), e.column())
    })
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// PreToolUse: `allow`, `deny` or `ask`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    /// PreToolUse: why; shown to the model for `deny`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
}

/// What ralph-gate prints on stdout (exit 0). Absent fields are left out.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
}

/// Cuts `text` to `cap` characters, saying so at the end.
pub fn cap(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_string();
    }
    let note = "\n[ralph-gate: cut here to stay within Claude Code's limit]";
    let keep = cap.saturating_sub(note.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(note);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_fields_are_ignored() {
        let input =
            parse(br#"{"session_id":"s","prompt_id":"p","effort":{"x":1},"tool_name":"Write"}"#)
                .unwrap();
        assert_eq!(input.session_id.as_deref(), Some("s"));
        assert_eq!(input.tool_name.as_deref(), Some("Write"));
    }

    #[test]
    fn bad_input_is_explained() {
        assert!(matches!(parse(b""), Err(InputError::Empty)));
        assert!(matches!(parse(b"  \n"), Err(InputError::Empty)));
        let e = parse(b"{not json").unwrap_err().to_string();
        assert!(
            e.contains("not a valid JSON object") && e.contains("line 1"),
            "{e}"
        );
        let e = parse(br#"{"session_id": 5}"#).unwrap_err().to_string();
        assert!(e.contains("invalid type"), "{e}");
        assert!(parse(b"[1,2]").is_err());
    }

    #[test]
    fn output_uses_claude_codes_field_names() {
        let out = HookOutput {
            hook_specific_output: Some(HookSpecificOutput {
                hook_event_name: "PostToolUse",
                additional_context: Some("ctx".into()),
                permission_decision: None,
                permission_decision_reason: None,
            }),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx"}}"#
        );
    }

    #[test]
    fn cap_keeps_strings_under_the_limit() {
        let s = "x".repeat(20_000);
        let c = cap(&s, TEXT_CAP);
        assert!(c.chars().count() <= TEXT_CAP);
        assert!(c.ends_with("limit]"));
    }
}
