//! What pytest itself says a gate ran. Every run of a gate loads ralph-gate's listener
//! (`ralph_gate_told.py`, under a module name drawn for the run, through `PYTHONPATH` and
//! `PYTEST_ADDOPTS=-p`) into any pytest it starts, whatever the command's spelling (`make
//! test`, a script). A file of the project cannot stand in for it: its name is not known
//! before the run, and `-p` plugins load before any conftest. The listener
//! writes, outside the project, the tests that failed and whether the session reached its
//! end. An exit status of 0 must agree with that: a failed test, or a session that never
//! reached its end (a test or the code under test called `os._exit(0)`, an `atexit` hook or
//! a conftest rewrote the status), fails the gate, whatever the command's exit said.
//! It also writes which files of the project are its tests' by what the session did with
//! them ([`OfTests`]): a loop's end puts a change to any of them back, whatever its name.

use crate::observe::{self, OfTests};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const PLUGIN: &str = "ralph_gate_told";
const PLUGIN_SOURCE: &str = include_str!("ralph_gate_told.py");
/// Python's `sitecustomize` in the listener's folder: it has the listener hear `unittest` and
/// `doctest` in any Python a run starts, and loads the `sitecustomize` it stands in front of.
const SITE_SOURCE: &str = include_str!("ralph_gate_site.py");
const LISTENER_VAR: &str = "RALPH_GATE_PY_LISTENER";
const REPORTS_VAR: &str = "RALPH_GATE_PYTEST_REPORTS";
/// The project's root: the code of its files that opens a file is what the listener asks of
/// each read.
const ROOT_VAR: &str = "RALPH_GATE_PYTEST_ROOT";

/// The variables that tell pytest's listener, in a run in a checkout standing for the work
/// tree, where both are (`checkout_of`: the work tree's top, the checkout's), so that code
/// the import system finds in the work tree is taken from the checkout. The listener takes
/// them out of the environment as it loads, before the tests and the code they import run.
pub fn checkout_vars(checkout_of: Option<&(PathBuf, PathBuf)>) -> Vec<(OsString, OsString)> {
    let Some((work, checkout)) = checkout_of else {
        return Vec::new();
    };
    vec![
        (WORK_TREE_VAR.into(), work.into()),
        (CHECKOUT_VAR.into(), checkout.into()),
    ]
}

const WORK_TREE_VAR: &str = "RALPH_GATE_WORK_TREE";
const CHECKOUT_VAR: &str = "RALPH_GATE_CHECKOUT";

/// One run's listener: its folder (the plugin and the reports, under an unguessable name in
/// the temporary folder, which a run never counts as an input), removed when dropped.
pub struct Listening {
    dir: PathBuf,
    /// The listener's module name for this run.
    module: String,
}

/// What one pytest session recorded.
#[derive(Debug, Deserialize, PartialEq, Eq)]
struct Session {
    failed: Vec<String>,
    errors: Vec<String>,
    passed: u64,
    /// The exit status pytest computed, before any hook could set another.
    #[serde(default)]
    status: Option<i64>,
    /// The tests collected to run (none for `--collect-only`), and how many did.
    #[serde(default)]
    to_run: u64,
    #[serde(default)]
    ran: u64,
    finished: bool,
    /// The files of the plugins it ran as part of itself (and Python's startup hooks).
    #[serde(default)]
    plugins: Vec<PathBuf>,
    /// The tests that ran (passed or failed; not skipped, xfailed or deselected).
    #[serde(default)]
    ran_ids: Vec<String>,
    /// The files it collected the tests to run from, whatever their names.
    #[serde(default)]
    test_files: Vec<PathBuf>,
    /// The files the code of its tests, conftests and plugins opened for reading.
    #[serde(default)]
    test_data: Vec<PathBuf>,
    /// The files in folders the code of its tests listed, not read as data nor imported.
    #[serde(default)]
    test_listed: Vec<PathBuf>,
    /// The project's folders this process listed, by any code (pytest's collection, the
    /// import system).
    #[serde(default)]
    listed_dirs: Vec<PathBuf>,
    /// Which runner it was: pytest, or unittest or doctest in a Python no pytest ran.
    #[serde(default = "pytest_named")]
    runner: String,
    /// The project's files it read as the code under test's: the modules imported, and
    /// what code that is not the tests' opened.
    #[serde(default)]
    accounted: Vec<PathBuf>,
    /// The process it ran in.
    #[serde(default)]
    pid: Option<i32>,
}

