//! Claude Code's `/goal`, from the transcript (JSONL). Each change of the goal is an
//! attachment line `{"type":"attachment","attachment":{"type":"goal_status",...}}`: set
//! (`met:false, sentinel:true, condition`), not met (`met:false, reason`), met (`met:true,
//! reason, iterations`), impossible (`failed:true`), cleared by the user (`met:true,
//! sentinel:true`). A user entry carries the `promptId` of its turn, which the Stop payload
//! names (`prompt_id`): a `met` line after that turn's first entry was met in this turn.
//!
//! The transcript is a file the agent can append to, so a line that would end the hold
//! (cleared, impossible, met in an earlier turn) is honoured only where Claude Code alone
//! writes it: after what ralph-gate read at the goal's last held stop (`seen`) and before the
//! first entry of the turn now ending, that is between two turns, where the user's own
//! `/goal clear` lands. One written during the agent's turn (by a shell command, or by the
//! evaluator of a stop ralph-gate refused) is not: the hold then ends only when every stop
//! gate passes, whichever Stop hook of the pass finished first.

use super::{held, line_at, Goal, Status};
use memchr::memmem;
use serde_json::Value;

/// The goal recorded in `transcript`, judged for the turn of `prompt_id`, where `seen` is
/// how far ralph-gate had read it when it last held the goal (0: never).
pub fn goal(transcript: &[u8], prompt_id: Option<&str>, seen: u64) -> Option<Goal> {
    let turn = turn_start(transcript, prompt_id);
    let between_turns = |at: usize| turn.is_some_and(|t| seen <= at as u64 && at < t);
    let mut found: Option<Goal> = None;
    for (at, line) in statuses(transcript) {
        let flag = |k: &str| line.get(k).and_then(Value::as_bool).unwrap_or(false);
        let status = if flag("failed") {
            Status::Over("judged impossible")
        } else if flag("met") && flag("sentinel") {
            Status::Over("cleared")
        } else if !flag("met") {
            Status::Active
        } else if turn.is_none_or(|t| at > t) {
            Status::MetThisTurn
        } else {
            Status::Over("met in an earlier turn")
        };
        let condition = text(&line, "condition")
            .or_else(|| found.as_ref().map(|g| g.condition.clone()))
            .unwrap_or_default();
        found = Some(Goal {
            condition,
            verdict: text(&line, "reason"),
            ..held(status, between_turns(at))
        });
    }
    found.map(|g| Goal {
        mark: transcript.len() as u64,
        ..g
    })
}

