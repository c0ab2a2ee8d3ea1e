//! Observed inputs: the files a gate's run actually read, recorded as it ran (see [`trace`]),
//! so a stored result is reused only while every one of them is as it was. The drivers'
//! static model of a tool's inputs (its files, manifests, configs) still makes the key; what
//! a run observed is checked on top of it, and catches what no model lists: a gitignored
//! generated file, a dependency's `.d.ts`, the checker's own package after an upgrade, a
//! config a tool looks for in a folder above the project.
//!
//! Left out of what a run read: what it wrote, and the caches tools keep of their own work
//! (a folder tagged with `CACHEDIR.TAG` that holds no Python environment, `__pycache__`,
//! `.mypy_cache`, ...): they follow from the inputs, and keying on them would make every
//! run new.

// The observer is Linux's (ptrace, seccomp, a preloaded C library) and can be built out
// (`--no-default-features`): the portable build, as on a platform without it. `build.rs`
// sets `cfg(observer)` when it is built.
#[cfg(observer)]
mod filter;
#[cfg(observer)]
mod preload;
mod record;
#[cfg(observer)]
pub mod trace;
#[cfg(not(observer))]
#[path = "unobserved.rs"]
pub mod trace;

use ralph_base::digest::{Content, Digests};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// How a run touched a path; a path touched several ways keeps the strongest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// stat, access, readlink: what kind of thing is there (and a file's content).
    Probe,
    /// Opened for reading: a file's content, a folder's listing.
    Read,
    /// Written, created or renamed onto: an output, not an input.
    Write,
}

/// One input of a stored result: its path (relative to the project root, `~/`-relative, or
/// absolute) and what it was when the run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub path: String,
    pub seen: String,
    /// Only asked about (stat, access), never opened: what kind of thing is there mattered,
    /// not what it says. A walk of the project stats every entry it meets (pytest's of the
    /// root folder does), so `check --staged` refuses a run only for untracked files it
    /// opened. Still keyed by content: a tool can judge by a file's time or size (make).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probed: bool,
    /// For a folder whose listing was read: the names in it the run wrote itself, left out
    /// of the listing when it is stored and when it is checked (uv rewrites `.venv/.lock`
    /// on every run: the run's own output is not what it read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own: Vec<String>,
}

/// Where a run's paths are judged from.
pub struct Places {
    pub root: PathBuf,
    pub home: Option<PathBuf>,
    /// Folders whose content is never an input: ralph-gate's own state, the run's private
    /// folder, tools' caches outside the project.
    pub skip: Vec<PathBuf>,
    /// Temporary folders (`$TMPDIR`, `/tmp`): what tools make and look for there has a new
    /// name every run (`/tmp/go-build1234`). Outside the project only: a project may live in
    /// one.
    pub temp: Vec<PathBuf>,
}

impl Places {
    pub fn new(root: PathBuf, home: Option<PathBuf>, skip: Vec<PathBuf>) -> Self {
        let mut temp = vec![std::env::temp_dir(), "/tmp".into(), "/var/tmp".into()];
        temp.dedup();
        Self {
            root,
            home,
            skip,
            temp,
        }
    }
}

/// Folder names tools keep their caches in, when they do not tag them with `CACHEDIR.TAG`.
/// Only caches of what was read: `.tox` and `.nox` hold environments whose packages a run
/// reads, and `.hypothesis` the examples a test replays, so they are inputs.
const CACHE_NAMES: &[&str] = &[
    ".git",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
];
const SYSTEM: &[&str] = ralph_base::platform::KERNEL_DIRS;

/// Why a run's observation cannot back a stored result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotStored {
    #[error("the run read {}, whose name cannot be stored", .0.display())]
    Unnamable(PathBuf),
    #[error("{} changed while the gate ran", .0.display())]
    ChangedDuring(PathBuf),
    #[error("the run talked to a server it did not start ({}): what that server read is not known", .0.display())]
    Server(PathBuf),
}

/// The first Unix socket a run connected to whose server it did not start: one that was
/// there before the run began (changed before `started`, on the coarse clock), outside the
/// system's own service folders (`/run`, `/var/run`, `/dev`: name lookups, the journal and
/// D-Bus answer the same whatever the project holds). What such a server read (dmypy's
/// daemon, a language server) decided the result, and no record of the run shows it.
pub fn foreign_server(sockets: &HashSet<PathBuf>, started: i128) -> Option<NotStored> {
    let mut found: Vec<&PathBuf> = sockets
        .iter()
        .filter(|s| {
            !["/run", "/var/run", "/dev"]
                .iter()
                .any(|d| s.starts_with(d))
        })
        .filter(|s| changed_at(s).is_some_and(|t| t < started))
        .collect();
    found.sort();
    found.first().map(|s| NotStored::Server(PathBuf::clone(s)))
}

