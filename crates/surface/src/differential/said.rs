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
    let told = results
        .iter()
        .flat_map(|r| &r.run_details)
        .flat_map(|d| d.of_tests.iter().map(|(p, part)| (p, why(*part))));
    of_project(root, told)
}

fn why(part: OfTests) -> &'static str {
    match part {
        OfTests::Collected => roles::COLLECTED,
        OfTests::Loaded => roles::A_PLUGIN,
        OfTests::Read => roles::READ_BY_TESTS,
    }
}

/// Pure but for resolving `root`'s links: each path of `told` inside `root`, relative to
/// it, with the first reason by rank (a test file is a test, even where tests read it).
fn of_project<'a>(
    root: &Path,
    told: impl Iterator<Item = (&'a PathBuf, &'static str)>,
) -> BTreeMap<String, &'static str> {
    let real = root.canonicalize().ok();
    let rank = |why: &str| {
        [roles::COLLECTED, roles::A_PLUGIN, roles::READ_BY_TESTS]
            .iter()
            .position(|w| *w == why)
    };
    let mut out: BTreeMap<String, &'static str> = BTreeMap::new();
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
            Some(had) if rank(had) <= rank(why) => {}
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
            (
                PathBuf::from("/no/such/project/data/x.json"),
                roles::READ_BY_TESTS,
            ),
            (
                PathBuf::from("/no/such/project/check_x.py"),
                roles::READ_BY_TESTS,
            ),
            (
                PathBuf::from("/no/such/project/check_x.py"),
                roles::COLLECTED,
            ),
            (PathBuf::from("/no/such/project/plug.py"), roles::A_PLUGIN),
            (PathBuf::from("/elsewhere/site.py"), roles::A_PLUGIN),
            (PathBuf::from("/no/such/project"), roles::A_PLUGIN),
        ];
        let said = of_project(root, told.iter().map(|(p, w)| (p, *w)));
        let want: BTreeMap<String, &str> = [
            ("check_x.py".to_string(), roles::COLLECTED),
            ("data/x.json".to_string(), roles::READ_BY_TESTS),
            ("plug.py".to_string(), roles::A_PLUGIN),
        ]
        .into();
        assert_eq!(said, want);
    }
}