/// What a Python process a session started said of itself at its exit
/// (`child-<pid>.reads`, from the listener's `child`).
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
struct Child {
    #[serde(default)]
    imported: Vec<PathBuf>,
    /// (file opened for reading, the project's file whose code opened it)
    #[serde(default)]
    opened: Vec<(PathBuf, PathBuf)>,
    /// (file in a folder listed, the project's file whose code listed it)
    #[serde(default)]
    listed: Vec<(PathBuf, PathBuf)>,
    /// The project's folders it listed, by any code.
    #[serde(default)]
    listed_dirs: Vec<PathBuf>,
    #[serde(default)]
    pid: Option<i32>,
}

fn pytest_named() -> String {
    "pytest".into()
}

impl Listening {
    /// A new listener, or `None` when its folder cannot be made (the run then goes on as the
    /// command says, unheard).
    pub fn open() -> Option<Self> {
        let dir = super::job::unguessable(&std::env::temp_dir().join("ralph-gate-pytest"));
        std::fs::create_dir_all(dir.join("told")).ok()?;
        let drawn = super::job::unguessable(Path::new(PLUGIN));
        let module = drawn.to_string_lossy().replace('-', "_");
        let listening = Self { dir, module };
        let file = listening.dir.join(format!("{}.py", listening.module));
        std::fs::write(file, PLUGIN_SOURCE).ok()?;
        std::fs::write(listening.dir.join("sitecustomize.py"), SITE_SOURCE).ok()?;
        Some(listening)
    }

    /// The variables that load the listener into a pytest, after `PYTHONPATH` and
    /// `PYTEST_ADDOPTS` as the gate would have them (its own `env`, else inherited).
    pub fn vars(
        &self,
        (gate_env, inherited): (&BTreeMap<String, String>, &BTreeMap<OsString, OsString>),
        root: &Path,
    ) -> Vec<(OsString, OsString)> {
        let given = |name: &str| {
            gate_env
                .get(name)
                .map(OsString::from)
                .or_else(|| inherited.get(&OsString::from(name)).cloned())
                .filter(|v| !v.is_empty())
        };
        let mut path = self.dir.clone().into_os_string();
        if let Some(before) = given("PYTHONPATH") {
            path.push(":");
            path.push(before);
        }
        let mut addopts = OsString::from(format!("-p {}", self.module));
        if let Some(before) = given("PYTEST_ADDOPTS") {
            addopts.push(" ");
            addopts.push(before);
        }
        vec![
            ("PYTHONPATH".into(), path),
            ("PYTEST_ADDOPTS".into(), addopts),
            (REPORTS_VAR.into(), self.dir.join("told").into_os_string()),
            (ROOT_VAR.into(), root.into()),
            (LISTENER_VAR.into(), self.module.clone().into()),
        ]
    }

    /// Why a run that exited 0 failed by pytest's own account, if it did.
    pub fn contradiction(&self) -> Option<String> {
        contradiction(&sessions(&self.dir.join("told")))
    }

    /// The plugin files every session of the run loaded (see `_plugin_files`).
    pub fn loaded(&self) -> Vec<PathBuf> {
        self.of_every_session(|s| s.plugins)
    }

    /// The files every session of the run said are its tests', by what it did: those it
    /// collected tests from, loaded as plugins, and those its tests read (absolute).
    pub fn of_tests(&self) -> Vec<(PathBuf, OfTests)> {
        self.of_every_session(|s| {
            let files = s.test_files.into_iter().map(|f| (f, OfTests::Collected));
            let plugins = s.plugins.into_iter().map(|f| (f, OfTests::Loaded));
            let data = s.test_data.into_iter().map(|f| (f, OfTests::Read));
            let listed = s.test_listed.into_iter().map(|f| (f, OfTests::Listed));
            files.chain(plugins).chain(data).chain(listed).collect()
        })
    }

