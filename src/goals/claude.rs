//! Claude Code's `/goal`, from the transcript (JSONL). Each change of the goal is an
//! attachment line `{"type":"attachment","attachment":{"type":"goal_status",...}}`: set
//! (`met:false, sentinel:true, condition`), not met (`met:false, reason`), met (`met:true,
//! reason, iterations`), impossible (`failed:true`), cleared by the user (`met:true,
//! sentinel:true`). The last one says where the goal stands. A user entry carries the
//! `promptId` of its turn, which the Stop payload names (`prompt_id`): a `met` line after
//! that turn's first entry was met in this turn.

use super::{line_at, Goal, Status};
use memchr::memmem;
use serde_json::Value;

/// The goal recorded in `transcript`, judged for the turn of `prompt_id`.
pub fn goal(transcript: &[u8], prompt_id: Option<&str>) -> Option<Goal> {
    let (at, last) = last_status(transcript)?;
    let condition = text(&last, "condition").unwrap_or_default();
    let flag = |k: &str| last.get(k).and_then(Value::as_bool).unwrap_or(false);
    let status = if flag("failed") {
        Status::Over("judged impossible")
    } else if flag("met") && flag("sentinel") {
        Status::Over("cleared")
    } else if !flag("met") {
        Status::Active
    } else if met_this_turn(transcript, at, prompt_id) {
        Status::MetThisTurn
    } else {
        Status::Over("met in an earlier turn")
    };
    Some(Goal {
        condition,
        status,
        verdict: text(&last, "reason"),
    })
}

/// How long a stop waits for Claude Code to write the turn's last message to the transcript.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The transcript, once it holds the turn's last message: Claude Code writes it in batches,
/// and a stop that comes soon after a `/goal` can find the file behind the session (without
/// even the goal's line). `None`: no transcript.
pub fn read_settled(
    path: &std::path::Path,
    last_message: Option<&str>,
) -> std::io::Result<Option<Vec<u8>>> {
    // A plain prefix of the message, which any JSON writer spells the same.
    let needle: Option<String> = last_message
        .map(|m| {
            m.chars()
                .take_while(|c| c.is_ascii() && !c.is_ascii_control() && !matches!(c, '"' | '\\'))
                .take(40)
                .collect::<String>()
        })
        .filter(|m| m.trim().len() >= 8);
    let until = std::time::Instant::now() + SETTLE;
    loop {
        // The file itself may not be written yet.
        let bytes = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let written = needle.as_ref().is_none_or(|n| {
            bytes
                .as_ref()
                .is_some_and(|b| memmem::find(b, n.as_bytes()).is_some())
        });
        if written || std::time::Instant::now() >= until {
            return Ok(bytes);
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// The last `goal_status` attachment and the offset of its line.
fn last_status(transcript: &[u8]) -> Option<(usize, Value)> {
    let finder = memmem::Finder::new(b"\"goal_status\"");
    let mut found = None;
    for hit in finder.find_iter(transcript) {
        let (start, line) = line_at(transcript, hit);
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let attachment = &v["attachment"];
        if v["type"] == "attachment" && attachment["type"] == "goal_status" {
            found = Some((start, attachment.clone()));
        }
    }
    found
}

/// Whether the line at `at` comes after the first user entry of the turn `prompt_id`. With
/// no prompt id (an older Claude Code), or none recorded, a met goal is held: its turn
/// cannot be told, and holding a stop to gates that pass costs nothing.
fn met_this_turn(transcript: &[u8], at: usize, prompt_id: Option<&str>) -> bool {
    let Some(id) = prompt_id.filter(|id| !id.is_empty()) else {
        return true;
    };
    let needle = serde_json::to_string(id).unwrap_or_default();
    for hit in memmem::find_iter(transcript, needle.as_bytes()) {
        let (start, line) = line_at(transcript, hit);
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if v["type"] == "user" && v["promptId"].as_str() == Some(id) {
            return at > start;
        }
    }
    true
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(fields: &str) -> String {
        format!(
            "{{\"type\":\"attachment\",\"attachment\":{{\"type\":\"goal_status\",{fields}}}}}\n"
        )
    }

    fn user(prompt: &str) -> String {
        format!("{{\"type\":\"user\",\"promptId\":\"{prompt}\",\"message\":{{\"role\":\"user\",\"content\":\"x\"}}}}\n")
    }

    const SET: &str = "\"met\":false,\"sentinel\":true,\"condition\":\"a.py compiles\"";
    const MET: &str =
        "\"met\":true,\"condition\":\"a.py compiles\",\"reason\":\"looks fine\",\"iterations\":1";

    #[test]
    fn a_set_goal_is_active_whatever_the_turn() {
        // The set line comes before the user entry of the `/goal` prompt, as Claude writes it.
        let t = status(SET) + &user("p1");
        let g = goal(t.as_bytes(), Some("p1")).unwrap();
        assert_eq!(g.status, Status::Active);
        assert_eq!(g.condition, "a.py compiles");
        assert!(g.held());
    }

    #[test]
    fn met_holds_in_its_own_turn_only() {
        let t = status(SET) + &user("p1") + &status(MET);
        let g = goal(t.as_bytes(), Some("p1")).unwrap();
        assert_eq!(g.status, Status::MetThisTurn);
        assert_eq!(g.verdict.as_deref(), Some("looks fine"));
        let later = t + &user("p2");
        let g = goal(later.as_bytes(), Some("p2")).unwrap();
        assert_eq!(g.status, Status::Over("met in an earlier turn"));
        assert!(!g.held());
    }

    #[test]
    fn not_met_is_active_cleared_and_impossible_hold_nothing() {
        let not_met = status(SET) + &status("\"met\":false,\"condition\":\"c\",\"reason\":\"no\"");
        assert_eq!(
            goal(not_met.as_bytes(), None).unwrap().status,
            Status::Active
        );
        let cleared = status(SET) + &status("\"met\":true,\"sentinel\":true");
        assert_eq!(
            goal(cleared.as_bytes(), None).unwrap().status,
            Status::Over("cleared")
        );
        let failed = status(SET) + &status("\"met\":false,\"failed\":true,\"condition\":\"c\"");
        assert_eq!(
            goal(failed.as_bytes(), None).unwrap().status,
            Status::Over("judged impossible")
        );
    }

    #[test]
    fn no_goal_and_damaged_lines_are_no_goal() {
        assert_eq!(goal(user("p1").as_bytes(), Some("p1")), None);
        let damaged = "{\"type\":\"attachment\",\"attachment\":{\"type\":\"goal_status\"\n";
        assert_eq!(goal(damaged.as_bytes(), None), None);
        // The words inside a message are not an attachment.
        let quoted = "{\"type\":\"user\",\"message\":{\"content\":\"\\\"goal_status\\\"\"}}\n";
        assert_eq!(goal(quoted.as_bytes(), None), None);
    }
}
