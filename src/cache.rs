//! The result cache: a gate run's result stored under a key made of everything that decides it
//! (gate, command, env, working folder, arguments, config, and the content of its inputs).
//! Same key, same result: a hit costs a lookup, not the gate's time.
//!
//! Correctness first: contents are hashed (mtime and size only spare re-hashing unchanged
//! files), an entry carries its own key and is written atomically, and anything unreadable is
//! a miss, never a pass. Only real exits (pass or fail) are stored: timeouts, signals and
//! skipped tools are not results of the inputs.

use crate::atomic;
use crate::config::Gate;
use crate::plan::Job;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Bumped whenever the key's make-up or the entry format changes.
const FORMAT: &str = "ralph-gate-cache-v1";
pub const DEFAULT_LIMIT_BYTES: u64 = 256 * 1024 * 1024;
/// A file modified this recently may change again within the same mtime tick, so its hash is
/// never remembered (the "racy git" problem).
const RACY: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub key: String,
    pub exit_code: i32,
    pub duration_ms: u64,
    pub output: String,
}

pub struct Cache {
    root: PathBuf,
    dir: PathBuf,
    limit: u64,
    hashes: Mutex<Hashes>,
}

#[derive(Default)]
struct Hashes {
    known: HashMap<Vec<u8>, Stamp>,
    changed: bool,
}

#[derive(Clone, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    inode: u64,
    hash: String,
}

impl Cache {
    /// The cache of the project at `root` (`root/.ralph/cache`).
    pub fn open(root: &Path, limit: u64) -> Self {
        let dir = root.join(crate::files::STATE_DIR).join("cache");
        let known = std::fs::read_to_string(dir.join("files.tsv"))
            .map(|t| parse_index(&t))
            .unwrap_or_default();
        Self {
            root: root.to_path_buf(),
            dir,
            limit,
            hashes: Mutex::new(Hashes {
                known,
                changed: false,
            }),
        }
    }

    /// The cache for a run of `config`, unless turned off by the caller or by
    /// `RALPH_GATE_NO_CACHE`.
    pub fn for_run(
        config: &crate::config::Config,
        env: &crate::env::Environment,
        off: bool,
    ) -> Option<Self> {
        (!off && !env.no_cache).then(|| Self::open(&config.root, config.settings.cache_limit_bytes))
    }

    /// The key of one run, or `None` when an input cannot be read (then nothing is cached).
    pub fn key(
        &self,
        gate: &Gate,
        job: &Job,
        config_digest: &str,
        path_var: Option<&OsStr>,
    ) -> Option<String> {
        let mut h = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(FORMAT.as_bytes());
        field(env!("CARGO_PKG_VERSION").as_bytes());
        field(config_digest.as_bytes());
        field(gate.name.as_bytes());
        field(gate.run.shell_script().as_bytes());
        field(format!("{:?}", gate.scope).as_bytes());
        for (k, v) in &gate.env {
            field(k.as_bytes());
            field(v.as_bytes());
        }
        for p in gate.path.iter().chain(&gate.requires) {
            field(p.as_bytes());
        }
        field(path_var.map_or(&[][..], OsStr::as_bytes));
        field(job.dir.as_os_str().as_bytes());
        // Arguments matter only to a command that reads them: `tsc -p .` gives the same
        // result whichever file's edit triggered it, so those runs share one key.
        use crate::config::template::Placeholder;
        if gate.run.uses(Placeholder::File) || gate.run.uses(Placeholder::Files) {
            for a in &job.args {
                field(a.as_bytes());
            }
        }
        let mut inputs: Vec<&PathBuf> = job.inputs.iter().collect();
        inputs.sort();
        for input in inputs {
            field(input.as_os_str().as_bytes());
            field(self.file_hash(input)?.as_bytes());
        }
        Some(h.finalize().to_hex().to_string())
    }

    fn file_hash(&self, rel: &Path) -> Option<String> {
        let full = self.root.join(rel);
        let meta = std::fs::metadata(&full).ok()?;
        let stamp = |hash: String| Stamp {
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            inode: meta.ino(),
            hash,
        };
        let id = rel.as_os_str().as_bytes().to_vec();
        {
            let hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(known) = hashes.known.get(&id) {
                if *known == stamp(known.hash.clone()) {
                    return Some(known.hash.clone());
                }
            }
        }
        let hash = blake3::hash(&std::fs::read(&full).ok()?)
            .to_hex()
            .to_string();
        let racy = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_none_or(|age| age < RACY);
        if !racy {
            let mut hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
            hashes.known.insert(id, stamp(hash.clone()));
            hashes.changed = true;
        }
        Some(hash)
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
        loop {
            match atomic::try_lock(&path) {
                Ok(Some(lock)) => return Some(lock),
                Ok(None) if deadline.is_none_or(|d| Instant::now() < d) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => return None,
            }
        }
    }

    /// Saves the file-hash index if it learned anything. Concurrent runs may overwrite each
    /// other's index; it only spares work, it never decides a result.
    pub fn save(&self) {
        let hashes = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
        if hashes.changed {
            let _ = atomic::write(
                &self.dir.join("files.tsv"),
                render_index(&hashes.known).as_bytes(),
            );
        }
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

/// Empties the cache of the project at `root`; returns the bytes freed.
pub fn clear(root: &Path) -> std::io::Result<u64> {
    let dir = root.join(crate::files::STATE_DIR).join("cache");
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

/// `size mtime_ns inode hash hex(path)`, one file a line; hex keeps any file name on one line.
fn render_index(known: &HashMap<Vec<u8>, Stamp>) -> String {
    let mut out = String::new();
    for (path, s) in known {
        let hex: String = path.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{hex}\n",
            s.size, s.mtime_ns, s.inode, s.hash
        ));
    }
    out
}

fn parse_index(text: &str) -> HashMap<Vec<u8>, Stamp> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            let stamp = Stamp {
                size: f.next()?.parse().ok()?,
                mtime_ns: f.next()?.parse().ok()?,
                inode: f.next()?.parse().ok()?,
                hash: f.next()?.to_string(),
            };
            let hex = f.next()?;
            let path = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some((path, stamp))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_any_file_name() {
        let mut known = HashMap::new();
        known.insert(
            b"a\tb\nc\xff.py".to_vec(),
            Stamp {
                size: 3,
                mtime_ns: -5,
                inode: 9,
                hash: "ab".into(),
            },
        );
        let back = parse_index(&render_index(&known));
        assert!(back == known);
        assert!(
            parse_index("garbage\nmore\tgarbage\n").is_empty(),
            "a damaged index is ignored"
        );
    }

    #[test]
    fn an_entry_under_the_wrong_key_or_damaged_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), DEFAULT_LIMIT_BYTES);
        let key = "ab".repeat(32);
        let entry = Entry {
            key: key.clone(),
            exit_code: 0,
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
