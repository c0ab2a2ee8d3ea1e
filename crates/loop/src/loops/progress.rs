//! "Has anything changed since the last stop?": the working tree and the failures, reduced to
//! a fingerprint, and how many stops in a row it stayed the same.

use ralph_runner::runner::GateResult;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Progress {
    pub fingerprint: String,
    pub unchanged_stops: u32,
    /// Stops refused in a row while nothing changed and the agent was already continuing
    /// because of a refusal: the count the agent's own block cap is likely to be counting.
    #[serde(default)]
    pub blocks_in_a_row: u32,
}

/// A progress record that exists but cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct ReadError {
    path: std::path::PathBuf,
    #[source]
    source: serde_json::Error,
}

/// The record of the last stop; `Err` when there is one that cannot be read.
pub fn read(path: &Path) -> Result<Option<Progress>, ReadError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|source| ReadError {
                path: path.to_path_buf(),
                source,
            }),
        Err(_) => Ok(None),
    }
}

/// This stop's counts, from the last stop's record.
pub fn next(previous: Option<&Progress>, fingerprint: String, continuing: bool) -> Progress {
    let same = previous.is_some_and(|p| p.fingerprint == fingerprint);
    Progress {
        unchanged_stops: match previous {
            Some(p) if same => p.unchanged_stops.saturating_add(1),
            _ => 0,
        },
        blocks_in_a_row: match previous {
            Some(p) if same && continuing => p.blocks_in_a_row.saturating_add(1),
            _ => 1,
        },
        fingerprint,
    }
}

/// What "no progress" compares: the work tree (its git tree, untracked files in it) and which
/// gates fail with what output. ralph-gate's own state (`.ralph/`, the loop's state file) is
/// left out: it changes at every stop by design.
pub fn fingerprint(ws: &Path, results: &[GateResult], ci: bool) -> String {
    let mut h = blake3::Hasher::new();
    // The work tree as a git tree: untracked files in it, the loop's own files and tools'
    // caches out, and nothing git can be told to overlook (assume-unchanged, skip-worktree,
    // a filter, a file system monitor) left out of it.
    if let Ok(tree) = ralph_base::snapshot::work_tree(ws) {
        h.update(tree.as_bytes());
    }
    for r in results.iter().filter(|r| r.counts_as_failure(ci)) {
        h.update(r.name.as_bytes());
        h.update(ralph_base::text::strip_ansi(&r.output).as_bytes());
    }
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reset_on_change_and_blocks_need_a_refusal_before() {
        let first = next(None, "a".into(), false);
        assert_eq!((first.unchanged_stops, first.blocks_in_a_row), (0, 1));
        let second = next(Some(&first), "a".into(), true);
        assert_eq!((second.unchanged_stops, second.blocks_in_a_row), (1, 2));
        let fresh_turn = next(Some(&second), "a".into(), false);
        assert_eq!(
            (fresh_turn.unchanged_stops, fresh_turn.blocks_in_a_row),
            (2, 1)
        );
        let changed = next(Some(&second), "b".into(), true);
        assert_eq!((changed.unchanged_stops, changed.blocks_in_a_row), (0, 1));
    }
}