    /// Of the files of the project the run read (`read`: absolute, as the run was seen to
    /// open them), those its tests read in a process a session started, by that process's
    /// own word, and those no record accounts for (read by a `cat`, a forked worker, a
    /// `python -c`, a library's thread, C code): either the tests' data or the code. So
    /// are the files in a folder the run listed (`dirs`) that no Python of it says it
    /// listed (an `ls`, a `find`: the names may be the cases). Nothing when no session was
    /// heard.
    pub fn read_through_processes(
        &self,
        (read, dirs): (Vec<PathBuf>, Vec<PathBuf>),
        named: &[observe::Named],
    ) -> Vec<(PathBuf, OfTests)> {
        let told = self.dir.join("told");
        let (sessions, children) = (sessions(&told), children(&told));
        let mut read = read;
        let look: Look<'_> = (&Path::is_dir, &files_in);
        read.extend(named_by_strangers(&sessions, &children, named, look));
        let folders = (dirs.as_slice(), &files_in as &dyn Fn(&Path) -> Vec<PathBuf>);
        let (theirs, unheard) = through_processes(&sessions, &children, (&read, folders));
        let theirs = theirs.into_iter().map(|f| (f, OfTests::Read));
        let listed = listed_through_processes(&sessions, &children);
        theirs
            .chain(unheard.into_iter().map(|f| (f, OfTests::Unheard)))
            .chain(listed.into_iter().map(|f| (f, OfTests::Listed)))
            .collect()
    }

    /// The tests every session of the run ran, by pytest's node id (relative to its root
    /// folder, so the same in any checkout of the project).
    pub fn ran(&self) -> Vec<String> {
        self.of_every_session(|s| s.ran_ids)
    }

    /// What `part` takes from each session's record, of every session, sorted, once each.
    fn of_every_session<T: Ord>(&self, part: impl Fn(Session) -> Vec<T>) -> Vec<T> {
        let mut all: Vec<T> = sessions(&self.dir.join("told"))
            .into_iter()
            .flat_map(part)
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// True when pytest could not load the listener (a Python that ignores `PYTHONPATH`,
    /// `-E` or `-I`): the failed run's output names it, and it was never imported (a
    /// conftest that prints its name and fails does not get a run without it). The run is
    /// made again without it.
    pub fn not_loaded(&self, output: &str) -> bool {
        let named = output.contains(&format!("\"{}\"", self.module))
            || output.contains(&format!("'{}'", self.module));
        named && !self.imported()
    }

    /// The tests that failed (their call, setup or teardown), and the files whose collection
    /// failed, by pytest's node id, of every session.
    pub fn failed(&self) -> Vec<String> {
        self.of_every_session(|s| [s.failed, s.errors].concat())
    }

    /// Whether any process imported the listener during the run: a pytest ran.
    pub fn imported(&self) -> bool {
        std::fs::read_dir(self.dir.join("told")).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("loaded-"))
        })
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn sessions(dir: &Path) -> Vec<Session> {
    super::records::read(dir)
}

/// The records the processes the sessions started left; one unreadable is left out (its
/// reads then count as the tests').
fn children(dir: &Path) -> Vec<Child> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("child-") && name.ends_with(".reads")
        })
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect()
}

/// The folders a run listed, and how to ask what files one holds (only those no Python of
/// the run listed are asked).
type Folders<'a> = (&'a [PathBuf], &'a dyn Fn(&Path) -> Vec<PathBuf>);

/// How to ask whether a path is a folder, and what files one holds.
type Look<'a> = (&'a dyn Fn(&Path) -> bool, &'a dyn Fn(&Path) -> Vec<PathBuf>);

