//! The work tree as git trees: what a loop started from, what a stop judged, and the tree a
//! differential run checks out. Every tree is written through a private index, so the
//! user's index (what they staged) is never touched, and every checkout goes to a
//! repository of its own in a temporary folder, never into the user's files or git folder.

use crate::git::{self, GitError};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A path's entry in a tree: its mode (`100644`, `100755`, `120000`, `160000`) and object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub mode: String,
    pub object: String,
}

/// One path that differs between two trees: its entry in each (`None`: absent there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// Relative to the top of the work tree.
    pub path: PathBuf,
    pub old: Option<Entry>,
    pub new: Option<Entry>,
}

/// An index file of ralph-gate's own in the work tree at `top`, removed with its folder.
struct Private {
    dir: tempfile::TempDir,
    /// The filter drivers disarmed for every call on it, asked of git's config once.
    disarmed: Vec<String>,
}

impl Private {
    fn new(top: &Path) -> Result<Self, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("ralph-gate-index")
            .tempdir()
            .map_err(GitError::Spawn)?;
        Ok(Self {
            dir,
            disarmed: disarmed_filters(top),
        })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("index")
    }

    /// Runs git in `top` on this index, `input` on its standard input.
    fn git(&self, top: &Path, args: &[&str], input: &[u8]) -> Result<Vec<u8>, GitError> {
        let mut cmd = raw(top, &self.disarmed);
        cmd.env("GIT_INDEX_FILE", self.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(GitError::Spawn)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input).map_err(GitError::Spawn)?;
        }
        git::finished(args, child.wait_with_output())
    }
}

/// The tree of no files: where attributes are read from, so none apply.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// git in `top` seeing files as bytes: no `.gitattributes` of the tree, no `core.autocrlf`,
/// and every filter driver configured (which `.git/info/attributes` could still name) made
/// to pass content through. A tree of the work tree must hold what the checkers read, not
/// what a filter the agent can configure says they read.
fn raw(top: &Path, disarmed: &[String]) -> std::process::Command {
    let mut cmd = git::command(top);
    // No replacement objects (`git replace` would show another tree under a tree's name),
    // and no file system monitor (one that says "nothing changed" hides every edit).
    cmd.env("GIT_ATTR_SOURCE", EMPTY_TREE)
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .args([
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.safecrlf=false",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
        ]);
    for setting in disarmed {
        cmd.arg("-c").arg(setting);
    }
    cmd
}

/// The settings that make every filter driver of `top`'s config pass content through.
fn disarmed_filters(top: &Path) -> Vec<String> {
    let mut settings = Vec::new();
    for name in filter_drivers(top) {
        for (key, value) in [("clean", "cat"), ("smudge", "cat"), ("process", "")] {
            settings.push(format!("filter.{name}.{key}={value}"));
        }
    }
    settings
}

/// The names of the filter drivers git's config defines for `top`.
fn filter_drivers(top: &Path) -> std::collections::BTreeSet<String> {
    let out = git::run(
        top,
        &["config", "--name-only", "--get-regexp", r"^filter\."],
    )
    .unwrap_or_default();
    String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|key| {
            let rest = key.strip_prefix("filter.")?;
            Some(rest.rsplit_once('.')?.0.to_string())
        })
        .collect()
}

/// Runs git as trees are read and written here (see `raw`) and returns its standard output:
/// every git call about a snapshot's trees goes through it.
pub fn run_raw(top: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    git::finished(args, raw(top, &disarmed_filters(top)).args(args).output())
}

/// Writes `bytes` as a blob into the object store of the work tree at `top`: its name.
pub fn blob(top: &Path, bytes: &[u8]) -> Result<String, GitError> {
    let failed = |e: std::io::Error| GitError::Failed {
        args: "hash-object -w".into(),
        message: e.to_string(),
    };
    let mut file = tempfile::NamedTempFile::new().map_err(failed)?;
    std::io::Write::write_all(&mut file, bytes).map_err(failed)?;
    let at = file.path().to_string_lossy().into_owned();
    let object = run_raw(top, &["hash-object", "-w", "--no-filters", "--", &at])?;
    Ok(String::from_utf8_lossy(object.trim_ascii()).into_owned())
}

