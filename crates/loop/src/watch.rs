//! The guard by effect. The guard reads a shell command before it runs, and a command can
//! always be written so that no reader sees what it does (`python3 -c`, a script it wrote,
//! a variable holding the path). So while a loop runs, the files that decide its end are
//! also held by content: taken before each of the agent's shell commands, compared after it
//! (and at the next stop, when no hook came after it), and put back when the command changed
//! them. Reading a handful of small files keeps this inside the guard's budget.
//!
//! [`changes`] is pure; the rest reads, stores and restores files.

use ralph_base::state::Layout;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files above this size are watched by digest only: they can be told changed, not restored.
const KEEP_TEXT: u64 = 1 << 20;

/// One watched file as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub digest: String,
    /// The content, to put back (UTF-8 and small enough; else only the digest).
    pub text: Option<String>,
    pub mode: u32,
}

/// The watched files before one shell command of one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub session: String,
    pub call: String,
    pub command: String,
    /// Unix seconds when it was taken, and how long the command may run.
    pub taken: u64,
    pub timeout_s: u64,
    /// Each watched path, `None` where no file was.
    pub files: BTreeMap<PathBuf, Option<Held>>,
}

/// What a command did to one watched file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Changed(PathBuf),
    Deleted(PathBuf),
    Created(PathBuf),
}

impl Effect {
    pub fn path(&self) -> &Path {
        match self {
            Effect::Changed(p) | Effect::Deleted(p) | Effect::Created(p) => p,
        }
    }

    pub fn verb(&self) -> &'static str {
        match self {
            Effect::Changed(_) => "changed",
            Effect::Deleted(_) => "deleted",
            Effect::Created(_) => "created",
        }
    }
}

/// The files that decide whether the loop may end: the config files, the loops' state files
/// (and the names a new one would take), the pins, the agents seen (`person`), and Claude
/// Code's project settings.
pub fn watched(layout: &Layout, configs: &[PathBuf]) -> Vec<PathBuf> {
    let ws = layout.root();
    let mut out: Vec<PathBuf> = configs.to_vec();
    out.push(ws.join(ralph_config::FILE_NAME));
    out.push(ws.join(".claude/settings.json"));
    out.push(ws.join(".claude/settings.local.json"));
    for agent in ralph_base::agent::Agent::ALL {
        let dir = layout.loop_dir(agent);
        out.push(dir.join(ralph_base::state::MAIN_FILE));
        out.extend(files_in(&dir, ralph_base::state::is_state_name));
    }
    out.extend(files_in(&layout.pins(), |n| {
        n.ends_with(".json") || n.ends_with(".pinned")
    }));
    out.push(layout.agents());
    out.sort();
    out.dedup();
    out
}

fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

/// Reads each of `paths` as it is now.
pub fn read(paths: &[PathBuf]) -> BTreeMap<PathBuf, Option<Held>> {
    paths.iter().map(|p| (p.clone(), hold(p))).collect()
}

fn hold(path: &Path) -> Option<Held> {
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    let mode = ralph_base::platform::mode(&meta) & 0o7777;
    let bytes = std::fs::read(path).ok()?;
    let digest = blake3::hash(&bytes).to_hex()[..32].to_string();
    let text = (meta.len() <= KEEP_TEXT)
        .then(|| String::from_utf8(bytes).ok())
        .flatten();
    Some(Held { digest, text, mode })
}

