//! `ralph-gate hook pre-tool-use`: while a loop of this session runs, deny the tool calls
//! that would change what decides the loop's end (see [`crate::guard`]). Outside a loop, and
//! for everything else, it answers nothing, which Claude Code reads as "go on". No
//! subprocess runs here: this hook sits in front of every edit and every shell command.

use super::{Ask, Verdict};
use crate::guard::{self, paths::Places, paths::Protected};
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::loops;
use std::path::Path;

/// Judges a tool call of the agent working in `base`, whose loops live in `layout`.
pub fn run(ask: &Ask, env: &Environment, layout: &Layout, base: &Path) -> Verdict {
    let Some(call) = &ask.call else {
        return Verdict::Silent;
    };
    if !in_loop(layout, ask) {
        return Verdict::Silent;
    }
    let ws = layout.root();
    let claude_home = env.claude_home();
    let codex_home = env
        .codex_home
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".codex")));
    let config = ralph_config::find(base);
    let git_dir = ralph_base::git::git_dir(ws);
    let protected = Protected::new(&Places {
        ws,
        cwd: base,
        home: env.home.as_deref(),
        claude_home: claude_home.as_deref(),
        codex_home: codex_home.as_deref(),
        config: config.as_deref(),
        git_dir: git_dir.as_deref(),
        git_common_dir: ralph_base::git::common_dir(ws).as_deref(),
        plugin_root: env.claude_plugin_root.as_deref(),
    });
    match guard::judge(call, &protected) {
        Some(denied) => deny(&denied.what),
        None => {
            super::shell_effect::before(ask, layout, base);
            Verdict::Silent
        }
    }
}

/// The answer that refuses the call, with words the agent can act on.
pub fn deny(what: &str) -> Verdict {
    Verdict::Deny {
        reason: crate::words::denied(what),
    }
}

/// True when a loop this session owns, or one no session has claimed yet, is active, or a
/// pinned loop's state file is gone.
fn in_loop(layout: &Layout, ask: &Ask) -> bool {
    if !loops::maybe_any(layout) {
        return !loops::orphans_of(layout, &ask.session, ask.agent).is_empty();
    }
    let key = loops::session_key(&ask.session);
    loops::list(layout).iter().any(|f| {
        f.state.as_ref().is_ok_and(|s| {
            s.active
                && (s.session_id.is_empty()
                    || s.session_id == key
                    || s.session_id == loops::ANY_SESSION
                    || s.session_id == ralph_base::state::RUN_SESSION)
        })
    }) || !loops::orphans_of(layout, &ask.session, ask.agent).is_empty()
}