/// Pure but for `files_in`: of the files a run read through processes its sessions started (see
/// [`Listening::read_through_processes`]), those a process said its tests' code read, and
/// those no record accounts for (a process that said nothing: data or code, not known),
/// each sorted, once each.
fn through_processes(
    sessions: &[Session],
    children: &[Child],
    (read, (dirs, files_in)): (&[PathBuf], Folders<'_>),
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    if sessions.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let ours = ours(sessions);
    let mut known: BTreeSet<&Path> = sessions
        .iter()
        .flat_map(|s| {
            s.accounted
                .iter()
                .chain(&s.test_data)
                .chain(&s.test_files)
                .chain(&s.plugins)
        })
        .chain(children.iter().flat_map(|c| &c.imported))
        .map(PathBuf::as_path)
        .collect();
    let mut theirs = BTreeSet::new();
    for (file, by) in children.iter().flat_map(|c| &c.opened) {
        if ours.contains(by.as_path()) {
            theirs.insert(file.as_path());
        } else {
            known.insert(file);
        }
    }
    // A folder the run listed that no Python of it did (an `ls`, a `find`): the names in
    // it, and so each file in it, may be the tests' cases.
    let listed: BTreeSet<&Path> = sessions
        .iter()
        .flat_map(|s| &s.listed_dirs)
        .chain(children.iter().flat_map(|c| &c.listed_dirs))
        .map(PathBuf::as_path)
        .collect();
    let names: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| !listed.contains(d.as_path()))
        .flat_map(|d| files_in(d))
        .collect();
    let unheard: BTreeSet<&Path> = read
        .iter()
        .chain(&names)
        .map(PathBuf::as_path)
        .filter(|r| !known.contains(r) && !theirs.contains(r))
        .collect();
    let owned = |s: BTreeSet<&Path>| s.into_iter().map(Path::to_path_buf).collect();
    (owned(theirs), owned(unheard))
}

/// Pure but for `look` (whether a path is a folder, the files in one): the paths a process
/// that told nothing of itself (no session's,
/// no child Python's: a shell's `test -e`, a `stat`, an `ls`, a forked worker) asked of or
/// opened, and the files in the folders it looked into. What it learned there (a size, a
/// flag file, the names of cases) no listener heard: [`through_processes`] takes those no
/// record accounts for as either the tests' or the code's.
fn named_by_strangers(
    sessions: &[Session],
    children: &[Child],
    named: &[observe::Named],
    (folder, files_in): Look<'_>,
) -> Vec<PathBuf> {
    let told: BTreeSet<i32> = sessions
        .iter()
        .filter_map(|s| s.pid)
        .chain(children.iter().filter_map(|c| c.pid))
        .collect();
    let strange = named
        .iter()
        .filter(|n| n.by.iter().any(|pid| !told.contains(pid)));
    strange
        .flat_map(|n| match folder(&n.path) {
            true => files_in(&n.path),
            false => vec![n.path.clone()],
        })
        .collect()
}

/// The files whose code is the tests' in the sessions: those collected, and plugins.
fn ours(sessions: &[Session]) -> BTreeSet<&Path> {
    sessions
        .iter()
        .flat_map(|s| s.test_files.iter().chain(&s.plugins))
        .map(PathBuf::as_path)
        .collect()
}

/// The files in `folder` now (not its folders), as absolute paths; none when it cannot be
/// read.
fn files_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect()
}

/// Pure: the files in folders that the code of the sessions' tests listed in a process a
/// session started (a child Python running a test file's function), as
/// [`through_processes`] takes what such code opened.
fn listed_through_processes(sessions: &[Session], children: &[Child]) -> BTreeSet<PathBuf> {
    let ours = ours(sessions);
    children
        .iter()
        .flat_map(|c| &c.listed)
        .filter(|(_, by)| ours.contains(by.as_path()))
        .map(|(file, _)| file.clone())
        .collect()
}