/// The inputs of a finished run: every path it read or probed that is not an output or a
/// cache, with what it is now. `Err` says why the result cannot be stored: an input changed
/// while the run was going on (its time is at or after `started`, on the kernel's coarse
/// clock, the one file times are taken from).
pub fn inputs(
    paths: &HashMap<PathBuf, Access>,
    places: &Places,
    digests: &Digests,
    started: i128,
) -> Result<Vec<Input>, NotStored> {
    let written: HashSet<&Path> = paths
        .iter()
        .filter(|(_, a)| **a == Access::Write)
        .map(|(p, _)| p.as_path())
        .collect();
    let written_in = own_names(&written);
    let all: Vec<(&PathBuf, &Access)> = paths.iter().collect();
    // The digests are what a run waits for once its gate has finished (an interpreter's
    // standard library, the first time): spread over the cores, which are free by then.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(all.len() / INPUTS_PER_THREAD)
        .clamp(1, 4);
    let per = all.len().div_ceil(threads).max(1);
    let seen = Seeing {
        places,
        digests,
        started,
        written: &written,
        written_in: &written_in,
    };
    // One part (an edit hook's few inputs) is read here: no thread to start.
    let parts: Vec<Result<Vec<Input>, NotStored>> = if threads == 1 {
        vec![seen.all(&all)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = all
                .chunks(per)
                .map(|part| scope.spawn(|| seen.all(part)))
                .collect();
            running
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    let mut out = Vec::new();
    for part in parts {
        out.extend(part?);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Fewer inputs than this per thread are not worth a thread's start.
const INPUTS_PER_THREAD: usize = 64;

/// What [`inputs`] reads each path with.
struct Seeing<'a> {
    places: &'a Places,
    digests: &'a Digests,
    started: i128,
    written: &'a HashSet<&'a Path>,
    written_in: &'a HashMap<&'a Path, Vec<String>>,
}

impl Seeing<'_> {
    fn all(&self, paths: &[(&PathBuf, &Access)]) -> Result<Vec<Input>, NotStored> {
        let mut tags = Tags::default();
        let mut out = Vec::new();
        for &(path, access) in paths {
            let root = &self.places.root;
            if *access == Access::Write || skipped(path, self.places) || tags.in_cache(path, root) {
                continue;
            }
            out.push(self.one(path, *access)?);
        }
        Ok(out)
    }

    fn one(&self, path: &Path, access: Access) -> Result<Input, NotStored> {
        let Some(stored) = stored_form(path, self.places) else {
            return Err(NotStored::Unnamable(path.to_path_buf()));
        };
        let seen = fingerprint(path, access == Access::Read, self.digests, self.written);
        // Read after the digest, not with it: a write between the two would otherwise
        // store content the run never read. A folder's own time moves with every file made
        // in it (by this run too); its listing leaves the run's outputs out instead.
        if let Some(time) = changed_at(path).filter(|_| seen.starts_with("f:")) {
            if time >= self.started {
                return Err(NotStored::ChangedDuring(path.to_path_buf()));
            }
        }
        let own = match seen.starts_with("ls:") {
            true => self.written_in.get(path).cloned().unwrap_or_default(),
            false => Vec::new(),
        };
        Ok(Input {
            path: stored,
            seen,
            probed: access == Access::Probe,
            own,
        })
    }
}

/// The files outside the project that a run read and that were there, as paths here: what a
/// loop asks whether anything changed after it began. Not folders: a folder's change time
/// moves with any file made in it, read or not.
pub fn outside(inputs: &[Input], places: &Places) -> Vec<PathBuf> {
    inputs
        .iter()
        .filter(|i| !i.path.starts_with("./") && i.path != ".")
        .filter(|i| i.seen.starts_with("f:"))
        .map(|i| real_path(&i.path, places))
        .collect()
}

/// The files inside the project a stored run opened, relative to the root: not one it only
/// looked at (a runner's walk for test files stats every file it passes), a folder's
/// listing or a name looked for and missing.
pub fn inside(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .filter(|i| i.seen.starts_with("f:") && !i.probed)
        .filter_map(|i| i.path.strip_prefix("./"))
        .map(str::to_string)
        .collect()
}

/// [`inside`] of a run's record itself, whether or not its result can be stored (a file it
/// read that changed while it ran still says where its tests looked).
pub fn opened(paths: &HashMap<PathBuf, Access>, root: &Path) -> Vec<String> {
    opened_and_listed(paths, root).0
}

/// [`opened`], and the folders inside `root` the record says the run opened for reading (so
/// listed, mostly), relative to it (the root itself empty), never a tool's cache (`.git`,
/// `__pycache__`): one pass, one stat a path.
pub fn opened_and_listed(
    paths: &HashMap<PathBuf, Access>,
    root: &Path,
) -> (Vec<String>, Vec<String>) {
    let (mut files, mut folders) = (Vec::new(), Vec::new());
    let read = paths.iter().filter(|(_, a)| **a == Access::Read);
    for (path, _) in read {
        let (Ok(rel), Ok(meta)) = (path.strip_prefix(root), std::fs::metadata(path)) else {
            continue;
        };
        let Some(name) = rel.to_str().map(str::to_string) else {
            continue;
        };
        if meta.is_file() && !name.is_empty() {
            files.push(name);
        } else if meta.is_dir()
            && !rel
                .components()
                .any(|c| CACHE_NAMES.iter().any(|n| c.as_os_str() == *n))
        {
            folders.push(name);
        }
    }
    (files, folders)
}

/// A path inside the project a run's processes opened, asked of or listed (not one it only
/// wrote), absolute, and which processes did (see [`record::Record::by`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub path: PathBuf,
    pub by: Vec<i32>,
}

/// The paths inside `root` the record says its processes named, never in a tool's cache
/// (`.git`, `__pycache__`), with the processes that did. No stat: only the few a caller
/// keeps are asked whether they are folders.
pub fn named_inside(record: &record::Record, root: &Path) -> Vec<Named> {
    let cache = |rel: &Path| {
        rel.components()
            .any(|c| CACHE_NAMES.iter().any(|n| c.as_os_str() == *n))
    };
    record
        .paths
        .iter()
        .filter(|(_, a)| **a != Access::Write)
        .filter(|(p, _)| p.strip_prefix(root).is_ok_and(|rel| !cache(rel)))
        .map(|(path, _)| Named {
            path: path.clone(),
            by: record.by.get(path).cloned().unwrap_or_default(),
        })
        .collect()
}

/// The paths of `record` but the files outside `root` that its processes opened read-write:
/// a tool's own state (cargo's `.global-cache`, a lock file), which every run of the tool
/// rewrites. Keyed on, no result would be stored (it changes as the run reads it), and a
/// loop would be held for a file outside the repository "changed" by its own gates.
pub fn without_own_state<'a>(
    record: &'a record::Record,
    root: &Path,
) -> std::borrow::Cow<'a, HashMap<PathBuf, Access>> {
    let own = |p: &PathBuf| record.updated.contains(p) && !p.starts_with(root);
    if !record.updated.iter().any(own) {
        return std::borrow::Cow::Borrowed(&record.paths);
    }
    let kept = record.paths.iter().filter(|(p, _)| !own(p));
    std::borrow::Cow::Owned(kept.map(|(p, a)| (p.clone(), *a)).collect())
}

