//! `ralph-gate hook pre-tool-use`: while a loop of this session runs, deny the tool calls
//! that would change what decides the loop's end (see [`crate::guard`]). Outside a loop, and
//! for everything else, it answers nothing, which Claude Code reads as "go on". No
//! subprocess runs here: this hook sits in front of every edit and every shell command.

use super::protocol::{HookInput, HookOutput, HookSpecificOutput};
use crate::env::Environment;
use crate::guard::{self, paths::Places, paths::Protected, Call};
use crate::loop_state;
use std::path::{Path, PathBuf};

pub fn run(input: &HookInput, env: &Environment, cwd: &Path) -> Option<HookOutput> {
    let base = input.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = env
        .claude_project_dir
        .clone()
        .or_else(|| git_work_tree(&base))
        .unwrap_or_else(|| base.clone());
    let session = input.session_id.clone().unwrap_or_default();
    if !in_loop(&ws, &session) {
        return None;
    }
    let call = call(input)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let claude_home = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".claude")));
    let config = crate::config::find(&base);
    let git_dir = git_dir(&ws);
    let plugin_root = std::env::var_os("CLAUDE_PLUGIN_ROOT").map(PathBuf::from);
    let protected = Protected::new(&Places {
        ws: &ws,
        cwd: &base,
        home: home.as_deref(),
        claude_home: claude_home.as_deref(),
        config: config.as_deref(),
        git_dir: git_dir.as_deref(),
        plugin_root: plugin_root.as_deref(),
    });
    let denied = guard::judge(&call, &protected)?;
    Some(deny(&denied.what))
}

/// The answer that refuses the call, with words the agent can act on.
pub fn deny(what: &str) -> HookOutput {
    let reason = format!(
        "ralph-gate: denied while a loop is running: {what}. The config, ralph-gate's state (.ralph/), the loop's state file, the hook settings and git hooks decide when this loop may end, so they are not changed from inside it. Make the stop gates pass by fixing the code. If the gates or the loop really must change, say so and let the user do it (`ralph-gate loop cancel`, `ralph-gate loop approve` are theirs to run)."
    );
    HookOutput {
        hook_specific_output: Some(HookSpecificOutput {
            hook_event_name: "PreToolUse",
            additional_context: None,
            permission_decision: Some("deny"),
            permission_decision_reason: Some(reason),
        }),
        ..Default::default()
    }
}

fn call(input: &HookInput) -> Option<Call> {
    let tool = input.tool_name.as_deref()?;
    let field = |k: &str| {
        input
            .tool_input
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    Some(match tool {
        "Write" | "Edit" | "MultiEdit" => Call::Edit(field("file_path")?),
        "NotebookEdit" => Call::Edit(field("notebook_path")?),
        "Bash" => Call::Bash(field("command")?),
        _ => Call::Other,
    })
}

/// True when a loop this session owns, or one no session has claimed yet, is active.
fn in_loop(ws: &Path, session: &str) -> bool {
    if !loop_state::maybe_any(ws) {
        return false;
    }
    let key = loop_state::session_key(session);
    loop_state::list(ws).iter().any(|f| {
        f.state
            .as_ref()
            .is_ok_and(|s| s.active && (s.session_id.is_empty() || s.session_id == key))
    })
}

/// The nearest folder above `dir` with a `.git`, found without running git.
fn git_work_tree(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// `.git`, or for a linked worktree the folder its `.git` file points to.
fn git_dir(ws: &Path) -> Option<PathBuf> {
    let dot = ws.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    Some(ws.join(target))
}
