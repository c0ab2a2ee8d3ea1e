//! The agents' own loops: Claude Code's `/goal` and Codex goals. Neither runs a check: a
//! model judges the goal from the transcript (Claude Code) or the model marks it complete
//! itself (Codex). ralph-gate holds a goal like a loop of its own (`hook::stop`): while the
//! goal is active, or was met in the turn now ending, a stop is let through only when every
//! stop gate passes.
//!
//! This module only reads what the agent recorded: [`claude`] the transcript's
//! `goal_status` lines, [`codex`] the goals database and the rollout. native-loops.md.

pub mod claude;
pub mod codex;

use std::path::PathBuf;

/// Where a stop's goal is recorded, as the agent's payload says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Claude Code's transcript, and the id of the prompt whose turn is ending (constant
    /// across the continuations of refused stops).
    Claude {
        transcript: PathBuf,
        prompt_id: Option<String>,
        /// The payload's `last_assistant_message`: the transcript is read once it holds it.
        last_message: Option<String>,
    },
    /// Codex's goals database (in its home, see [`codex::home`]), the thread (the payload's
    /// `session_id`), the turn now ending and the rollout that records when it began.
    Codex {
        thread: String,
        turn: Option<String>,
        rollout: Option<PathBuf>,
    },
}

/// A session's goal, as last recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Goal {
    pub condition: String,
    pub status: Status,
    /// The evaluator's last reason, when the agent has one (Claude Code).
    pub verdict: Option<String>,
    /// How far the record was read (Claude Code: transcript bytes; Codex: the time, in
    /// milliseconds): kept with the goal's loop as the `seen` of its next stop.
    pub mark: u64,
    /// Why the record says the goal is over, when that was not honoured (written during the
    /// agent's turn, or already seen at a held stop).
    pub ignored: Option<&'static str>,
}

/// Where a goal stands for the stop now being judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Set and not yet met: every stop is held to the gates.
    Active,
    /// Met (judged so, or marked complete) in the turn now ending: the stop is the goal's
    /// claim of done, held to the gates.
    MetThisTurn,
    /// Holds nothing: cleared or paused by the user, judged impossible, out of budget, or met
    /// in an earlier turn. The words say which.
    Over(&'static str),
}

/// A goal of `status` as recorded, where `trusted` says whether a record that ends it was
/// written where only the agent's CLI or the user could have (see [`claude`], [`codex`]).
/// One that was not is the agent's own claim of done: held to the gates like a goal met in
/// this turn, so the goal's loop still ends once they pass, and never before.
fn held(status: Status, trusted: bool) -> Goal {
    let (status, ignored) = match status {
        Status::Over(why) if !trusted => (Status::MetThisTurn, Some(why)),
        s => (s, None),
    };
    Goal {
        condition: String::new(),
        status,
        verdict: None,
        mark: 0,
        ignored,
    }
}

impl Goal {
    /// Whether this stop is held to the gates.
    pub fn held(&self) -> bool {
        matches!(self.status, Status::Active | Status::MetThisTurn)
    }
}

/// The line of a JSONL file around byte `i`: its start offset and its bytes.
fn line_at(bytes: &[u8], i: usize) -> (usize, &[u8]) {
    let start = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |n| n + 1);
    let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
    (start, &bytes[start..end])
}

/// Why what records a session's goal could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Claude Code's transcript.
    #[error("{}: {source}", path.display())]
    Transcript {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Codex's goals database.
    #[error("{}: {source}", path.display())]
    Database {
        path: std::path::PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// The goal of the session a stop belongs to; `None` when it has none, `Err` when what
/// records it cannot be read. `seen` is the goal's mark at its last held stop (0: never held).
pub fn read(
    source: &Source,
    env: &ralph_base::env::Environment,
    seen: u64,
) -> Result<Option<Goal>, ReadError> {
    match source {
        Source::Claude {
            transcript,
            prompt_id,
            last_message,
        } => {
            let bytes =
                claude::read_settled(transcript, last_message.as_deref(), prompt_id.as_deref())
                    .map_err(|source| ReadError::Transcript {
                        path: transcript.clone(),
                        source,
                    })?;
            Ok(bytes.and_then(|b| claude::goal(&b, prompt_id.as_deref(), seen)))
        }
        Source::Codex {
            thread,
            turn,
            rollout,
        } => {
            let home = codex::home(
                env.codex_home.as_deref(),
                rollout.as_deref(),
                env.home.as_deref(),
            );
            match home {
                Some(home) => codex::read(
                    &home,
                    &codex::Turn {
                        thread,
                        turn: turn.as_deref(),
                        rollout: rollout.as_deref(),
                    },
                    seen,
                ),
                None => Ok(None),
            }
        }
    }
}