/// The files inside `root` that the processes `roots`, their threads or any process they
/// started opened for reading (absolute), never in a tool's cache.
pub fn opened_by(record: &record::Record, roots: &[i32], root: &Path) -> Vec<PathBuf> {
    let mut family: HashSet<i32> = roots.iter().copied().collect();
    // Ids are given out in order, but a parent's entry may come after its child's: repeat
    // until nothing joins.
    loop {
        let before = family.len();
        for (child, parent) in &record.parent {
            if family.contains(parent) {
                family.insert(*child);
            }
        }
        if family.len() == before {
            break;
        }
    }
    named_inside(record, root)
        .into_iter()
        .filter(|n| record.paths.get(&n.path) == Some(&Access::Read))
        .filter(|n| n.by.iter().any(|p| family.contains(p)))
        .map(|n| n.path)
        .collect()
}

/// The names the run wrote, by folder, each folder's sorted: one pass over what it wrote,
/// however many folders it listed.
fn own_names<'a>(written: &HashSet<&'a Path>) -> HashMap<&'a Path, Vec<String>> {
    let mut by_dir: HashMap<&Path, Vec<String>> = HashMap::new();
    for w in written {
        if let (Some(dir), Some(name)) = (w.parent(), w.file_name().and_then(|n| n.to_str())) {
            by_dir.entry(dir).or_default().push(name.to_string());
        }
    }
    for names in by_dir.values_mut() {
        names.sort();
    }
    by_dir
}

