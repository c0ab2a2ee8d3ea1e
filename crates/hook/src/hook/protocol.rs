//! Reading a hook's input (one JSON object on stdin, from any agent) and the size limits of
//! what goes back. Unknown fields are never refused: agents add fields over time.

use serde_json::Value;
use std::io::Read;

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
}