/// How long a stop waits for Claude Code to write the turn's last message to the transcript.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The transcript, once it holds the turn now ending (its first entry, and after it the
/// start of its last message): Claude Code writes it in batches, and a stop that comes soon
/// after a `/goal` can find the file behind the session (without even the goal's line, or
/// with only the turns before, whose last message may read the same). `None`: no transcript.
pub fn read_settled(
    path: &std::path::Path,
    last_message: Option<&str>,
    prompt_id: Option<&str>,
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
    let prompt_id = prompt_id.filter(|p| !p.is_empty());
    let until = std::time::Instant::now() + SETTLE;
    loop {
        // The file itself may not be written yet.
        let bytes = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let written = match &bytes {
            Some(b) => turn_written(b, needle.as_deref(), prompt_id),
            None => needle.is_none() && prompt_id.is_none(),
        };
        if written || std::time::Instant::now() >= until {
            return Ok(bytes);
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// Whether `transcript` holds the turn now ending: the first entry of the turn `prompt_id`
/// (when the stop names one) and, after it, `needle` (the start of its last message, when
/// there is one to look for). The message alone is not enough: an earlier turn may have
/// ended with the same words, and a transcript read before this turn's entries are written
/// cannot tell what happened between the turns (a `/goal clear`).
fn turn_written(transcript: &[u8], needle: Option<&str>, prompt_id: Option<&str>) -> bool {
    let from = match prompt_id {
        Some(_) => match turn_start(transcript, prompt_id) {
            Some(t) => t,
            None => return false,
        },
        None => 0,
    };
    needle.is_none_or(|n| memmem::find(&transcript[from..], n.as_bytes()).is_some())
}

/// Every `goal_status` attachment, in order, with the offset of its line.
fn statuses(transcript: &[u8]) -> impl Iterator<Item = (usize, Value)> + '_ {
    let mut last_line = usize::MAX;
    memmem::find_iter(transcript, b"\"goal_status\"").filter_map(move |hit| {
        let (start, line) = line_at(transcript, hit);
        if start == last_line {
            return None;
        }
        last_line = start;
        let v = serde_json::from_slice::<Value>(line).ok()?;
        let attachment = &v["attachment"];
        (v["type"] == "attachment" && attachment["type"] == "goal_status")
            .then(|| (start, attachment.clone()))
    })
}

/// The offset of the first user entry of the turn `prompt_id`: Claude Code writes it before
/// any tool of that turn runs, so nothing the agent appends can come before it. `None` with
/// no prompt id (an older Claude Code) or none recorded: the turn cannot be told, a met goal
/// is held, and nothing ends the hold but the gates.
fn turn_start(transcript: &[u8], prompt_id: Option<&str>) -> Option<usize> {
    let id = prompt_id.filter(|id| !id.is_empty())?;
    let needle = serde_json::to_string(id).ok()?;
    memmem::find_iter(transcript, needle.as_bytes()).find_map(|hit| {
        let (start, line) = line_at(transcript, hit);
        let v = serde_json::from_slice::<Value>(line).ok()?;
        (v["type"] == "user" && v["promptId"].as_str() == Some(id)).then_some(start)
    })
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

    fn said(text: &str) -> String {
        format!("{{\"type\":\"assistant\",\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}}}}\n")
    }

    #[test]
    fn a_transcript_holds_the_turn_only_once_its_own_entries_are_written() {
        // Turn p1 ended with the words turn p2 will end with; the user cleared the goal
        // between them. Read before p2's entries are written, the transcript holds the same
        // words but not the turn: it must not count as settled.
        let before = format!(
            "{}{}{}",
            user("p1"),
            said("pkg/mod.py compiles."),
            status("\"met\":true,\"sentinel\":true")
        );
        let words = Some("pkg/mod.py compiles.");
        assert!(!turn_written(before.as_bytes(), words, Some("p2")));
        let half = format!("{before}{}", user("p2"));
        assert!(
            !turn_written(half.as_bytes(), words, Some("p2")),
            "the message not yet"
        );
        let whole = format!("{half}{}", said("pkg/mod.py compiles."));
        assert!(turn_written(whole.as_bytes(), words, Some("p2")));
        // Without a prompt id (an older Claude Code), the message alone, as before.
        assert!(turn_written(before.as_bytes(), words, None));
        assert!(turn_written(half.as_bytes(), None, Some("p2")));
    }

    const SET: &str = "\"met\":false,\"sentinel\":true,\"condition\":\"a.py compiles\"";
    const CLEARED: &str = "\"met\":true,\"sentinel\":true,\"condition\":\"a.py compiles\"";
    const FAILED: &str = "\"met\":false,\"failed\":true,\"reason\":\"cannot\"";
    const MET: &str =
        "\"met\":true,\"condition\":\"a.py compiles\",\"reason\":\"looks fine\",\"iterations\":1";

    fn at(t: &str, prompt: Option<&str>, seen: u64) -> Goal {
        goal(t.as_bytes(), prompt, seen).unwrap()
    }

    #[test]
    fn a_set_goal_is_active_whatever_the_turn() {
        // The set line comes before the user entry of the `/goal` prompt, as Claude writes it.
        let t = status(SET) + &user("p1");
        let g = at(&t, Some("p1"), 0);
        assert_eq!(g.status, Status::Active);
        assert_eq!(g.condition, "a.py compiles");
        assert_eq!(g.mark, t.len() as u64);
        assert!(g.held());
    }

    #[test]
    fn met_holds_in_its_own_turn_only() {
        let t = status(SET) + &user("p1") + &status(MET);
        let g = at(&t, Some("p1"), 0);
        assert_eq!(g.status, Status::MetThisTurn);
        assert_eq!(g.verdict.as_deref(), Some("looks fine"));
        let later = t.clone() + &user("p2");
        let g = at(&later, Some("p2"), 0);
        assert_eq!(g.status, Status::Over("met in an earlier turn"));
        assert!(!g.held());
        // Already read at a held stop: not honoured again.
        let g = at(&later, Some("p2"), t.len() as u64);
        assert_eq!(g.status, Status::MetThisTurn);
        assert_eq!(g.ignored, Some("met in an earlier turn"));
    }

    #[test]
    fn a_clear_or_impossible_between_turns_holds_nothing() {
        let cleared = status(SET) + &user("p1") + &status(CLEARED) + &user("p2");
        assert_eq!(at(&cleared, Some("p2"), 0).status, Status::Over("cleared"));
        let failed = status(SET) + &user("p1") + &status(FAILED) + &user("p2");
        let g = at(&failed, Some("p2"), 0);
        assert_eq!(g.status, Status::Over("judged impossible"));
        assert_eq!(g.condition, "a.py compiles");
    }

    #[test]
    fn a_release_written_in_the_agents_turn_is_its_claim_of_done() {
        for release in [CLEARED, FAILED] {
            // Appended by a shell command of the turn now ending.
            let t = status(SET) + &user("p1") + &status(release);
            let g = at(&t, Some("p1"), 0);
            assert_eq!(g.status, Status::MetThisTurn, "{release}");
            assert!(g.ignored.is_some());
            // Still not honoured in the next turn: ralph-gate read it at a held stop.
            let next = t.clone() + &user("p2");
            assert_eq!(
                at(&next, Some("p2"), t.len() as u64).status,
                Status::MetThisTurn
            );
            // A later line of the evaluator decides.
            let judged = t + &status("\"met\":false,\"condition\":\"c\",\"reason\":\"no\"");
            let g = at(&judged, Some("p1"), 0);
            assert_eq!(g.status, Status::Active);
            assert_eq!(g.ignored, None);
        }
        // With no prompt id nothing is between turns: a release is never honoured.
        let t = status(SET) + &status(CLEARED);
        assert_eq!(at(&t, None, 0).status, Status::MetThisTurn);
    }

    #[test]
    fn no_goal_and_damaged_lines_are_no_goal() {
        assert_eq!(goal(user("p1").as_bytes(), Some("p1"), 0), None);
        let damaged = "{\"type\":\"attachment\",\"attachment\":{\"type\":\"goal_status\"\n";
        assert_eq!(goal(damaged.as_bytes(), None, 0), None);
        // The words inside a message are not an attachment.
        let quoted = "{\"type\":\"user\",\"message\":{\"content\":\"\\\"goal_status\\\"\"}}\n";
        assert_eq!(goal(quoted.as_bytes(), None, 0), None);
    }
}