/// The top of the work tree holding `dir`.
pub fn top(dir: &Path) -> Result<PathBuf, GitError> {
    git::toplevel(dir).ok_or_else(|| GitError::Failed {
        args: "rev-parse --show-toplevel".into(),
        message: format!("{} is not in a git work tree", dir.display()),
    })
}

/// Folders tools keep caches of their own in, and ralph-gate's own state, left out of every
/// tree even where the project does not ignore them: a run rewrites them, and they are
/// nobody's code or checks.
const CACHES: &[&str] = &[
    ":(exclude,glob)**/__pycache__/**",
    ":(exclude,glob)**/.mypy_cache/**",
    ":(exclude,glob)**/.pytest_cache/**",
    ":(exclude,glob)**/.ruff_cache/**",
    ":(exclude,glob)**/.ralph/**",
    // A loop's own state file changes at every stop: it is the loop's, not the project's.
    ":(exclude,glob)**/ralph-loop.local.md",
    ":(exclude,glob)**/ralph-loop-*.local.md",
];

/// The tree of every file git does not ignore in the work tree holding `dir`, tracked or
/// not, as it is now (tools' caches left out). The user's index lends its file stamps (a
/// copy), so unchanged files are not read again.
pub fn work_tree(dir: &Path) -> Result<String, GitError> {
    let top = top(dir)?;
    let index = Private::new(&top)?;
    let real = git::git_path(&top, "index")?;
    if real.is_file() {
        lend_stamps(&real, &index.path()).map_err(GitError::Spawn)?;
        trust_no_flags(&top, &index)?;
    }
    let mut add = vec!["add", "-A", "--", "."];
    add.extend(CACHES);
    index.git(&top, &add, b"")?;
    let out = index.git(&top, &["write-tree"], b"")?;
    Ok(String::from_utf8_lossy(out.trim_ascii()).into_owned())
}

/// Clears, in the private index, the flags that make `git add` skip a file it has: "assume
/// unchanged" (an edit is never looked at) and "skip worktree" where the file is there
/// anyway. Anyone can set them on the user's index; a tree must see every edit.
fn trust_no_flags(top: &Path, index: &Private) -> Result<(), GitError> {
    let listing = index.git(top, &["ls-files", "-v", "-z"], b"")?;
    let mut flagged = Vec::new();
    for entry in listing.split(|b| *b == 0).filter(|e| e.len() > 2) {
        let (tag, path) = (entry[0], &entry[2..]);
        let present = || {
            top.join(crate::platform::os_str(path))
                .symlink_metadata()
                .is_ok()
        };
        if tag.is_ascii_lowercase() || (tag == b'S' && present()) {
            flagged.extend_from_slice(path);
            flagged.push(0);
        }
    }
    // One flag a call: given both, update-index applies only the last to paths on stdin.
    if !flagged.is_empty() {
        for flag in ["--no-assume-unchanged", "--no-skip-worktree"] {
            index.git(top, &["update-index", flag, "-z", "--stdin"], &flagged)?;
        }
    }
    Ok(())
}

/// Copies the index `real` to `to` with its modification time. Git trusts an entry's stamp
/// only when the file is older than the index (its "racy" rule), so a copy stamped now would
/// make a file written in the same second as its entry look unchanged.
fn lend_stamps(real: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(real, to)?;
    let modified = std::fs::metadata(real)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(modified)
}

/// Every path whose entry differs between the trees `old` and `new`.
pub fn diff(dir: &Path, old: &str, new: &str) -> Result<Vec<Changed>, GitError> {
    let out = run_raw(dir, &["diff-tree", "-r", "-z", "--no-renames", old, new])?;
    Ok(parse_raw(&out))
}

/// The paths git's rename detection pairs between the trees `old` and `new` (content at
/// least half the same): what was moved, from where to where, relative to the top.
pub fn renames(dir: &Path, old: &str, new: &str) -> Result<Vec<(PathBuf, PathBuf)>, GitError> {
    let args = ["diff-tree", "-r", "-z", "-M", "--diff-filter=R", old, new];
    let out = run_raw(dir, &args)?;
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut pairs = Vec::new();
    while let (Some(_meta), Some(from), Some(to)) = (fields.next(), fields.next(), fields.next()) {
        let path = |p: &[u8]| PathBuf::from(crate::platform::os_str(p));
        pairs.push((path(from), path(to)));
    }
    Ok(pairs)
}