/// The first input that is no longer what it was, described; `None` when all are.
pub fn changed(inputs: &[Input], places: &Places, digests: &Digests) -> Option<String> {
    inputs.iter().find_map(|i| {
        let path = real_path(&i.path, places);
        let listing = i.seen.starts_with("ls:");
        let own: Vec<PathBuf> = i.own.iter().map(|n| path.join(n)).collect();
        let own: HashSet<&Path> = own.iter().map(PathBuf::as_path).collect();
        let now = fingerprint(&path, listing, digests, &own);
        (now != i.seen).then(|| format!("{} changed", i.path))
    })
}

use ralph_base::clock::changed_at;
pub use ralph_base::clock::coarse_now;

/// What a test runner said a file of the project is to its tests, by what it did with it
/// (pytest's listener): heard beside what the tracer saw, kept with a stored result, and
/// part of the checks a loop's end puts back, whatever the file's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfTests {
    /// It collected tests to run from it.
    Collected,
    /// It loaded it as a plugin.
    Loaded,
    /// The code of its tests (or of a conftest, a plugin) opened it for reading.
    Read,
    /// A process its tests started read it, and no process said whether as the code under
    /// test's or as the tests' data (a `cat`, a Python that ended without its exit): either.
    Unheard,
    /// A compiled test binary (Go's, libtest's: the tests and the code under test in one
    /// program), a thread of it or a process it started opened it for reading: the tests'
    /// data or the code's input, not known which.
    Binary,
    /// The code of its tests named it without opening it: it is in a folder they listed
    /// (the names may be their cases), or they asked of it (its size, its mode, a link's
    /// target, whether it is there). What it holds may be their data or the code under
    /// test (a script beside the cases): either.
    Listed,
}

/// The files of `said` inside `root`, relative to it: what a stored result keeps.
pub fn said_inside(said: &[(PathBuf, OfTests)], root: &Path) -> Vec<(String, OfTests)> {
    said.iter()
        .filter_map(|(p, part)| {
            let rel = p.strip_prefix(root).ok()?.to_str()?;
            (!rel.is_empty()).then(|| (rel.to_string(), *part))
        })
        .collect()
}

/// What is at `path`: a file's content digest, a folder (its listing when it was read),
/// nothing, or something else. `written` names are left out of a listing: the run's own
/// outputs are not what it read.
fn fingerprint(path: &Path, listing: bool, digests: &Digests, written: &HashSet<&Path>) -> String {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return "absent".into(),
        Err(e) => return format!("unreadable:{:?}", e.kind()),
    };
    if meta.is_dir() {
        return if listing {
            format!("ls:{}", list(path, written))
        } else {
            "dir".into()
        };
    }
    if !meta.is_file() {
        return "special".into();
    }
    // Inside the project, by the relative name the static key's digests use too.
    let named = path.strip_prefix(digests.root()).unwrap_or(path);
    match digests.of(named) {
        Ok(Content::Digest(d)) => format!("f:{d}"),
        Ok(Content::Absent) => "absent".into(),
        Err(e) => format!("unreadable:{:?}", e.kind()),
    }
}

/// A digest of a folder's names, without caches and what the run wrote there.
fn list(dir: &Path, written: &HashSet<&Path>) -> String {
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| !written.contains(e.path().as_path()))
                .map(|e| e.file_name())
                .filter(|n| {
                    !CACHE_NAMES
                        .iter()
                        .any(|c| n.as_encoded_bytes() == c.as_bytes())
                })
                .map(|n| n.as_encoded_bytes().to_vec())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut h = blake3::Hasher::new();
    for n in &names {
        h.update(&(n.len() as u64).to_le_bytes());
        h.update(n);
    }
    h.finalize().to_hex()[..32].to_string()
}

