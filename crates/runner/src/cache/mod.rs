//! The result cache: a gate run's result stored under a key made of everything that decides
//! it (see [`key`]). Same key, same result: a hit costs a lookup, not the gate's time.
//!
//! Correctness first: an entry carries its own key and is written atomically, and anything
//! unreadable is a miss, never a pass. Stored are real exits (pass or fail) and timeouts
//! against the gate's own limit (a gate that timed out on these inputs would again); never
//! a run cut short by a hook's budget, a signal, or a missing tool.

pub mod context;
pub mod key;
pub mod readers;
pub mod remote;

use ralph_base::atomic;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Bumped whenever the key's make-up or the entry format changes.
const FORMAT: &str = "ralph-gate-cache-v3";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    /// The checkout that ran it (for `cache stats`: where a hit came from). Not part of the
    /// key: the same inputs give the same result wherever the checkout lives.
    #[serde(default)]
    pub origin: Option<String>,
    pub exit_code: i32,
    /// The run hit the gate's timeout (then `exit_code` means nothing).
    #[serde(default)]
    pub timed_out: bool,
    pub duration_ms: u64,
    pub output: String,
    /// What the run read, as it was (see [`crate::observe`]): the entry serves only while
    /// every one is unchanged. `None`: the run was not observed; the key alone decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Vec<crate::observe::Input>>,
    /// What its test runner said of the project's files (relative to the root): served
    /// with the result, as the run that made it said it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub of_tests: Vec<(String, crate::observe::OfTests)>,
}

pub struct Cache {
    /// Stored results: shared by every worktree of the repository, or this checkout's own.
    dir: PathBuf,
    /// This checkout's own state (file stamps, tool answers): paths and inodes are per checkout.
    local: PathBuf,
    /// This checkout's root, recorded as the origin of what it stores.
    origin: String,
    limit: u64,
    stats: std::sync::Mutex<RunStats>,
    remote: Option<remote::Remote>,
    /// false (`--no-cache`, a fresh verification): nothing stored is reused.
    pub read: bool,
    /// false (`--no-cache` without a remote cache): fresh results are not stored, and what
    /// was stored under their keys is removed, so the next run does not serve a verdict
    /// older than this one. true: fresh results are stored (and so their runs observed).
    pub store: bool,
    /// Whether a result not stored removes what was stored under its key (`--no-cache`).
    pub forget: bool,
}

impl Cache {
    /// The cache of the project at `root` (`root/.ralph/cache`).
    pub fn open(root: &Path, limit: u64) -> Self {
        Self {
            dir: dir(root),
            local: dir(root),
            origin: root.display().to_string(),
            limit,
            stats: std::sync::Mutex::new(RunStats::default()),
            remote: None,
            read: true,
            store: true,
            forget: false,
        }
    }

    /// Where stored results live for the project at `root`: under the repository's common git
    /// folder when `share` (every worktree of it then shares them), else `.ralph/cache`.
    pub fn results_dir(root: &Path, share: bool) -> PathBuf {
        match ralph_base::git::common_dir(root).filter(|_| share) {
            Some(common) => common.join("ralph-gate").join("cache"),
            None => dir(root),
        }
    }

    /// The cache for a run of `config` as `reuse` allows (`RALPH_GATE_NO_CACHE` is
    /// [`Reuse::Off`]). Without a remote cache, `Off` stores nothing; with one, fresh results
    /// are stored there too, so the shared cache never keeps a verdict older than this one.
    pub fn for_run(
        config: &ralph_config::Config,
        env: &ralph_base::env::Environment,
        reuse: Reuse,
    ) -> Self {
        let reuse = match reuse {
            Reuse::Apart => Reuse::Apart,
            _ if env.no_cache => Reuse::Off,
            _ => reuse,
        };
        let url = env
            .remote_cache
            .clone()
            .or_else(|| config.settings.remote_cache.clone())
            .filter(|_| reuse != Reuse::Apart);
        let remote = url.and_then(|u| {
            match remote::Remote::open(&u, config.settings.remote_write, &env.aws) {
                Ok(r) => Some(r),
                Err(e) => {
                    #[allow(clippy::print_stderr)]
                    {
                        eprintln!("ralph-gate: {e}; running without it");
                    }
                    None
                }
            }
        });
        Self {
            read: reuse == Reuse::Everything,
            store: !matches!(reuse, Reuse::Off | Reuse::Apart) || remote.is_some(),
            forget: reuse == Reuse::Off,
            dir: Self::results_dir(&config.root, config.settings.share_cache),
            remote,
            ..Self::open(&config.root, config.settings.cache_limit_bytes)
        }
    }

    /// Where file digests are remembered between runs.
    pub fn digest_index(&self) -> PathBuf {
        self.local.join("files.tsv")
    }

    /// Where tools' identities (shims' answers, versions) are remembered between runs.
    pub fn tool_store(&self) -> PathBuf {
        self.local.join("tools.json")
    }

    pub fn get(&self, key: &str) -> Option<Entry> {
        let local = std::fs::read(self.entry_path(key))
            .ok()
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
            .filter(|e| e.key == key);
        let entry = match local {
            Some(e) => e,
            None => {
                let remote = self.remote.as_ref()?;
                let e = remote.get(key)?;
                // Kept here too: the next run of this checkout is a local hit.
                if let Ok(bytes) = serde_json::to_vec(&e) {
                    let _ = atomic::write(&self.entry_path(key), &bytes);
                }
                let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
                *st.hits
                    .entry(format!("remote {}", remote.shown))
                    .or_default() += 1;
                return Some(e);
            }
        };
        let from = match &entry.origin {
            Some(o) if *o != self.origin => o.clone(),
            _ => THIS.to_string(),
        };
        let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        *st.hits.entry(from).or_default() += 1;
        Some(entry)
    }

