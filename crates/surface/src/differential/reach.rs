//! Code the tests reached at a loop's start that they no longer reach. A file of checked
//! code that the tests opened at the start, still in the tree judged, that no test run
//! opens now has left their reach, whatever did it: a module found first by the import
//! system (an extensionless file beside `x.js`, a package folder beside `x.py`), a
//! resolution option, a test that imports a copy. The differential run cannot see it:
//! nothing of the checks changed, and the tests as they were pass on the final tree,
//! against the new file. Decided by what the runs opened, not by how the change is
//! spelled; dead code left behind looks the same, and is told to go.

use super::{Prepared, Tests};
use crate::surface::roles::{self, Role};
use ralph_base::git::GitError;
use ralph_base::snapshot;
use ralph_runner::runner::GateResult;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Pure: the project files each gate read, where every run of it was observed (now, or
/// when its stored result was made, on the same inputs); a gate of which that is not known
/// is left out.
pub fn reached(results: &[GateResult]) -> Tests {
    results
        .iter()
        .filter(|r| !r.run_details.is_empty())
        .filter_map(|r| {
            let read: Option<Vec<&Vec<String>>> =
                r.run_details.iter().map(|d| d.read.as_ref()).collect();
            let files = read?.into_iter().flatten().cloned().collect();
            Some((r.name.clone(), files))
        })
        .collect()
}

/// A run in a checkout that opened the work tree's own files (`root`: an editable install
/// points the import system at the project, wherever the run is) read those files: they
/// join its reads, by their path in the project, as the checkout's own would.
pub fn read_through(result: &mut GateResult, root: &std::path::Path) {
    for run in &mut result.run_details {
        let Some(read) = run.read.as_mut() else {
            continue;
        };
        let theirs = run.outside.iter().filter_map(|p| p.strip_prefix(root).ok());
        read.extend(theirs.filter_map(|r| r.to_str().map(str::to_string)));
    }
}

/// Pure: [`reached`] of the gates whose runners, run now, named the tests they ran: the
/// reach a loop's end is compared with.
pub fn reached_by_tests(results: &[GateResult]) -> Tests {
    let tests = super::ran(results);
    let mut read = reached(results);
    read.retain(|gate, _| tests.contains_key(gate));
    read
}

/// One file of checked code the tests of `gate` no longer reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached {
    pub gate: String,
    /// Relative to the project root.
    pub file: String,
}

impl Prepared {
    /// The files of checked code that a gate's tests read at the start (`start`), that are
    /// still in the tree judged, and that the same gate's tests do not read now (`now`).
    /// Only gates known on both sides are compared. When it finds any, the differential runs
    /// made after are watched: whether the checks as they were still read them is asked of
    /// those runs ([`still_unreached`]).
    pub fn out_of_reach(&self, start: &Tests, now: &Tests) -> Vec<Unreached> {
        let out = self.unread(start, now);
        self.watch.set(!out.is_empty());
        out
    }

    fn unread(&self, start: &Tests, now: &Tests) -> Vec<Unreached> {
        let mut out = Vec::new();
        for (gate, then) in start {
            let Some(read) = now.get(gate) else { continue };
            for file in then.difference(read) {
                if self.still_code(file) {
                    out.push(Unreached {
                        gate: gate.clone(),
                        file: file.clone(),
                    });
                }
            }
        }
        out
    }

    /// Of `read`, the files the tree `tree` has (relative to the project root): what a run
    /// opened in installed or built folders git ignores is never compared, nor kept.
    pub fn in_tree(&self, tree: &str, mut read: Tests) -> Result<Tests, GitError> {
        let listed = snapshot::run_raw(&self.top, &["ls-tree", "-r", "-z", "--name-only", tree])?;
        let files: BTreeSet<PathBuf> = ralph_base::git::split_nul(&listed).into_iter().collect();
        for paths in read.values_mut() {
            paths.retain(|f| files.contains(&self.inside.join(f)));
        }
        Ok(read)
    }

    /// Whether `file` (relative to the project root) is in the tree judged and is code a
    /// stop gate checks (not a test, a config or data, which the differential run judges).
    fn still_code(&self, file: &str) -> bool {
        self.stamps.contains_key(&self.inside.join(file))
            && matches!(roles::role(file, &self.facts, (None, None)), Role::Code)
    }
}

/// Pure: those of `unreached` that `read` (what a run of the checks as they were at the
/// start read on the final code) does not reach either. A test changed to import code from
/// its new place leaves a shim at the old one that the tests as they were still read.
pub fn still_unreached(unreached: &[Unreached], read: &Tests) -> Vec<Unreached> {
    unreached
        .iter()
        .filter(|u| !read.get(&u.gate).is_some_and(|r| r.contains(&u.file)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ralph_runner::runner::RunDetail;

    /// A run's tests, what it read, and whether it came from the cache.
    type Run<'a> = (Option<&'a [&'a str]>, Option<&'a [&'a str]>, bool);

    fn result(name: &str, runs: &[Run<'_>]) -> GateResult {
        let strings = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        GateResult {
            name: name.into(),
            run_details: runs
                .iter()
                .map(|(tests, read, cached)| RunDetail {
                    tests: tests.map(strings),
                    read: read.map(strings),
                    cached: *cached,
                    ..RunDetail::default()
                })
                .collect(),
            ..GateResult::default()
        }
    }

    #[test]
    fn a_gate_counts_where_every_run_was_observed_and_at_the_start_where_its_tests_were_heard() {
        let results = [
            result(
                "tests",
                &[(Some(&["t::a"]), Some(&["calc.py", "t.py"]), false)],
            ),
            result("lint", &[(None, Some(&["calc.py"]), false)]),
            result(
                "half",
                &[(Some(&["x"]), Some(&["a.py"]), false), (None, None, false)],
            ),
            result("cached", &[(None, Some(&["a.py"]), true)]),
        ];
        let got = reached(&results);
        assert_eq!(got.keys().collect::<Vec<_>>(), ["cached", "lint", "tests"]);
        assert!(got["tests"].contains("calc.py"));
        let by_tests = reached_by_tests(&results);
        assert_eq!(by_tests.keys().collect::<Vec<_>>(), ["tests"]);
    }

    #[test]
    fn a_file_the_checks_as_they_were_still_read_is_reached() {
        let u = |gate: &str, file: &str| Unreached {
            gate: gate.into(),
            file: file.into(),
        };
        let unreached = [u("t", "shim.js"), u("t", "calc.js"), u("other", "shim.js")];
        let read = Tests::from([("t".to_string(), ["shim.js".to_string()].into())]);
        assert_eq!(
            still_unreached(&unreached, &read),
            [u("t", "calc.js"), u("other", "shim.js")]
        );
    }
}