/// Paths that are never inputs: the system's virtual folders, temporary ones outside the
/// project, the places the caller names, tools' cache folders by name, `*.tsbuildinfo` and `*.pyc`.
fn skipped(path: &Path, places: &Places) -> bool {
    if SYSTEM.iter().any(|s| path.starts_with(s))
        || places.skip.iter().any(|s| path.starts_with(s))
        || places.temp.iter().any(|t| in_temp(path, t, &places.root))
    {
        return true;
    }
    let mut previous: Option<&std::ffi::OsStr> = None;
    for c in path.components() {
        if let Component::Normal(name) = c {
            let b = name.as_encoded_bytes();
            if CACHE_NAMES.iter().any(|n| b == n.as_bytes())
                || (b == b".cache" && previous.is_some_and(|p| p == "node_modules"))
            {
                return true;
            }
            previous = Some(name);
        }
    }
    // Compiled forms of what was read (Python's bytecode, wherever its prefix puts it) and
    // TypeScript's record of its last build.
    path.extension()
        .is_some_and(|e| e == "tsbuildinfo" || e == "pyc")
}

/// Whether `path` is scratch in the temporary folder `temp`: under it, and not under the
/// folder of it that holds the project. A project checked out in `/tmp/work/app` keeps its
/// own files and its neighbours (`/tmp/work/.cargo/config.toml`); `/tmp/go-build1234` is
/// still scratch.
fn in_temp(path: &Path, temp: &Path, root: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(temp) else {
        return false;
    };
    let project_side = root
        .strip_prefix(temp)
        .ok()
        .and_then(|r| r.components().next())
        .zip(rest.components().next())
        .is_some_and(|(r, p)| r == p);
    !project_side
}

/// Which folders are caches by the Cache Directory Tagging convention (Cargo's `target/`,
/// `.mypy_cache`, `.pytest_cache`, `.ruff_cache` carry `CACHEDIR.TAG`) or, for Go's build
/// cache, by its README; remembered per run.
#[derive(Default)]
struct Tags(HashMap<PathBuf, bool>);

impl Tags {
    /// A tagged folder that holds the project is not a cache of it: a project made inside
    /// Cargo's `target/` (a test's scratch project) keeps its files.
    fn in_cache(&mut self, path: &Path, root: &Path) -> bool {
        path.ancestors()
            .skip(1)
            .filter(|dir| !root.starts_with(dir))
            .any(|dir| self.tagged(dir))
    }

    fn tagged(&mut self, dir: &Path) -> bool {
        if let Some(t) = self.0.get(dir) {
            return *t;
        }
        let starts = |name: &str, text: &[u8]| {
            std::fs::read(dir.join(name)).is_ok_and(|b| b.starts_with(text))
        };
        // An environment is what a run imports from, whatever tag it carries: `uv venv`
        // tags `.venv` so backup tools skip it, and a library upgraded there changes verdicts.
        if dir.join("pyvenv.cfg").is_file() || dir.join("conda-meta").is_dir() {
            self.0.insert(dir.to_path_buf(), false);
            return false;
        }
        // Go's build cache ($GOCACHE) does not carry the tag; its README says what it is.
        let t = starts(
            "CACHEDIR.TAG",
            b"Signature: 8a477f597d28d172789f06886806bc55",
        ) || (dir.join("trim.txt").is_file()
            && starts(
                "README",
                b"This directory holds cached build artifacts from the Go build system.",
            ));
        self.0.insert(dir.to_path_buf(), t);
        t
    }
}

/// How a path is stored: relative to the root inside the project (so worktrees share
/// results), `~/...` under the home folder (so machines do), else absolute. `None` for a
/// name that is not UTF-8.
fn stored_form(path: &Path, places: &Places) -> Option<String> {
    if let Ok(rel) = path.strip_prefix(&places.root) {
        let s = rel.to_str()?;
        return Some(if s.is_empty() {
            ".".into()
        } else {
            format!("./{s}")
        });
    }
    if let Some(rel) = places.home.as_ref().and_then(|h| path.strip_prefix(h).ok()) {
        return Some(format!("~/{}", rel.to_str()?));
    }
    path.to_str().map(str::to_string)
}

/// The path a stored form names here.
fn real_path(stored: &str, places: &Places) -> PathBuf {
    if stored == "." {
        return places.root.clone();
    }
    if let Some(rel) = stored.strip_prefix("./") {
        return places.root.join(rel);
    }
    match (stored.strip_prefix("~/"), &places.home) {
        (Some(rel), Some(home)) => home.join(rel),
        // No home here: a path under another machine's home is not this machine's.
        (Some(_), None) => PathBuf::from("/nonexistent-home").join(stored),
        _ => PathBuf::from(stored),
    }
}

#[cfg(test)]
mod tests;
