//! `ralph-gate hook pre-tool-use`: while a loop of this session runs, deny the tool calls
//! that would change what decides the loop's end (see [`crate::guard`]). Outside a loop, and
//! for everything else, it answers nothing, which Claude Code reads as "go on". No
//! subprocess runs here: this hook sits in front of every edit and every shell command.

use super::{Ask, Verdict};
use crate::env::Environment;
use crate::guard::{self, paths::Places, paths::Protected};
use crate::loop_state;
use std::path::{Path, PathBuf};

pub fn run(ask: &Ask, env: &Environment, cwd: &Path) -> Verdict {
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = env
        .claude_project_dir
        .clone()
        .or_else(|| git_work_tree(&base))
        .unwrap_or_else(|| base.clone());
    let Some(call) = &ask.call else {
        return Verdict::Silent;
    };
    if !in_loop(&ws, &ask.session) {
        return Verdict::Silent;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let claude_home = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".claude")));
    let config = crate::config::find(&base);
    let git_dir = crate::files::git_dir(&ws);
    let plugin_root = std::env::var_os("CLAUDE_PLUGIN_ROOT").map(PathBuf::from);
    let protected = Protected::new(&Places {
        ws: &ws,
        cwd: &base,
        home: home.as_deref(),
        claude_home: claude_home.as_deref(),
        config: config.as_deref(),
        git_dir: git_dir.as_deref(),
        git_common_dir: crate::files::git_common_dir(&ws).as_deref(),
        plugin_root: plugin_root.as_deref(),
    });
    match guard::judge(call, &protected) {
        Some(denied) => deny(&denied.what),
        None => Verdict::Silent,
    }
}

/// The answer that refuses the call, with words the agent can act on.
pub fn deny(what: &str) -> Verdict {
    Verdict::Deny {
        reason: format!(
            "ralph-gate: denied while a loop is running: {what}. The config, ralph-gate's state (.ralph/), the loop's state file, the hook settings and git hooks decide when this loop may end, so they are not changed from inside it. Make the stop gates pass by fixing the code. If the gates or the loop really must change, say so and let the user do it (`ralph-gate loop cancel`, `ralph-gate loop approve` are theirs to run)."
        ),
    }
}

/// True when a loop this session owns, or one no session has claimed yet, is active.
fn in_loop(ws: &Path, session: &str) -> bool {
    if !loop_state::maybe_any(ws) {
        return false;
    }
    let key = loop_state::session_key(session);
    loop_state::list(ws).iter().any(|f| {
        f.state.as_ref().is_ok_and(|s| {
            s.active
                && (s.session_id.is_empty()
                    || s.session_id == key
                    || s.session_id == loop_state::ANY_SESSION)
        })
    })
}

/// The nearest folder above `dir` with a `.git`, found without running git.
fn git_work_tree(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}
