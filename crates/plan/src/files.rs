//! Which files a run looks at: all project files, git's staged or changed files, or paths
//! named on the command line. Every path returned is relative to the project root.

use ralph_base::git::{self, GitError};
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("{} is outside the project root {}", path.display(), root.display())]
    OutsideRoot { path: PathBuf, root: PathBuf },
    #[error("no such file or folder: {}", .0.display())]
    Missing(PathBuf),
    #[error("--{0} needs a git repository, and {1} is not inside one")]
    NotGit(&'static str, PathBuf),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("bad revision `{0}`: {1}")]
    BadRevision(String, String),
    #[error("cannot list files under {}: {message}", root.display())]
    Walk { root: PathBuf, message: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every project file: git-tracked plus untracked-not-ignored (a `.gitignore`-honouring walk
    /// outside git).
    All,
    /// Files staged for commit (added, copied, modified, renamed).
    Staged,
    /// The working tree against a revision, untracked files included.
    Changed(String),
    /// Files and folders named by the user, relative to the current directory.
    Paths(Vec<PathBuf>),
}

/// What a listing found: the files a checker can open, and the listed paths no checker can
/// open as a file. The bare tool given one of those fails, so it is not a project file; but
/// a gate whose globs match one reports it unverified, which fails `--strict` and CI,
/// instead of leaving it out in silence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    pub files: Vec<PathBuf>,
    pub unopenable: Vec<(PathBuf, Unopenable)>,
}

/// Why a listed path cannot be given to a checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unopenable {
    /// A link to nothing, or a loop of links.
    DanglingLink,
    /// A folder, a link to one, or another thing that is not a file, where a file is listed
    /// (a tracked file replaced by a folder).
    NotAFile,
}

impl Listing {
    /// Sorts `listed` (relative to `root`) into files and paths no checker can open.
    /// Deleted files, ralph-gate's own state and submodules (a folder holding `.git`) are
    /// neither. A regular file costs one `stat`, as before.
    fn of(root: &Path, listed: Vec<PathBuf>) -> Self {
        let mut out = Listing::default();
        for f in listed {
            if is_own_state(&f) {
                continue;
            }
            let full = root.join(&f);
            let why = match full.metadata() {
                Ok(m) if m.is_file() => {
                    out.files.push(f);
                    continue;
                }
                Ok(m) if m.is_dir() && full.join(".git").exists() => continue,
                Ok(_) => Unopenable::NotAFile,
                Err(_) if full.symlink_metadata().is_ok_and(|m| m.is_symlink()) => {
                    Unopenable::DanglingLink
                }
                Err(_) => continue,
            };
            out.unopenable.push((f, why));
        }
        out.files.sort();
        out.files.dedup();
        out.unopenable.sort();
        out.unopenable.dedup();
        out
    }
}

/// The selected files, and the selected paths no checker can open.
pub fn select_listing(
    root: &Path,
    cwd: &Path,
    selection: &Selection,
) -> Result<Listing, FilesError> {
    let files = match selection {
        Selection::All => return list(root),
        Selection::Staged => {
            require_git(root, "staged")?;
            git::paths(
                root,
                &[
                    "diff",
                    "--cached",
                    "--name-only",
                    "-z",
                    "--diff-filter=ACMR",
                    "--relative",
                ],
            )?
        }
        Selection::Changed(rev) => changed(root, rev)?,
        Selection::Paths(paths) => named(root, cwd, paths)?,
    };
    // Deleted files cannot be checked; a staged or changed list may still name them.
    Ok(Listing::of(root, files))
}

/// The paths a commit (`Staged`) or a change (`Changed`) removes, renamed files' old names
/// included: no checker can open them, but the runs that read them must be made again.
/// Empty for other selections.
pub fn removed(root: &Path, selection: &Selection) -> Result<Vec<PathBuf>, FilesError> {
    let mut args = vec![
        "diff",
        "--name-only",
        "-z",
        "--diff-filter=D",
        "--no-renames",
        "--relative",
    ];
    match selection {
        Selection::Staged => args.insert(1, "--cached"),
        Selection::Changed(rev) => {
            args.extend([rev.as_str(), "--"]);
        }
        _ => return Ok(Vec::new()),
    }
    match git::paths(root, &args) {
        Ok(paths) => Ok(paths),
        // No commit yet, or not a repository: nothing can have been removed.
        Err(_) => Ok(Vec::new()),
    }
}

