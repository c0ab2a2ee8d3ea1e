//! The checks' inputs outside the work tree, judged by effect: the files the stop gates' runs
//! were seen to read (and the plugins their test runner ran) that lie outside the repository
//! (or, for what the runner ran, inside it where git ignores them) and changed after the
//! loop's start tree was taken. Whatever their name or format (a
//! config under `$HOME` or in a folder above the repository, a plugin installed during the
//! loop), they decided the verdict, and no differential run can put them back: only a
//! person's approval accepts them.
//!
//! Left out, unless the runner ran it as part of itself: what package managers install
//! (site-packages, node_modules, cargo's registry, Go's module cache: a dependency the
//! checked code declares, which the tree's manifest shows), caches, and the system's own
//! folders (an agent without root cannot write them; the tools' versions are in the surface).

use ralph_base::clock::changed_at;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One file outside the work tree that changed after the loop began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: PathBuf,
    /// The gates that read it.
    pub gates: Vec<String>,
    /// The test runner ran it as part of itself (a pytest plugin, Python's startup hooks).
    pub loaded: bool,
}

/// A file a gate's run read (`loaded`: ran as part of its runner).
#[derive(Debug, Clone)]
pub struct Read {
    pub gate: String,
    pub path: PathBuf,
    pub loaded: bool,
    /// Inside the repository where git ignores it (a `.venv` there), or inside a repository
    /// nested in it (a submodule, a clone of cases): in no tree judged.
    pub ignored: bool,
    /// Its runner said its tests read it as theirs (their cases, a file they collected):
    /// inside such a folder, which a differential run lends whole as it is now, it decided
    /// the verdict as surely as a plugin.
    pub data: bool,
}

/// Folders of the system: written by its package manager, as root.
const SYSTEM: &[&str] = ralph_base::platform::SYSTEM_DIRS;

/// Folder names package managers and tools install or cache into.
const STORES: &[&str] = &[
    "site-packages",
    "dist-packages",
    "node_modules",
    ".npm",
    ".rustup",
    ".cache",
    ".bun",
    ".yarn",
    ".pnpm-store",
    ".deno",
    ".m2",
    ".gradle",
];

/// Pure: whether a read of `path` outside the repository `repo` is a check of the loop's,
/// rather than the checked code, a dependency or the system.
pub fn counts(path: &Path, loaded: bool, repo: &Path) -> bool {
    if path.starts_with(repo) || !path.is_absolute() {
        return false;
    }
    if loaded {
        return true;
    }
    if SYSTEM.iter().any(|s| path.starts_with(s)) {
        return false;
    }
    !in_a_store(path)
}

/// Pure: whether `path` lies where a package manager or a tool installs or caches.
fn in_a_store(path: &Path) -> bool {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    names.iter().any(|n| STORES.contains(n))
        || names
            .windows(2)
            .any(|w| w == ["pkg", "mod"] || w == [".cargo", "registry"] || w == [".cargo", "git"])
}

