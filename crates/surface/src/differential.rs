//! The differential run: whether a change to the checks is what made them pass. At a stop
//! that would end a loop (and in `check --base`, against the base), every file changed since
//! the loop started that is part of the
//! checks (tests, configs, the runner's plugins, build scripts, anything no gate checks:
//! `ralph_surface::surface::roles`) is put back as it was, in a checkout of its own, and the
//! stop gates run there on the final code. If they fail where the final run passed, the
//! change to those files is what made the gates pass: the loop is held and the files named.
//! If they pass, the change was honest, however it was spelled. This decides by effect what
//! the surface's parsers can only guess by form; they only word what was found.
//!
//! The judgement is also of one tree: the work tree is taken as a git tree before the final
//! run and again after it, and a stop whose tree changed meanwhile is refused.

use crate::surface::roles::{self, Facts, Role};
use crate::surface::Surface;
use ralph_base::env::Environment;
use ralph_base::git::GitError;
use ralph_base::snapshot::{self, Changed, Checkout, Entry};
use ralph_config::Phase;
use ralph_plan::project::Project;
use ralph_runner::runner::{GateResult, Limits, OfTests, Reuse};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod reach;
pub mod said;
pub use reach::{reached, reached_by_tests, still_unreached, Unreached};

/// One file put back for the differential run.
#[derive(Debug, Clone)]
pub struct PutBack {
    /// Relative to the top of the work tree: what git names.
    at: PathBuf,
    /// Relative to the project root, as findings and the agent name it.
    pub shown: String,
    /// Its entry when the loop started (`None`: it did not exist then, so it goes).
    was: Option<Entry>,
    /// It is not in the tree judged (deleted since the start).
    gone: bool,
    pub why: &'static str,
}

impl PutBack {
    /// A test file (by its runner's naming rule, or defining tests): not a config, a
    /// runner's file, a helper or data beside the tests.
    pub fn is_test(&self) -> bool {
        [roles::A_TEST, roles::DEFINES_TESTS, roles::COLLECTED].contains(&self.why)
    }
}

/// What the stop needs before its final run: the tree it judges, and what a differential
/// run would put back in it.
pub struct Prepared {
    top: PathBuf,
    /// The project root, relative to `top`.
    inside: PathBuf,
    /// What the surfaces say of the files: which are code, tests, configs.
    facts: Facts,
    /// The tree compared with: the loop's start, or the base.
    start: String,
    /// The work tree as the final run is about to judge it.
    pub tree: String,
    /// When each file of `tree` last changed, as the final run is about to judge it.
    stamps: BTreeMap<PathBuf, snapshot::Stamp>,
    /// Every file changed since `start`.
    changes: Vec<Changed>,
    pub put_back: Vec<PutBack>,
    /// Checked code moved where no gate reads it (from, to; relative to the project root):
    /// followed by content, as git's rename detection pairs them.
    pub left_reach: Vec<(String, String)>,
    /// Code moved since the start (by content, as git's rename detection pairs them), as
    /// its old path (relative to the top) and its final entry: the checks as they were
    /// find it where they looked for it, so a move of code and tests together is not
    /// mistaken for a change of the checks that made them pass.
    moved: Vec<(PathBuf, Entry)>,
    /// Code deleted since the start (not put back, not moved): each path with its entry
    /// then.
    deleted: Vec<(PathBuf, Entry)>,
    /// Code changed since the start (not put back): each path with its entries then and now.
    edited: Vec<(PathBuf, Entry, Entry)>,
    /// Code added since the start (not put back): each entry.
    came: Vec<Entry>,
    /// What git ignores that the checkout gets by link, relative to the top: as it was at
    /// the start (or everything, when the start's is not known).
    lend: Vec<PathBuf>,
    /// What git ignores that is new or changed since the start (an ignored `conftest.py`, a
    /// local config): the checkout does not get it, so a run that needs it fails there.
    pub unlent: Vec<String>,
    /// What git ignored at the start that is gone (an installed folder removed).
    pub ignored_gone: Vec<String>,
    /// Whether the differential runs are watched for what they read: only when code the
    /// tests read at the start is unread now ([`Prepared::out_of_reach`]), since watching
    /// costs a run time and only the comparison of reach uses it.
    watch: std::cell::Cell<bool>,
}

impl Prepared {
    /// The files that differ between the start tree `start` and the tree the final run
    /// judges, relative to the project root.
    pub fn changed_files(&self, start: &str) -> Result<Vec<String>, GitError> {
        let listed = snapshot::run_raw(
            &self.top,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-only",
                start,
                &self.tree,
            ],
        )?;
        Ok(listed
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .filter_map(|p| {
                let p = Path::new(ralph_base::platform::os_str(p));
                p.strip_prefix(&self.inside)
                    .ok()
                    .map(|r| r.display().to_string())
            })
            .collect())
    }

    /// True when anything of the checks differs from the start: a differential run is due.
    pub fn changed(&self) -> bool {
        !self.put_back.is_empty() || !self.unlent.is_empty()
    }

    /// The files changed since `start` (see [`Self::changed_files`]), with what git ignores
    /// that is new, changed or gone since (relative to the top, as git names it).
    pub fn changed_with_ignored(&self, start: &str) -> Result<Vec<String>, GitError> {
        let mut all = self.changed_files(start)?;
        for rel in self.unlent.iter().chain(&self.ignored_gone) {
            let path = Path::new(rel);
            let inside = path.strip_prefix(&self.inside).unwrap_or(path);
            all.push(inside.to_string_lossy().into_owned());
        }
        Ok(all)
    }

    /// Whether `p` is the tests' own, what they assert rather than how they are run: a test
    /// file, code only tests can use (`roles::TEST_ONLY`), or data the tests read
    /// ([`Facts::tests_data`]: by what the runners said of it in either tree, `said`
    /// from [`said::of_runs`], or by the language's rule). Configs, runners' files, plugins
    /// and build scripts are not.
    pub fn tests_own(&self, p: &PutBack, said: &BTreeMap<String, OfTests>) -> bool {
        use OfTests::{Binary, Listed, Read, Unheard};
        let heard = matches!(said.get(&p.shown), Some(Read | Binary | Unheard | Listed));
        p.is_test() || p.why == roles::TEST_ONLY || self.facts.tests_data(&p.shown, heard)
    }

    /// Every path a differential run gives as it was: put back, or not lent.
    pub fn names(&self) -> Vec<&str> {
        let back = self.put_back.iter().map(|p| p.shown.as_str());
        back.chain(self.unlent.iter().map(String::as_str)).collect()
    }
}

/// Which ignored paths (`now`, with what each is) a checkout is lent, and which it is not:
/// those of tools' own caches never; the rest when the start's ignored paths are not known,
/// else only those as they were then.
fn lending(
    now: &BTreeMap<String, String>,
    start: Option<&BTreeMap<String, String>>,
) -> (Vec<PathBuf>, Vec<String>) {
    let (mut lend, mut unlent) = (Vec::new(), Vec::new());
    for (rel, what) in now {
        if !lent(Path::new(rel)) {
            continue;
        }
        match start {
            Some(was) if was.get(rel) != Some(what) => unlent.push(rel.clone()),
            _ => lend.push(PathBuf::from(rel)),
        }
    }
    (lend, unlent)
}