/// The tree `new` with each link among `changes` (since an older tree) that leads out of the
/// work tree to a file replaced by that file's content: where code moved out of the project
/// behind a link ends up, for rename detection to follow. `new` when there is none.
pub fn links_followed(dir: &Path, new: &str, changes: &[Changed]) -> Result<String, GitError> {
    let top = top(dir)?;
    let inside = top.canonicalize().unwrap_or_else(|_| top.clone());
    let mut put = Vec::new();
    for c in changes {
        if c.new.as_ref().is_none_or(|e| e.mode != "120000") {
            continue;
        }
        let Ok(target) = top.join(&c.path).canonicalize() else {
            continue;
        };
        if target.starts_with(&inside) || !target.is_file() {
            continue;
        }
        let at = target.to_string_lossy().into_owned();
        let object = run_raw(&top, &["hash-object", "-w", "--no-filters", "--", &at])?;
        let entry = Entry {
            mode: "100644".into(),
            object: String::from_utf8_lossy(object.trim_ascii()).into_owned(),
        };
        put.push((c.path.clone(), Some(entry)));
    }
    match put.is_empty() {
        true => Ok(new.to_string()),
        false => mix(&top, new, &put),
    }
}

/// The paths `changes` delete from the tree `old` whose content is all in a file they add to
/// the tree `new` (every line, in order, among others): moved, where rename detection sees
/// too little of the new file in common to pair them (code padded out on its way elsewhere).
pub fn contained(
    dir: &Path,
    (old, new): (&str, &str),
    changes: &[Changed],
) -> Result<Vec<(PathBuf, PathBuf)>, GitError> {
    let gone: Vec<&Path> = changes
        .iter()
        .filter(|c| c.old.is_some() && c.new.is_none())
        .map(|c| c.path.as_path())
        .collect();
    let came: Vec<&Path> = changes
        .iter()
        .filter(|c| c.old.is_none() && c.new.is_some())
        .map(|c| c.path.as_path())
        .collect();
    if gone.is_empty() || came.is_empty() {
        return Ok(Vec::new());
    }
    let top = top(dir)?;
    // One `cat-file --batch` for each tree, however many files were added.
    let (before, after) = (git::Blobs::open(&top, old)?, git::Blobs::open(&top, new)?);
    let small = |text: Option<Vec<u8>>| text.filter(|t| t.len() < 1 << 20);
    let came: Vec<(&Path, Vec<u8>)> = came
        .into_iter()
        .filter_map(|p| Some((p, small(after.read(p))?)))
        .collect();
    let mut pairs = Vec::new();
    for from in gone {
        let Some(text) = small(before.read(from)) else {
            continue;
        };
        if let Some((to, _)) = came.iter().find(|(_, t)| lines_within(&text, t)) {
            pairs.push((from.to_path_buf(), to.to_path_buf()));
        }
    }
    Ok(pairs)
}

/// Pure: true when `part` has at least two lines with text and each of them (without its
/// indentation and trailing blanks) is a line of `whole`, in the same order.
fn lines_within(part: &[u8], whole: &[u8]) -> bool {
    let lines = |t: &[u8]| -> Vec<Vec<u8>> {
        t.split(|b| *b == b'\n')
            .map(|l| l.trim_ascii().to_vec())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let (part, whole) = (lines(part), lines(whole));
    let mut rest = whole.iter();
    part.len() >= 2 && part.iter().all(|l| rest.any(|w| w == l))
}

/// A file's status change time (which no process can set back) and modification time (which
/// any can), in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub changed: i128,
    pub modified: i128,
}

impl Stamp {
    /// True when the file was written since `was` and its modification time then set back:
    /// content put back as it was, so as to pass for untouched. A tool that rewrites a file
    /// with the same content (`npm install`'s lock file, `go generate`) moves both times.
    pub fn put_back_since(&self, was: &Stamp) -> bool {
        self.changed != was.changed && self.modified == was.modified
    }
}