/// The reads that count and changed at or after `since` (nanoseconds, the clock file times
/// are taken from), each once with every gate that read it.
pub fn changed_since(reads: &[Read], since: i128, repo: &Path) -> Vec<Changed> {
    let mut found: BTreeMap<PathBuf, Changed> = BTreeMap::new();
    // Inside the repository, what git ignores is in no tree a run judges or puts back:
    // there, what the runner ran as part of itself counts (a plugin or a startup hook
    // installed into the project's own `.venv`), and what its tests read as theirs (cases in
    // an ignored `fixtures/generated/`) but in a package manager's folder; what else it
    // read is a dependency's.
    let counted = |r: &&Read| match r.path.starts_with(repo) {
        true => {
            let rel = r.path.strip_prefix(repo).unwrap_or(&r.path);
            r.ignored && (r.loaded || (r.data && !in_a_store(rel)))
        }
        false => counts(&r.path, r.loaded, repo),
    };
    for r in reads.iter().filter(counted) {
        if let Some(c) = found.get_mut(&r.path) {
            if !c.gates.contains(&r.gate) {
                c.gates.push(r.gate.clone());
            }
            c.loaded |= r.loaded;
            continue;
        }
        if changed_at(&r.path).is_some_and(|t| t >= since) {
            found.insert(
                r.path.clone(),
                Changed {
                    path: r.path.clone(),
                    gates: vec![r.gate.clone()],
                    loaded: r.loaded,
                },
            );
        }
    }
    found.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_outside_count_dependencies_and_the_system_do_not() {
        let repo = Path::new("/home/u/work/app");
        let counted = |p: &str| counts(Path::new(p), false, repo);
        assert!(counted("/home/u/.config/mypy/config"));
        assert!(counted("/home/u/work/.shellcheckrc"));
        assert!(counted("/home/u/.pytest.ini"));
        assert!(!counted("/home/u/work/app/pytest.ini"));
        assert!(!counted(
            "/home/u/.local/lib/python3.12/site-packages/requests/api.py"
        ));
        assert!(!counted(
            "/home/u/.cargo/registry/src/index/serde-1.0.0/src/lib.rs"
        ));
        assert!(!counted(
            "/home/u/go/pkg/mod/golang.org/x/text@v0.1.0/doc.go"
        ));
        assert!(!counted("/home/u/.cache/deno/deps/x.ts"));
        assert!(!counted(
            "/usr/lib/python3/dist-packages/pytest/__init__.py"
        ));
        assert!(!counted("/etc/ld.so.cache"));
    }

    #[test]
    fn a_plugin_the_runner_ran_counts_wherever_it_is() {
        let repo = Path::new("/home/u/work/app");
        let plugin = "/home/u/.local/lib/python3.12/site-packages/pytest_quiet.py";
        assert!(counts(Path::new(plugin), true, repo));
        assert!(counts(
            Path::new("/usr/lib/python3/dist-packages/p.py"),
            true,
            repo
        ));
        assert!(!counts(
            Path::new("/home/u/work/app/conftest.py"),
            true,
            repo
        ));
    }

    #[test]
    fn only_what_changed_after_the_start_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("old.cfg"), dir.path().join("new.cfg"));
        std::fs::write(&old, "a").unwrap();
        let since = ralph_base::clock::coarse_now() + 20_000_000;
        std::thread::sleep(std::time::Duration::from_millis(40));
        std::fs::write(&new, "b").unwrap();
        let read = |gate: &str, path: &Path| Read {
            gate: gate.into(),
            path: path.to_path_buf(),
            loaded: false,
            ignored: false,
            data: false,
        };
        let reads = [read("a", &old), read("a", &new), read("b", &new)];
        let found = changed_since(&reads, since, Path::new("/nonexistent/repo"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, new);
        assert_eq!(found[0].gates, ["a", "b"]);
        // Inside the repository: only what the runner ran, where git ignores it.
        let inside = |loaded, ignored| Read {
            loaded,
            ignored,
            ..read("c", &new)
        };
        let repo = dir.path();
        let counted = |r: Read| changed_since(&[r], since, repo).len();
        assert_eq!(
            counted(inside(true, true)),
            1,
            "a plugin in the project's .venv"
        );
        assert_eq!(
            counted(inside(true, false)),
            0,
            "a tracked conftest: the tree's"
        );
        assert_eq!(
            counted(inside(false, true)),
            0,
            "a library read from the .venv"
        );
        let data = |path: &Path| Read {
            data: true,
            path: path.to_path_buf(),
            ..inside(false, true)
        };
        assert_eq!(counted(data(&new)), 1, "cases in an ignored folder");
        let installed = dir.path().join("node_modules/pkg/cases.json");
        std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
        std::fs::write(&installed, "[]").unwrap();
        assert_eq!(
            counted(data(&installed)),
            0,
            "a dependency's file the tests read"
        );
    }
}
