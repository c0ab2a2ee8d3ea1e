//! What node's test runners say they ran: node's own (`node --test`, and whatever starts it:
//! `npm test`, a script), jest and vitest. Every run of a gate gets, through `NODE_OPTIONS`:
//! - ralph-gate's reporter for node's runner (`--test-reporter=<run folder>/ralph_gate_reporter.mjs`):
//!   it writes the runner's output as node's default reporter would (TAP when the output is
//!   not a terminal, spec on one or from node 23), and on the side each test that ran;
//! - a preload (`--require=<run folder>/ralph_gate_jstest.cjs`) that notes the results jest's
//!   `runCLI` returns and, in vitest's processes only, the files vitest's `startTests` returns
//!   (through a module hook, `ralph_gate_vitest.mjs`), whatever reporters the project chose.
//!
//! Each writes the tests the runner's own results say ran, by file and name path, and whether
//! each failed. A node that runs no tests only parses the options.
//!
//! Where the command chose node's reporters itself (`--test-reporter` on its command line),
//! node refuses the mix before any test runs; the run is then made again without ralph-gate's
//! reporter, and what node's runner ran is not known. Known by effect: the reporter was never
//! loaded.

use crate::observe::OfTests;
use ralph_base::env::Environment;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const REPORTER: (&str, &str) = (
    "ralph_gate_reporter.mjs",
    include_str!("ralph_gate_reporter.mjs"),
);
const PRELOAD: (&str, &str) = (
    "ralph_gate_jstest.cjs",
    include_str!("ralph_gate_jstest.cjs"),
);
/// The project's root, for the preload.
const ROOT_VAR: &str = "RALPH_GATE_NODE_ROOT";
const VITEST_HOOKS: (&str, &str) = (
    "ralph_gate_vitest.mjs",
    include_str!("ralph_gate_vitest.mjs"),
);

/// One run's listeners: a folder (the modules, and `told/` for what they write) under an
/// unguessable name in the temporary folder, removed when dropped.
pub struct Listening {
    dir: PathBuf,
    /// The project's root: reads of files under it are what the preload writes.
    root: PathBuf,
}

/// A line a listener writes: that node's reporter was loaded, that jest or vitest ran (and,
/// for jest, whether its results say it failed), or a test that ran.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Line {
    loaded: bool,
    runner: Option<String>,
    file: String,
    path: Vec<String>,
    failed: bool,
    /// A file a test process read, and the file of the project whose code read it.
    read: Option<PathBuf>,
    by: Option<PathBuf>,
    /// A file a runner's module system compiled as code (jest's): a module, not data.
    compiled: Option<PathBuf>,
    /// A file node's module loader read in a test process: a module, not data.
    imported: Option<PathBuf>,
    /// The project's code in a test process started a process.
    spawned: bool,
    /// A file in a folder a test process's code listed (with `by`): its name may be a case.
    listed: Option<PathBuf>,
}