/// When each file of the tree `tree` last changed in the work tree holding `dir`, relative to
/// the top. A file the tree has and the work tree does not is left out.
pub fn stamps(dir: &Path, tree: &str) -> Result<BTreeMap<PathBuf, Stamp>, GitError> {
    let top = top(dir)?;
    let listed = run_raw(&top, &["ls-tree", "-r", "-z", "--name-only", tree])?;
    Ok(git::split_nul(&listed)
        .into_iter()
        .filter_map(|rel| {
            let meta = std::fs::symlink_metadata(top.join(&rel)).ok()?;
            let stamps = crate::platform::stamps(&meta);
            let stamp = Stamp {
                changed: stamps.changed_ns,
                modified: stamps.modified_ns,
            };
            Some((rel, stamp))
        })
        .collect())
}

/// `diff-tree -z` raw output: `:oldmode newmode oldobj newobj status` NUL `path` NUL.
fn parse_raw(out: &[u8]) -> Vec<Changed> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut all = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_obj, new_obj, ..] = parts[..] else {
            continue;
        };
        let entry = |mode: &str, object: &str| {
            (!mode.trim_start_matches('0').is_empty()).then(|| Entry {
                mode: mode.to_string(),
                object: object.to_string(),
            })
        };
        all.push(Changed {
            path: PathBuf::from(crate::platform::os_str(path)),
            old: entry(old_mode, old_obj),
            new: entry(new_mode, new_obj),
        });
    }
    all
}

/// The tree `base` with each path given the entry named (`None`: removed).
pub fn mix(dir: &Path, base: &str, put: &[(PathBuf, Option<Entry>)]) -> Result<String, GitError> {
    let top = top(dir)?;
    let index = Private::new(&top)?;
    index.git(&top, &["read-tree", base], b"")?;
    let mut info = Vec::new();
    for (path, entry) in put {
        let line = match entry {
            Some(e) => format!("{} {}\t", e.mode, e.object),
            None => format!("0 {}\t", "0".repeat(40)),
        };
        info.extend_from_slice(line.as_bytes());
        info.extend_from_slice(path.as_os_str().as_encoded_bytes());
        info.push(0);
    }
    index.git(&top, &["update-index", "-z", "--index-info"], &info)?;
    let out = index.git(&top, &["write-tree"], b"")?;
    Ok(String::from_utf8_lossy(out.trim_ascii()).into_owned())
}

/// A tree checked out in a repository of its own in a temporary folder, removed with it.
///
/// Not a linked worktree of the user's repository: that writes git's record of it under
/// `.git/worktrees/` for as long as the checkout lives, and tools that walk the project
/// (`node --test` walks `.git`) would then meet a folder that comes and goes under them
/// while a background job runs. The checkout's repository borrows the user's objects
/// (`objects/info/alternates`) and ignore rules (`info/`): nothing is copied or written
/// in the user's repository but the commit naming the tree.
pub struct Checkout {
    dir: tempfile::TempDir,
}

impl Checkout {
    /// The tree `tree` of the repository at `dir`, checked out in a new folder. No hook of
    /// the repository runs: the checkout is ralph-gate's, not the user's.
    pub fn of(dir: &Path, tree: &str) -> Result<Self, GitError> {
        let top = top(dir)?;
        let common = git::common_dir(&top).ok_or_else(|| GitError::Failed {
            args: "rev-parse --git-common-dir".into(),
            message: format!("no git folder found for {}", top.display()),
        })?;
        let commit = run_raw(
            &top,
            &[
                "-c",
                "user.name=ralph-gate",
                "-c",
                "user.email=ralph-gate@localhost",
                "commit-tree",
                tree,
                "-m",
                "ralph-gate: a differential run's tree",
            ],
        )?;
        let commit = String::from_utf8_lossy(commit.trim_ascii()).into_owned();
        let holder = tempfile::Builder::new()
            .prefix("ralph-gate-differential")
            .tempdir()
            .map_err(GitError::Spawn)?;
        let checkout = Self { dir: holder };
        let at = checkout.path();
        git::run(checkout.dir.path(), &["init", "-q", "--template=", "tree"])?;
        borrow(&common, &at.join(".git")).map_err(GitError::Spawn)?;
        let disarmed = disarmed_filters(&top);
        let in_tree = |args: &[&str]| git::finished(args, raw(&at, &disarmed).args(args).output());
        in_tree(&["update-ref", "--no-deref", "HEAD", &commit])?;
        in_tree(&["read-tree", "--reset", "-u", "HEAD"])?;
        Ok(checkout)
    }

