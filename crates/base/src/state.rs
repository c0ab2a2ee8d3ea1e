//! Where ralph-gate keeps its own state, and the only module that knows: the workspace a hook
//! or command belongs to, and every path under its `.ralph/` folder (journal, locks, progress
//! records, results, cache, staged copies, TypeScript build state, notices, agents' replies)
//! and the pin copies kept outside it. Everything else asks a [`Layout`] for a path.

use crate::agent::Agent;
use crate::env::Environment;
use std::path::{Path, PathBuf};

/// The folder's name, relative to a project root or workspace.
pub const DIR: &str = ".ralph";

/// ralph-gate's folders for one root: a workspace (loops, journal) or a project root (results,
/// cache). The two are the same folder unless a project's config lives below its workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
    /// `XDG_STATE_HOME`, else `$HOME/.local/state`: where pins go outside git.
    user_state: Option<PathBuf>,
}

impl Layout {
    /// The layout of a project root (for its results, cache, staged copies and build state).
    pub fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            user_state: None,
        }
    }

    /// The workspace of a hook or command run from `base`: the Claude Code project folder when
    /// known, else the git work tree (or folder) of `base`. Loops, the journal and pins live
    /// there, whatever subfolder the agent works in.
    pub fn workspace(env: &Environment, base: &Path) -> Self {
        let root = env
            .claude_project_dir
            .clone()
            .or_else(|| crate::git::work_tree(base))
            .unwrap_or_else(|| base.to_path_buf());
        Self {
            root,
            user_state: env.user_state_dir(),
        }
    }

    /// The workspace of a hook run from `process_cwd` (where the agent started it) about an
    /// agent working in `base` (the payload's folder, which follows `cd`): the outer of the
    /// two work trees when `base` lies inside the other's, so that an agent that `cd`s into a
    /// folder it made a git repository of is still judged in its loop's workspace.
    pub fn workspace_of_hook(env: &Environment, process_cwd: &Path, base: &Path) -> Self {
        let outer = crate::git::work_tree(process_cwd).filter(|o| base.starts_with(o));
        match (&env.claude_project_dir, outer) {
            (None, Some(root)) => Self {
                root,
                user_state: env.user_state_dir(),
            },
            _ => Self::workspace(env, base),
        }
    }

    /// The folder that holds `.ralph/` (and the agents' loop folders).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.ralph/` itself.
    pub fn dir(&self) -> PathBuf {
        self.root.join(DIR)
    }

    /// Every stop decision and loop event, one JSON line each.
    pub fn journal(&self) -> PathBuf {
        self.dir().join("journal.jsonl")
    }

    /// The lock file `NAME` (`stop`, `journal`, a loop's key, a gate's run).
    pub fn lock(&self, name: &str) -> PathBuf {
        self.dir().join("locks").join(format!("{name}.lock"))
    }

    /// The folder of the loops' "has anything changed" records.
    pub fn progress_dir(&self) -> PathBuf {
        self.dir().join("progress")
    }

    /// The progress record of the loop `loop_file`.
    pub fn progress(&self, loop_file: &str) -> PathBuf {
        self.progress_dir().join(format!("{loop_file}.json"))
    }

    /// Every gate's latest result (`status`, the dashboard).
    pub fn results(&self) -> PathBuf {
        self.dir().join("results")
    }

    /// What runs cost, as the scheduler learned it (`costs.rs`).
    pub fn costs(&self) -> PathBuf {
        self.dir().join("costs.json")
    }

    /// This checkout's own result cache (when results are not shared between worktrees).
    pub fn cache(&self) -> PathBuf {
        self.dir().join("cache")
    }

    /// Which runs of a gate read which project files outside their own folder.
    pub fn readers(&self, gate: &str) -> PathBuf {
        let id = blake3::hash(gate.as_bytes()).to_hex();
        self.cache().join("readers").join(&id[..16])
    }

    /// Working copies backed up while `check --staged` runs on the index.
    pub fn staged(&self) -> PathBuf {
        self.dir().join("staged")
    }

    /// What the session `session` has been told once (missing tools).
    /// Marks a session whose agent sends PostToolBatch (the hook crate's `batches`).
    pub fn batched(&self, session: &str) -> PathBuf {
        self.dir().join("batched").join(session_key(session))
    }

    pub fn notices(&self, session: &str) -> PathBuf {
        self.dir()
            .join("notices")
            .join(format!("{}.json", session_key(session)))
    }

    /// Where `agent`'s last reply is kept between its response hook and its stop hook.
    pub fn reply(&self, agent: Agent, session: &str) -> PathBuf {
        self.dir()
            .join("replies")
            .join(format!("{agent}-{}.txt", session_key(session)))
    }

    /// The folder of `agent`'s loop state files (`.claude/`, `.codex/`, ...).
    pub fn loop_dir(&self, agent: Agent) -> PathBuf {
        self.root.join(agent.state_dir())
    }

    /// Where the copies of this workspace's loop pins are kept: under the git folder, which
    /// `rm -rf .ralph`, a commit or a checkout never touch; outside git, under the user's
    /// state folder, keyed by the workspace's path.
    pub fn pins(&self) -> PathBuf {
        match crate::git::git_dir(&self.root) {
            Some(git) => git.join("ralph-gate").join("pins"),
            None => {
                let base = self.user_state.clone().unwrap_or_else(std::env::temp_dir);
                let key = blake3::hash(self.root.as_os_str().as_encoded_bytes()).to_hex();
                base.join("ralph-gate/pins").join(&key[..16])
            }
        }
    }

    /// The agent programs whose hooks ran in this workspace (the loop crate's `person`):
    /// beside the pins, and kept by the guard by effect as they are.
    pub fn agents(&self) -> PathBuf {
        self.pins().join("agents.seen")
    }

    /// Where the protected files are held while an agent's shell command runs (see
    /// the loop crate's `watch`): beside the pins, outside the work tree.
    pub fn watch(&self) -> PathBuf {
        self.pins().join(".watch")
    }

    /// Makes sure `.ralph/` ignores itself (a `.gitignore` holding `*` inside it), so
    /// ralph-gate's state never shows up in `git status` or a commit, with or without `init`.
    /// Best effort: a folder that cannot be written is reported by whatever writes there next.
    pub fn ignore_self(&self) {
        let ignore = self.dir().join(".gitignore");
        if !ignore.exists() {
            let _ = crate::atomic::write(
                &ignore,
                b"# ralph-gate's state (cache, results, journal): never committed.\n*\n",
            );
        }
    }
}

