//! Codex goals: `$CODEX_HOME/goals_1.sqlite`, table `thread_goals`, one row per thread (the
//! Stop payload's `session_id`), `status` in `active|paused|blocked|usage_limited|
//! budget_limited|complete`. The model completes a goal itself (`update_goal`); a goal
//! completed at or after the start of the turn now ending (its `task_started` line in the
//! rollout) was completed in this turn.
//!
//! The database is a file the agent can write, so a status that would end the hold (paused,
//! blocked, out of budget, completed in an earlier turn) is honoured only when it was set
//! after ralph-gate last held the goal and before the turn now ending began: between turns,
//! where the user's own `/goal pause` lands. One set during the agent's turn holds the stop
//! to the gates (see [`super::held`]).

use super::{line_at, Goal, Status};
use memchr::memmem;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub const DATABASE: &str = "goals_1.sqlite";

/// Codex's home: `CODEX_HOME` when set (Codex passes it to hooks only then), else the folder
/// that holds the rollout's `sessions/`, else `~/.codex`.
pub fn home(env: Option<&Path>, rollout: Option<&Path>, user: Option<&Path>) -> Option<PathBuf> {
    if let Some(h) = env {
        return Some(h.to_path_buf());
    }
    let from_rollout = rollout.and_then(|r| {
        r.ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "sessions"))
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    });
    from_rollout.or_else(|| user.map(|h| h.join(".codex")))
}

/// A stop's turn: the thread (the payload's `session_id`), the turn now ending and the
/// rollout that records when it began.
pub struct Turn<'a> {
    pub thread: &'a str,
    pub turn: Option<&'a str>,
    pub rollout: Option<&'a Path>,
}

/// The goal of the stop's thread, judged for its turn, where `seen` is when ralph-gate last
/// held it (milliseconds; 0: never).
pub fn read(home: &Path, at: &Turn<'_>, seen: u64) -> Result<Option<Goal>, super::ReadError> {
    let db = home.join(DATABASE);
    if !db.exists() || at.thread.is_empty() {
        return Ok(None);
    }
    let row = row(&db, at.thread).map_err(|source| super::ReadError::Database {
        path: db.clone(),
        source,
    })?;
    let Some(row) = row else {
        return Ok(None);
    };
    let started = at
        .turn
        .zip(at.rollout)
        .and_then(|(t, r)| turn_started_ms(r, t));
    let (status, trusted) = status(&row.status, row.updated_at_ms, started, seen as i64);
    Ok(Some(Goal {
        condition: row.objective,
        mark: now_ms(),
        ..super::held(status, trusted)
    }))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

struct Row {
    objective: String,
    status: String,
    updated_at_ms: i64,
}

fn row(db: &Path, thread: &str) -> rusqlite::Result<Option<Row>> {
    // Read-only, and never waiting long on Codex's own writer.
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_millis(500))?;
    conn.query_row(
        "SELECT objective, status, updated_at_ms FROM thread_goals WHERE thread_id = ?1",
        [thread],
        |r| {
            Ok(Row {
                objective: r.get(0)?,
                status: r.get(1)?,
                updated_at_ms: r.get(2)?,
            })
        },
    )
    .optional()
}

/// Pure: where a goal of `status`, last changed at `updated_ms`, stands for a turn that
/// began at `turn_started_ms` (unknown: a completed goal is held, as its turn cannot be
/// told), and whether a status that ends the hold was set between `seen_ms` and that start.
pub fn status(
    status: &str,
    updated_ms: i64,
    turn_started_ms: Option<i64>,
    seen_ms: i64,
) -> (Status, bool) {
    let between_turns = turn_started_ms.is_some_and(|t| seen_ms <= updated_ms && updated_ms < t);
    let s = match status {
        "active" => Status::Active,
        "complete" if turn_started_ms.is_none_or(|t| updated_ms >= t) => Status::MetThisTurn,
        "complete" => Status::Over("completed in an earlier turn"),
        "paused" => Status::Over("paused"),
        "blocked" => Status::Over("blocked"),
        "usage_limited" => Status::Over("out of usage"),
        "budget_limited" => Status::Over("out of budget"),
        _ => Status::Over("in a state this version does not know"),
    };
    (s, between_turns)
}

