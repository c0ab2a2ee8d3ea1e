//! Files a tool reads besides the ones it is given: manifests, lock files, toolchain pins and
//! tool configs, in the folder a run works on and every folder above it up to the project
//! root. A dependency upgrade, a new `.shellcheckrc` rule or a pinned toolchain changes a
//! result without touching a single checked file, so every key holds these.

use ralph_plan::manifests::is_context_name;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Files in a subfolder of each folder (Cargo's own config).
const NESTED: &[&str] = &[".cargo/config.toml", ".cargo/config"];

/// Context files of a run's folders, each folder listed once per run.
pub struct ContextFiles {
    root: PathBuf,
    memo: Mutex<HashMap<PathBuf, Arc<Vec<PathBuf>>>>,
    /// Configs above the root and in the home folder that exist: a `.shellcheckrc` in the
    /// parent folder or `runner = "true"` in `~/.cargo/config.toml` changes every verdict.
    outside: Vec<(String, PathBuf)>,
}

impl ContextFiles {
    /// `outside`: the configs outside the project a tool may read, by name and path
    /// (`manifests::outside_configs`); those that exist join every key.
    pub fn new(root: &Path, outside: Vec<(String, PathBuf)>) -> Self {
        Self {
            root: root.to_path_buf(),
            memo: Mutex::new(HashMap::new()),
            outside: outside.into_iter().filter(|(_, p)| p.is_file()).collect(),
        }
    }

    /// The configs outside the project that exist, by a name that says nothing of where the
    /// checkout is, and their paths.
    pub fn outside(&self) -> &[(String, PathBuf)] {
        &self.outside
    }

    /// Every context file in `dirs` (relative to the root) and the folders above them,
    /// sorted and without repeats.
    pub fn for_dirs<'a>(&self, dirs: impl Iterator<Item = &'a Path>) -> Vec<PathBuf> {
        let mut seen: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            for d in dir.ancestors() {
                if d.components().any(|c| c.as_os_str() == "node_modules") {
                    continue;
                }
                if !seen.insert(d.to_path_buf()) {
                    break; // this folder and every one above it were listed already
                }
                out.extend(self.in_dir(d).iter().cloned());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn in_dir(&self, dir: &Path) -> Arc<Vec<PathBuf>> {
        if let Some(hit) = self.memo.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return hit.clone();
        }
        let full = self.root.join(dir);
        let mut found: Vec<PathBuf> = std::fs::read_dir(&full)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_str().is_some_and(is_context_name))
                    .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
                    .map(|e| dir.join(e.file_name()))
                    .collect()
            })
            .unwrap_or_default();
        found.extend(
            NESTED
                .iter()
                .map(|n| dir.join(n))
                .filter(|p| self.root.join(p).is_file()),
        );
        found.sort();
        let found = Arc::new(found);
        self.memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), found.clone());
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_manifests_from_a_folder_up_to_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "package-lock.json",
            "packages/a/package.json",
            "packages/a/src/x.ts",
            "requirements-dev.txt",
            "packages/b/package.json",
            ".cargo/config.toml",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let ctx = ContextFiles::new(root, Vec::new());
        let found = ctx.for_dirs([Path::new("packages/a/src")].into_iter());
        let shown: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            shown,
            [
                ".cargo/config.toml",
                "package-lock.json",
                "packages/a/package.json",
                "requirements-dev.txt"
            ]
        );
    }
}