impl Listening {
    /// New listeners, or `None` when they cannot be made or named in `NODE_OPTIONS` (which
    /// splits on white space and reads quotes and backslashes): the run goes on unheard.
    ///
    /// `fresh`: the run decides a loop's end or `check --base`: jest reads no cache.
    pub fn open(fresh: bool, root: &Path) -> Option<Self> {
        let dir = super::job::unguessable(&std::env::temp_dir().join("ralph-gate-nodetest"));
        let name = dir.to_str()?;
        if name.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
            return None;
        }
        std::fs::create_dir_all(dir.join("told")).ok()?;
        for (file, text) in [REPORTER, PRELOAD, VITEST_HOOKS] {
            std::fs::write(dir.join(file), text).ok()?;
        }
        if fresh {
            std::fs::write(dir.join("fresh"), "").ok()?;
        }
        Some(Self {
            dir,
            root: root.to_path_buf(),
        })
    }

    /// `NODE_OPTIONS` with the listeners added (the gate's own `env`, else the environment's,
    /// first). Node's reporter only when `reporter` is asked for and no reporter is named
    /// there already.
    pub fn vars(
        &self,
        gate_env: &BTreeMap<String, String>,
        env: &Environment,
        reporter: bool,
    ) -> Vec<(OsString, OsString)> {
        let given = super::given_var(gate_env, env, "NODE_OPTIONS").unwrap_or_default();
        let reporter = reporter && !given.to_string_lossy().contains("--test-reporter");
        let mut value = given;
        let mut add = |option: &str, file: &str| {
            if !value.is_empty() {
                value.push(" ");
            }
            value.push(option);
            value.push(self.dir.join(file));
        };
        if reporter {
            add("--test-reporter=", REPORTER.0);
        }
        add("--require=", PRELOAD.0);
        vec![
            ("NODE_OPTIONS".into(), value),
            (ROOT_VAR.into(), self.root.clone().into_os_string()),
        ]
    }

    fn lines(&self) -> Vec<Line> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("told")) else {
            return Vec::new();
        };
        let mut found: Vec<(OsString, String)> = entries
            .flatten()
            .filter_map(|e| Some((e.file_name(), std::fs::read_to_string(e.path()).ok()?)))
            .collect();
        found.sort();
        found
            .iter()
            .flat_map(|(_, text)| text.lines())
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The run failed because node would not take the reporter beside the command's own
    /// (`output` names the option, and the reporter never loaded): make it again without.
    pub fn refused(&self, output: &str) -> bool {
        output.contains("test-reporter") && !self.lines().iter().any(|l| l.loaded)
    }

    /// The tests the runners said they ran, each `<file relative to root>: <name path>`;
    /// `None` when no runner was heard.
    pub fn ran(&self, root: &Path) -> Option<Vec<String>> {
        ids(&self.lines(), root)
    }

    /// The tests the runners said failed, named as [`Self::ran`] names them.
    pub fn failed(&self, root: &Path) -> Vec<String> {
        failed_ids(&self.lines(), root)
    }

    /// The files the runners said are their tests' (see [`of_tests`]).
    pub fn of_tests(&self) -> Vec<(PathBuf, OfTests)> {
        of_tests(&self.lines())
    }

    /// Whether the project's code in a test process started a process: only then does
    /// [`Self::read_through_processes`] name anything, and need the run's reads.
    pub fn started_a_process(&self) -> bool {
        self.lines().iter().any(|l| l.spawned)
    }

    /// The files of the project the run read (`read`: absolute, as observed) that no line
    /// accounts for, when the project's code in a test process started a process (see
    /// [`unheard`]): the tests' data or the code under test, not known which.
    pub fn read_through_processes(&self, read: &[PathBuf]) -> Vec<(PathBuf, OfTests)> {
        unheard(&self.lines(), read)
            .into_iter()
            .map(|f| (f, OfTests::Unheard))
            .collect()
    }

    /// Why a run that exited 0 failed: a runner's own results say a test failed.
    pub fn contradiction(&self, root: &Path) -> Option<String> {
        contradiction(&self.lines(), root)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Line {
    fn heard(&self) -> bool {
        self.loaded || self.runner.is_some()
    }

    fn is_test(&self) -> bool {
        !self.heard() && !self.path.is_empty()
    }

    /// `<file relative to root>: <name path>`.
    fn id(&self, root: &Path) -> String {
        let file = Path::new(&self.file);
        let file = file.strip_prefix(root).unwrap_or(file).display();
        // A file whose tests never reported is one test named by its full path, which
        // differs between checkouts: named by the file alone.
        match self.path.as_slice() {
            [only] if *only == self.file => format!("{file}: {file}"),
            path => format!("{file}: {}", path.join(" > ")),
        }
    }
}

/// Pure: the test IDs in the listeners' lines; `None` when no runner was heard.
fn ids(lines: &[Line], root: &Path) -> Option<Vec<String>> {
    if !lines.iter().any(Line::heard) {
        return None;
    }
    let mut ran: Vec<String> = lines
        .iter()
        .filter(|l| l.is_test())
        .map(|l| l.id(root))
        .collect();
    ran.sort();
    ran.dedup();
    Some(ran)
}

/// Pure: the files the runners reported tests from, the files the code of those read (not
/// one of them, nor a module a runner compiled), and the files in folders it listed (none
/// of those, nor a module the loader read, nor a file any code read), sorted, once each.
fn of_tests(lines: &[Line]) -> Vec<(PathBuf, OfTests)> {
    let tests: BTreeSet<&Path> = lines
        .iter()
        .filter(|l| l.is_test())
        .map(|l| Path::new(&l.file))
        .filter(|f| f.is_absolute())
        .collect();
    let read = lines.iter().filter_map(|l| match (&l.read, &l.by) {
        (Some(read), Some(by)) if tests.contains(by.as_path()) => Some(read.as_path()),
        _ => None,
    });
    let compiled: BTreeSet<&Path> = lines.iter().filter_map(|l| l.compiled.as_deref()).collect();
    let read: BTreeSet<&Path> = read
        .filter(|r| !tests.contains(r) && !compiled.contains(r))
        .collect();
    // A module, or a file any code read (the tests: their data; the code: its own), is not
    // a listed name.
    let known: BTreeSet<&Path> = lines
        .iter()
        .flat_map(|l| [&l.imported, &l.read])
        .filter_map(|p| p.as_deref())
        .collect();
    let listed: BTreeSet<&Path> = lines
        .iter()
        .filter_map(|l| match (&l.listed, &l.by) {
            (Some(f), Some(by)) if tests.contains(by.as_path()) => Some(f.as_path()),
            _ => None,
        })
        .filter(|f| {
            ![&tests, &compiled, &known]
                .iter()
                .any(|set| set.contains(f))
        })
        .collect();
    let collected = tests.iter().map(|f| (f.to_path_buf(), OfTests::Collected));
    collected
        .chain(read.into_iter().map(|f| (f.to_path_buf(), OfTests::Read)))
        .chain(
            listed
                .into_iter()
                .map(|f| (f.to_path_buf(), OfTests::Listed)),
        )
        .collect()
}

/// Pure: of the files a run read, those no line accounts for (a test file, a file the
/// project's code read, a module loaded or compiled), when a line says the project's code
/// started a process: what that process read, no frame of a test process says.
fn unheard(lines: &[Line], read: &[PathBuf]) -> Vec<PathBuf> {
    if !lines.iter().any(|l| l.spawned) {
        return Vec::new();
    }
    let tests = lines
        .iter()
        .filter(|l| l.is_test())
        .map(|l| Path::new(&l.file));
    let known: BTreeSet<&Path> = lines
        .iter()
        .flat_map(|l| [&l.read, &l.compiled, &l.imported])
        .filter_map(|p| p.as_deref())
        .chain(tests)
        .collect();
    read.iter()
        .filter(|r| !known.contains(r.as_path()))
        .cloned()
        .collect()
}

/// Pure: the IDs of the tests the lines say failed, sorted, once each.
fn failed_ids(lines: &[Line], root: &Path) -> Vec<String> {
    let mut failed: Vec<String> = lines
        .iter()
        .filter(|l| l.failed && l.is_test())
        .map(|l| l.id(root))
        .collect();
    failed.sort();
    failed.dedup();
    failed
}

/// Pure: why a run that exited 0 failed, when a runner's results say a test failed (or, for
/// jest, that the run did not succeed: a test file that could not run).
fn contradiction(lines: &[Line], root: &Path) -> Option<String> {
    let failed = failed_ids(lines, root);
    if failed.is_empty() && !lines.iter().any(|l| l.failed && l.heard()) {
        return None;
    }
    let who = lines
        .iter()
        .find_map(|l| l.runner.clone())
        .unwrap_or_else(|| "node's test runner".into());
    let what = match failed.len() {
        0 => "a failure".to_string(),
        n => {
            let mut shown: Vec<&str> = failed.iter().take(5).map(String::as_str).collect();
            if n > 5 {
                shown.push("...");
            }
            format!("{n} failed ({})", shown.join(", "))
        }
    };
    Some(format!(
        "{who} reported {what}, but the command exited 0: the exit status does not count"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        serde_json::from_str(text).expect("a line")
    }

    #[test]
    fn what_no_line_accounts_for_is_unheard_once_the_project_started_a_process() {
        let mut lines = vec![
            line(r#"{"file":"/p/a.test.mjs","path":["adds"]}"#),
            line(r#"{"imported":"/p/calc.mjs"}"#),
            line(r#"{"read":"/p/defaults.json","by":"/p/calc.mjs"}"#),
            line(r#"{"compiled":"/p/util.js"}"#),
        ];
        let read: Vec<PathBuf> = [
            "/p/a.test.mjs",
            "/p/calc.mjs",
            "/p/defaults.json",
            "/p/util.js",
            "/p/cases.txt",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert!(unheard(&lines, &read).is_empty(), "nothing started");
        lines.push(line(r#"{"spawned":true}"#));
        assert_eq!(unheard(&lines, &read), vec![PathBuf::from("/p/cases.txt")]);
    }

    #[test]
    fn data_is_what_a_test_file_read_and_only_that() {
        let lines = [
            line(r#"{"file":"/p/a.test.mjs","path":["adds"]}"#),
            line(r#"{"read":"/p/data/cases.json","by":"/p/a.test.mjs"}"#),
            // Read by the code under test: the code's own data.
            line(r#"{"read":"/p/defaults.json","by":"/p/calc.mjs"}"#),
            // A test file another test file read is a test still.
            line(r#"{"file":"/p/b.test.mjs","path":["b"]}"#),
            line(r#"{"read":"/p/b.test.mjs","by":"/p/a.test.mjs"}"#),
            // Read by jest's module system for the test, and compiled: a module.
            line(r#"{"read":"/p/calc.js","by":"/p/a.test.mjs"}"#),
            line(r#"{"compiled":"/p/calc.js"}"#),
            // Listed by a test: a case's name, unless it is known otherwise.
            line(r#"{"listed":"/p/cases/2_3_5","by":"/p/a.test.mjs"}"#),
            line(r#"{"listed":"/p/calc.js","by":"/p/a.test.mjs"}"#),
            line(r#"{"listed":"/p/b.test.mjs","by":"/p/a.test.mjs"}"#),
            line(r#"{"listed":"/p/out/log","by":"/p/calc.mjs"}"#),
            line(r#"{"listed":"/p/defaults.json","by":"/p/a.test.mjs"}"#),
        ];
        assert_eq!(
            of_tests(&lines),
            vec![
                (PathBuf::from("/p/a.test.mjs"), OfTests::Collected),
                (PathBuf::from("/p/b.test.mjs"), OfTests::Collected),
                (PathBuf::from("/p/data/cases.json"), OfTests::Read),
                (PathBuf::from("/p/cases/2_3_5"), OfTests::Listed),
            ]
        );
    }

    #[test]
    fn tests_are_named_by_file_under_the_root_and_name_path() {
        let lines = [
            line(r#"{"loaded":true}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["adds"]}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["group","inner"]}"#),
            line(r#"{"file":"/elsewhere/b.mjs","path":["b"]}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["adds"]}"#),
            line(r#"{"file":"/p/c.mjs","path":["/p/c.mjs"]}"#),
        ];
        assert_eq!(
            ids(&lines, Path::new("/p")).expect("heard"),
            [
                "/elsewhere/b.mjs: b",
                "c.mjs: c.mjs",
                "test/a.test.js: adds",
                "test/a.test.js: group > inner"
            ]
        );
    }

    #[test]
    fn jest_and_vitest_are_heard_by_the_runner_they_name() {
        let lines = [
            line(r#"{"runner":"vitest"}"#),
            line(r#"{"file":"/p/t/a.test.js","path":["grp","inner"],"failed":false}"#),
        ];
        assert_eq!(
            ids(&lines, Path::new("/p")).expect("heard"),
            ["t/a.test.js: grp > inner"]
        );
        assert_eq!(contradiction(&lines, Path::new("/p")), None);
        // Tests written by a runner never heard to start (a stray line) are not heard.
        assert_eq!(ids(&lines[1..], Path::new("/p")), None);
    }

    #[test]
    fn a_failed_test_or_a_failed_run_contradicts_an_exit_0() {
        let root = Path::new("/p");
        let failed = [
            line(r#"{"runner":"vitest"}"#),
            line(r#"{"file":"/p/a.test.js","path":["adds"],"failed":true}"#),
        ];
        let said = contradiction(&failed, root).expect("contradicted");
        assert!(
            said.starts_with("vitest reported 1 failed (a.test.js: adds)"),
            "{said}"
        );
        // Jest's results say the run failed (a file that could not run), no test failed.
        let run = [line(r#"{"runner":"jest","failed":true}"#)];
        let said = contradiction(&run, root).expect("contradicted");
        assert!(said.starts_with("jest reported a failure"), "{said}");
        let node = [
            line(r#"{"loaded":true}"#),
            line(r#"{"file":"/p/a.test.mjs","path":["adds"],"failed":true}"#),
        ];
        let said = contradiction(&node, root).expect("contradicted");
        assert!(said.starts_with("node's test runner reported"), "{said}");
    }

    #[test]
    fn a_reporter_never_loaded_heard_nothing_and_one_loaded_may_have_run_none() {
        assert_eq!(ids(&[], Path::new("/p")), None);
        assert_eq!(
            ids(&[line(r#"{"loaded":true}"#)], Path::new("/p")),
            Some(Vec::new())
        );
    }
}
