//! What the final run's test runners said of the project's files, as roles: a file a
//! runner loaded as a plugin, collected tests from, or whose tests read it is part of the
//! checks, whatever its name and whatever a gate's globs match (a gate over `**/*` matches
//! the tests' data as surely as the code). Decided by what the run did, so a spelling the
//! surface's parsers never saw (`-p myplug`, `pytest_plugins`, `python_files`, a fixture's
//! JSON) is judged as the ones they did.

use crate::surface::roles;
use ralph_runner::runner::{GateResult, OfTests};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The files of the project under `root` that the runs of `results` said are part of their
/// checks, relative to `root`, each with why (a test file before a plugin before data).
pub fn by_runners(root: &Path, results: &[GateResult]) -> BTreeMap<String, &'static str> {
    roles(&of_runs(root, results))
}

/// What the runs of `results` said of each file of the project under `root`, relative to
/// it: what a start tree's runs keep, for a loop's end to read files deleted since (a case
/// file the start's tests read, gone with the test that read it or without it).
pub fn of_runs(root: &Path, results: &[GateResult]) -> BTreeMap<String, OfTests> {
    let told = results
        .iter()
        .flat_map(|r| &r.run_details)
        .flat_map(|d| d.of_tests.iter().map(|(p, part)| (p, *part)));
    of_project(root, told)
}

/// Pure: each file's reason.
pub fn roles(said: &BTreeMap<String, OfTests>) -> BTreeMap<String, &'static str> {
    said.iter()
        .map(|(f, part)| (f.clone(), why(*part)))
        .collect()
}

fn why(part: OfTests) -> &'static str {
    match part {
        OfTests::Collected => roles::COLLECTED,
        OfTests::Loaded => roles::A_PLUGIN,
        OfTests::Read => roles::READ_BY_TESTS,
        OfTests::Unheard | OfTests::Binary => roles::READ_UNHEARD,
        OfTests::Listed => roles::LISTED_BY_TESTS,
    }
}

/// Pure but for resolving `root`'s links: each path of `told` inside `root`, relative to
/// it, with the first reason by rank (a test file is a test, even where tests read it).
fn of_project<'a>(
    root: &Path,
    told: impl Iterator<Item = (&'a PathBuf, OfTests)>,
) -> BTreeMap<String, OfTests> {
    let real = root.canonicalize().ok();
    let mut out: BTreeMap<String, OfTests> = BTreeMap::new();
    for (path, why) in told {
        let rel = path
            .strip_prefix(root)
            .ok()
            .or_else(|| real.as_deref().and_then(|r| path.strip_prefix(r).ok()));
        let Some(rel) = rel.filter(|r| !r.as_os_str().is_empty()) else {
            continue;
        };
        let rel = rel.to_string_lossy().into_owned();
        match out.get(&rel) {
            Some(had) if *had <= why => {}
            _ => {
                out.insert(rel, why);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_files_only_relative_and_a_test_file_stays_a_test() {
        let root = Path::new("/no/such/project");
        let told = [
            (PathBuf::from("/no/such/project/data/x.json"), OfTests::Read),
            (PathBuf::from("/no/such/project/check_x.py"), OfTests::Read),
            (
                PathBuf::from("/no/such/project/check_x.py"),
                OfTests::Collected,
            ),
            (PathBuf::from("/no/such/project/plug.py"), OfTests::Loaded),
            (PathBuf::from("/no/such/project/plug.py"), OfTests::Unheard),
            (
                PathBuf::from("/no/such/project/cases.txt"),
                OfTests::Unheard,
            ),
            (PathBuf::from("/elsewhere/site.py"), OfTests::Loaded),
            (PathBuf::from("/no/such/project"), OfTests::Loaded),
        ];
        let said = roles(&of_project(root, told.iter().map(|(p, w)| (p, *w))));
        let want: BTreeMap<String, &str> = [
            ("check_x.py".to_string(), roles::COLLECTED),
            ("data/x.json".to_string(), roles::READ_BY_TESTS),
            ("plug.py".to_string(), roles::A_PLUGIN),
            ("cases.txt".to_string(), roles::READ_UNHEARD),
        ]
        .into();
        assert_eq!(said, want);
    }
}
