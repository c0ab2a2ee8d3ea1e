//! Finding the agent's promise: the text of the first `<promise>...</promise>` in its last
//! message, trimmed and with whitespace collapsed (as the official plugin compares it). A bare
//! promise word without the tags is not a promise.

use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of a transcript's end is read: the last assistant text is always near the end,
/// and transcripts of long sessions run to hundreds of megabytes.
const TRANSCRIPT_TAIL: u64 = 8 * 1024 * 1024;

pub fn extract(text: &str) -> Option<String> {
    let start = text.find("<promise>")? + "<promise>".len();
    let len = text[start..].find("</promise>")?;
    let inner = text[start..start + len]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!inner.is_empty()).then_some(inner)
}

pub fn normalize(promise: &str) -> String {
    promise.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the last assistant text came from, for the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TextSource {
    LastAssistantMessage,
    Transcript,
    None,
}

/// The last assistant text: `last_assistant_message` when Claude Code sent it (the transcript
/// is often stale when Stop fires), else the transcript's last non-sidechain assistant text.
pub fn last_text(message: Option<&str>, transcript: Option<&Path>) -> (Option<String>, TextSource) {
    if let Some(m) = message {
        return (Some(m.to_string()), TextSource::LastAssistantMessage);
    }
    match transcript.and_then(last_transcript_text) {
        Some(t) => (Some(t), TextSource::Transcript),
        None => (None, TextSource::None),
    }
}

fn last_transcript_text(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TRANSCRIPT_TAIL);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // began mid-line
    }
    lines.iter().rev().find_map(|line| assistant_text(line))
}

/// The last text block of one transcript line, if it is a main-chain assistant line.
/// Malformed (half-written) lines yield nothing and are skipped.
pub fn assistant_text(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("type")?.as_str()? != "assistant"
        || v.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let content = v.get("message")?.get("content")?;
    if let Some(s) = content.as_str() {
        return Some(s.to_string());
    }
    content
        .as_array()?
        .iter()
        .rev()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|b| b.get("text")?.as_str().map(String::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_tag_trimmed_and_collapsed() {
        assert_eq!(
            extract("done. <promise>  ALL\n  TESTS   PASS </promise>").as_deref(),
            Some("ALL TESTS PASS")
        );
        assert_eq!(
            extract("<promise>A</promise> then <promise>B</promise>").as_deref(),
            Some("A")
        );
    }

    #[test]
    fn bare_word_or_broken_tags_are_not_a_promise() {
        assert_eq!(extract("DONE"), None);
        assert_eq!(extract("<promise>DONE"), None);
        assert_eq!(extract("<promise></promise>"), None);
        assert_eq!(extract("promise>DONE</promise"), None);
    }

    #[test]
    fn transcript_lines_skip_sidechains_and_garbage() {
        let main = r#"{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"hi <promise>X</promise>"}]}}"#;
        assert_eq!(
            assistant_text(main).as_deref(),
            Some("hi <promise>X</promise>")
        );
        let side = main.replace("\"isSidechain\":false", "\"isSidechain\":true");
        assert_eq!(assistant_text(&side), None);
        assert_eq!(
            assistant_text(
                r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t"}]}}"#
            ),
            None
        );
        assert_eq!(
            assistant_text(r#"{"type":"assistant","message":{"cont"#),
            None
        );
        assert_eq!(
            assistant_text(r#"{"type":"user","message":{"content":"x"}}"#),
            None
        );
    }

    #[test]
    fn the_message_field_wins_over_the_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t.jsonl");
        std::fs::write(
            &t,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"old"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            last_text(Some("new"), Some(&t)),
            (Some("new".into()), TextSource::LastAssistantMessage)
        );
        assert_eq!(
            last_text(None, Some(&t)),
            (Some("old".into()), TextSource::Transcript)
        );
        assert_eq!(
            last_text(None, Some(&dir.path().join("missing"))),
            (None, TextSource::None)
        );
    }
}
