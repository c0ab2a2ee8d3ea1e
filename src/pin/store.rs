//! Where a loop's pin is kept besides its state file: under the git folder (`.git/ralph-gate/
//! pins/`), which `rm -rf .ralph`, a commit or a checkout never touch, and which an edit of
//! the state file alone cannot match. Outside git, under the user's state folder.

use super::Record;
use std::path::{Path, PathBuf};

pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn for_workspace(ws: &Path) -> Self {
        let dir = match crate::files::git_dir(ws) {
            Some(git) => git.join("ralph-gate").join("pins"),
            None => {
                let base = std::env::var_os("XDG_STATE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| {
                        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state"))
                    })
                    .unwrap_or_else(std::env::temp_dir);
                let key = blake3::hash(ws.as_os_str().as_encoded_bytes()).to_hex();
                base.join("ralph-gate/pins").join(&key[..16])
            }
        };
        Self { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, loop_file: &str) -> PathBuf {
        self.dir.join(format!("{loop_file}.json"))
    }

    /// The copy for `loop_file`, when there is one and it can be read. An unreadable copy is
    /// `Err`: the caller treats it as tampering, never as "no pin".
    pub fn read(&self, loop_file: &str) -> Result<Option<Record>, String> {
        let path = self.path(loop_file);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn write(&self, loop_file: &str, record: &Record) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(record).expect("pins serialise");
        crate::atomic::write(&self.path(loop_file), &bytes)
    }

    pub fn remove(&self, loop_file: &str) {
        let _ = std::fs::remove_file(self.path(loop_file));
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