    pub fn put(&self, entry: &Entry) -> std::io::Result<()> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).misses += 1;
        let entry = Entry {
            origin: Some(self.origin.clone()),
            ..entry.clone()
        };
        let bytes = serde_json::to_vec(&entry).expect("entries serialise");
        atomic::write(&self.entry_path(&entry.key), &bytes)?;
        if let Some(r) = &self.remote {
            r.put(&entry);
        }
        self.evict()
    }

    /// Removes what is stored locally under `key` (a run that stores nothing has just
    /// decided it afresh).
    pub fn forget(&self, key: &str) {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).misses += 1;
        let _ = std::fs::remove_file(self.entry_path(key));
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
    ralph_base::state::Layout::at(root).cache()
}

/// How a hit from this checkout is named in the stats.
pub const THIS: &str = "this checkout";

/// One run's hits (by the checkout that stored them) and misses.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct RunStats {
    pub hits: std::collections::BTreeMap<String, u64>,
    pub misses: u64,
}

impl Cache {
    /// Appends this run's counts to the results folder's `stats.jsonl` (best effort: stats
    /// never fail a run), when the run used the cache at all.
    pub fn record_stats(&self) {
        let st = self.stats.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if st.hits.is_empty() && st.misses == 0 {
            return;
        }
        let line =
            serde_json::json!({"checkout": self.origin, "hits": st.hits, "misses": st.misses});
        let _ = atomic::append_line(
            &self.dir.join("stats.jsonl"),
            &self.dir.join("locks/stats.lock"),
            &line.to_string(),
        );
    }
}

/// What `cache stats` prints.
#[derive(Debug, Serialize)]
pub struct Totals {
    pub dir: String,
    pub shared: bool,
    pub entries: u64,
    pub bytes: u64,
    pub runs: u64,
    pub misses: u64,
    /// Hits by where the result came from, from the point of view of each checkout: "this
    /// checkout", or the path of the worktree that stored it.
    pub hits: std::collections::BTreeMap<String, u64>,
}

/// The totals of the results folder for `root`.
pub fn totals(root: &Path, share: bool) -> Totals {
    let dir = Cache::results_dir(root, share);
    let mut t = Totals {
        dir: dir.display().to_string(),
        shared: dir != self::dir(root),
        entries: 0,
        bytes: 0,
        runs: 0,
        misses: 0,
        hits: std::collections::BTreeMap::new(),
    };
    if let Ok(shards) = std::fs::read_dir(dir.join("entries")) {
        for shard in shards.flatten() {
            for e in std::fs::read_dir(shard.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                t.entries += 1;
                t.bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    let text = std::fs::read_to_string(dir.join("stats.jsonl")).unwrap_or_default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        t.runs += 1;
        t.misses += v["misses"].as_u64().unwrap_or(0);
        let me = v["checkout"].as_str().unwrap_or_default();
        for (from, n) in v["hits"].as_object().into_iter().flatten() {
            let from = if from == THIS || from == me {
                format!("the checkout that stored it ({me})")
            } else if from.starts_with("remote ") {
                from.clone()
            } else {
                format!("another worktree ({from})")
            };
            *t.hits.entry(from).or_default() += n.as_u64().unwrap_or(0);
        }
    }
    t
}

/// Empties the cache of the project at `root` (its own, and the shared one when `share`);
/// returns the bytes freed.
pub fn clear(root: &Path, share: bool) -> std::io::Result<u64> {
    let mut freed = 0;
    for dir in [dir(root), Cache::results_dir(root, share)] {
        freed += size_of(&dir);
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(freed)
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

/// How much of what earlier runs left in `.ralph/` a run may lean on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Stored results, remembered file stamps and tool answers: the everyday run.
    Everything,
    /// Nothing from `.ralph/`: every file is hashed, every tool asked again, every gate run
    /// (the verification that may end a loop, which must not rest on anything the agent
    /// could have written). Fresh results are still stored.
    Nothing,
    /// No result read and nothing stored (`check --no-cache`): runs are not watched for the
    /// files they read (that is only needed to store a result safely), and the stored result
    /// under each run's key is removed, so no later run serves a verdict older than this one.
    /// Keys are made from remembered stamps, as a later run makes them; shim answers are only
    /// guesses, confirmed as in [`Reuse::Nothing`].
    Off,
    /// A run in a checkout of another tree (a loop's start tree, a differential run's): no
    /// result read, none stored and none removed, local or remote. It judges another tree:
    /// the verdicts stored for the work tree are not its to change.
    Apart,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_under_the_wrong_key_or_damaged_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), ralph_config::DEFAULT_CACHE_LIMIT_BYTES);
        let key = "ab".repeat(32);
        let entry = Entry {
            origin: None,
            key: key.clone(),
            exit_code: 0,
            timed_out: false,
            duration_ms: 5,
            output: "ok".into(),
            observed: None,
            of_tests: vec![("data/x.json".into(), crate::observe::OfTests::Read)],
        };
        cache.put(&entry).unwrap();
        let stored = Entry {
            origin: Some(dir.path().display().to_string()),
            ..entry.clone()
        };
        assert_eq!(
            cache.get(&key),
            Some(stored),
            "stored with where it was run"
        );
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
                    origin: None,
                    key,
                    exit_code: 0,
                    timed_out: false,
                    duration_ms: 1,
                    output: "x".repeat(1000),
                    observed: None,
                    of_tests: Vec::new(),
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
