//! `check --staged` checks what will be committed: the index, not the working tree.
//!
//! Tools read files from disk, so for the length of the run every tracked file whose working
//! copy differs from the index is given its staged content, and put back afterwards. The
//! user's unstaged work is never at risk:
//! - every such file is copied (content, mode, or symlink target, or its absence) into
//!   `.ralph/staged/<run>/` and flushed to disk, with a manifest written last, before the
//!   working tree is touched;
//! - it is put back when the run ends, when ralph-gate is told to stop (Ctrl-C, SIGTERM,
//!   SIGHUP: after the gates' process groups are killed), and on a panic;
//! - after a SIGKILL or a power cut the next ralph-gate run finds the backup and puts it
//!   back;
//! - a file is only put back while it still holds what ralph-gate wrote: if someone changed
//!   it meanwhile, both versions are kept and the message says where the backup is.
//!
//! Untracked files are left in place: they are not part of the commit, but hiding them
//! could lose them, and a tool may need them (a generated file the project ignores).

use ralph_base::atomic;
use ralph_base::git::{self, GitError};
use ralph_base::state::Layout;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

#[derive(Debug, thiserror::Error)]
pub enum StagedError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot back up {}: {source}", path.display())]
    Backup {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "an earlier run's copy of your unstaged changes is still in {}: {why}; \
         put the files back by hand (see its manifest.json), then delete the folder",
        dir.display()
    )]
    Leftover { dir: PathBuf, why: String },
}

/// What a working-tree path held before the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Kept {
    /// A regular file: its copy in the backup folder and its permission bits.
    File {
        copy: String,
        mode: u32,
    },
    Symlink {
        target: PathBuf,
    },
    /// Deleted in the working tree but still staged.
    Absent,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// Relative to the top of the work tree, as bytes (any file name).
    path: Vec<u8>,
    kept: Kept,
    /// What ralph-gate wrote (the staged content), as [`fingerprint`] tells it; `None` until
    /// written.
    written: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    entries: Vec<Entry>,
}

struct State {
    /// The top of the work tree: the manifest's paths are from there.
    root: PathBuf,
    dir: PathBuf,
    manifest: Manifest,
    done: bool,
}

/// The unstaged changes, hidden for the length of a run: put back when dropped.
pub struct Hidden {
    state: Arc<Mutex<State>>,
    cleanup: u64,
}

impl Hidden {
    /// How many files hold their staged content for now.
    pub fn count(&self) -> usize {
        lock(&self.state).manifest.entries.len()
    }

    /// Puts every file back; what could not be put back is named in the returned messages
    /// (its backup is kept).
    pub fn restore(self) -> Vec<String> {
        let messages = restore_state(&mut lock(&self.state));
        ralph_base::signals::forget_cleanup(self.cleanup);
        messages
    }
}

