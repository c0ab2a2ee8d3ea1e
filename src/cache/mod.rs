//! The result cache: a gate run's result stored under a key made of everything that decides
//! it (see [`key`]). Same key, same result: a hit costs a lookup, not the gate's time.
//!
//! Correctness first: an entry carries its own key and is written atomically, and anything
//! unreadable is a miss, never a pass. Stored are real exits (pass or fail) and timeouts
//! against the gate's own limit (a gate that timed out on these inputs would again); never
//! a run cut short by a hook's budget, a signal, or a missing tool.

pub mod context;
pub mod key;

use crate::atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Bumped whenever the key's make-up or the entry format changes.
const FORMAT: &str = "ralph-gate-cache-v2";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    pub exit_code: i32,
    /// The run hit the gate's timeout (then `exit_code` means nothing).
    #[serde(default)]
    pub timed_out: bool,
    pub duration_ms: u64,
    pub output: String,
}

pub struct Cache {
    dir: PathBuf,
    limit: u64,
    /// false (`--no-cache`): nothing stored is reused, but fresh results are stored, so the
    /// next run does not serve a verdict older than this one.
    pub read: bool,
}

impl Cache {
    /// The cache of the project at `root` (`root/.ralph/cache`).
    pub fn open(root: &Path, limit: u64) -> Self {
        Self {
            dir: dir(root),
            limit,
            read: true,
        }
    }

    /// The cache for a run of `config`; `fresh` (or `RALPH_GATE_NO_CACHE`) runs every gate
    /// and stores what it finds.
    pub fn for_run(
        config: &crate::config::Config,
        env: &crate::env::Environment,
        fresh: bool,
    ) -> Self {
        Self {
            read: !fresh && !env.no_cache,
            ..Self::open(&config.root, config.settings.cache_limit_bytes)
        }
    }

    /// Where file digests are remembered between runs.
    pub fn digest_index(&self) -> PathBuf {
        self.dir.join("files.tsv")
    }

    /// Where tools' identities (shims' answers, versions) are remembered between runs.
    pub fn tool_store(&self) -> PathBuf {
        self.dir.join("tools.json")
    }

    pub fn get(&self, key: &str) -> Option<Entry> {
        let bytes = std::fs::read(self.entry_path(key)).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.key == key).then_some(entry)
    }

    pub fn put(&self, entry: &Entry) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(entry).expect("entries serialise");
        atomic::write(&self.entry_path(&entry.key), &bytes)?;
        self.evict()
    }

    /// Waits, until `deadline` at the latest, for the right to run `key`: while another
    /// process or thread runs the same key, its result is awaited rather than computed twice.
    pub fn claim(&self, key: &str, deadline: Option<Instant>) -> Option<atomic::Lock> {
        let path = self.dir.join("locks").join(format!("{key}.lock"));
        atomic::lock_until(&path, deadline).ok().flatten()
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir
            .join("entries")
            .join(&key[..2])
            .join(format!("{key}.json"))
    }

    /// Keeps the entries under the size limit, dropping the least recently written first.
    fn evict(&self) -> std::io::Result<()> {
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut total = 0;
        for shard in std::fs::read_dir(self.dir.join("entries"))?.flatten() {
            for e in std::fs::read_dir(shard.path())?.flatten() {
                if let Ok(m) = e.metadata() {
                    total += m.len();
                    entries.push((
                        m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        m.len(),
                        e.path(),
                    ));
                }
            }
        }
        if total <= self.limit {
            return Ok(());
        }
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.limit * 8 / 10 {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
        Ok(())
    }
}

fn dir(root: &Path) -> PathBuf {
    root.join(crate::files::STATE_DIR).join("cache")
}

/// Empties the cache of the project at `root`; returns the bytes freed.
pub fn clear(root: &Path) -> std::io::Result<u64> {
    let dir = dir(root);
    let freed = size_of(&dir);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(freed),
    }
}

fn size_of(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => size_of(&e.path()),
                    _ => e.metadata().map_or(0, |m| m.len()),
                })
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_under_the_wrong_key_or_damaged_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), crate::config::DEFAULT_CACHE_LIMIT_BYTES);
        let key = "ab".repeat(32);
        let entry = Entry {
            key: key.clone(),
            exit_code: 0,
            timed_out: false,
            duration_ms: 5,
            output: "ok".into(),
        };
        cache.put(&entry).unwrap();
        assert_eq!(cache.get(&key), Some(entry.clone()));
        let other = "cd".repeat(32);
        std::fs::create_dir_all(cache.entry_path(&other).parent().unwrap()).unwrap();
        std::fs::copy(cache.entry_path(&key), cache.entry_path(&other)).unwrap();
        assert_eq!(cache.get(&other), None, "an entry stored under another key");
        std::fs::write(
            cache.entry_path(&key),
            &serde_json::to_vec(&entry).unwrap()[..20],
        )
        .unwrap();
        assert_eq!(cache.get(&key), None, "a half-written entry");
    }

    #[test]
    fn eviction_keeps_the_cache_under_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), 10_000);
        for i in 0..50 {
            let key = format!("{i:02}{}", "0".repeat(62));
            cache
                .put(&Entry {
                    key,
                    exit_code: 0,
                    timed_out: false,
                    duration_ms: 1,
                    output: "x".repeat(1000),
                })
                .unwrap();
        }
        assert!(size_of(&dir.path().join(".ralph/cache/entries")) <= 10_000);
        assert!(
            cache.get(&format!("49{}", "0".repeat(62))).is_some(),
            "the newest entry stays"
        );
    }
}
