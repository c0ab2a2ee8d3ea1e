//! `loop run --commit`: after an iteration that changed the tree, one commit of its work,
//! named by the iteration, the story and the gates' outcome. Never `--no-verify`: the
//! project's pre-commit hook runs, and a commit it refuses is said, not forced. ralph-gate's
//! own state and the run's loop file are never committed.

use std::path::Path;

/// Paths no iteration commits: every agent's loop files. (`.ralph/` ignores itself; naming
/// an ignored path in a pathspec makes `git add` fail.)
const NOT_COMMITTED: [&str; 1] = [":(exclude,glob)**/ralph-loop*.local.md"];

/// What `--commit` did after an iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// Nothing changed.
    Nothing,
    /// The commit's short id.
    Made(String),
    /// Git (or the pre-commit hook) refused, with its words.
    Refused(String),
}

/// Commits the work tree under `root` with `message`, but for the files `leave`.
pub fn iteration(root: &Path, message: &str, leave: &[std::path::PathBuf]) -> Committed {
    let excluded: Vec<String> = leave
        .iter()
        .map(|p| format!(":(exclude){}", p.strip_prefix(root).unwrap_or(p).display()))
        .collect();
    let mut add = vec!["add", "-A", "--", "."];
    add.extend(NOT_COMMITTED);
    add.extend(excluded.iter().map(String::as_str));
    if let Err(e) = ralph_base::git::run(root, &add) {
        return Committed::Refused(e.to_string());
    }
    let staged = ralph_base::git::command(root)
        .args(["diff", "--cached", "--quiet"])
        .status();
    if staged.is_ok_and(|s| s.success()) {
        return Committed::Nothing;
    }
    // The person's commit hooks run on the loop's commits, as on their own.
    let args = ["commit", "-q", "-m", message];
    let commit = ralph_base::git::with_hooks(root).args(args).output();
    match ralph_base::git::finished(&args, commit) {
        Ok(_) => ralph_base::git::run(root, &["rev-parse", "--short", "HEAD"])
            .map(|id| Committed::Made(String::from_utf8_lossy(&id).trim().to_string()))
            .unwrap_or_else(|e| Committed::Refused(e.to_string())),
        Err(e) => Committed::Refused(e.to_string()),
    }
}