    /// The top of the checked-out tree.
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("tree")
    }
}

/// Lends the repository whose git folder is `common` to the new one at `git`: its objects
/// (read where they are) and the ignore rules and attributes of its `info/`.
fn borrow(common: &Path, git: &Path) -> std::io::Result<()> {
    let objects = git.join("objects").join("info");
    std::fs::create_dir_all(&objects)?;
    let mut alternates = common.join("objects").into_os_string().into_encoded_bytes();
    alternates.push(b'\n');
    std::fs::write(objects.join("alternates"), alternates)?;
    let info = git.join("info");
    std::fs::create_dir_all(&info)?;
    for name in ["exclude", "attributes"] {
        match std::fs::copy(common.join("info").join(name), info.join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// The paths git ignores in the work tree holding `dir` (a folder once, as `name/`),
/// relative to its top.
pub fn ignored(dir: &Path) -> Result<Vec<PathBuf>, GitError> {
    let top = top(dir)?;
    git::paths(
        &top,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ],
    )
}

/// The folders of the work tree holding `dir` that hold other repositories (relative to
/// its top): submodules and other gitlinks in the index, and repositories git lists as
/// untracked folders. Their files are in no tree of this one's: a checkout links them as
/// they are now.
pub fn nested(dir: &Path) -> Result<Vec<PathBuf>, GitError> {
    let top = top(dir)?;
    let staged = run_raw(&top, &["ls-files", "-z", "--stage"])?;
    let mut out: Vec<PathBuf> = staged
        .split(|b| *b == 0)
        .filter(|l| l.starts_with(b"160000 "))
        .filter_map(|l| {
            let tab = l.iter().position(|b| *b == b'\t')?;
            Some(PathBuf::from(crate::platform::os_str(&l[tab + 1..])))
        })
        .collect();
    let untracked = git::paths(
        &top,
        &[
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--directory",
        ],
    )?;
    out.extend(
        untracked
            .into_iter()
            .filter(|rel| top.join(rel).join(".git").exists()),
    );
    Ok(out)
}

/// What git ignores in the work tree holding `dir` (installed packages, virtual
/// environments, local configs), each path with what it is: `folder` (its content is not
/// read: a dependency folder changes as packages are installed), or a file's digest. A
/// differential run lends only what is as it was at the start.
pub fn ignored_state(dir: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let top = top(dir)?;
    let mut out = BTreeMap::new();
    for rel in ignored(&top)? {
        let full = top.join(&rel);
        let Ok(meta) = full.symlink_metadata() else {
            continue;
        };
        let what = if meta.is_dir() {
            "folder".to_string()
        } else if meta.len() > 1 << 20 {
            format!("size {} modified {:?}", meta.len(), meta.modified().ok())
        } else {
            let bytes = std::fs::read(&full).unwrap_or_default();
            blake3::hash(&bytes).to_hex().to_string()
        };
        let key = rel.to_string_lossy().trim_end_matches('/').to_string();
        out.insert(key, what);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for args in [
            &["init", "-q"][..],
            &["config", "user.email", "t@example.com"],
            &["config", "user.name", "t"],
        ] {
            git::run(dir.path(), args).unwrap();
        }
        dir
    }

    #[test]
    fn a_tree_holds_untracked_files_and_leaves_the_index_alone() {
        let dir = repo();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git::run(dir.path(), &["add", "a.txt"]).unwrap();
        std::fs::write(dir.path().join("new.txt"), "n\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "skip.txt\n").unwrap();
        std::fs::write(dir.path().join("skip.txt"), "s\n").unwrap();
        let tree = work_tree(dir.path()).unwrap();
        let listed = git::run(dir.path(), &["ls-tree", "--name-only", &tree]).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&listed),
            ".gitignore\na.txt\nnew.txt\n"
        );
        let staged = git::run(dir.path(), &["diff", "--cached", "--name-only"]).unwrap();
        assert_eq!(String::from_utf8_lossy(&staged), "a.txt\n");
        assert_eq!(
            ignored(dir.path()).unwrap(),
            vec![PathBuf::from("skip.txt")]
        );
    }

    #[test]
    fn a_moved_file_is_paired_with_where_it_went() {
        let dir = repo();
        let body = "def f():\n    return 1\n".repeat(20);
        std::fs::write(dir.path().join("app.py"), &body).unwrap();
        let old = work_tree(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("app.py")).unwrap();
        std::fs::write(dir.path().join("app.py.txt"), format!("{body}# moved\n")).unwrap();
        let new = work_tree(dir.path()).unwrap();
        assert_eq!(
            renames(dir.path(), &old, &new).unwrap(),
            vec![(PathBuf::from("app.py"), PathBuf::from("app.py.txt"))]
        );
    }

    #[test]
    fn a_file_put_back_is_one_whose_modification_time_was_set_back() {
        let was = Stamp {
            changed: 10,
            modified: 5,
        };
        let put_back = Stamp { changed: 20, ..was };
        assert!(put_back.put_back_since(&was));
        let rewritten = Stamp {
            changed: 20,
            modified: 20,
        };
        assert!(!rewritten.put_back_since(&was), "a rewrite moves both");
        assert!(!was.put_back_since(&was), "untouched");
    }

    #[test]
    fn a_files_lines_within_another_in_order_are_contained() {
        let code = b"def f(:\n    return 1\n";
        assert!(lines_within(
            code,
            b"x = 1\ny = 2\ndef f(:\n  return 1\nz = 3\n"
        ));
        assert!(!lines_within(code, b"return 1\ndef f(:\n"), "out of order");
        assert!(
            !lines_within(b"x = 1\n", b"x = 1\n"),
            "one line says nothing"
        );
    }

    #[test]
    fn a_diff_and_a_mix_put_the_old_entries_back_in_a_checkout() {
        let dir = repo();
        std::fs::write(dir.path().join("kept.txt"), "1\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "old\n").unwrap();
        let old = work_tree(dir.path()).unwrap();
        std::fs::write(dir.path().join("kept.txt"), "2\n").unwrap();
        std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
        std::fs::write(dir.path().join("came.txt"), "new\n").unwrap();
        let new = work_tree(dir.path()).unwrap();
        let changed = diff(dir.path(), &old, &new).unwrap();
        let names: Vec<_> = changed.iter().map(|c| c.path.clone()).collect();
        assert_eq!(
            names,
            ["came.txt", "gone.txt", "kept.txt"].map(PathBuf::from)
        );
        assert!(changed[0].old.is_none() && changed[1].new.is_none());
        let back: Vec<_> = changed
            .iter()
            .filter(|c| c.path != Path::new("kept.txt"))
            .map(|c| (c.path.clone(), c.old.clone()))
            .collect();
        let mixed = mix(dir.path(), &new, &back).unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        std::fs::write(dir.path().join(".git/info/exclude"), "*.log\n").unwrap();
        let checkout = Checkout::of(dir.path(), &mixed).unwrap();
        assert!(
            !dir.path().join(".git/worktrees").exists(),
            "nothing is written in the user's git folder while the checkout lives"
        );
        let in_checkout = |args: &[&str]| git::run(&checkout.path(), args);
        let listed = in_checkout(&["ls-files"]).unwrap();
        assert_eq!(String::from_utf8_lossy(&listed), "gone.txt\nkept.txt\n");
        assert!(
            in_checkout(&["check-ignore", "-q", "x.log"]).is_ok(),
            "the user's own ignore rules hold in the checkout"
        );
        let read = |n: &str| std::fs::read_to_string(checkout.path().join(n)).ok();
        assert_eq!(read("kept.txt").as_deref(), Some("2\n"));
        assert_eq!(read("gone.txt").as_deref(), Some("old\n"));
        assert_eq!(read("came.txt"), None);
        assert!(
            renames(dir.path(), &old, &new).unwrap().is_empty(),
            "nothing moved"
        );
        let at = checkout.path();
        drop(checkout);
        assert!(!at.exists(), "the checkout is removed with its guard");
    }
}
