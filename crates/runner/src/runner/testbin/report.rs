//! Pure: what a test binary's output says, read line by line as it passes through, and
//! whether an exit of 0 agrees with it.

use super::Harness;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// What a test binary's output said.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Heard {
    /// Go: the top-level tests a `--- FAIL:` line named (the testing package writes them at
    /// the start of a line; a subtest's are indented, a `t.Log` line is prefixed), and the
    /// last summary line, `PASS` (true) or `FAIL`: the testing package writes it last, so a
    /// program's own `FAIL` before it is output, not a verdict.
    failed: Vec<String>,
    summary_passed: Option<bool>,
    /// libtest: `running N tests` seen, then `test result:` (and whether it said FAILED).
    began: bool,
    summary: bool,
    summary_failed: bool,
    /// The tests the binary said it ran, passed or failed (not skipped or ignored): Go's
    /// top-level `--- PASS:`/`--- FAIL:` lines (printed under `-test.v`), libtest's
    /// `test NAME ... ok|FAILED`. A loop compares them with the tests that ran at its start.
    pub ran: Vec<String>,
    /// libtest: how many tests its `running N tests` lines announced. Its terse format
    /// (`cargo test -q`) prints a dot for a test that passed, so fewer are named.
    pub counted: u64,
    /// Go: the subtests that passed or failed (`TestToml/valid/key`, from the indented
    /// `--- PASS:`/`--- FAIL:` lines): not tests of their own, but what says a test was
    /// folded into another's table rather than dropped.
    pub subtests: Vec<String>,
}

impl Heard {
    pub fn line(&mut self, raw: &str) {
        // `go test -json` has the binary mark its lines with a SYN byte.
        let line = raw.trim_start_matches('\u{16}').trim_end();
        if let Some(rest) = line.strip_prefix("--- FAIL: ") {
            let name = rest.split_whitespace().next().map(String::from);
            self.failed.extend(name.clone());
            self.ran.extend(name);
        } else if let Some(rest) = line.strip_prefix("--- PASS: ") {
            self.ran
                .extend(rest.split_whitespace().next().map(String::from));
        } else if line == "FAIL" {
            self.summary_passed = Some(false);
        } else if line.ends_with("PASS") {
            // A program's output without a final newline runs into the summary.
            self.summary_passed = Some(true);
        } else if line.starts_with("running ")
            && line
                .split_whitespace()
                .nth(1)
                .is_some_and(|n| n.parse::<u64>().is_ok())
            && (line.ends_with(" test") || line.ends_with(" tests"))
        {
            self.began = true;
            self.summary = false;
            self.counted += line
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            self.summary = true;
            self.summary_failed |= rest.starts_with("FAILED");
        } else if let Some(name) = libtest_ran(line) {
            self.ran.push(name.to_string());
        } else if let Some(name) = go_subtest(line) {
            self.subtests.push(name.to_string());
        }
    }
}

impl Heard {
    /// Go: keeps only the tests (and their subtests) whose function the binary holds
    /// (`defined`: the test names among its symbols, see `testbin::go_functions`). A result
    /// line is only text on the binary's output, which the code under test can print too
    /// (`--- PASS: TestGone` from a test that deleted `TestGone`); the linker keeps a test's
    /// function because the testing package's table names it.
    pub fn only_defined(&mut self, defined: &std::collections::BTreeSet<String>) {
        self.ran.retain(|name| defined.contains(name));
        let top = |sub: &String| sub.split('/').next().unwrap_or_default().to_string();
        self.subtests.retain(|sub| defined.contains(&top(sub)));
    }

    /// The names of the top-level tests heard (those of the subtests too).
    pub fn top_names(&self) -> std::collections::BTreeSet<String> {
        let subs = self.subtests.iter().filter_map(|s| s.split('/').next());
        self.ran
            .iter()
            .map(String::as_str)
            .chain(subs)
            .map(String::from)
            .collect()
    }
}