/// When `turn` began, in milliseconds: its `task_started` line in the rollout (`started_at`
/// is in whole seconds, rounded down, so a goal completed in that second counts as this
/// turn's).
fn turn_started_ms(rollout: &Path, turn: &str) -> Option<i64> {
    let bytes = std::fs::read(rollout).ok()?;
    let needle = serde_json::to_string(turn).ok()?;
    memmem::find_iter(&bytes, needle.as_bytes()).find_map(|hit| {
        let v: Value = serde_json::from_slice(line_at(&bytes, hit).1).ok()?;
        let p = &v["payload"];
        (p["type"] == "task_started" && p["turn_id"].as_str() == Some(turn))
            .then(|| p["started_at"].as_i64())
            .flatten()
            .map(|s| s * 1000)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_active_and_complete_in_this_turn_hold() {
        assert_eq!(status("active", 0, None, 0).0, Status::Active);
        assert_eq!(
            status("complete", 5_000, Some(4_000), 0).0,
            Status::MetThisTurn
        );
        assert_eq!(status("complete", 5_000, None, 0).0, Status::MetThisTurn);
        let (s, trusted) = status("complete", 3_000, Some(4_000), 0);
        assert!(!super::super::held(s, trusted).held());
        for s in [
            "paused",
            "blocked",
            "usage_limited",
            "budget_limited",
            "new",
        ] {
            let (status, trusted) = status(s, 3_000, Some(4_000), 1_000);
            assert!(matches!(status, Status::Over(_)), "{s}");
            assert!(trusted, "{s}: set between turns");
        }
    }

    #[test]
    fn a_status_the_agent_could_have_set_in_its_turn_holds_the_stop() {
        // Paused during the turn now ending, or with a time from before ralph-gate last
        // held the goal: the agent's own write, held to the gates.
        for (updated, seen) in [(4_500, 0), (2_000, 3_000)] {
            let (s, trusted) = status("paused", updated, Some(4_000), seen);
            assert!(!trusted, "{updated} {seen}");
            let g = super::super::held(s, trusted);
            assert_eq!(g.status, Status::MetThisTurn);
            assert_eq!(g.ignored, Some("paused"));
        }
        // Completed in an earlier turn, before ralph-gate last held it: a backdated write.
        let (s, trusted) = status("complete", 2_000, Some(4_000), 3_000);
        assert_eq!(super::super::held(s, trusted).status, Status::MetThisTurn);
        // With no turn start nothing is between turns.
        assert!(!status("paused", 2_000, None, 0).1);
    }

    #[test]
    fn the_home_is_the_variable_else_the_rollouts_else_the_users() {
        let r = Path::new("/h/c/sessions/2026/11/24/rollout-1.jsonl");
        assert_eq!(
            home(Some(Path::new("/x")), Some(r), None),
            Some("/x".into())
        );
        assert_eq!(home(None, Some(r), None), Some("/h/c".into()));
        assert_eq!(
            home(None, None, Some(Path::new("/home/u"))),
            Some("/home/u/.codex".into())
        );
    }

    #[test]
    fn a_goal_is_read_from_the_database_and_its_turn_from_the_rollout() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join(DATABASE)).unwrap();
        conn.execute_batch(
            "CREATE TABLE thread_goals (thread_id TEXT PRIMARY KEY NOT NULL, goal_id TEXT NOT NULL, objective TEXT NOT NULL, status TEXT NOT NULL, token_budget INTEGER, tokens_used INTEGER NOT NULL DEFAULT 0, time_used_seconds INTEGER NOT NULL DEFAULT 0, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);
             INSERT INTO thread_goals VALUES ('t1', 'g', 'a.py compiles', 'complete', NULL, 0, 0, 1000, 5500);",
        )
        .unwrap();
        drop(conn);
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(
            &rollout,
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\",\"turn_id\":\"u1\",\"started_at\":5}}\n{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\",\"turn_id\":\"u2\",\"started_at\":9}}\n",
        )
        .unwrap();
        let turn = |thread, turn| Turn {
            thread,
            turn,
            rollout: Some(&rollout),
        };
        let g = read(dir.path(), &turn("t1", Some("u1")), 0)
            .unwrap()
            .unwrap();
        assert_eq!(g.condition, "a.py compiles");
        assert_eq!(g.status, Status::MetThisTurn);
        let g = read(dir.path(), &turn("t1", Some("u2")), 0)
            .unwrap()
            .unwrap();
        assert_eq!(g.status, Status::Over("completed in an earlier turn"));
        // Held at a stop after it was completed: the completion is not honoured again.
        let g = read(dir.path(), &turn("t1", Some("u2")), 6_000)
            .unwrap()
            .unwrap();
        assert_eq!(g.status, Status::MetThisTurn);
        assert_eq!(read(dir.path(), &turn("other", None), 0).unwrap(), None);
        std::fs::write(dir.path().join(DATABASE), "not a database").unwrap();
        assert!(read(dir.path(), &turn("t1", None), 0).is_err());
    }
}