/// Pure: the first session whose record contradicts an exit status of 0.
fn contradiction(sessions: &[Session]) -> Option<String> {
    sessions.iter().find_map(|s| {
        let named = |ids: &[String]| {
            let mut shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
            if ids.len() > 5 {
                shown.push("...");
            }
            shown.join(", ")
        };
        if !s.failed.is_empty() || !s.errors.is_empty() {
            let mut parts = Vec::new();
            if !s.failed.is_empty() {
                parts.push(format!("{} failed ({})", s.failed.len(), named(&s.failed)));
            }
            if !s.errors.is_empty() {
                parts.push(format!("{} errors ({})", s.errors.len(), named(&s.errors)));
            }
            Some(format!(
                "{} reported {}, but the command exited 0: the exit status does not count",
                s.runner,
                parts.join(" and ")
            ))
        } else if let Some(status) = s.status.filter(|s| (1..=4).contains(s)) {
            Some(format!(
                "{}'s own exit status was {status} ({}), but the command exited 0: the exit status does not count",
                s.runner,
                match status {
                    1 => "tests failed",
                    2 => "interrupted",
                    3 => "internal error",
                    _ => "usage error",
                }
            ))
        } else if !s.finished {
            Some(format!(
                "a {} session ended before its end ({} tests had passed), and the command exited 0: something ended it early",
                s.runner,
                s.passed
            ))
        } else if s.ran < s.to_run {
            Some(format!(
                "{} of the {} tests {} collected to run were never run, and the command exited 0: something stopped the session",
                s.to_run - s.ran,
                s.to_run,
                s.runner
            ))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(failed: &[&str], errors: &[&str], finished: bool) -> Session {
        Session {
            failed: failed.iter().map(|s| s.to_string()).collect(),
            errors: errors.iter().map(|s| s.to_string()).collect(),
            passed: 3,
            status: Some(0),
            to_run: 3,
            ran: 3,
            finished,
            plugins: Vec::new(),
            ran_ids: Vec::new(),
            test_files: Vec::new(),
            test_data: Vec::new(),
            test_listed: Vec::new(),
            listed_dirs: Vec::new(),
            runner: pytest_named(),
            accounted: Vec::new(),
            pid: Some(10),
        }
    }

    #[test]
    fn what_a_process_that_told_nothing_asked_of_or_looked_into_is_named() {
        let s = session(&[], &[], true);
        let child = Child {
            pid: Some(11),
            ..Child::default()
        };
        let named = |path: &str, by: &[i32]| observe::Named {
            path: path.into(),
            by: by.to_vec(),
        };
        let all = [
            named("/p/calc.py", &[10, 11]),
            named("/p/FLAG", &[10, 12]),
            named("/p/cases", &[12]),
            named("/p/src", &[10]),
        ];
        let folder = |p: &Path| p.ends_with("cases") || p.ends_with("src");
        let files_in = |d: &Path| vec![d.join("2_3_5")];
        assert_eq!(
            named_by_strangers(&[s], &[child], &all, (&folder, &files_in)),
            paths(&["/p/FLAG", "/p/cases/2_3_5"]),
            "the pytest's and a child Python's are told; pid 12's (a shell's) are not"
        );
    }

    const NO_FOLDERS: Folders<'static> = (&[], &|_| Vec::new());

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn what_no_record_accounts_for_is_unheard_and_a_childs_word_decides_its_reads() {
        let mut s = session(&[], &[], true);
        s.test_files = paths(&["/p/test_a.py"]);
        s.accounted = paths(&["/p/calc.py", "/p/templates/t.txt"]);
        let child = Child {
            imported: paths(&["/p/cli.py"]),
            opened: vec![
                ("/p/golden.json".into(), "/p/test_a.py".into()),
                ("/p/cli.cfg".into(), "/p/cli.py".into()),
            ],
            listed: vec![
                ("/p/cases/2_3_5".into(), "/p/test_a.py".into()),
                ("/p/out/log.txt".into(), "/p/cli.py".into()),
            ],
            listed_dirs: Vec::new(),
            pid: None,
        };
        let read = paths(&[
            "/p/calc.py",
            "/p/templates/t.txt",
            "/p/cases.txt",
            "/p/cli.py",
            "/p/cli.cfg",
        ]);
        // A library's thread or C code read cases.txt: no record says whose.
        assert_eq!(
            through_processes(std::slice::from_ref(&s), &[], (&read, NO_FOLDERS)),
            (
                Vec::new(),
                paths(&["/p/cases.txt", "/p/cli.cfg", "/p/cli.py"])
            )
        );
        assert_eq!(
            through_processes(
                std::slice::from_ref(&s),
                std::slice::from_ref(&child),
                (&read, NO_FOLDERS)
            ),
            (paths(&["/p/golden.json"]), paths(&["/p/cases.txt"]))
        );
        // A folder only another program listed (`ls cases`): its files may be the cases;
        // one pytest or a child Python listed is not counted for that.
        let mut s2 = session(&[], &[], true);
        s2.test_files = paths(&["/p/test_a.py"]);
        s2.accounted = paths(&["/p/calc.py"]);
        s2.listed_dirs = paths(&["/p", "/p/src"]);
        let dirs = paths(&["/p", "/p/src", "/p/cases", "/p/quiet"]);
        let files_in = |d: &Path| match d.to_str() {
            Some("/p/cases") => paths(&["/p/cases/2_3_5", "/p/cases/run.py"]),
            other => panic!("{other:?} was listed by a Python: not asked"),
        };
        let quiet = Child {
            listed_dirs: paths(&["/p/quiet"]),
            ..Child::default()
        };
        let read = paths(&["/p/calc.py"]);
        assert_eq!(
            through_processes(&[s2], &[quiet], (&read, (&dirs, &files_in))),
            (Vec::new(), paths(&["/p/cases/2_3_5", "/p/cases/run.py"]))
        );
        // What a test's code listed in the child is the tests'; what the code listed is not.
        assert_eq!(
            listed_through_processes(&[s], &[child]),
            BTreeSet::from(["/p/cases/2_3_5".into()])
        );
        // No session heard: nothing to account with.
        let none = (Vec::new(), Vec::new());
        assert_eq!(
            through_processes(&[], &[Child::default()], (&read, NO_FOLDERS)),
            none
        );
    }

    #[test]
    fn a_finished_session_with_no_failure_agrees() {
        assert_eq!(contradiction(&[session(&[], &[], true)]), None);
        assert_eq!(contradiction(&[]), None);
    }

    #[test]
    fn a_failure_or_an_unfinished_session_contradicts_exit_zero() {
        let why = contradiction(&[session(&["t.py::a"], &[], true)]).unwrap();
        assert!(why.contains("1 failed (t.py::a)"), "{why}");
        let why = contradiction(&[session(&[], &["t.py"], true)]).unwrap();
        assert!(why.contains("1 errors (t.py)"), "{why}");
        let why = contradiction(&[session(&[], &[], true), session(&[], &[], false)]).unwrap();
        assert!(why.contains("ended before its end"), "{why}");
        let stopped = Session {
            ran: 1,
            ..session(&[], &[], true)
        };
        let why = contradiction(&[stopped]).unwrap();
        assert!(why.contains("2 of the 3 tests"), "{why}");
        let rewritten = Session {
            status: Some(1),
            ..session(&[], &[], true)
        };
        let why = contradiction(&[rewritten]).unwrap();
        assert!(
            why.contains("own exit status was 1 (tests failed)"),
            "{why}"
        );
        // No tests collected (5) is the command's to accept (`pytest || [ $? = 5 ]`).
        let empty = Session {
            status: Some(5),
            to_run: 0,
            ran: 0,
            ..session(&[], &[], true)
        };
        assert_eq!(contradiction(&[empty]), None);
    }

    #[test]
    fn the_listener_comes_first_and_keeps_what_the_gate_had() {
        let l = Listening {
            dir: PathBuf::from("/tmp/x"),
            module: "ralph_gate_told_1".into(),
        };
        let gate: BTreeMap<String, String> = [("PYTHONPATH".into(), "src".into())].into();
        let inherited: BTreeMap<OsString, OsString> =
            [("PYTEST_ADDOPTS".into(), "-q".into())].into();
        let vars = l.vars((&gate, &inherited), Path::new("/p"));
        assert_eq!(vars[0], ("PYTHONPATH".into(), "/tmp/x:src".into()));
        assert_eq!(
            vars[1],
            ("PYTEST_ADDOPTS".into(), "-p ralph_gate_told_1 -q".into())
        );
        std::mem::forget(l);
    }

    #[test]
    fn a_load_failure_names_the_listener() {
        let l = Listening {
            dir: PathBuf::from("/tmp/x"),
            module: "ralph_gate_told_1".into(),
        };
        assert!(l.not_loaded(
            "ImportError: Error importing plugin \"ralph_gate_told_1\": No module named 'ralph_gate_told_1'"
        ));
        assert!(!l.not_loaded("1 failed"));
        std::mem::forget(l);
    }
}