/// The subtest an indented Go result line (`    --- PASS: TestA/case (0.00s)`) names.
fn go_subtest(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(' ')?.trim_start();
    let result = rest
        .strip_prefix("--- PASS: ")
        .or_else(|| rest.strip_prefix("--- FAIL: "))?;
    result.split_whitespace().next().filter(|n| n.contains('/'))
}

/// The test a libtest line `test NAME ... ok` (or `FAILED`, with a time under
/// `--report-time`, with its mode: ` - should panic`) says ran; `None` for an ignored test or
/// any other line.
fn libtest_ran(line: &str) -> Option<&str> {
    let (name, outcome) = line.strip_prefix("test ")?.rsplit_once(" ... ")?;
    let word = outcome.split([' ', ',']).next().unwrap_or_default();
    matches!(word, "ok" | "FAILED").then(|| without_mode(name))
}

/// A libtest test's name without the mode its pretty line adds (`x - should panic`).
fn without_mode(name: &str) -> &str {
    match name.rsplit_once(" - ") {
        Some((bare, "should panic" | "compile fail" | "build")) => bare,
        _ => name,
    }
}

/// Go's quiet output rebuilt from the verbose one the wrapper asks for (`-test.v`, so the
/// binary names every test it ran): the framing lines only `-v` prints go (each test's
/// run, pause, continuation and name lines, its pass or skip), a test's log lines are held
/// until its result and shown after its `--- FAIL:` line as the quiet binary shows them, or
/// dropped with its pass, and a failed subtest's report joins its parent's.
#[derive(Debug, Default)]
pub struct Quiet {
    /// The test whose log lines come now (the last one run, continued or named).
    current: Option<String>,
    /// Log lines and failed subtests' reports, by test, in the order they came.
    held: BTreeMap<String, Vec<Vec<u8>>>,
}

impl Quiet {
    /// The lines to show for the verbose line `raw`, now.
    pub fn line(&mut self, raw: &[u8]) -> Vec<Vec<u8>> {
        let text = String::from_utf8_lossy(raw);
        let line = text.trim_start();
        let framing = ["=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "];
        if let Some(rest) = framing.iter().find_map(|p| line.strip_prefix(p)) {
            self.current = rest.split_whitespace().next().map(String::from);
            return Vec::new();
        }
        let results = [
            ("--- PASS: ", false),
            ("--- SKIP: ", false),
            ("--- FAIL: ", true),
        ];
        if let Some((rest, failed)) = results
            .iter()
            .find_map(|(p, failed)| line.strip_prefix(p).map(|r| (r, *failed)))
        {
            let name = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            let own = self.held.remove(&name).unwrap_or_default();
            let parent = name.rsplit_once('/').map(|(p, _)| p.to_string());
            self.current.clone_from(&parent);
            if !failed {
                return Vec::new();
            }
            let report: Vec<Vec<u8>> = std::iter::once(raw.to_vec()).chain(own).collect();
            return match parent {
                Some(p) => {
                    self.held.entry(p).or_default().extend(report);
                    Vec::new()
                }
                None => report,
            };
        }
        match &self.current {
            Some(test) if text.starts_with("    ") => {
                self.held
                    .entry(test.clone())
                    .or_default()
                    .push(raw.to_vec());
                Vec::new()
            }
            _ => vec![raw.to_vec()],
        }
    }

    /// What is still held when the output ends (a test that never reported): shown, so
    /// nothing the binary said is lost.
    pub fn rest(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.held)
            .into_values()
            .flatten()
            .collect()
    }
}

/// Whether a Go test binary is run by `go test` (a `.test` file given `-test.` flags: `go
/// run` shares the `-exec`) to run tests (not only to list them).
pub fn go_runs_tests(binary: &Path, args: &[OsString]) -> bool {
    let arg = |p: &str| args.iter().any(|a| a.to_string_lossy().starts_with(p));
    let name = binary.file_name().unwrap_or_default().to_string_lossy();
    name.ends_with(".test") && arg("-test.") && !arg("-test.list")
}

