//! Python trusts a bytecode cache (`__pycache__/NAME.TAG.pyc`) when the source's mtime, in
//! whole seconds, and its size are those recorded in it. A source rewritten with the same
//! size in the second its `.pyc` was written (`a + b` made `a - b` by an edit and checked at
//! once) keeps running the old code: the run judges code that is no longer there, and the
//! bare tool is wrong the same way. Before a run, every `.pyc` older than its source (to the
//! nanosecond the file system keeps) is removed, so Python compiles the source it reads.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Removes the `.pyc` files in the `__pycache__` folders beside the Python files among
/// `inputs` (relative to `root`) that were written before their source last changed.
pub fn drop_stale(root: &Path, inputs: &[PathBuf]) {
    let mut by_dir: BTreeMap<PathBuf, Vec<(String, SystemTime)>> = BTreeMap::new();
    for rel in inputs
        .iter()
        .filter(|p| p.extension() == Some(OsStr::new("py")))
    {
        let full = root.join(rel);
        let (Some(dir), Some(stem)) = (full.parent(), full.file_stem()) else {
            continue;
        };
        let Ok(changed) = std::fs::metadata(&full).and_then(|m| m.modified()) else {
            continue;
        };
        by_dir
            .entry(dir.join("__pycache__"))
            .or_default()
            .push((stem.to_string_lossy().into_owned(), changed));
    }
    for (cache, sources) in by_dir {
        let Ok(entries) = std::fs::read_dir(&cache) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(source_changed) = sources
                .iter()
                .find(|(stem, _)| compiled_from(&name, stem))
                .map(|s| s.1)
            else {
                continue;
            };
            let written = e.metadata().and_then(|m| m.modified());
            if written.is_ok_and(|w| w < source_changed) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Pure: whether `pyc` (a file name in `__pycache__`) is the bytecode of the module `stem`:
/// `stem.TAG.pyc` or `stem.TAG.opt-N.pyc`.
fn compiled_from(pyc: &str, stem: &str) -> bool {
    let Some(rest) = pyc
        .strip_prefix(stem)
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.strip_suffix(".pyc"))
    else {
        return false;
    };
    match rest.split_once('.') {
        None => !rest.is_empty(),
        Some((tag, opt)) => !tag.is_empty() && opt.starts_with("opt-"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modules_bytecode_is_told_by_its_name() {
        assert!(compiled_from("calc.cpython-311.pyc", "calc"));
        assert!(compiled_from("calc.cpython-311.opt-1.pyc", "calc"));
        assert!(!compiled_from("calculus.cpython-311.pyc", "calc"));
        assert!(!compiled_from("calc.x.cpython-311.pyc", "calc"));
        assert!(!compiled_from("calc.pyc", "calc"));
    }

    #[test]
    fn bytecode_older_than_its_source_is_removed_and_newer_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg/__pycache__")).unwrap();
        let stale = root.join("pkg/__pycache__/a.cpython-311.pyc");
        let fresh = root.join("pkg/__pycache__/b.cpython-311.pyc");
        std::fs::write(&stale, b"old").unwrap();
        std::fs::write(&fresh, b"new").unwrap();
        let past = SystemTime::now() - std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(past)
            .unwrap();
        std::fs::write(root.join("pkg/a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("pkg/b.py"), "x = 1\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(root.join("pkg/b.py"))
            .unwrap()
            .set_modified(past)
            .unwrap();
        drop_stale(root, &["pkg/a.py".into(), "pkg/b.py".into()]);
        assert!(!stale.exists(), "older than its source");
        assert!(fresh.exists(), "newer than its source");
    }
}