/// The tree of the work tree now, and what changed in the checks since `start` (the loop's
/// start tree). `Err` when git cannot say: the caller holds the loop, since the checks
/// cannot be compared.
pub fn prepare(
    root: &Path,
    (start, start_ignored): (&str, Option<&BTreeMap<String, String>>),
    surfaces: (Option<&Surface>, Option<&Surface>),
) -> Result<Prepared, GitError> {
    let top = snapshot::top(root)?;
    let tree = snapshot::work_tree(&top)?;
    let stamps = snapshot::stamps(&top, &tree)?;
    let ignored_now = snapshot::ignored_state(&top)?;
    let (lend, unlent) = lending(&ignored_now, start_ignored);
    let ignored_gone = start_ignored
        .map(|was| {
            was.keys()
                .filter(|k| !ignored_now.contains_key(*k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let inside = within(root, &top);
    let facts = Facts::of(surfaces.0, surfaces.1).with_start_folders(folders(
        &top,
        start,
        inside.as_deref(),
    )?);
    let changes = snapshot::diff(&top, start, &tree)?;
    let mut put_back = Vec::new();
    for c in changes.iter().cloned() {
        let shown = match inside.as_deref().map(|p| c.path.strip_prefix(p)) {
            Some(Ok(rel)) => rel.to_string_lossy().into_owned(),
            _ => {
                let shown = format!("/{}", c.path.to_string_lossy());
                put_back.push(back(c, shown, "it is outside the project"));
                continue;
            }
        };
        // Two processes a file otherwise: only a manifest's text can change its role.
        let texts = match roles::reads_text(&shown) {
            true => (text(&top, c.old.as_ref()), text(&top, c.new.as_ref())),
            false => (None, None),
        };
        if let Role::Check(why) =
            roles::role(&shown, &facts, (texts.0.as_deref(), texts.1.as_deref()))
        {
            put_back.push(back(c, shown, why));
        }
    }
    let left_reach = left_reach(&top, (start, &tree, &changes), inside.as_deref(), &facts)?;
    let mut prepared = Prepared {
        top,
        inside: inside.unwrap_or_default(),
        facts,
        start: start.to_string(),
        tree,
        stamps,
        changes,
        put_back,
        left_reach,
        moved: Vec::new(),
        deleted: Vec::new(),
        edited: Vec::new(),
        came: Vec::new(),
        lend,
        unlent,
        ignored_gone,
        watch: std::cell::Cell::new(false),
    };
    prepared.code_changes()?;
    Ok(prepared)
}

impl Prepared {
    /// What the code (every change not put back) did since the start: moved, deleted,
    /// edited, added.
    fn code_changes(&mut self) -> Result<(), GitError> {
        let (changes, put_back) = (&self.changes, &self.put_back);
        let kept = |c: &&Changed| !put_back.iter().any(|p| p.at == c.path);
        self.moved = moved_code(&self.top, (&self.start, &self.tree), changes, put_back)?;
        self.deleted = deleted_code(changes, put_back, &self.moved);
        self.edited = changes
            .iter()
            .filter(kept)
            .filter_map(|c| Some((c.path.clone(), c.old.clone()?, c.new.clone()?)))
            .collect();
        self.came = changes
            .iter()
            .filter(|c| c.old.is_none())
            .filter(kept)
            .filter_map(|c| c.new.clone())
            .collect();
        Ok(())
    }

    /// Takes what the test runners said is part of their checks, in the final run or on
    /// the start tree (`said`: files relative to the project root, each with why; see
    /// [`said::by_runners`], [`said::roles`]): a change to
    /// one of them taken for code is put back too, and one judged both ways always is. The
    /// runner decides by what it did (loaded, collected, read), whatever the file's name or
    /// the gate's globs.
    pub fn also_checks(&mut self, said: &BTreeMap<String, &'static str>) -> Result<(), GitError> {
        let mut more = false;
        for c in &self.changes {
            let Ok(rel) = c.path.strip_prefix(&self.inside) else {
                continue;
            };
            let Some(why) = said.get(&*rel.to_string_lossy()) else {
                continue;
            };
            match self.put_back.iter_mut().find(|p| p.at == c.path) {
                Some(p) if roles::either(p.why) && !roles::either(why) => p.why = why,
                Some(_) => {}
                None => {
                    let shown = rel.to_string_lossy().into_owned();
                    self.put_back.push(back(c.clone(), shown, why));
                    more = true;
                }
            }
        }
        match more {
            true => self.code_changes(),
            false => Ok(()),
        }
    }
}

/// The code (what is not put back) renamed since `start`: by content, as git pairs
/// renames, or by name, where one file of a name went and one of that name came (a short
/// file changed as it moved is no longer like itself by git's measure). Each old path
/// with the entry it has now. Git is asked only when files both went and came.
fn moved_code(
    top: &Path,
    (start, now): (&str, &str),
    changes: &[Changed],
    put_back: &[PutBack],
) -> Result<Vec<(PathBuf, Entry)>, GitError> {
    let went = changes.iter().any(|c| c.new.is_none());
    let came = changes.iter().any(|c| c.old.is_none());
    if !(went && came) {
        return Ok(Vec::new());
    }
    let now_entry: BTreeMap<&Path, &Entry> = changes
        .iter()
        .filter_map(|c| Some((c.path.as_path(), c.new.as_ref()?)))
        .collect();
    let checks: BTreeSet<&Path> = put_back.iter().map(|p| p.at.as_path()).collect();
    let mut pairs = snapshot::renames(top, start, now)?;
    pairs.extend(same_name(changes));
    pairs.retain(|(from, to)| !checks.contains(to.as_path()) && !checks.contains(from.as_path()));
    // A copy resolves its own imports from the old place: any other code added or changed
    // could be what it finds there instead of the final code (a correct `impl.js` beside
    // the old place, the moved code importing a buggy one beside the new). Copies only for
    // a move that is all the code did.
    let moved_to: BTreeSet<&Path> = pairs.iter().map(|(_, to)| to.as_path()).collect();
    let other_code = changes.iter().any(|c| {
        let path = c.path.as_path();
        c.new.is_some() && !checks.contains(path) && !moved_to.contains(path)
    });
    if other_code {
        return Ok(Vec::new());
    }
    let mut out: Vec<(PathBuf, Entry)> = pairs
        .iter()
        .filter_map(|(from, to)| Some((from.clone(), (*now_entry.get(to.as_path())?).clone())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// Pure: the code deleted since the start: gone, not a check put back, not moved.
fn deleted_code(
    changes: &[Changed],
    put_back: &[PutBack],
    moved: &[(PathBuf, Entry)],
) -> Vec<(PathBuf, Entry)> {
    changes
        .iter()
        .filter(|c| c.new.is_none())
        .filter(|c| !put_back.iter().any(|p| p.at == c.path))
        .filter(|c| !moved.iter().any(|m| m.0 == c.path))
        .filter_map(|c| Some((c.path.clone(), c.old.clone()?)))
        .collect()
}

/// Pure: each file that went and the one that came with its name, where the name is that
/// of one file that went and one that came.
fn same_name(changes: &[Changed]) -> Vec<(PathBuf, PathBuf)> {
    let mut by_name: BTreeMap<&std::ffi::OsStr, (Vec<&Path>, Vec<&Path>)> = BTreeMap::new();
    for c in changes {
        let Some(name) = c.path.file_name() else {
            continue;
        };
        let sides = by_name.entry(name).or_default();
        match (&c.old, &c.new) {
            (Some(_), None) => sides.0.push(&c.path),
            (None, Some(_)) => sides.1.push(&c.path),
            _ => {}
        }
    }
    by_name
        .into_values()
        .filter_map(|(went, came)| match (&went[..], &came[..]) {
            ([from], [to]) => Some((from.to_path_buf(), to.to_path_buf())),
            _ => None,
        })
        .collect()
}

/// The folders of the tree `start`, relative to the project folder `inside` (relative to
/// `top`).
fn folders(
    top: &Path,
    start: &str,
    inside: Option<&Path>,
) -> Result<std::collections::BTreeSet<String>, GitError> {
    let all = ralph_base::git::split_nul(&snapshot::run_raw(
        top,
        &["ls-tree", "-r", "-d", "-z", "--name-only", start],
    )?);
    Ok(all
        .iter()
        .filter_map(|d| d.strip_prefix(inside.unwrap_or(Path::new(""))).ok())
        .map(|d| d.to_string_lossy().into_owned())
        .collect())
}

/// The checked files moved (by content) to where no gate or runner reads them.
fn left_reach(
    top: &Path,
    (start, now, changes): (&str, &str, &[Changed]),
    inside: Option<&Path>,
    facts: &Facts,
) -> Result<Vec<(String, String)>, GitError> {
    let prefix = inside.unwrap_or(Path::new(""));
    let rel = |p: &Path| -> String {
        match p.strip_prefix(prefix) {
            Ok(r) => r.to_string_lossy().into_owned(),
            Err(_) => format!("/{}", p.to_string_lossy()),
        }
    };
    // Code moved out of the project behind a link has moved as much as code renamed.
    let followed = snapshot::links_followed(top, now, changes)?;
    let mut moved = snapshot::renames(top, start, &followed)?;
    moved.extend(snapshot::contained(top, (start, &followed), changes)?);
    let mut out: Vec<(String, String)> = moved
        .iter()
        .map(|(from, to)| (rel(from), rel(to)))
        .filter(|(from, to)| facts.checked(from) && !facts.read_by_gates(to))
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// Where the project root `root` is in the work tree whose top is `top`.
fn within(root: &Path, top: &Path) -> Option<PathBuf> {
    let root = root.canonicalize().ok()?;
    root.strip_prefix(top).ok().map(Path::to_path_buf)
}

fn back(c: Changed, shown: String, why: &'static str) -> PutBack {
    PutBack {
        at: c.path,
        shown,
        gone: c.new.is_none(),
        was: c.old,
        why,
    }
}

/// A manifest's text, read from git only when its role may depend on it.
fn text(top: &Path, entry: Option<&Entry>) -> Option<String> {
    let e = entry?;
    let out = blob(top, e).ok()?;
    // Big files are never manifests: no need to hold them in memory as text.
    (out.len() < 1 << 20)
        .then(|| String::from_utf8(out).ok())
        .flatten()
}

/// What the differential run found.
pub enum Outcome {
    /// The checks as they were pass on the final code: the change was honest, if the tests
    /// that ran at the start ran there too (the tests each gate's runners said they ran),
    /// and the code they read at the start they read there too (`read`, [`reached`]).
    Honest { ran: Tests, read: Tests },
    /// These stop gates fail with the checks put back, where the final run passed them:
    /// each with its output.
    LoadBearing(Vec<(String, String)>),
    /// The run could not be made: the loop is held, since its checks cannot be confirmed.
    Unavailable(String),
}

/// Runs the gates of `phase` on the final code with `prepared.put_back` put back, and
/// compares them with the final run's `results`. Files whose role is not known
/// ([`roles::either`]: code a command names right after an option, a file only a process
/// the tests started read) are put back in that run and kept as they are in a second: the
/// change is honest only when both pass, whichever of the checks and the checked code they
/// are.
pub fn run(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    prepared: &Prepared,
    results: &[GateResult],
) -> Outcome {
    let all = run_putting_back(
        project,
        env,
        (phase, deadline),
        (prepared, &|_| true),
        results,
    );
    let either = |p: &PutBack| roles::either(p.why);
    if !matches!(all, Outcome::Honest { .. }) || !prepared.put_back.iter().any(either) {
        return all;
    }
    match run_putting_back(
        project,
        env,
        (phase, deadline),
        (prepared, &|p| !either(p)),
        results,
    ) {
        Outcome::LoadBearing(failing) => {
            let kept: Vec<&str> = prepared
                .put_back
                .iter()
                .filter(|p| either(p))
                .map(|p| p.shown.as_str())
                .collect();
            let kept = ralph_base::text::listed(&kept, 10);
            Outcome::LoadBearing(
                failing
                    .into_iter()
                    .map(|(gate, out)| (gate, format!("(with {kept} as it is now)\n{out}")))
                    .collect(),
            )
        }
        Outcome::Honest { .. } => all,
        unavailable => unavailable,
    }
}

/// [`run`], with only the files `which` keeps put back; the others stay as they are now.
pub fn run_putting_back(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    (prepared, which): (&Prepared, &dyn Fn(&PutBack) -> bool),
    results: &[GateResult],
) -> Outcome {
    match checked_out(
        project,
        env,
        (phase, deadline),
        (prepared, which),
        (results, &[]),
    ) {
        Ok(then) => {
            let load_bearing: Vec<(String, String)> = failing_there(&then, results, env.strict())
                .map(|t| (t.name.clone(), t.output.clone()))
                .collect();
            if load_bearing.is_empty() {
                Outcome::Honest {
                    ran: ran_or_silent(&then),
                    read: reached(&then),
                }
            } else {
                Outcome::LoadBearing(load_bearing)
            }
        }
        Err(why) => Outcome::Unavailable(why.to_string()),
    }
}

/// Test files deleted since the start that went with the code they tested: each of their
/// tests passed at the start; put back on the final code with every other check and the
/// code files deleted since, none of them fails (it no longer loads: what it imports is
/// gone; or it passes on the deleted file it tested); and with them left out, every other
/// check as it was passes there.
pub struct Gone {
    /// The files, as shown.
    pub files: Vec<String>,
    /// Their tests at the start, by gate.
    pub tests: Tests,
    /// What ran with every other check put back.
    pub then: Tests,
    /// What the checks as they were read with them and the code deleted since put back
    /// ([`reached`]): code only they read is reached there.
    pub read: Tests,
}

impl Gone {
    /// Pure: the tests of `not_run` (that ran at the start and not at the end) that did not
    /// run with every other check put back either, theirs left out.
    pub fn still_not_run(&self, not_run: &Tests) -> Tests {
        let left: Tests = not_run
            .iter()
            .map(|(gate, ids)| {
                let theirs = self.tests.get(gate);
                let ids = ids
                    .iter()
                    .filter(|id| theirs.is_none_or(|t| !t.contains(*id)))
                    .cloned()
                    .collect();
                (gate.clone(), ids)
            })
            .collect();
        self::not_run(&left, &self.then)
    }
}

/// Whether the deleted test files among `prepared.put_back` went with their code (see
/// [`Gone`]), given the start's tests and those that failed there (`start`). Only by
/// effect: a test that still loads and fails on the final code (a call of a function that
/// is gone, in a language that binds names late) is not told from a broken one, so it holds.
pub fn gone_with_their_code(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    (prepared, results): (&Prepared, &[GateResult]),
    (start_ran, start_failed): (&Tests, &Tests),
) -> Option<Gone> {
    let deleted: Vec<&PutBack> = prepared
        .put_back
        .iter()
        .filter(|p| p.is_test() && p.gone && p.was.is_some())
        .collect();
    let files: Vec<String> = deleted.iter().map(|p| p.shown.clone()).collect();
    let tests = tests_of(&files, start_ran)?;
    let passed_at_start = tests.iter().all(|(gate, ids)| {
        start_failed
            .get(gate)
            .is_some_and(|failed| failed.is_disjoint(ids))
    });
    if !passed_at_start || moved_elsewhere(prepared, &deleted).unwrap_or(true) {
        return None;
    }
    let is_deleted = |p: &PutBack| deleted.iter().any(|d| d.at == p.at);
    let code: Vec<(PathBuf, Option<Entry>)> = prepared
        .deleted
        .iter()
        .map(|(at, was)| (at.clone(), Some(was.clone())))
        .collect();
    // What made them stop loading must be code deleted, not changed: with every line
    // deleted since the start put back, they run and pass; and a deletion in any one file
    // left undone, they still do not fail (they do not load): no line deleted from code
    // that stays is what they tested.
    let mut undone = code;
    undone.extend(deletions_undone(prepared).ok()?);
    let every: &dyn Fn(&PutBack) -> bool = &|_| true;
    let with = |put: &[(PathBuf, Option<Entry>)]| {
        checked_out(
            project,
            env,
            (phase, deadline),
            (prepared, every),
            (results, put),
        )
        .ok()
    };
    let whole = with(&undone)?;
    if !all_passed(&tests, &whole, env.strict()) {
        return None;
    }
    let read = reached(&whole);
    for left in 0..undone.len() {
        let mut put = undone.clone();
        put.remove(left);
        if !none_failed(&tests, &with(&put)?, env.strict()) {
            return None;
        }
    }
    let rest = run_putting_back(
        project,
        env,
        (phase, deadline),
        (prepared, &|p| !is_deleted(p)),
        results,
    );
    match rest {
        Outcome::Honest { ran: then, .. } => Some(Gone {
            files,
            tests,
            then,
            read,
        }),
        _ => None,
    }
}

/// Pure: the tests of `start` in `files` (a test's ID starts with its file: pytest's
/// `FILE::name`, node's runners' `FILE: name`), by gate; `None` when a file has none.
fn tests_of(files: &[String], start: &Tests) -> Option<Tests> {
    if files.is_empty() {
        return None;
    }
    let in_file = |id: &str, f: &str| {
        id.strip_prefix(f)
            .is_some_and(|rest| rest.starts_with("::") || rest.starts_with(": "))
    };
    let mut out = Tests::new();
    for f in files {
        let mut found = false;
        for (gate, ids) in start {
            for id in ids.iter().filter(|id| in_file(id, f)) {
                out.entry(gate.clone()).or_default().insert(id.clone());
                found = true;
            }
        }
        if !found {
            return None;
        }
    }
    Some(out)
}

/// Whether code the deleted tests tested came back elsewhere: a name both they and the
/// code deleted since the start use (not one the code kept unchanged uses: `def`, `return`)
/// is in a line of code added or changed since. Code moved (merged into another file),
/// not gone; its tests did not go with it.
fn moved_elsewhere(prepared: &Prepared, tests: &[&PutBack]) -> Result<bool, GitError> {
    let text = |e: &Entry| -> Result<String, GitError> {
        Ok(String::from_utf8_lossy(&blob(&prepared.top, e)?).into_owned())
    };
    let mut lines = Lines::default();
    for t in tests.iter().filter_map(|t| t.was.as_ref()) {
        lines.tests.push(text(t)?);
    }
    for (_, was) in &prepared.deleted {
        lines.deleted.push(text(was)?);
    }
    for e in &prepared.came {
        lines.added.push(text(e)?);
    }
    for (_, was, now) in &prepared.edited {
        let (old, new) = (text(was)?, text(now)?);
        let (gone, came, kept) = line_changes(&old, &new);
        lines.deleted.push(gone.concat());
        lines.added.push(came.concat());
        lines.kept.push(kept.concat());
    }
    Ok(lines.moved())
}

/// A blob's content.
fn blob(top: &Path, e: &Entry) -> Result<Vec<u8>, GitError> {
    snapshot::run_raw(top, &["cat-file", "blob", &e.object])
}

/// The text of what changed since the start, for [`moved_elsewhere`].
#[derive(Default)]
struct Lines {
    tests: Vec<String>,
    deleted: Vec<String>,
    added: Vec<String>,
    kept: Vec<String>,
}

impl Lines {
    /// Pure: the names (three characters or more, a letter among them) in `texts`.
    fn names(texts: &[String]) -> BTreeSet<&str> {
        texts
            .iter()
            .flat_map(|t| t.split(|c: char| !c.is_alphanumeric() && c != '_'))
            .filter(|w| w.len() >= 3 && w.chars().any(char::is_alphabetic))
            .collect()
    }

    /// Pure: whether a name of the tests' deleted code is in what was added.
    fn moved(&self) -> bool {
        let (tests, kept) = (Self::names(&self.tests), Self::names(&self.kept));
        let added = Self::names(&self.added);
        Self::names(&self.deleted)
            .into_iter()
            .filter(|n| tests.contains(n) && !kept.contains(n))
            .any(|n| added.contains(n))
    }
}

/// Pure: the lines `new` deleted from `old` (rather than changed), those it added or
/// changed, and those it kept, as [`line_events`] tells them.
fn line_changes<'a>(old: &'a str, new: &'a str) -> (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>) {
    let (mut deleted, mut added, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for (what, line) in line_events(old, new) {
        match what {
            LineEvent::Kept => kept.push(line),
            LineEvent::Deleted => deleted.push(line),
            LineEvent::Added => added.push(line),
        }
    }
    (deleted, added, kept)
}

/// What became of a line between two texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineEvent {
    /// In both, unchanged.
    Kept,
    /// In the old text only, and no new line is it changed.
    Deleted,
    /// In the new text only: added, or an old line changed.
    Added,
}

/// Pure: every line of `old` and `new` in order, with what became of it. Where lines were
/// both changed and deleted in one place, an old line is the changed one when a new line is
/// like it (by characters, at least half alike, in order), and deleted otherwise; a deleted
/// line stands where it stood among the new ones.
fn line_events<'a>(old: &'a str, new: &'a str) -> Vec<(LineEvent, &'a str)> {
    use similar::{DiffOp, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    let (olds, news) = (diff.old_slices(), diff.new_slices());
    let mut out = Vec::new();
    for op in diff.ops() {
        let (o, n) = (&olds[op.old_range()], &news[op.new_range()]);
        let each = |what, lines: &[&'a str]| lines.iter().map(|l| (what, *l)).collect::<Vec<_>>();
        match op {
            DiffOp::Equal { .. } => out.extend(each(LineEvent::Kept, n)),
            DiffOp::Delete { .. } => out.extend(each(LineEvent::Deleted, o)),
            DiffOp::Insert { .. } => out.extend(each(LineEvent::Added, n)),
            DiffOp::Replace { .. } => {
                let mut next_new = 0;
                for (line, like) in o.iter().zip(alignment(o, n)) {
                    match like {
                        Some(k) => {
                            out.extend(each(LineEvent::Added, &n[next_new..=k]));
                            next_new = k + 1;
                        }
                        None => out.push((LineEvent::Deleted, *line)),
                    }
                }
                out.extend(each(LineEvent::Added, &n[next_new..]));
            }
        }
    }
    out
}

/// The code files changed since the start with each run of lines deleted since put back
/// (the lines changed or added kept as they are now), where any was deleted.
fn deletions_undone(prepared: &Prepared) -> Result<Vec<(PathBuf, Option<Entry>)>, GitError> {
    let top = &prepared.top;
    let mut out = Vec::new();
    for (at, was, now) in &prepared.edited {
        let (old, new) = (blob(top, was)?, blob(top, now)?);
        // Only text is written back: a file that is not UTF-8 keeps its deletions.
        let (Ok(old), Ok(new)) = (std::str::from_utf8(&old), std::str::from_utf8(&new)) else {
            continue;
        };
        let Some(text) = with_deletions_undone(old, new) else {
            continue;
        };
        let object = snapshot::blob(top, text.as_bytes())?;
        let mode = now.mode.clone();
        out.push((at.clone(), Some(Entry { mode, object })));
    }
    Ok(out)
}

/// Pure: `new` with each line of `old` that it deleted (rather than changed) put back where
/// it was ([`line_events`]); `None` when it deleted none.
fn with_deletions_undone(old: &str, new: &str) -> Option<String> {
    let events = line_events(old, new);
    let undone = events.iter().any(|(what, _)| *what == LineEvent::Deleted);
    undone.then(|| events.iter().map(|(_, line)| *line).collect())
}

/// Pure: for each line of `old`, the line of `new` that is it changed (by characters, at
/// least half alike, in order), or `None` where it was deleted.
fn alignment(old: &[&str], new: &[&str]) -> Vec<Option<usize>> {
    let alike = |a: &str, b: &str| similar::TextDiff::from_chars(a, b).ratio() >= 0.5;
    let mut next_new = 0;
    old.iter()
        .map(|line| {
            let k = new[next_new..].iter().position(|n| alike(line, n))? + next_new;
            next_new = k + 1;
            Some(k)
        })
        .collect()
}

/// Pure: whether, in `there`, each gate of `tests` was heard and every one of `tests` ran
/// and did not fail.
fn all_passed(tests: &Tests, there: &[GateResult], strict: bool) -> bool {
    let (heard, failed) = (ran(there), failed(there, strict));
    tests.iter().all(|(gate, ids)| {
        heard.get(gate).is_some_and(|ran| ran.is_superset(ids))
            && failed.get(gate).is_some_and(|f| f.is_disjoint(ids))
    })
}

/// Pure: whether, in `there`, each gate of `tests` was heard, said which of its tests
/// failed, and none of `tests` is among them.
fn none_failed(tests: &Tests, there: &[GateResult], strict: bool) -> bool {
    let (heard, failed) = (ran(there), failed(there, strict));
    tests.iter().all(|(gate, ids)| {
        heard.contains_key(gate) && failed.get(gate).is_some_and(|f| f.is_disjoint(ids))
    })
}

/// Why a differential run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("the checkout's project does not open: {0}")]
    Open(#[from] ralph_plan::project::OpenError),
    #[error("the checkout's files cannot be listed: {0}")]
    Files(#[from] ralph_plan::files::FilesError),
    #[error("the project {} is outside its work tree", .0.display())]
    Outside(PathBuf),
}

/// The gates' results in a checkout of the final tree with the checks put back. Where code
/// moved, it is first also left at its old place, where the checks as they were import it;
/// if that fails where the final run passed (a copy can break, where it imports by a
/// relative path what did not move with it), the run without the copies decides.
fn checked_out(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    (prepared, which): (&Prepared, &dyn Fn(&PutBack) -> bool),
    (results, extra): (&[GateResult], &[(PathBuf, Option<Entry>)]),
) -> Result<Vec<GateResult>, RunError> {
    let top = &prepared.top;
    let put: Vec<(PathBuf, Option<Entry>)> = prepared
        .put_back
        .iter()
        .filter(|p| which(p))
        .map(|p| (p.at.clone(), p.was.clone()))
        .chain(extra.iter().cloned())
        .collect();
    let run = |put: &[(PathBuf, Option<Entry>)]| -> Result<Vec<GateResult>, RunError> {
        let mixed = snapshot::mix(top, &prepared.tree, put)?;
        run_in(
            project,
            env,
            (phase, deadline),
            prepared,
            (&mixed, "differential"),
        )
    };
    if prepared.moved.is_empty() || put.is_empty() {
        return run(&put);
    }
    let copies = prepared
        .moved
        .iter()
        .map(|(from, now)| (from.clone(), Some(now.clone())));
    let with_copies: Vec<_> = put.iter().cloned().chain(copies).collect();
    let then = run(&with_copies)?;
    let broke = failing_there(&then, results, env.strict()).next().is_some();
    match broke {
        true => run(&put),
        false => Ok(then),
    }
}

/// Pure: every gate that fails `there` and did not fail `here`, one the checks as they are
/// no longer have (removed, renamed, dropped from the presets) included.
fn failing_there<'a>(
    there: &'a [GateResult],
    here: &'a [GateResult],
    strict: bool,
) -> impl Iterator<Item = &'a GateResult> {
    there
        .iter()
        .filter(move |t| t.counts_as_failure(strict) && !fails(here, &t.name, strict))
}

/// Pure: whether the gate `name` fails among `results`.
pub fn fails(results: &[GateResult], name: &str, strict: bool) -> bool {
    results
        .iter()
        .any(|r| r.name == name && r.counts_as_failure(strict))
}

/// The gates of `phase` run in a checkout of `tree` (with what git ignores lent as the
/// start had it, and the submodules linked).
fn run_in(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    prepared: &Prepared,
    (tree, kind): (&str, &str),
) -> Result<Vec<GateResult>, RunError> {
    let top = &prepared.top;
    let checkout = Checkout::of(top, tree)?;
    lend_ignored(top, &prepared.lend, &checkout.path());
    lend_submodules(top, tree, &checkout.path())?;
    let inside = |p: &Path| {
        let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        canonical
            .strip_prefix(top)
            .map(|rel| checkout.path().join(rel))
            .ok()
    };
    let root = inside(project.root()).ok_or_else(|| RunError::Outside(project.root().into()))?;
    let config = project
        .config
        .file
        .as_deref()
        .map(|f| inside(f).unwrap_or_else(|| f.to_path_buf()))
        // A tree without the config (it came later) is checked by the presets.
        .filter(|f| f.exists());
    let mut there = Project::open(&root, config.as_deref())?;
    let listing = there.listing()?.clone();
    let all = &listing.files;
    let plan = there.plan_with_unopenable(all, all, &listing.unopenable, phase, &[]);
    let limits = Limits {
        jobs: there.config.settings.jobs,
        deadline: Some(deadline),
        // Kept between runs of this kind, apart from the work tree's (see there).
        cargo_target: Some(ralph_base::state::cargo_target_of_checkout(
            env,
            project.root(),
            kind,
        )),
        private_tmp: true,
        untracked: None,
        // What the tests read at the start is compared with what they read now: the
        // start's runs are watched, and the differential runs when that found any.
        observe: kind == "start" || prepared.watch.get(),
        checkout_of: Some((top.to_path_buf(), checkout.path())),
    };
    let config = &there.config;
    let mut results = ralph_runner::runner::with_context(config, env, Reuse::Apart, |cx| {
        ralph_runner::runner::run(cx, &plan, &limits, &|_| {})
    });
    // A tool that prints absolute paths names the checkout: as the work tree's run would.
    let (from, to) = (
        root.display().to_string(),
        project.root().display().to_string(),
    );
    for r in &mut results {
        r.output = r.output.replace(&from, &to);
        reach::read_through(r, project.root());
        // What the runners said of the checkout's files, of the work tree's.
        for d in &mut r.run_details {
            for (path, _) in &mut d.of_tests {
                if let Ok(rel) = path.strip_prefix(&root) {
                    *path = project.root().join(rel);
                }
            }
        }
    }
    Ok(results)
}

/// The tests each gate's runners said they ran, by gate. A gate any of whose runs did not run
/// now (its result came from the cache) is left out: what it ran is not known; so is one in
/// which no test runner was heard.
pub type Tests = BTreeMap<String, BTreeSet<String>>;

/// Whether every run of `r` ran now (none came from the cache).
fn ran_now(r: &GateResult) -> bool {
    !r.cached && !r.run_details.iter().any(|d| d.cached)
}

/// Pure: the tests of `results`.
pub fn ran(results: &[GateResult]) -> Tests {
    results
        .iter()
        .filter(|r| ran_now(r))
        .filter_map(|r| {
            let heard: Vec<&Vec<String>> = r
                .run_details
                .iter()
                .filter_map(|d| d.tests.as_ref())
                .collect();
            (!heard.is_empty()).then(|| {
                (
                    r.name.clone(),
                    heard.into_iter().flatten().cloned().collect(),
                )
            })
        })
        .collect()
}

/// Pure: the Go subtests each gate's runs said ran now, of each gate that ran any.
pub fn subtests(results: &[GateResult]) -> Tests {
    results
        .iter()
        .filter(|r| ran_now(r))
        .map(|r| {
            let all = r
                .run_details
                .iter()
                .flat_map(|d| d.subtests.iter().cloned());
            (r.name.clone(), all.collect::<BTreeSet<String>>())
        })
        .filter(|(_, ids)| !ids.is_empty())
        .collect()
}

/// Pure: `not_run` without the Go tests folded into another test's table: each subtest
/// one ran at the base (`base`: [`subtests`]) runs now (`now`) under another test of its
/// package, by the same name (`TestTomlNext/valid/x` as `TestToml/valid/x`). For `check
/// --base`'s reading of a change of behaviour only, as [`renamed_away`]: a test that ran
/// no subtest, or one whose cases are not all run elsewhere, stays.
pub fn folded(not_run: &Tests, base: &Tests, now: &Tests) -> Tests {
    /// `<package>: Test/case` as (`<package>: Test`, `case`).
    fn split(id: &str) -> Option<(&str, &str)> {
        let name_at = id.rfind(": ").map_or(0, |i| i + 2);
        let slash = id[name_at..].find('/')? + name_at;
        Some((&id[..slash], &id[slash + 1..]))
    }
    fn package(test: &str) -> &str {
        test.rfind(": ").map_or("", |i| &test[..i])
    }
    not_run
        .iter()
        .filter_map(|(gate, gone)| {
            let none = BTreeSet::new();
            let (was, is) = (
                base.get(gate).unwrap_or(&none),
                now.get(gate).unwrap_or(&none),
            );
            // Each case that runs now, by its package and its name under its test.
            let running: BTreeSet<(&str, &str)> = is
                .iter()
                .filter_map(|id| split(id))
                .map(|(test, case)| (package(test), case))
                .collect();
            let folded_away = |test: &String| {
                let mut cases = was
                    .iter()
                    .filter_map(|id| split(id))
                    .filter(|(t, _)| t == test)
                    .peekable();
                cases.peek().is_some()
                    && cases.all(|(t, case)| running.contains(&(package(t), case)))
            };
            let left: BTreeSet<String> = gone.iter().filter(|t| !folded_away(t)).cloned().collect();
            (!left.is_empty()).then(|| (gate.clone(), left))
        })
        .collect()
}

/// Pure: the tests each gate's runners said failed, of each gate for which that is known:
/// every run ran now and its runners said which failed, or the gate passed.
pub fn failed(results: &[GateResult], strict: bool) -> Tests {
    results
        .iter()
        .filter_map(|r| Some((r.name.clone(), r.failed_tests_now(strict)?)))
        .collect()
}

/// Pure: what ran now, as [`not_run`] compares it with the start: [`ran`], and each gate that
/// ran now (not from the cache) with no runner heard, as having run no test. A runner heard
/// at the start and silent now (its listener kept out by code it loaded, its output taken by
/// another reporter) ran none of its tests that anyone can tell: they are named, as tests
/// that did not run are. A gate silent at the start too is not compared: it has no entry there.
pub fn ran_or_silent(results: &[GateResult]) -> Tests {
    let mut now = ran(results);
    for r in results.iter().filter(|r| ran_now(r)) {
        now.entry(r.name.clone()).or_default();
    }
    now
}

/// Pure: the last `n` lines of a failing run's output that can say why it failed: without
/// the lines that only report a package that passed or has no tests (`go test`'s `ok` and
/// `?` lines), which in a module of many packages push the failure out of any tail.
pub fn failure_tail(output: &str, n: usize) -> String {
    let telling: Vec<&str> = output
        .trim_end()
        .lines()
        .filter(|l| !(l.starts_with("ok  \t") || l.starts_with("?   \t")))
        .collect();
    telling[telling.len().saturating_sub(n)..].join("\n")
}

/// Pure: the tests of `start` that did not run `now`, by gate: for each gate known in both.
pub fn not_run(start: &Tests, now: &Tests) -> Tests {
    start
        .iter()
        .filter_map(|(gate, ids)| {
            let there = now.get(gate)?;
            let gone: BTreeSet<String> = ids.difference(there).cloned().collect();
            (!gone.is_empty()).then(|| (gate.clone(), gone))
        })
        .collect()
}

/// What the gates of `phase` did on the start tree (for `check --base`, the base).
pub struct StartRuns {
    /// The tests each gate's runners said they ran.
    pub tests: Tests,
    /// Those that failed, of each gate for which that is known ([`failed`]).
    pub failed: Tests,
    /// The runs of each gate that could not start (`baseline::unstarted`), by name.
    pub unstarted: Tests,
    /// The gates that passed.
    pub passed: BTreeSet<String>,
    /// How each gate that failed failed (its output as the work tree's run would print it).
    pub failures: crate::baseline::StartFailures,
    /// The project files each test runner's gate read there ([`reached_by_tests`]).
    pub read: Tests,
    /// What the runners said of the project's files there ([`said::of_runs`]).
    pub said: BTreeMap<String, ralph_runner::runner::OfTests>,
    /// The Go subtests each gate's runs said ran there ([`subtests`]).
    pub subtests: Tests,
}

/// The gates of `phase` run on the start tree `start`, in a checkout of it.
pub fn start_runs(
    project: &Project,
    env: &Environment,
    (phase, deadline): (Phase, Instant),
    prepared: &Prepared,
    start: &str,
) -> Result<StartRuns, RunError> {
    let results = run_in(project, env, (phase, deadline), prepared, (start, "start"))?;
    let (failed, passed): (Vec<&GateResult>, Vec<&GateResult>) = results
        .iter()
        .partition(|r| r.counts_as_failure(env.strict()));
    let failed_tests = self::failed(&results, env.strict());
    Ok(StartRuns {
        said: said::of_runs(project.root(), &results),
        read: prepared.in_tree(start, reached_by_tests(&results))?,
        tests: ran(&results),
        subtests: subtests(&results),
        failed: self::failed(&results, env.strict()),
        unstarted: results
            .iter()
            .map(|r| {
                let runs = crate::baseline::could_not_start(r);
                (r.name.clone(), runs.into_iter().map(|(n, _)| n).collect())
            })
            .collect(),
        passed: passed.iter().map(|r| r.name.clone()).collect(),
        failures: failed
            .iter()
            .map(|r| {
                let failure = crate::baseline::StartFailure {
                    exit: r.exit_code,
                    output: r.output.clone(),
                    failed_tests: failed_tests.get(&r.name).cloned(),
                };
                (r.name.clone(), failure)
            })
            .collect(),
    })
}

/// `not_run` (tests of the base that no longer run) without those renamed: in each file
/// or package (an ID up to its last `::` or `: `), as many tests came as went (a test
/// renamed with the API it tests; a test split into parametrized cases). For `check
/// --base`'s reading of a change of behaviour only, where an edited test is read by a
/// reviewer anyway: a test replaced by another in its file is no more than a test edited.
pub fn renamed_away(not_run: &Tests, base: &Tests, now: &Tests) -> Tests {
    fn home(id: &str) -> &str {
        let at = [id.rfind("::"), id.rfind(": ")].into_iter().flatten().max();
        at.map_or("", |i| &id[..i])
    }
    fn per_home<'a>(ids: impl Iterator<Item = &'a String>) -> BTreeMap<&'a str, usize> {
        let mut counts = BTreeMap::new();
        for id in ids {
            *counts.entry(home(id)).or_insert(0) += 1;
        }
        counts
    }
    not_run
        .iter()
        .filter_map(|(gate, gone)| {
            let was = base.get(gate);
            let came = per_home(
                now.get(gate)
                    .into_iter()
                    .flatten()
                    .filter(|id| !was.is_some_and(|b| b.contains(*id))),
            );
            let went = per_home(gone.iter());
            let left: BTreeSet<String> = gone
                .iter()
                .filter(|id| came.get(home(id)).copied().unwrap_or(0) < went[home(id)])
                .cloned()
                .collect();
            (!left.is_empty()).then(|| (gate.clone(), left))
        })
        .collect()
}

/// Whether the gates failing with the base's checks put back may fail only because the
/// code's behaviour changed with its tests ([`changed_with_the_code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithTheCode {
    /// Not so: a test runner red at the base, a test lost, or no test runner among them.
    No,
    /// Each is a test runner heard at the base that passed there.
    Tests,
    /// Test runners as for `Tests`, beside gates that run no test but read the tests too (a
    /// compiler or type checker over the base's tests, which no longer build against the
    /// new code: `go vet`, `tsc`, `mypy`), green at the base or not: one red there that
    /// passes now had what it found there fixed (a newer `go vet` on an old test). What
    /// the parsers found in the tests (a suppression, a skip) then stands: it is what would
    /// silence such a gate.
    AndTheirCheckers,
}

/// Pure, for `check --base`: whether the gates `failing` with the base's checks put back
/// may fail only because the code's behaviour changed with its tests: every test that ran
/// at the base still runs (`not_run` is empty), at least one failing gate is a test runner
/// heard there, and each such runner passed there: a red test made green by the change is
/// what an agent that edits its test does. The caller also runs the rest of the checks as
/// at the base (configs, runners' files, plugins: all but the tests' own, see
/// [`Prepared::tests_own`]) with the tests as they are now, which must pass: so a failing
/// gate that runs no test failed because of the tests put back. A test edited to accept
/// what broken code now returns looks exactly the same: a reviewer reads a change's tests,
/// and a loop, which has none, holds it.
pub fn changed_with_the_code(failing: &[&str], base: &StartRuns, not_run: &Tests) -> WithTheCode {
    let runner = |g: &&&str| base.tests.contains_key(**g);
    let green = failing
        .iter()
        .filter(runner)
        .all(|g| base.passed.contains(*g));
    let runners = failing.iter().filter(runner).count();
    match (not_run.is_empty() && green, runners) {
        (false, _) | (true, 0) => WithTheCode::No,
        (true, n) if n == failing.len() => WithTheCode::Tests,
        (true, _) => WithTheCode::AndTheirCheckers,
    }
}

/// Pure: whether a checkout may be lent what git ignores at `rel` (relative to the top):
/// not inside a tool's own cache or build folder ([`NOT_LENT`]).
pub fn lent(rel: &Path) -> bool {
    !rel.components()
        .any(|c| NOT_LENT.iter().any(|n| c.as_os_str() == *n))
}

/// Folders of tools' own caches and builds, which a checkout gets none of: a run fills its
/// own, and sharing the user's would mix two trees' outputs.
const NOT_LENT: &[&str] = &[
    ".git",
    ".ralph",
    // The agent's own folder: its settings and the loop's state, which every stop rewrites
    // (an ignored `.claude/` read as a check that changed forced a differential run on every
    // stop, and named the loop's state file as a weakening).
    ".claude",
    "target",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
];

/// Links what git ignores in the work tree (installed packages, virtual environments) into
/// the checkout, so its gates find the same tools.
fn lend_ignored(top: &Path, lend: &[PathBuf], checkout: &Path) {
    for rel in lend {
        let at = checkout.join(rel);
        let free = at.symlink_metadata().is_err() && at.parent().is_some_and(Path::is_dir);
        if free {
            let _ = ralph_base::platform::symlink(top.join(rel), &at);
        }
    }
}

/// Links each submodule's work tree into the checkout, where `worktree add` leaves an empty
/// folder: the gates read the same submodule code in both runs.
fn lend_submodules(top: &Path, tree: &str, checkout: &Path) -> Result<(), GitError> {
    let listing = snapshot::run_raw(top, &["ls-tree", "-r", "-z", tree])?;
    for line in listing
        .split(|b| *b == 0)
        .filter(|l| l.starts_with(b"160000 "))
    {
        let Some(tab) = line.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let rel = Path::new(ralph_base::platform::os_str(&line[tab + 1..]));
        let at = checkout.join(rel);
        // The checkout holds an empty folder for it, or none.
        if std::fs::remove_dir(&at).is_ok() || !at.exists() {
            let _ = ralph_base::platform::symlink(top.join(rel), &at);
        }
    }
    Ok(())
}

impl Prepared {
    /// The paths whose content differs between the tree the final run judged and the work
    /// tree now, where a gate or a runner reads them (code, tests, configs, a runner's
    /// files). A gate's own outputs (caches, reports, coverage) are not a change of what was
    /// judged.
    ///
    /// A file written and put back while the run read it (its content and modification
    /// time restored) leaves the tree as it was: its status change time, which no process
    /// can set back, moved while its modification time did not.
    pub fn moved_during(&self, linked: &BTreeSet<String>) -> Result<Vec<String>, GitError> {
        let after = snapshot::work_tree(&self.top)?;
        let mut moved: BTreeSet<PathBuf> = match after == self.tree {
            true => BTreeSet::new(),
            false => snapshot::diff(&self.top, &self.tree, &after)?
                .into_iter()
                .map(|c| c.path)
                .collect(),
        };
        let now = snapshot::stamps(&self.top, &self.tree)?;
        // A file the judged runs linked changed its time by their own hand (its content is
        // compared above, and stays compared).
        let theirs = |path: &Path| {
            let rel = path.strip_prefix(&self.inside).unwrap_or(path);
            linked.contains(rel.to_string_lossy().as_ref())
        };
        moved.extend(
            self.stamps
                .iter()
                .filter(|(path, was)| now.get(*path).is_some_and(|n| n.put_back_since(was)))
                .filter(|(path, _)| !theirs(path))
                .map(|(path, _)| path.clone()),
        );
        Ok(moved
            .into_iter()
            .filter(|path| {
                let rel = path.strip_prefix(&self.inside).unwrap_or(path);
                self.facts.read_by_gates(&rel.to_string_lossy())
            })
            .map(|path| path.to_string_lossy().into_owned())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn code_whose_name_comes_back_elsewhere_moved_and_did_not_go() {
        let t = |s: &str| vec![s.to_string()];
        let merged = Lines {
            tests: t("from calc.mul import mul\ndef test_mul():\n    assert mul(2, 3) == 6\n"),
            deleted: t("def mul(a, b):\n    return a * b\n"),
            added: t("def mul(a, b):\n    return a * b + 1\n"),
            kept: t("def add(a, b):\n"),
        };
        assert!(merged.moved());
        // Gone: the fix shares only words the kept code uses too (`def`, `return`).
        let gone = Lines {
            added: t("    return a + b\n"),
            ..merged
        };
        assert!(!gone.moved());
    }

    #[test]
    fn lines_deleted_come_back_and_lines_changed_stay_changed() {
        let old = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
        let fixed = "def add(a, b):\n    return a + b\n";
        assert_eq!(
            with_deletions_undone(old, fixed).as_deref(),
            Some("def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
        );
        // A name changed into another is a change, not a deletion.
        assert_eq!(
            with_deletions_undone("PAIRS = [1]\n", "PAIRS2 = [1]\n"),
            None
        );
        assert_eq!(with_deletions_undone("a\nb\n", "a\nb\nc\n"), None);
        assert_eq!(
            with_deletions_undone("a\nb\nc\n", "a\nc\n").as_deref(),
            Some("a\nb\nc\n")
        );
    }

    #[test]
    fn a_name_that_went_once_and_came_once_is_a_move() {
        let e = || {
            Some(Entry {
                mode: "100644".into(),
                object: "0".repeat(40),
            })
        };
        let c = |p: &str, old, new| Changed {
            path: p.into(),
            old,
            new,
        };
        let changes = [
            c("calc.js", e(), None),
            c("src/calc.js", None, e()),
            // Two of a name came: which one is the old is not known.
            c("index.js", e(), None),
            c("a/index.js", None, e()),
            c("b/index.js", None, e()),
            // Changed in place: not a move.
            c("util.js", e(), e()),
            c("lib/util.js", None, e()),
        ];
        assert_eq!(
            same_name(&changes),
            vec![(PathBuf::from("calc.js"), PathBuf::from("src/calc.js"))]
        );
    }

    #[test]
    fn only_test_runners_green_at_the_base_with_tests_alone_changed_and_none_lost() {
        let base = StartRuns {
            tests: [("pytest".to_string(), BTreeSet::from(["t::a".to_string()]))].into(),
            failed: Tests::new(),
            unstarted: Tests::new(),
            passed: ["pytest".to_string(), "mypy".to_string()].into(),
            failures: Default::default(),
            read: Tests::new(),
            said: BTreeMap::new(),
            subtests: Tests::new(),
        };
        let none = Tests::new();
        let of = |failing: &[&str], base: &StartRuns, lost: &Tests| {
            changed_with_the_code(failing, base, lost)
        };
        assert_eq!(of(&["pytest"], &base, &none), WithTheCode::Tests);
        assert_eq!(
            of(&["mypy"], &base, &none),
            WithTheCode::No,
            "no test runner among them"
        );
        assert_eq!(
            of(&["pytest", "mypy"], &base, &none),
            WithTheCode::AndTheirCheckers,
            "a type checker of the tests beside their runner"
        );
        assert_eq!(
            of(&["pytest", "ruff"], &base, &none),
            WithTheCode::AndTheirCheckers,
            "ruff, red at the base, passes now: what it found there was fixed"
        );
        assert_eq!(
            of(&["ruff"], &base, &none),
            WithTheCode::No,
            "a checker alone is no change of behaviour"
        );
        let red = StartRuns {
            passed: BTreeSet::new(),
            ..base
        };
        assert_eq!(
            of(&["pytest"], &red, &none),
            WithTheCode::No,
            "red at the base"
        );
        let lost: Tests = [("pytest".to_string(), BTreeSet::from(["t::a".to_string()]))].into();
        let base = StartRuns {
            passed: ["pytest".to_string(), "mypy".to_string()].into(),
            ..red
        };
        assert_eq!(
            of(&["pytest", "mypy"], &base, &lost),
            WithTheCode::No,
            "a test lost"
        );
    }

    #[test]
    fn a_test_replaced_in_its_file_is_renamed_and_one_lost_is_not() {
        let set = |ids: &[&str]| ids.iter().map(ToString::to_string).collect::<BTreeSet<_>>();
        let of = |ids: &[&str]| -> Tests { [("t".to_string(), set(ids))].into() };
        let base = of(&[
            ".: TestMaxNesting",
            ".: TestA",
            "a.py::test_x",
            "a.py::test_y",
        ]);
        let now = of(&[
            ".: TestMaxDepth",
            ".: TestA",
            "b.py::test_x",
            "a.py::test_y",
        ]);
        let not_run = not_run(&base, &now);
        assert_eq!(
            renamed_away(&not_run, &base, &now),
            of(&["a.py::test_x"]),
            "renamed in its package; a.py's test went, and one came only in b.py"
        );
        let merged = of(&["a.py::test_z[1]", "a.py::test_z[2]", "a.py::test_y"]);
        let base = of(&["a.py::test_x", "a.py::test_y"]);
        assert!(renamed_away(&super::not_run(&base, &merged), &base, &merged).is_empty());
    }

    #[test]
    fn a_go_test_folded_into_another_tests_table_is_not_lost() {
        let set = |ids: &[&str]| ids.iter().map(ToString::to_string).collect::<BTreeSet<_>>();
        let of = |ids: &[&str]| -> Tests { [("t".to_string(), set(ids))].into() };
        let not_run = of(&[".: TestNext", "pkg/a: TestGone", ".: TestFlat"]);
        let base = of(&[
            ".: TestNext/valid/x",
            ".: TestNext/valid/y",
            "pkg/a: TestGone/one",
            ".: TestToml/valid/x",
        ]);
        // TestNext's cases run under TestToml; TestGone's case runs only in another package;
        // TestFlat had no case to follow.
        let now = of(&[
            ".: TestToml/valid/x",
            ".: TestToml/valid/y",
            "pkg/b: TestB/one",
        ]);
        assert_eq!(
            folded(&not_run, &base, &now),
            of(&[".: TestFlat", "pkg/a: TestGone"])
        );
        let partly = of(&[".: TestToml/valid/x"]);
        assert_eq!(
            folded(&of(&[".: TestNext"]), &base, &partly),
            of(&[".: TestNext"]),
            "one case of two is not a fold"
        );
    }

    #[test]
    fn a_failure_tail_skips_the_packages_that_passed() {
        let out = "--- FAIL: TestBOM (0.00s)\n    x_test.go:9: wrong\nFAIL\nFAIL\tex.com/m\t0.1s\nok  \tex.com/m/a\t0.1s\n?   \tex.com/m/b\t[no test files]\nFAIL\n";
        assert_eq!(
            failure_tail(out, 3),
            "FAIL\nFAIL\tex.com/m\t0.1s\nFAIL",
            "the tail says which package failed"
        );
        assert!(failure_tail(out, 30).starts_with("--- FAIL: TestBOM"));
        assert_eq!(failure_tail("one\ntwo\n", 1), "two");
        assert_eq!(failure_tail("", 5), "");
    }

    #[test]
    fn only_what_git_ignored_at_the_start_as_it_was_is_lent() {
        let start = map(&[(".venv", "folder"), (".env", "d1"), ("local.cfg", "d2")]);
        let now = map(&[
            (".venv", "folder"),
            (".env", "d1"),
            ("local.cfg", "changed"),
            ("conftest.py", "d3"),
            ("pkg/__pycache__", "folder"),
            (".ralph", "folder"),
        ]);
        let (lend, unlent) = lending(&now, Some(&start));
        assert_eq!(lend, [".env", ".venv"].map(PathBuf::from));
        assert_eq!(unlent, ["conftest.py", "local.cfg"]);
        let (all, none) = lending(&now, None);
        assert_eq!(all.len(), 4, "no start known: all but caches are lent");
        assert!(none.is_empty());
    }
}

#[cfg(test)]
mod tested {
    use super::*;
    use ralph_runner::runner::RunDetail;

    fn gate(name: &str, runs: &[(Option<&[&str]>, bool)]) -> GateResult {
        GateResult {
            name: name.into(),
            run_details: runs
                .iter()
                .map(|(tests, cached)| RunDetail {
                    tests: tests.map(|t| t.iter().map(|s| s.to_string()).collect()),
                    cached: *cached,
                    ..RunDetail::default()
                })
                .collect(),
            ..GateResult::default()
        }
    }

    #[test]
    fn a_gate_is_compared_only_when_it_ran_now_and_a_runner_was_heard() {
        let results = [
            gate("py", &[(Some(&["t::a", "t::b"]), false), (None, false)]),
            gate("tsc", &[(None, false)]),
            gate("go", &[(Some(&["x: T"]), false), (None, true)]),
        ];
        let ran = ran(&results);
        assert_eq!(ran.keys().collect::<Vec<_>>(), ["py"]);
        assert_eq!(ran["py"].len(), 2);
    }

    #[test]
    fn what_ran_at_the_start_and_not_now_is_named_by_gate() {
        let set = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let start = Tests::from([
            ("py".to_string(), set(&["t::a", "t::b"])),
            ("go".to_string(), set(&["x: T"])),
        ]);
        let now = Tests::from([("py".to_string(), set(&["t::a", "t::c"]))]);
        let gone = not_run(&start, &now);
        assert_eq!(gone.len(), 1, "a gate not compared now is not named");
        assert_eq!(gone["py"], set(&["t::b"]));
        assert!(not_run(&now, &now).is_empty());
    }

    #[test]
    fn a_runner_heard_at_the_start_and_silent_now_ran_none_of_its_tests() {
        let results = [
            gate("py", &[(None, false)]),
            gate("sh", &[(None, false)]),
            gate("go", &[(None, true)]),
        ];
        let now = ran_or_silent(&results);
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            ["py", "sh"],
            "cached: not known"
        );
        let start = Tests::from([
            ("py".to_string(), ["t::a".to_string()].into()),
            ("go".to_string(), ["x: T".to_string()].into()),
        ]);
        let gone = not_run(&start, &now);
        assert_eq!(
            gone.keys().collect::<Vec<_>>(),
            ["py"],
            "sh was never heard"
        );
        assert_eq!(gone["py"].len(), 1);
    }
}
