//! `.ralph/journal.jsonl`: one JSON line per stop decision and per loop event (start, cancel,
//! approve, a state file deleted or unreadable). `status`, `dash` and `doctor` read it back
//! through the same types it is written with, so a renamed field is a compile error, and
//! what an agent did to get out of a loop stays visible.

use ralph_base::agent::Agent;
use ralph_base::agent::TextSource;
use ralph_base::state::Layout;
use serde::{Deserialize, Serialize};

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub time: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What a line records; `event` names it in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    /// A stop decision.
    Stop(Box<Stop>),
    /// `loop start`.
    Start(LoopEvent),
    /// `loop cancel`, or the dashboard's cancel.
    Cancel(LoopEvent),
    /// `loop approve`: a person accepted changed stop gates.
    Approve(LoopEvent),
    /// A pinned loop's state file disappeared without ralph-gate ending it.
    StateDeleted(LoopEvent),
    /// A loop's state file could not be read at a stop.
    StateUnreadable(LoopEvent),
    /// A command only a person may run while a loop exists (`loop start`, a hook called by
    /// hand, a stop during the agent's own shell command) was refused.
    Refused(LoopEvent),
    /// A shell command of the agent changed what decides the loop's end; it was put back.
    Restored(LoopEvent),
    /// The session's goal was cleared, paused, judged impossible or met in an earlier turn:
    /// ralph-gate's loop for it ended.
    GoalOver(LoopEvent),
    /// A held goal's turn ended on the agent's cap on refusals with stop gates failing; the
    /// session's next prompt is told (`hook user-prompt-submit`).
    GoalCapped(LoopEvent),
    /// One iteration of `loop run`: a fresh agent process, then the stop gates.
    Iteration(Box<Iteration>),
    /// `loop run` ended without completing (a budget spent, interrupted, the agent gone).
    RunEnded(LoopEvent),
}

impl Entry {
    /// The event's name as written (`stop`, `start`, `state_deleted`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Entry::Stop(_) => "stop",
            Entry::Start(_) => "start",
            Entry::Cancel(_) => "cancel",
            Entry::Approve(_) => "approve",
            Entry::StateDeleted(_) => "state_deleted",
            Entry::StateUnreadable(_) => "state_unreadable",
            Entry::Refused(_) => "refused",
            Entry::Restored(_) => "restored",
            Entry::GoalOver(_) => "goal_over",
            Entry::GoalCapped(_) => "goal_capped",
            Entry::Iteration(_) => "iteration",
            Entry::RunEnded(_) => "run_ended",
        }
    }

    /// The loop file the line is about (empty for a stop outside any loop).
    pub fn loop_file(&self) -> &str {
        match self {
            Entry::Stop(s) => &s.loop_file,
            Entry::Start(e)
            | Entry::Cancel(e)
            | Entry::Approve(e)
            | Entry::StateDeleted(e)
            | Entry::StateUnreadable(e)
            | Entry::Refused(e)
            | Entry::Restored(e)
            | Entry::GoalOver(e)
            | Entry::GoalCapped(e)
            | Entry::RunEnded(e) => &e.loop_file,
            Entry::Iteration(i) => &i.loop_file,
        }
    }
}

/// One `loop run` iteration: the agent process and what the stop gates said after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub agent: Agent,
    pub loop_file: String,
    pub iteration: u64,
    /// When the agent's process started (the line's own time is when it was judged).
    #[serde(default)]
    pub started: String,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The agent process's exit code (`None`: ended by a signal).
    pub exit: Option<i32>,
    pub timed_out: bool,
    pub outcome: Outcome,
    pub failing: Vec<String>,
    pub why: String,
}

/// A loop event that is not a stop decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopEvent {
    /// Who did it: `terminal`, or `session <id>` when run from an agent's session.
    pub who: String,
    #[serde(default)]
    pub session: String,
    #[serde(default)]
    pub loop_file: String,
    #[serde(default)]
    pub why: String,
}

impl LoopEvent {
    pub fn new(who: impl Into<String>, loop_file: &str, why: impl Into<String>) -> Self {
        Self {
            who: who.into(),
            session: String::new(),
            loop_file: loop_file.to_string(),
            why: why.into(),
        }
    }
}

/// How a stop leaves its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Promise made and every gate passes: the loop ends.
    Completed,
    /// The iteration limit is reached: the loop ends unfinished.
    LimitReached,
    /// Nothing changed for too many stops: the loop ends as stuck.
    Stuck,
    /// The promise was made but gates fail: refused, the loop goes on.
    PromiseRefused,
    /// No promise yet: the loop goes on.
    Continue,
    /// The session's own goal (`/goal`) claimed done while stop gates fail: refused.
    GoalRefused,
    /// The session's goal is still active and every stop gate passes: let through, and the
    /// goal is still held (its own judge decides whether the session goes on).
    GoalGoesOn,
}

/// Whether a stop was let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Block,
    Allow,
}