/// Whether a libtest binary is run by cargo to run tests: built as a test (in a `deps`
/// folder: `cargo run` shares the runner) and not only to list them.
pub fn libtest_runs_tests(binary: &Path, args: &[OsString]) -> bool {
    let in_deps = binary
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "deps");
    in_deps && !args.iter().any(|a| a == "--list")
}

/// Pure: why a test binary that exited 0 did not pass by its own account. `binary` is its
/// path, `args` what it was given; a Go binary is judged only when `go test` started it (a
/// `.test` file given `-test.` flags: `go run` shares the `-exec`), a libtest one only when
/// cargo built it as a test (in a `deps` folder: `cargo run` shares the runner), and neither
/// when asked only to list its tests.
pub fn judge(harness: Harness, binary: &Path, args: &[OsString], heard: &Heard) -> Option<String> {
    let name = binary.file_name().unwrap_or_default().to_string_lossy();
    match harness {
        Harness::Go => {
            if !go_runs_tests(binary, args) {
                return None;
            }
            if !heard.failed.is_empty() || heard.summary_passed == Some(false) {
                let named = if heard.failed.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", heard.failed.join(", "))
                };
                Some(format!(
                    "go's test binary {name} reported a failure{named}, but exited 0: the exit status does not count"
                ))
            } else if heard.summary_passed.is_none() {
                Some(format!(
                    "go's test binary {name} exited 0 without the testing package's PASS, so its tests did not run to their end: the exit status does not count"
                ))
            } else {
                None
            }
        }
        Harness::Libtest => {
            if !libtest_runs_tests(binary, args) || !heard.began {
                return None;
            }
            if heard.summary_failed {
                Some(format!(
                    "libtest in {name} said `test result: FAILED`, but the binary exited 0: the exit status does not count"
                ))
            } else if !heard.summary {
                Some(format!(
                    "the test binary {name} exited 0 before libtest's `test result:` line (a test or the code under test ended the process): the exit status does not count"
                ))
            } else {
                None
            }
        }
    }
}

/// libtest's terse output (`cargo test -q`, which prints a dot for a test that passed) rebuilt
/// from the pretty one the wrapper asks for instead, so the binary names every test it ran: a
/// dot or an `i` for a test that passed or was ignored (with the count every 88), a
/// `NAME --- FAILED` line for one that failed; every other line as it came.
#[derive(Debug, Default)]
pub struct Terse {
    count: usize,
    column: usize,
    total: usize,
}

/// How long a line of dots gets before libtest adds the count.
const TERSE_COLUMNS: usize = 88;

impl Terse {
    /// The text to show for the pretty line `raw`, now.
    pub fn line(&mut self, raw: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(raw);
        let line = text.trim_end();
        if let Some(n) = announced(line) {
            (self.total, self.count, self.column) = (n, 0, 0);
            return raw.to_vec();
        }
        let Some((name, outcome)) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.rsplit_once(" ... "))
        else {
            return raw.to_vec();
        };
        let name = without_mode(name);
        match outcome.split([' ', ',']).next().unwrap_or_default() {
            "ok" => self.short("."),
            "ignored" => self.short("i"),
            "FAILED" => {
                let mut out = if self.column == 0 {
                    String::new()
                } else {
                    self.progress()
                };
                self.count += 1;
                out.push_str(&format!("{name} --- FAILED\n"));
                out.into_bytes()
            }
            _ => raw.to_vec(),
        }
    }

    fn short(&mut self, mark: &str) -> Vec<u8> {
        let mut out = mark.to_string();
        self.count += 1;
        self.column += 1;
        if self.column % TERSE_COLUMNS == TERSE_COLUMNS - 1 {
            out.push_str(&self.progress());
        }
        out.into_bytes()
    }

    fn progress(&mut self) -> String {
        self.column = 0;
        format!(" {}/{}\n", self.count, self.total)
    }
}

/// The count of a libtest `running N tests` line.
fn announced(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("running ")?;
    let mut words = rest.split_whitespace();
    let n = words.next()?.parse().ok()?;
    matches!(words.next(), Some("test" | "tests")).then_some(n)
}