/// The paths a commit (`Staged`) or a change (`Changed`) adds, changes or removes beside the
/// project, when it is below the top of its repository, as paths from the root
/// (`../shared/schema.json`): no gate checks them, but the runs that read them must be made
/// again. Empty for other selections, at the top, and outside git.
pub fn beside(root: &Path, selection: &Selection) -> Vec<PathBuf> {
    let Ok(prefix) = git::run(root, &["rev-parse", "--show-prefix"]) else {
        return Vec::new();
    };
    let prefix = PathBuf::from(ralph_base::platform::os_str(prefix.trim_ascii_end()));
    if prefix.as_os_str().is_empty() {
        return Vec::new();
    }
    let mut args = vec!["diff", "--name-only", "-z", "--no-renames", "--"];
    match selection {
        Selection::Staged => args.insert(1, "--cached"),
        Selection::Changed(rev) => args.insert(1, rev.as_str()),
        _ => return Vec::new(),
    }
    let Some(top) = git::toplevel(root) else {
        return Vec::new();
    };
    let up: PathBuf = prefix.components().map(|_| "..").collect();
    git::paths(&top, &args)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !p.starts_with(&prefix))
        .map(|p| up.join(p))
        .collect()
}

/// The work tree around a project below the top of its repository: a run there may read a
/// file beside the project (`../shared/schema.json`), which an edit or a commit can change.
pub struct Beside {
    top: PathBuf,
    /// The root, resolved.
    root: PathBuf,
    /// `..` as many times as the root is below the top.
    up: PathBuf,
}

impl Beside {
    /// `None` at the top of a repository, or outside one.
    pub fn of(root: &Path) -> Option<Beside> {
        let root = root.canonicalize().ok()?;
        let top = root.ancestors().find(|a| a.join(".git").exists())?;
        let below = root.strip_prefix(top).ok()?;
        if below.as_os_str().is_empty() {
            return None;
        }
        Some(Beside {
            up: below.components().map(|_| "..").collect(),
            top: top.to_path_buf(),
            root: root.clone(),
        })
    }

    /// `abs` as a path from the root (`../shared/x`), when it is in the work tree beside the
    /// project (not in it, not in git's folder). Paths a run names are as the system
    /// resolved them, as the top is.
    pub fn rel(&self, abs: &Path) -> Option<PathBuf> {
        let inside = abs.strip_prefix(&self.top).ok()?;
        if inside.starts_with(".git") || abs.starts_with(&self.root) {
            return None;
        }
        Some(self.up.join(inside))
    }
}

/// Every project file, sorted.
pub fn all(root: &Path) -> Result<Vec<PathBuf>, FilesError> {
    Ok(list(root)?.files)
}

/// Every project file, and the listed paths no checker can open, sorted.
pub fn list(root: &Path) -> Result<Listing, FilesError> {
    // One git call both lists the files and says whether this is a repository at all: outside
    // one (or without git) it fails and the folder is walked instead.
    let files = match git::paths(
        root,
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    ) {
        Ok(files) => files,
        Err(e) if e.not_a_repository() => walk(root)?,
        Err(GitError::Spawn(_)) => walk(root)?,
        Err(e) => return Err(e.into()),
    };
    Ok(Listing::of(root, files))
}

