//! `.ralph/journal.jsonl`: one JSON line per stop decision and per loop event (start, cancel,
//! approve, a state file deleted or unreadable, tampering noticed). `status`, `dash` and
//! `doctor` read it, so what an agent did to get out of a loop stays visible.

use crate::atomic;
use crate::files;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub fn path(ws: &Path) -> PathBuf {
    ws.join(files::STATE_DIR).join("journal.jsonl")
}

/// Appends one line (any serialisable entry) under the journal's lock.
pub fn append<T: Serialize>(ws: &Path, entry: &T) -> std::io::Result<()> {
    files::ignore_own_state(ws);
    let line = serde_json::to_string(entry).expect("journal entries serialise");
    atomic::append_line(
        &path(ws),
        &ws.join(files::STATE_DIR).join("locks/journal.lock"),
        &line,
    )
}

/// A loop event that is not a stop decision.
#[derive(Debug, Serialize)]
pub struct Event<'a> {
    pub time: String,
    pub event: &'static str,
    /// Who did it: `terminal`, or `session <id>` when run from an agent's session.
    pub who: String,
    pub session: &'a str,
    pub loop_file: &'a str,
    pub why: String,
}

impl<'a> Event<'a> {
    pub fn new(event: &'static str, who: String, loop_file: &'a str, why: String) -> Self {
        Self {
            time: now(),
            event,
            who,
            session: "",
            loop_file,
            why,
        }
    }
}

/// Who runs this command: an agent's session when Claude Code (or another agent) started it,
/// else a person at a terminal, else a script.
pub fn who(env: &crate::env::Environment) -> String {
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
