//! Where a loop's pin is kept besides its state file: under the git folder (`.git/ralph-gate/
//! pins/`), which `rm -rf .ralph`, a commit or a checkout never touch, and which an edit of
//! the state file alone cannot match. Outside git, under the user's state folder.

use super::Record;
use std::path::{Path, PathBuf};

/// A pin copy that exists but cannot be read: tampering, never "no pin".
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Format {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// The tests each stop gate ran, by gate.
pub type StartTests = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// What a start tree's runs are kept as: every stop of every loop on that tree reads it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct KeptStart {
    key: String,
    /// The tests each stop gate ran there.
    #[serde(rename = "gates")]
    pub tests: StartTests,
    /// How the gates that failed on the start tree failed (the baseline's).
    #[serde(default)]
    pub failures: crate::baseline::StartFailures,
    /// The tests that failed, of each gate for which that is known (a record from before
    /// it was kept knows none).
    #[serde(default)]
    pub failed: StartTests,
    /// The runs of each gate that could not start there (none, in an older record).
    #[serde(default)]
    pub unstarted: StartTests,
    /// The project files each test runner's gate read there (none, in an older record: its
    /// reach is then not compared).
    #[serde(default)]
    pub read: StartTests,
    /// What the runners said of the project's files there (none, in an older record).
    #[serde(default)]
    pub said: std::collections::BTreeMap<String, ralph_runner::runner::OfTests>,
}

impl From<crate::differential::StartRuns> for KeptStart {
    fn from(runs: crate::differential::StartRuns) -> Self {
        Self {
            key: String::new(),
            tests: runs.tests,
            failures: runs.failures,
            failed: runs.failed,
            unstarted: runs.unstarted,
            read: runs.read,
            said: runs.said,
        }
    }
}

/// How many start trees' tests are kept: the oldest go first.
const KEPT_START_TESTS: usize = 64;

pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The pin copies of the workspace `layout`, in the folder it names for them.
    pub fn of(layout: &ralph_base::state::Layout) -> Self {
        Self { dir: layout.pins() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, loop_file: &str) -> PathBuf {
        self.dir.join(format!("{loop_file}.json"))
    }

    /// The copy for `loop_file`, when there is one and it can be read. An unreadable copy is
    /// `Err`: the caller treats it as tampering, never as "no pin".
    pub fn read(&self, loop_file: &str) -> Result<Option<Record>, ReadError> {
        let path = self.path(loop_file);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| ReadError::Format { path, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ReadError::Io { path, source }),
        }
    }

    /// The mark that `loop_file` was pinned, holding the loop's start time. It outlives an
    /// edit that removes the copy: a loop once pinned is never pinned anew as if it were new.
    fn mark_path(&self, loop_file: &str) -> PathBuf {
        self.dir.join(format!("{loop_file}.pinned"))
    }

    pub fn write(&self, loop_file: &str, record: &Record) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(record).expect("pins serialise");
        ralph_base::atomic::write(&self.path(loop_file), &bytes)?;
        let started = record.started_at.clone().unwrap_or_default();
        ralph_base::atomic::write(&self.mark_path(loop_file), started.as_bytes())
    }

    /// When `loop_file` was pinned and not ended through ralph-gate: the start time of the
    /// loop it was pinned for.
    pub fn marked(&self, loop_file: &str) -> Option<String> {
        std::fs::read_to_string(self.mark_path(loop_file)).ok()
    }

    /// Forgets the loop's pin: only when the loop ends, or a person starts a new one.
    pub fn remove(&self, loop_file: &str) {
        let _ = std::fs::remove_file(self.path(loop_file));
        let _ = std::fs::remove_file(self.mark_path(loop_file));
    }

    fn tests_path(&self, key: &str) -> PathBuf {
        self.dir.join("start-tests").join(format!("{key}.json"))
    }

    /// What the stop gates' runs on a start tree were, when a stop already took them, read
    /// once. `key` names the tree and the gates ([`super::Record::start_key`]): a tree's
    /// content never changes, so one run serves every stop of every loop that starts on it.
    pub fn kept_start(&self, key: &str) -> Option<KeptStart> {
        let bytes = std::fs::read(self.tests_path(key)).ok()?;
        let kept: KeptStart = serde_json::from_slice(&bytes).ok()?;
        (kept.key == key).then_some(kept)
    }

    pub fn keep_start_tests(&self, key: &str, runs: &KeptStart) {
        let kept = KeptStart {
            key: key.to_string(),
            ..runs.clone()
        };
        let path = self.tests_path(key);
        let Ok(bytes) = serde_json::to_vec(&kept) else {
            return;
        };
        if path
            .parent()
            .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        {
            let _ = ralph_base::atomic::write(&path, &bytes);
            self.prune_start_tests();
        }
    }

    fn prune_start_tests(&self) {
        let Ok(entries) = std::fs::read_dir(self.dir.join("start-tests")) else {
            return;
        };
        let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        kept.sort();
        let extra = kept.len().saturating_sub(KEPT_START_TESTS);
        for (_, old) in kept.into_iter().take(extra) {
            let _ = std::fs::remove_file(old);
        }
    }

    /// Loop files that were pinned and not ended, by their marks or copies.
    pub fn open_loops(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name
                    .strip_suffix(".pinned")
                    .or(name.strip_suffix(".json"))?;
                Some(stem.to_string())
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Loop files with a pin copy: loops that were pinned and not yet ended through ralph-gate.
    pub fn pinned(&self) -> Vec<(String, Record)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<(String, Record)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let loop_file = name.strip_suffix(".json")?.to_string();
                let record = serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
                Some((loop_file, record))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}