impl Drop for Hidden {
    fn drop(&mut self) {
        let messages = restore_state(&mut lock(&self.state));
        ralph_base::signals::forget_cleanup(self.cleanup);
        report(&messages);
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

#[allow(clippy::print_stderr)]
fn report(messages: &[String]) {
    for m in messages {
        eprintln!("ralph-gate: {m}");
    }
}

/// Gives every tracked file with unstaged changes its staged content, after backing the
/// working copies up. `None` when the working tree already matches the index. Files of the
/// whole work tree, not only the project's: a project below the top of its repository reads
/// files beside it (a shared schema, a sourced library), and git names every path from the
/// top.
pub fn hide_unstaged(root: &Path) -> Result<Option<Hidden>, StagedError> {
    let top = git::toplevel(root).unwrap_or_else(|| root.to_path_buf());
    // git names the top as the system resolves it.
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let changed = git::paths(
        &top,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--ignore-submodules",
        ],
    )?;
    let changed: Vec<PathBuf> = changed
        .into_iter()
        .filter(|p| !own_state(&top, &real_root, p))
        .collect();
    if changed.is_empty() {
        return Ok(None);
    }
    Layout::at(root).ignore_self();
    let dir = Layout::at(root).staged().join(format!(
        "{}-{}",
        std::process::id(),
        crate::results::now_ms()
    ));
    std::fs::create_dir_all(dir.join("files")).map_err(backup_err(&dir))?;
    let mut manifest = Manifest::default();
    for (n, rel) in changed.iter().enumerate() {
        manifest.entries.push(Entry {
            path: rel.as_os_str().as_encoded_bytes().to_vec(),
            kept: back_up(&top.join(rel), &dir, n)?,
            written: None,
        });
    }
    write_manifest(&dir, &manifest).map_err(backup_err(&dir))?;
    // From here on the working tree changes: whatever happens, it is put back.
    let state = Arc::new(Mutex::new(State {
        root: top.clone(),
        dir: dir.clone(),
        manifest,
        done: false,
    }));
    let for_signal = Arc::clone(&state);
    let cleanup = ralph_base::signals::on_stop(move || {
        report(&restore_state(&mut lock(&for_signal)));
    });
    let hidden = Hidden { state, cleanup };
    checkout_index(&top, &changed)?;
    {
        let mut st = lock(&hidden.state);
        for e in &mut st.manifest.entries {
            let full = top.join(ralph_base::platform::os_str(&e.path));
            e.written = fingerprint(&full);
        }
        write_manifest(&dir, &st.manifest).map_err(backup_err(&dir))?;
    }
    Ok(Some(hidden))
}

/// Whether `rel` (from the top of the work tree) is ralph-gate's own state in the project at
/// `root`.
fn own_state(top: &Path, root: &Path, rel: &Path) -> bool {
    top.join(rel)
        .strip_prefix(root)
        .is_ok_and(ralph_plan::files::is_own_state)
}

fn backup_err(path: &Path) -> impl FnOnce(std::io::Error) -> StagedError {
    let path = path.to_path_buf();
    move |source| StagedError::Backup { path, source }
}

/// Keeps the working copy at `full` (the `n`th changed file) in `dir`: a file's bytes and
/// mode, a symlink's target, or that there was none.
fn back_up(full: &Path, dir: &Path, n: usize) -> Result<Kept, StagedError> {
    Ok(match std::fs::symlink_metadata(full) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Kept::Absent,
        Err(e) => return Err(backup_err(full)(e)),
        Ok(m) if m.file_type().is_symlink() => Kept::Symlink {
            target: std::fs::read_link(full).map_err(backup_err(full))?,
        },
        Ok(m) => {
            let copy = format!("{n}");
            let bytes = std::fs::read(full).map_err(backup_err(full))?;
            let mut f =
                std::fs::File::create(dir.join("files").join(&copy)).map_err(backup_err(full))?;
            f.write_all(&bytes)
                .and_then(|_| f.sync_all())
                .map_err(backup_err(full))?;
            Kept::File {
                copy,
                mode: ralph_base::platform::mode(&m),
            }
        }
    })
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(manifest).expect("manifest serialises");
    atomic::write(&dir.join("manifest.json"), &bytes)
}

/// Puts back what an earlier run hid and could not put back (it was killed). Returns what
/// was done, one message per line, and fails when a backup must be handled by hand.
pub fn recover(root: &Path) -> Result<Vec<String>, StagedError> {
    let Ok(list) = std::fs::read_dir(Layout::at(root).staged()) else {
        return Ok(Vec::new());
    };
    let mut messages = Vec::new();
    for dir in list.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        if owner_alive(&dir) {
            continue; // a run in progress (another pre-commit) holds its own backup
        }
        let manifest: Manifest = match std::fs::read(dir.join("manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(m) => m,
            // No manifest: the run died before touching the working tree.
            None => {
                let _ = std::fs::remove_dir_all(&dir);
                continue;
            }
        };
        // Paths in a manifest are from the top of the work tree.
        let mut state = State {
            root: git::toplevel(root).unwrap_or_else(|| root.to_path_buf()),
            dir: dir.clone(),
            manifest,
            done: false,
        };
        let problems = restore_state(&mut state);
        if !problems.is_empty() {
            return Err(StagedError::Leftover {
                dir,
                why: problems.join("; "),
            });
        }
        messages.push(format!(
            "put back {} with unstaged changes that an interrupted `check --staged` had hidden",
            ralph_base::text::plural(state.manifest.entries.len(), "file", "files")
        ));
    }
    Ok(messages)
}