/// ralph-gate's own state (`.ralph/`: journal, cache, locks) is never a project file, even in
/// a repository that does not ignore it; nor is a loop's state file (`.claude/ralph-loop*.local.md`
/// and its temporary files while it is rewritten), which changes at every stop: as a project
/// file it would make every whole-project gate miss the cache at every stop of a loop.
pub fn is_own_state(rel: &Path) -> bool {
    if rel.starts_with(ralph_base::state::DIR) {
        return true;
    }
    let (Some(dir), Some(name)) = (rel.parent(), rel.file_name()) else {
        return false;
    };
    let name = name.to_string_lossy();
    ralph_base::agent::Agent::ALL
        .iter()
        .any(|a| dir == Path::new(a.state_dir()))
        && ((name.starts_with("ralph-loop") && name.ends_with(".local.md"))
            || name.starts_with(".ralph-gate-"))
}

pub use ralph_base::shebang::head;

/// Makes a user-given path relative to `root`, refusing anything outside it. Works for paths
/// that no longer exist (an agent may report a deleted file) by resolving their parent.
pub fn relative_to_root(root: &Path, cwd: &Path, path: &Path) -> Result<PathBuf, FilesError> {
    let absolute = normalize(&cwd.join(path));
    let root_real = root.canonicalize().unwrap_or_else(|_| normalize(root));
    let real = match absolute.canonicalize() {
        Ok(p) => p,
        Err(_) => match (absolute.parent(), absolute.file_name()) {
            (Some(parent), Some(name)) => parent
                .canonicalize()
                .map(|p| p.join(name))
                .unwrap_or_else(|_| absolute.clone()),
            _ => absolute.clone(),
        },
    };
    match real.strip_prefix(&root_real) {
        Ok(rel) if rel.as_os_str().is_empty() => Ok(PathBuf::new()),
        Ok(rel) => Ok(rel.to_path_buf()),
        Err(_) => Err(FilesError::OutsideRoot {
            path: path.to_path_buf(),
            root: root.to_path_buf(),
        }),
    }
}

/// Lexically removes `.` and `..` (no file system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn named(root: &Path, cwd: &Path, paths: &[PathBuf]) -> Result<Vec<PathBuf>, FilesError> {
    let mut out = Vec::new();
    let mut listing: Option<Listing> = None;
    for p in paths {
        let rel = relative_to_root(root, cwd, p)?;
        let full = root.join(&rel);
        if full.is_dir() {
            let everything = match &listing {
                Some(l) => l,
                None => listing.insert(list(root)?),
            };
            let unopenable = everything.unopenable.iter().map(|(f, _)| f);
            let under = everything.files.iter().chain(unopenable);
            out.extend(under.filter(|f| f.starts_with(&rel)).cloned());
        } else if full.is_file() || full.symlink_metadata().is_ok() {
            // A link to nothing named by the user is reported with the listing's others.
            out.push(rel);
        } else {
            return Err(FilesError::Missing(p.clone()));
        }
    }
    Ok(out)
}

fn changed(root: &Path, rev: &str) -> Result<Vec<PathBuf>, FilesError> {
    require_git(root, "changed")?;
    if rev.starts_with('-') {
        return Err(FilesError::BadRevision(
            rev.into(),
            "a revision cannot start with '-'".into(),
        ));
    }
    let verify = git::run(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    );
    let mut files = match verify {
        Ok(_) => git::paths(
            root,
            &[
                "diff",
                "--name-only",
                "-z",
                "--diff-filter=ACMR",
                "--relative",
                rev,
                "--",
            ],
        )?,
        // A repository with no commit yet: everything in it is a change.
        Err(_)
            if rev == "HEAD"
                && git::run(root, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_err() =>
        {
            git::paths(root, &["ls-files", "-z", "--cached"])?
        }
        Err(_) => {
            return Err(FilesError::BadRevision(
                rev.into(),
                "not a commit in this repository".into(),
            ))
        }
    };
    files.extend(git::untracked(root)?);
    Ok(files)
}

fn require_git(root: &Path, flag: &'static str) -> Result<(), FilesError> {
    if git::in_work_tree(root) {
        Ok(())
    } else {
        Err(FilesError::NotGit(flag, root.to_path_buf()))
    }
}

fn walk(root: &Path) -> Result<Vec<PathBuf>, FilesError> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| FilesError::Walk {
            root: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(rel) = entry.path().strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
    }
    Ok(out)
}
