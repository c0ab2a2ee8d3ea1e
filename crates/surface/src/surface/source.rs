//! The tree a surface describes: the work tree on disk, or a git revision (`check --base`).
//! Both are seen through the planner's `ProjectFs`, so the files a gate checks at a
//! revision are planned exactly as they are for the work tree.

use ralph_base::env::Environment;
use ralph_base::git::{self, GitError};
use ralph_config::{Config, Phase};
use ralph_plan::plan::{self, ProjectFs};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub struct Source {
    /// Every file of the tree, relative to the project root.
    pub files: Vec<PathBuf>,
    pub fs: Box<dyn ProjectFs>,
    /// Config files outside the project that its tools read (a parent folder's or the home
    /// folder's `.cargo/config.toml` and `.shellcheckrc`, `.git/info/exclude`): named as
    /// `manifests::outside_configs` names them, read from disk for either kind of tree, so that `check --base` sees
    /// them unchanged and a loop sees them change.
    pub outside: Vec<(String, Vec<u8>)>,
    /// Tracked files git keeps out of the work tree (a revision has none).
    pub absent: Vec<PathBuf>,
}

/// A revision's files, through one `git cat-file --batch`.
struct RevisionFs {
    blobs: git::Blobs,
    files: BTreeSet<PathBuf>,
}

impl ProjectFs for RevisionFs {
    fn is_file(&self, rel: &Path) -> bool {
        self.files.contains(rel)
    }

    fn read(&self, rel: &Path) -> Option<Vec<u8>> {
        if !self.files.contains(rel) {
            return None;
        }
        self.blobs.read(rel)
    }

    fn size(&self, _rel: &Path) -> u64 {
        0
    }
}

impl Source {
    /// The work tree at `root`, whose files (`files::all`) are `files`.
    pub fn work_tree(root: &Path, files: Vec<PathBuf>, env: &Environment) -> Self {
        let absent = tracked_missing(root);
        Self {
            files,
            fs: Box::new(plan::DiskFs::new(root)),
            outside: outside(root, env),
            absent,
        }
    }

    /// The tree of `rev` in the repository at `root` (a folder inside it: paths are relative
    /// to it, as `files::all` lists them).
    pub fn revision(root: &Path, rev: &str, env: &Environment) -> Result<Self, GitError> {
        let commit = git::commit(root, rev)?;
        // Run in the project's folder, ls-tree lists that folder's files, relative to it.
        let mut files = git::paths(root, &["ls-tree", "-r", "-z", "--name-only", &commit])?;
        files.retain(|f| !ralph_plan::files::is_own_state(f));
        let blobs = git::Blobs::open(root, &commit)?;
        Ok(Self {
            fs: Box::new(RevisionFs {
                blobs,
                files: files.iter().cloned().collect(),
            }),
            files,
            outside: outside(root, env),
            absent: Vec::new(),
        })
    }

    pub fn read_text(&self, rel: &Path) -> Option<String> {
        self.fs
            .read(rel)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The plan of `config`'s gates of `phase` over every file of this tree.
    pub fn plan(&self, config: &Config, phase: Phase) -> plan::Plan {
        plan::plan(
            config,
            &plan::Request {
                files: &self.files,
                universe: &self.files,
                phase,
                only: &[],
                // What the gates check is described by the files they run on.
                unopenable: &[],
            },
            &plan::Context {
                fs: self.fs.as_ref(),
                arg_budget: plan::ARG_BUDGET,
                spread: 1,
                costs: None,
                reuse_build_state: false,
            },
        )
    }

    /// The absent files a gate of `phase` would check, by its globs.
    pub fn absent_checked(&self, config: &Config, phase: Phase) -> BTreeSet<String> {
        self.absent
            .iter()
            .filter(|f| {
                config
                    .gates
                    .iter()
                    .filter(|g| g.runs_in(phase))
                    .any(|g| g.matches(f))
            })
            .map(|f| super::text(f))
            .collect()
    }
}

/// Tracked files git keeps out of the work tree (its skip-worktree bit: sparse checkout, or
/// `git update-index --skip-worktree`): git still has them, `files::all` cannot list them,
/// and no gate checks them. A file deleted outright is not one of them: it is gone whether
/// `git rm` or `rm` took it, and honest work deletes files.
fn tracked_missing(root: &Path) -> Vec<PathBuf> {
    let Ok(out) = git::run(root, &["ls-files", "-z", "-t", "--cached"]) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = out
        .split(|b| *b == 0)
        // `S path`: skip-worktree's tag, a space, the path.
        .filter_map(|entry| entry.strip_prefix(b"S "))
        .map(|rel| PathBuf::from(ralph_base::platform::os_str(rel)))
        .filter(|rel| {
            !ralph_plan::files::is_own_state(rel)
                && std::fs::symlink_metadata(root.join(rel)).is_err()
        })
        .collect();
    out.dedup();
    out
}

/// The configs above the project and in the home folder that Cargo and ShellCheck read, and
/// the repository's own exclude list, by names that do not say where the checkout is.
fn outside(root: &Path, env: &Environment) -> Vec<(String, Vec<u8>)> {
    let mut paths = ralph_plan::manifests::outside_configs(root, env);
    if let Some(g) = git::common_dir(root) {
        paths.push((".git/info/exclude".into(), g.join("info/exclude")));
    }
    paths
        .into_iter()
        .filter_map(|(name, p)| Some((name, std::fs::read(&p).ok()?)))
        .collect()
}

/// Gate name to the files it checks in `plan`.
pub fn checked(config: &Config, plan: &plan::Plan) -> BTreeMap<String, BTreeSet<PathBuf>> {
    plan.gates
        .iter()
        .map(|p| {
            let name = config.gates[p.gate].name.clone();
            (name, p.files.iter().cloned().collect())
        })
        .collect()
}