/// How a session id is stored. Claude Code's ids are UUIDs and are kept as they are, as the
/// plugin writes them. Anything else (newlines, quotes, `---`, spaces) would change the
/// state file's other fields or fail to read back equal, so it is stored as a digest that
/// the same session always maps to. Found by the `loop_state` fuzz target.
pub fn session_key(raw: &str) -> String {
    if raw == ANY_SESSION {
        return raw.to_string();
    }
    let plain = raw.len() <= 128
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if plain {
        raw.to_string()
    } else {
        format!("b3-{}", &blake3::hash(raw.as_bytes()).to_hex()[..32])
    }
}

/// The session id of a loop that any session of its agent may stop (`loop start
/// --any-session`): for agents run once per iteration (`codex exec`, `opencode run`,
/// `claude -p` in a shell loop), where every iteration is a new session.
pub const ANY_SESSION: &str = "*";

/// The session of a `loop run`'s loop: no agent session's stop selects it (the driver judges
/// each iteration), and every session's tool calls are guarded while it runs.
pub const RUN_SESSION: &str = "ralph-gate-loop-run";

/// Where Cargo builds at a loop's stops for the project at `root`: ralph-gate's own folder
/// outside the project (under the user's state folder), kept between stops so that it stays
/// incremental. No path in the project feeds it: a test binary the agent overwrote in
/// `target/` is never what a stop runs.
pub fn cargo_target(env: &Environment, root: &Path) -> PathBuf {
    let base = env.user_state_dir().unwrap_or_else(std::env::temp_dir);
    let key = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
    base.join("ralph-gate/cargo-target").join(&key[..16])
}

/// Where Cargo builds the runs made in a checkout of one of the project's trees (`kind`:
/// the start tree, a differential run's), apart from [`cargo_target`]: Cargo takes an
/// artifact for fresh when its sources are older than it, and a build from a checkout is
/// newer than the work tree's sources, so in a shared folder the next stop would run the
/// checkout's tests on the work tree's code. A checkout's files are written just before its
/// run, newer than any earlier build in its own folder.
pub fn cargo_target_of_checkout(env: &Environment, root: &Path, kind: &str) -> PathBuf {
    let shared = cargo_target(env, root);
    let name = shared.file_name().unwrap_or_default().to_string_lossy();
    shared.with_file_name(format!("{name}-{kind}"))
}

/// Where `tsc -p` runs keep their build-info files, and the configs naming files a tsconfig
/// does not include, relative to the project root (tsc is run from there with relative
/// paths).
pub fn tsc_work() -> PathBuf {
    Path::new(DIR).join("tsc")
}

/// The loop state file of the official ralph-loop plugin, in an agent's loop folder
/// ([`Layout::loop_dir`]); other loops have `ralph-loop-ID.local.md` beside it.
pub const MAIN_FILE: &str = "ralph-loop.local.md";

/// True when `name` is a loop state file's name.
pub fn is_state_name(name: &str) -> bool {
    name == MAIN_FILE || (name.starts_with("ralph-loop-") && name.ends_with(".local.md"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_is_the_claude_project_folder_else_the_git_top() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let env = Environment::default();
        assert_eq!(
            Layout::workspace(&env, &sub).root(),
            sub,
            "no git: the folder"
        );
        let env = Environment {
            claude_project_dir: Some(dir.path().to_path_buf()),
            ..Environment::default()
        };
        assert_eq!(Layout::workspace(&env, &sub).root(), dir.path());
    }

    #[test]
    fn every_path_is_under_the_state_folder() {
        let l = Layout::at(Path::new("/p"));
        for p in [
            l.journal(),
            l.lock("stop"),
            l.progress("x"),
            l.results(),
            l.cache(),
            l.staged(),
            l.notices("s"),
            l.reply(Agent::Cursor, "s"),
        ] {
            assert!(p.starts_with("/p/.ralph"), "{}", p.display());
        }
        assert!(Path::new("/p").join(tsc_work()).starts_with("/p/.ralph"));
    }
}
