//! Which runs of a project-wide gate read which files of the project outside their own folder,
//! as their runs were observed to: an edit to `lib/lib.go` re-runs `app`'s `go vet` too, when
//! `app` (through `go.work` or a `replace`) read it last time. One small file per (gate,
//! folder), written whole after each observed run; reading them only adds runs to an edit's
//! feedback, never removes one, so a damaged or forged file costs at most a needless run.

use crate::observe::Input;
use ralph_base::state::Layout;
use std::path::{Path, PathBuf};

/// Records that `gate`'s run in `dir` read `inputs` (those inside the project, outside `dir`).
pub fn record(root: &Path, gate: &str, dir: &Path, inputs: &[Input]) {
    // A run at the root has nothing outside its folder.
    if dir.as_os_str().is_empty() {
        return;
    }
    let outside: Vec<&str> = inputs
        .iter()
        .filter_map(|i| i.path.strip_prefix("./"))
        .filter(|p| !Path::new(p).starts_with(dir))
        .collect();
    let path = file(root, gate, dir);
    if outside.is_empty() {
        let _ = std::fs::remove_file(path);
        return;
    }
    let mut text = format!("{}\n", dir.display());
    for p in outside {
        text.push_str(p);
        text.push('\n');
    }
    // Most runs read what the last one did: no write then.
    if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
        let _ = ralph_base::atomic::write(&path, text.as_bytes());
    }
}

/// The folders whose last run of `gate` read one of `rels`.
pub fn dirs_reading(root: &Path, gate: &str, rels: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(Layout::at(root).readers(gate)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|text| {
            let mut lines = text.lines();
            let dir = PathBuf::from(lines.next()?);
            lines
                .any(|l| rels.iter().any(|r| r.as_os_str() == l))
                .then_some(dir)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

fn file(root: &Path, gate: &str, dir: &Path) -> PathBuf {
    let id = blake3::hash(dir.as_os_str().as_encoded_bytes()).to_hex();
    Layout::at(root).readers(gate).join(&id[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(p: &str) -> Input {
        Input {
            path: p.into(),
            seen: "f:x".into(),
            probed: false,
            own: Vec::new(),
        }
    }

    #[test]
    fn a_run_that_read_another_folder_is_found_by_that_folder_s_files() {
        let root = tempfile::tempdir().unwrap();
        let read = [
            input("./lib/lib.go"),
            input("./app/main.go"),
            input("/usr/lib/go/x.go"),
        ];
        record(root.path(), "go-vet", Path::new("app"), &read);
        let found = |rel: &str| dirs_reading(root.path(), "go-vet", &[PathBuf::from(rel)]);
        assert_eq!(found("lib/lib.go"), [PathBuf::from("app")]);
        assert!(
            found("app/main.go").is_empty(),
            "its own files plan it already"
        );
        assert!(dirs_reading(root.path(), "other", &[PathBuf::from("lib/lib.go")]).is_empty());
        record(
            root.path(),
            "go-vet",
            Path::new("app"),
            &[input("./app/main.go")],
        );
        assert!(
            found("lib/lib.go").is_empty(),
            "the next run's record replaces it"
        );
    }
}