/// The backup folder is named `<pid>-<ms>`: its run is alive while that process is.
fn owner_alive(dir: &Path) -> bool {
    let Some(pid) = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('-').next())
        .and_then(|p| p.parse::<i32>().ok())
    else {
        return false;
    };
    if pid == std::process::id() as i32 {
        return false;
    }
    ralph_base::platform::alive(pid)
}

/// Puts every entry back whose file still holds what ralph-gate wrote. Returns a message for
/// each that could not be; the backup folder is removed only when none is left.
fn restore_state(st: &mut State) -> Vec<String> {
    if st.done {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for e in &st.manifest.entries {
        let rel = PathBuf::from(ralph_base::platform::os_str(&e.path));
        let full = st.root.join(&rel);
        let now = fingerprint(&full);
        let ours = match (&e.written, &now) {
            (Some(w), Some(n)) => w == n,
            (None, _) => false,
            (Some(_), None) => false,
        };
        let already = match (&e.kept, &now) {
            (Kept::Absent, None) => true,
            // The mode too: a change of mode alone (`git update-index --chmod`) is unstaged
            // work like any other, and the index's mode was written over it.
            (Kept::File { copy, mode }, Some(n)) => {
                std::fs::read(st.dir.join("files").join(copy))
                    .is_ok_and(|b| blake3::hash(&b).to_hex().as_str() == n)
                    && std::fs::symlink_metadata(&full)
                        .is_ok_and(|m| ralph_base::platform::mode(&m) & 0o7777 == mode & 0o7777)
            }
            (Kept::Symlink { target }, Some(n)) => *n == link_fingerprint(target),
            _ => false,
        };
        if already {
            continue;
        }
        if !ours {
            problems.push(format!(
                "{} changed while its unstaged version was hidden; both are kept (yours in {})",
                rel.display(),
                st.dir.display()
            ));
            continue;
        }
        if let Err(err) = put_back(&st.dir, &full, &e.kept) {
            problems.push(format!("cannot put back {}: {err}", rel.display()));
        }
    }
    if problems.is_empty() {
        let _ = std::fs::remove_dir_all(&st.dir);
        st.done = true;
    }
    problems
}

/// What a working-tree path holds, without following a link: a file's blake3, or a link's
/// target; `None` when nothing is there. A staged link to nothing (or to a folder) is told
/// apart from a path that vanished, so it is put back like any file.
fn fingerprint(full: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(full).ok()?;
    if meta.file_type().is_symlink() {
        return std::fs::read_link(full).ok().map(|t| link_fingerprint(&t));
    }
    std::fs::read(full)
        .ok()
        .map(|b| blake3::hash(&b).to_hex().to_string())
}

fn link_fingerprint(target: &Path) -> String {
    format!(
        "link:{}",
        blake3::hash(target.as_os_str().as_encoded_bytes()).to_hex()
    )
}

fn put_back(dir: &Path, full: &Path, kept: &Kept) -> std::io::Result<()> {
    match kept {
        Kept::Absent => std::fs::remove_file(full),
        Kept::Symlink { target } => {
            let _ = std::fs::remove_file(full);
            ralph_base::platform::symlink(target, full)
        }
        Kept::File { copy, mode } => {
            let bytes = std::fs::read(dir.join("files").join(copy))?;
            atomic::write(full, &bytes)?;
            ralph_base::platform::set_mode(full, *mode)
        }
    }
}

/// Writes the index's content of `paths` over the working tree.
fn checkout_index(root: &Path, paths: &[PathBuf]) -> Result<(), StagedError> {
    let mut child = git::command(root)
        .args(["checkout-index", "-f", "-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let mut input = Vec::new();
    for p in paths {
        input.extend_from_slice(p.as_os_str().as_encoded_bytes());
        input.push(0);
    }
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&input);
    }
    let out = child.wait_with_output().map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(GitError::Failed {
            args: "checkout-index -f --stdin".into(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
        .into())
    }
}
