//! Every call to git, and the git folders found without it. One way to run git: in the folder
//! named (never a `GIT_DIR`/`GIT_WORK_TREE` inherited from a hook that git itself runs),
//! with untranslated messages (some are matched) and byte-exact paths.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("git {args} failed: {message}")]
    Failed { args: String, message: String },
}

impl GitError {
    /// Git ran and said this folder is not in a repository.
    pub fn not_a_repository(&self) -> bool {
        matches!(self, GitError::Failed { message, .. } if message.contains("not a git repository"))
    }
}

/// The variables that tie git to one repository (`git rev-parse --local-env-vars`, git
/// 2.39). git sets some for the hooks it runs (`GIT_INDEX_FILE`: under `commit -a`, the
/// commit's own index); a gate's tools must not inherit them, or a test that makes a
/// repository of its own writes into the commit being made. git clears the same list when it
/// enters another repository (a submodule).
pub const REPOSITORY_ENV: &[&str] = &[
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// `git -C dir` with the environment every call needs.
pub fn command(dir: &Path) -> Command {
    let mut c = with_hooks(dir);
    // No hook of the repository's runs inside ralph-gate's own calls: `core.hooksPath` is
    // the agent's to set, and a `post-index-change` or `reference-transaction` hook would
    // run its code in the middle of a judgement (a red team's hook rewrote the checkout the
    // differential run was about to judge).
    c.args(["-c", "core.hooksPath=/dev/null"]);
    c
}

/// git as [`command`] makes it, with the repository's hooks: only where a person's hooks
/// are meant to run (a commit the fresh loop makes) or where their folder is asked.
pub fn with_hooks(dir: &Path) -> Command {
    let mut c = crate::child::command("git");
    c.arg("-C")
        .arg(dir)
        .args(["-c", "core.quotePath=false"])
        // Messages are matched ("not a git repository"), so they must not be translated.
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    c
}

/// Runs git and returns its standard output; a non-zero exit is an error with its message.
pub fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    finished(args, command(dir).args(args).output())
}