/// What changed from `before` to `now`, in path order. Pure.
pub fn changes(
    before: &BTreeMap<PathBuf, Option<Held>>,
    now: &BTreeMap<PathBuf, Option<Held>>,
) -> Vec<Effect> {
    let mut out = Vec::new();
    for (path, after) in now {
        let was = before.get(path).cloned().flatten();
        match (&was, after) {
            (None, Some(_)) => out.push(Effect::Created(path.clone())),
            (Some(_), None) => out.push(Effect::Deleted(path.clone())),
            (Some(a), Some(b)) if a.digest != b.digest || a.mode != b.mode => {
                out.push(Effect::Changed(path.clone()));
            }
            _ => {}
        }
    }
    for (path, was) in before {
        if was.is_some() && !now.contains_key(path) {
            out.push(Effect::Deleted(path.clone()));
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    out.dedup();
    out
}

/// Puts each changed file back as `before` held it: written again, or removed when the
/// command created it. Returns the effects that could not be undone (a file too large or
/// not text to keep, a folder that cannot be written).
pub fn restore(before: &BTreeMap<PathBuf, Option<Held>>, effects: &[Effect]) -> Vec<Effect> {
    let mut left = Vec::new();
    for e in effects {
        let ok = match before.get(e.path()).cloned().flatten() {
            None => match std::fs::remove_file(e.path()) {
                Ok(()) => true,
                Err(err) => err.kind() == std::io::ErrorKind::NotFound,
            },
            Some(Held {
                text: Some(t),
                mode,
                ..
            }) => {
                ralph_base::atomic::write(e.path(), t.as_bytes()).is_ok()
                    && ralph_base::platform::set_mode(e.path(), mode).is_ok()
            }
            Some(_) => false,
        };
        if !ok {
            left.push(e.clone());
        }
    }
    left
}

/// Where the snapshots of pending shell commands are kept.
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn of(layout: &Layout) -> Self {
        Self {
            dir: layout.watch(),
        }
    }

    fn path(&self, session: &str, call: &str) -> PathBuf {
        let key = |s: &str| blake3::hash(s.as_bytes()).to_hex()[..16].to_string();
        self.dir
            .join(format!("{}-{}.json", key(session), key(call)))
    }

    /// Keeps `snap` until the command's after-hook (or the next stop) takes it. Written to a
    /// temporary file and renamed, without a flush to disk: a snapshot lives for one command,
    /// and a crash loses nothing a stop needs.
    pub fn put(&self, snap: &Snapshot) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.path(&snap.session, &snap.call);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(snap).expect("snapshots serialise"))?;
        std::fs::rename(&tmp, &path)
    }

    /// Takes the snapshot of `session`'s call `call`, or without an id the session's latest.
    pub fn take(&self, session: &str, call: Option<&str>) -> Option<Snapshot> {
        let snap = match call {
            Some(c) => self.read(&self.path(session, c)),
            None => self.pending(session).into_iter().max_by_key(|s| s.taken),
        }?;
        let _ = std::fs::remove_file(self.path(&snap.session, &snap.call));
        Some(snap)
    }

    /// Every snapshot of `session` whose command has not been seen to finish.
    pub fn pending(&self, session: &str) -> Vec<Snapshot> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| self.read(&e.path()))
            .filter(|s| s.session == session)
            .collect()
    }

    /// ralph-gate itself wrote the loops' state files or pins (a stop, `loop approve` by a
    /// person): what it wrote is what each pending command is compared with, so it is never
    /// put back as if the command had made it.
    pub fn accept(&self, layout: &Layout) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let ours = |p: &Path| {
            p.parent() == Some(layout.pins().as_path())
                || ralph_base::agent::Agent::ALL
                    .iter()
                    .any(|a| p.parent() == Some(layout.loop_dir(*a).as_path()))
        };
        let now: Vec<PathBuf> = watched(layout, &[])
            .into_iter()
            .filter(|p| ours(p))
            .collect();
        for e in entries.flatten() {
            let Some(mut snap) = self.read(&e.path()) else {
                continue;
            };
            snap.files.retain(|p, _| !ours(p));
            snap.files.extend(read(&now));
            let _ = self.put(&snap);
        }
    }

    /// Notes that `session`'s shell commands have after-hooks (post-tool-use came for one):
    /// only then does a command still pending at a stop mean the stop came from inside it.
    pub fn note_after_hooks(&self, session: &str) {
        let path = self.after_mark(session);
        if !path.exists() {
            let _ = std::fs::create_dir_all(&self.dir);
            let _ = std::fs::write(path, b"");
        }
    }

    /// True when an after-hook of `session`'s shell commands has come.
    pub fn has_after_hooks(&self, session: &str) -> bool {
        self.after_mark(session).exists()
    }

    fn after_mark(&self, session: &str) -> PathBuf {
        let key = blake3::hash(session.as_bytes()).to_hex();
        self.dir.join(format!("{}.after", &key[..16]))
    }

    pub fn remove(&self, snap: &Snapshot) {
        let _ = std::fs::remove_file(self.path(&snap.session, &snap.call));
    }

    fn read(&self, path: &Path) -> Option<Snapshot> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(d: &str) -> Option<Held> {
        Some(Held {
            digest: d.into(),
            text: Some(d.into()),
            mode: 0o644,
        })
    }

    #[test]
    fn changes_name_what_a_command_did_to_each_file() {
        let p = |s: &str| PathBuf::from(s);
        let before: BTreeMap<_, _> = [
            (p("/a"), held("1")),
            (p("/b"), held("2")),
            (p("/c"), None),
            (p("/d"), held("4")),
            (p("/e"), held("5")),
        ]
        .into();
        let now: BTreeMap<_, _> = [
            (p("/a"), held("1")),
            (p("/b"), held("x")),
            (p("/c"), held("3")),
            (p("/d"), None),
            (p("/f"), held("6")),
        ]
        .into();
        assert_eq!(
            changes(&before, &now),
            vec![
                Effect::Changed(p("/b")),
                Effect::Created(p("/c")),
                Effect::Deleted(p("/d")),
                Effect::Deleted(p("/e")),
                Effect::Created(p("/f")),
            ]
        );
        let mut chmod = now.clone();
        chmod.insert(
            p("/a"),
            Some(Held {
                mode: 0o000,
                ..held("1").unwrap()
            }),
        );
        assert!(changes(&now, &chmod).contains(&Effect::Changed(p("/a"))));
        assert!(changes(&now, &now).is_empty());
    }

    #[test]
    fn restore_puts_back_and_removes_what_was_created() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&a, "one").unwrap();
        std::fs::write(&b, "two").unwrap();
        let paths = vec![a.clone(), b.clone(), c.clone()];
        let before = read(&paths);
        std::fs::write(&a, "weakened").unwrap();
        std::fs::remove_file(&b).unwrap();
        std::fs::write(&c, "a new loop").unwrap();
        let effects = changes(&before, &read(&paths));
        assert_eq!(effects.len(), 3);
        assert!(restore(&before, &effects).is_empty());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "two");
        assert!(!c.exists());
        assert!(changes(&before, &read(&paths)).is_empty());
    }
}