/// One stop decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub agent: Agent,
    /// Refusals in a row the agent allows before it ends the turn anyway (0: none known).
    pub block_cap: u32,
    pub session: String,
    pub loop_file: String,
    pub iteration: u64,
    pub promise_expected: Option<String>,
    pub promise_seen: Option<String>,
    pub promise_source: TextSource,
    pub stop_hook_active: bool,
    pub unchanged_stops: u32,
    pub blocks_in_a_row: u32,
    /// How the gates in force compare with the loop's pin (empty outside a loop).
    pub pin: String,
    pub gates: Vec<Gate>,
    pub decision: Decision,
    pub outcome: Outcome,
    pub why: String,
    /// Tampering and other things a person should know about this stop.
    pub notes: Vec<String>,
    /// A goal's loop: the agent's judge's last reason, as recorded (Claude Code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_verdict: Option<String>,
}

impl Stop {
    /// How many of the stop's gates counted as failing.
    pub fn failing(&self) -> usize {
        self.gates.iter().filter(|g| g.failing).count()
    }
}

/// One gate's result at a stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    pub gate: String,
    pub status: String,
    pub failing: bool,
    /// u64, not u128: serde cannot read a u128 back inside a tagged, flattened line.
    pub duration_ms: u64,
    pub files: usize,
}

impl Gate {
    pub fn of(r: &ralph_runner::runner::GateResult, ci: bool) -> Self {
        Self {
            gate: r.name.clone(),
            status: r.status.label().to_string(),
            failing: r.counts_as_failure(ci),
            duration_ms: u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
            files: r.files,
        }
    }
}

/// Appends one line, stamped now, under the journal's lock.
pub fn append(layout: &Layout, entry: Entry) -> std::io::Result<()> {
    layout.ignore_self();
    let line = Line { time: now(), entry };
    let text = serde_json::to_string(&line).expect("journal lines serialise");
    ralph_base::atomic::append_line(&layout.journal(), &layout.lock("journal"), &text)
}

/// Every line that can be read, oldest first; a line from another version or a damaged one
/// is skipped.
pub fn read(layout: &Layout) -> Vec<Line> {
    let text = std::fs::read_to_string(layout.journal()).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Who runs this command: an agent's session when Claude Code (or another agent) started it,
/// else a person at a terminal, else a script.
pub fn who(env: &ralph_base::env::Environment) -> String {
    use std::io::IsTerminal;
    match &env.claude_session_id {
        Some(s) => format!("session {s}"),
        None if std::io::stdin().is_terminal() => "terminal".into(),
        None => "script (no terminal, no agent session)".into(),
    }
}

pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop() -> Stop {
        Stop {
            agent: Agent::Codex,
            block_cap: 8,
            session: "s".into(),
            loop_file: "ralph-loop.local.md".into(),
            iteration: 3,
            promise_expected: Some("DONE".into()),
            promise_seen: None,
            promise_source: TextSource::Transcript,
            stop_hook_active: true,
            unchanged_stops: 1,
            blocks_in_a_row: 2,
            pin: "same".into(),
            gates: vec![Gate {
                gate: "tsc".into(),
                status: "FAIL".into(),
                failing: true,
                duration_ms: 12,
                files: 3,
            }],
            decision: Decision::Block,
            outcome: Outcome::Continue,
            why: "w".into(),
            notes: vec!["n".into()],
            goal_verdict: None,
        }
    }

    #[test]
    fn lines_read_back_as_written() {
        let lines = [
            Line {
                time: "t".into(),
                entry: Entry::Stop(Box::new(stop())),
            },
            Line {
                time: "t".into(),
                entry: Entry::StateDeleted(LoopEvent::new("terminal", "f", "why")),
            },
        ];
        for line in lines {
            let text = serde_json::to_string(&line).unwrap();
            assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line, "{text}");
        }
    }

    #[test]
    fn the_file_format_is_stable() {
        // Journals outlive versions: the field names and order are the format.
        let line = Line {
            time: "t".into(),
            entry: Entry::Cancel(LoopEvent::new("terminal", "f", "cancelled")),
        };
        assert_eq!(
            serde_json::to_string(&line).unwrap(),
            r#"{"time":"t","event":"cancel","who":"terminal","session":"","loop_file":"f","why":"cancelled"}"#
        );
        let text = serde_json::to_string(&Line {
            time: "t".into(),
            entry: Entry::Stop(Box::new(stop())),
        })
        .unwrap();
        assert!(
            text.starts_with(r#"{"time":"t","event":"stop","agent":"codex","block_cap":8,"session":"s","loop_file":"ralph-loop.local.md","iteration":3,"promise_expected":"DONE","promise_seen":null,"promise_source":"transcript","stop_hook_active":true"#),
            "{text}"
        );
        assert!(
            text.ends_with(r#""decision":"block","outcome":"continue","why":"w","notes":["n"]}"#)
        );
    }
}