/// A finished git process's standard output; a non-zero exit is an error with its message.
pub fn finished(
    args: &[&str],
    out: std::io::Result<std::process::Output>,
) -> Result<Vec<u8>, GitError> {
    let out = out.map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(GitError::Failed {
            args: args.join(" "),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Runs git with `-z` output and splits it into paths, byte-exact (non-UTF-8 names survive).
pub fn paths(dir: &Path, args: &[&str]) -> Result<Vec<PathBuf>, GitError> {
    Ok(split_nul(&run(dir, args)?))
}

/// The files git neither tracks nor ignores, relative to `dir`.
pub fn untracked(dir: &Path) -> Result<Vec<PathBuf>, GitError> {
    paths(dir, &["ls-files", "-z", "--others", "--exclude-standard"])
}

/// NUL-separated paths, as `-z` prints them.
pub fn split_nul(out: &[u8]) -> Vec<PathBuf> {
    out.split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| PathBuf::from(crate::platform::os_str(s)))
        .collect()
}

pub fn in_work_tree(dir: &Path) -> bool {
    run(dir, &["rev-parse", "--is-inside-work-tree"]).is_ok_and(|out| out.trim_ascii() == b"true")
}

/// The commit `rev` names in the repository at `dir`, as a full hash.
pub fn commit(dir: &Path, rev: &str) -> Result<String, GitError> {
    let out = run(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    Ok(String::from_utf8_lossy(out.trim_ascii()).into_owned())
}

/// True when `rev` names a commit in the repository at `dir` (false before the first commit).
pub fn is_commit(dir: &Path, rev: &str) -> bool {
    commit(dir, rev).is_ok()
}

/// The top of the git work tree holding `dir`, if any.
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    let out = run(dir, &["rev-parse", "--show-toplevel"]).ok()?;
    let text = crate::platform::os_str(out.trim_ascii_end());
    (!text.is_empty()).then(|| PathBuf::from(text))
}

/// Where git keeps `rel` (`hooks/pre-commit`) for the work tree at `dir`, as git resolves it
/// (`core.hooksPath`, a linked worktree's own folder).
pub fn git_path(dir: &Path, rel: &str) -> Result<PathBuf, GitError> {
    let args = ["rev-parse", "--git-path", rel];
    let out = finished(&args, with_hooks(dir).args(args).output())?;
    Ok(dir.join(crate::platform::os_str(out.trim_ascii_end())))
}

/// The top of the work tree holding `dir`, found without running git: the nearest folder
/// with a `.git` (a folder, or a file naming a linked worktree's git folder). Hooks use it:
/// they sit in front of every tool call and cannot afford a process.
pub fn work_tree(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The git folder of the work tree holding `dir` (a linked worktree has its own), found
/// without running git: `.git` itself, or the folder a `.git` file names.
pub fn git_dir(dir: &Path) -> Option<PathBuf> {
    let top = work_tree(dir)?;
    let dot = top.join(".git");
    if dot.is_dir() {
        return dot.canonicalize().ok();
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    top.join(text.trim().strip_prefix("gitdir:")?.trim())
        .canonicalize()
        .ok()
}

/// The repository's common git folder (the same for every worktree of it): the work tree's
/// git folder, or for a linked worktree the `commondir` it names.
pub fn common_dir(dir: &Path) -> Option<PathBuf> {
    let git = git_dir(dir)?;
    match std::fs::read_to_string(git.join("commondir")) {
        Ok(c) => git.join(c.trim()).canonicalize().ok(),
        Err(_) => Some(git),
    }
}

/// A revision's files, read through one `git cat-file --batch` process: a plan of a
/// revision reads many small files (manifests, configs, script heads), and one process per
/// file would cost more than the plan.
pub struct Blobs {
    rev: String,
    io: std::sync::Mutex<Option<BatchIo>>,
}

struct BatchIo {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl Blobs {
    pub fn open(dir: &Path, rev: &str) -> Result<Self, GitError> {
        let mut child = command(dir)
            .args(["cat-file", "--batch"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(GitError::Spawn)?;
        let input = child.stdin.take().expect("piped");
        let output = std::io::BufReader::new(child.stdout.take().expect("piped"));
        Ok(Self {
            rev: rev.to_string(),
            io: std::sync::Mutex::new(Some(BatchIo {
                child,
                input,
                output,
            })),
        })
    }

    /// The content of `rel` at the revision; `None` when it is not a file there (or git
    /// stopped answering: the reader is then closed, never half-read).
    pub fn read(&self, rel: &Path) -> Option<Vec<u8>> {
        let mut guard = self.io.lock().unwrap_or_else(|e| e.into_inner());
        let io = guard.as_mut()?;
        match io.ask(&self.rev, rel) {
            Ok(found) => found,
            Err(_) => {
                *guard = None;
                None
            }
        }
    }
}

impl BatchIo {
    fn ask(&mut self, rev: &str, rel: &Path) -> std::io::Result<Option<Vec<u8>>> {
        use std::io::{BufRead, Read, Write};
        let name = rel.as_os_str().as_encoded_bytes();
        // The batch protocol is line-based: a name with a newline cannot be asked for.
        if name.contains(&b'\n') {
            return Ok(None);
        }
        // `rev:./path` is relative to the folder git runs in (the project root).
        let mut line = format!("{rev}:./").into_bytes();
        line.extend_from_slice(name);
        line.push(b'\n');
        self.input.write_all(&line)?;
        self.input.flush()?;
        let mut header = String::new();
        self.output.read_line(&mut header)?;
        let mut parts = header.split_whitespace();
        let (_, kind, size) = (parts.next(), parts.next(), parts.next());
        let Some(size) = size.and_then(|s| s.parse::<usize>().ok()) else {
            return Ok(None); // "<name> missing"
        };
        let mut body = vec![0; size + 1];
        self.output.read_exact(&mut body)?;
        body.pop();
        Ok((kind == Some("blob")).then_some(body))
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        if let Some(mut io) = self.io.lock().unwrap_or_else(|e| e.into_inner()).take() {
            drop(io.input);
            let _ = io.child.wait();
        }
    }
}
