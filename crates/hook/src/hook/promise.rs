//! Finding the agent's promise: the text of a `<promise>...</promise>` that ends its last
//! message, trimmed and with whitespace collapsed (as the official plugin compares it). A bare
//! promise word without the tags is not a promise, and neither is a tag quoted in prose
//! ("I will write <promise>DONE</promise> once the tests pass"): only the last tag counts, and
//! only when nothing but whitespace follows it.

use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

pub use ralph_base::agent::TextSource;

/// How much of a transcript's end is read: the last assistant text is always near the end,
/// and transcripts of long sessions run to hundreds of megabytes.
const TRANSCRIPT_TAIL: u64 = 8 * 1024 * 1024;

pub fn extract(text: &str) -> Option<String> {
    let body = text.trim_end();
    let inner = body.strip_suffix("</promise>")?;
    let start = inner.rfind("<promise>")? + "<promise>".len();
    let promise = normalize(&inner[start..]);
    (!promise.is_empty() && !promise.contains("</promise>")).then_some(promise)
}

/// True when `text` holds a complete `<promise>...</promise>` tag anywhere: with [`extract`]
/// finding none, the tag is misplaced (something follows it) and the agent is told so.
pub fn has_tag(text: &str) -> bool {
    text.find("<promise>")
        .is_some_and(|i| text[i..].contains("</promise>"))
}

pub fn normalize(promise: &str) -> String {
    promise.split_whitespace().collect::<Vec<_>>().join(" ")
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
    let text = transcript_tail(path)?;
    let lines: Vec<&str> = text.lines().collect();
    last_message_text(&lines)
}

/// The end of a JSONL transcript (at most [`TRANSCRIPT_TAIL`] bytes), whole lines only.
pub fn transcript_tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TRANSCRIPT_TAIL);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(if start > 0 {
        // Began mid-line.
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    } else {
        text
    })
}

/// The last text of the last main-chain assistant *message*. Claude Code writes each content
/// block of a message as its own line with the same `message.id`; only those lines count, so
/// a final turn of tool calls alone has no text, and an older turn's promise is not read
/// again.
pub fn last_message_text(lines: &[&str]) -> Option<String> {
    let mut last_id: Option<Option<String>> = None;
    for line in lines.iter().rev() {
        let Some(block) = assistant_line(line) else {
            continue;
        };
        match &last_id {
            None => last_id = Some(block.id.clone()),
            Some(id) if *id != block.id || id.is_none() => return None,
            Some(_) => {}
        }
        if block.text.is_some() {
            return block.text;
        }
    }
    None
}

struct AssistantLine {
    id: Option<String>,
    text: Option<String>,
}

/// A main-chain assistant line: its message id and its last text block, if any. Malformed
/// (half-written) lines, sidechains and other line types yield nothing and are skipped.
fn assistant_line(line: &str) -> Option<AssistantLine> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("type")?.as_str()? != "assistant"
        || v.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let message = v.get("message")?;
    let id = message.get("id").and_then(Value::as_str).map(String::from);
    let content = message.get("content")?;
    let text = match content.as_str() {
        Some(s) => Some(s.to_string()),
        None => content
            .as_array()?
            .iter()
            .rev()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .and_then(|b| b.get("text")?.as_str().map(String::from)),
    };
    Some(AssistantLine { id, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_tag_trimmed_and_collapsed() {
        assert_eq!(
            extract("done. <promise>  ALL\n  TESTS   PASS </promise>\n\n").as_deref(),
            Some("ALL TESTS PASS")
        );
        assert_eq!(
            extract("<promise>A</promise> then <promise>B</promise>").as_deref(),
            Some("B")
        );
    }

    #[test]
    fn a_promise_quoted_in_prose_is_not_made() {
        assert_eq!(
            extract("When the tests pass I will write <promise>DONE</promise>. Not yet."),
            None
        );
        assert_eq!(
            extract("The loop ends with `<promise>DONE</promise>`"),
            None
        );
        assert_eq!(
            extract("I'd say <promise>DONE</promise> but 3 tests fail."),
            None
        );
        assert_eq!(
            extract("Earlier I said I'd write <promise>DONE</promise> when done. All green.\n<promise>DONE</promise>").as_deref(),
            Some("DONE"),
            "a real promise at the end still counts"
        );
    }

    #[test]
    fn bare_word_or_broken_tags_are_not_a_promise() {
        assert_eq!(extract("DONE"), None);
        assert_eq!(extract("<promise>DONE"), None);
        assert_eq!(extract("<promise></promise>"), None);
        assert_eq!(extract("promise>DONE</promise"), None);
    }

    fn text(line: &str) -> Option<String> {
        last_message_text(&[line])
    }

    #[test]
    fn transcript_lines_skip_sidechains_and_garbage() {
        let main = r#"{"type":"assistant","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"hi <promise>X</promise>"}]}}"#;
        assert_eq!(text(main).as_deref(), Some("hi <promise>X</promise>"));
        let side = main.replace("\"isSidechain\":false", "\"isSidechain\":true");
        assert_eq!(text(&side), None);
        assert_eq!(
            text(r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t"}]}}"#),
            None
        );
        assert_eq!(text(r#"{"type":"assistant","message":{"cont"#), None);
        assert_eq!(text(r#"{"type":"user","message":{"content":"x"}}"#), None);
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

#[cfg(test)]
mod message_tests {
    use super::last_message_text;

    fn line(id: &str, block: &str) -> String {
        format!(
            r#"{{"type":"assistant","isSidechain":false,"message":{{"id":"{id}","role":"assistant","content":[{block}]}}}}"#
        )
    }
    fn text_block(t: &str) -> String {
        format!(r#"{{"type":"text","text":"{t}"}}"#)
    }
    const TOOL: &str = r#"{"type":"tool_use","id":"t","name":"Bash","input":{}}"#;
    const USER: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#;

    #[test]
    fn a_last_turn_of_tool_calls_alone_does_not_resurrect_an_old_promise() {
        let old = line("m1", &text_block("<promise>DONE</promise>"));
        let tools = line("m2", TOOL);
        let lines = [old.as_str(), USER, tools.as_str()];
        assert_eq!(last_message_text(&lines), None);
    }

    #[test]
    fn every_block_of_the_last_message_counts() {
        let a = line("m2", &text_block("All green. <promise>DONE</promise>"));
        let b = line("m2", TOOL);
        let old = line("m1", &text_block("older"));
        let lines = [old.as_str(), USER, a.as_str(), b.as_str()];
        assert_eq!(
            last_message_text(&lines).as_deref(),
            Some("All green. <promise>DONE</promise>")
        );
    }
}
