//! Reading a hook's input (one JSON object on stdin, from any agent) and the size limits of
//! what goes back. Unknown fields are never refused: agents add fields over time.

use serde_json::Value;
use std::io::Read;

/// Claude Code stores a longer string in a file and shows the model a 2 KB preview, so every
/// string we send stays well below its 10,000-character cap.
pub const TEXT_CAP: usize = 8000;

/// More stdin than any real hook input; reading stops here so a runaway writer cannot make
/// ralph-gate use unbounded memory.
pub const STDIN_LIMIT: u64 = 16 * 1024 * 1024;

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
    #[error("the hook input is JSON but not an object")]
    NotAnObject,
}

pub fn read_stdin() -> Result<Value, InputError> {
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

/// Pure: bytes to a JSON object, which an agent's adapter then reads.
pub fn parse(bytes: &[u8]) -> Result<Value, InputError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(InputError::Empty);
    }
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        InputError::Json(msg, e.line(), e.column())
    })?;
    if v.is_object() {
        Ok(v)
    } else {
        Err(InputError::NotAnObject)
    }
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
    fn bad_input_is_explained() {
        assert!(matches!(parse(b""), Err(InputError::Empty)));
        assert!(matches!(parse(b"  \n"), Err(InputError::Empty)));
        let e = parse(b"{not json").unwrap_err().to_string();
        assert!(
            e.contains("not a valid JSON object") && e.contains("line 1"),
            "{e}"
        );
        assert!(matches!(parse(b"[1,2]"), Err(InputError::NotAnObject)));
        assert!(parse(br#"{"session_id": 5, "new_field": {}}"#).is_ok());
    }

    #[test]
    fn cap_keeps_strings_under_the_limit() {
        let s = "x".repeat(20_000);
        let c = cap(&s, TEXT_CAP);
        assert!(c.chars().count() <= TEXT_CAP);
        assert!(c.ends_with("limit]"));
    }
}
