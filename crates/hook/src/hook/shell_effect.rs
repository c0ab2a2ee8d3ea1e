//! The guard by effect, at the hooks: the protected files are held before each of the agent's
//! shell commands while a loop runs (`pre-tool-use`), compared after it (`post-tool-use`,
//! which Claude Code also sends as `PostToolUseFailure` for a command that failed), and at
//! the next stop for a command no after-hook came for. What a command changed is put back,
//! journaled with the command, and told to the agent. See [`ralph_loop::watch`].

use super::{Ask, Verdict};
use crate::guard::Call;
use ralph_base::state::Layout;
use ralph_loop::journal::{self, Entry, LoopEvent};
use ralph_loop::watch::{self, Snapshot, Store};
use std::path::{Path, PathBuf};

/// The Bash tool's longest timeout (10 minutes), and its default (2 minutes): a command older
/// than its timeout is over, whether or not its after-hook came.
const LONGEST_S: u64 = 600;
const DEFAULT_S: u64 = 120;

/// The config files to hold for an agent working in `base`.
fn configs(layout: &Layout, base: &Path) -> Vec<PathBuf> {
    [ralph_config::find(base), ralph_config::find(layout.root())]
        .into_iter()
        .flatten()
        .collect()
}

/// Before a shell command of a loop's session: holds the protected files.
pub fn before(ask: &Ask, layout: &Layout, base: &Path) {
    let Some(Call::Bash(command)) = &ask.call else {
        return;
    };
    let paths = watch::watched(layout, &configs(layout, base));
    let timeout_s = ask
        .call_timeout_ms
        .map_or(DEFAULT_S, |ms| ms.div_ceil(1000))
        .min(LONGEST_S);
    let snap = Snapshot {
        session: ralph_loop::loops::session_key(&ask.session),
        call: ask
            .call_id
            .clone()
            .unwrap_or_else(|| format!("t{}", watch::now())),
        command: command.clone(),
        taken: watch::now(),
        timeout_s,
        files: watch::read(&paths),
    };
    // A snapshot that cannot be kept only loses the check after this command; the stop's
    // own checks (the pin, the surface) still hold the loop.
    let _ = Store::of(layout).put(&snap);
}

/// After a shell command: puts back what it changed and tells the agent.
pub fn after(ask: &Ask, layout: &Layout) -> Verdict {
    let session = ralph_loop::loops::session_key(&ask.session);
    let store = Store::of(layout);
    store.note_after_hooks(&session);
    match store.take(&session, ask.call_id.as_deref()) {
        Some(snap) => match settle(layout, &snap) {
            Some(text) => Verdict::Context { text, system: Some("ralph-gate: a shell command changed the loop's protected files; they were put back".into()) },
            None => Verdict::Silent,
        },
        None => Verdict::Silent,
    }
}

/// At a stop: settles every pending command of the session (what it changed is put back and
/// journaled). Returns the command this stop came from inside: one still inside its timeout,
/// in a session whose commands are known to get after-hooks. (Where no after-hook is
/// registered for shell commands, as in settings written before they were, a pending
/// command says nothing, and is only settled.)
pub fn at_stop(layout: &Layout, session: &str) -> Option<String> {
    let store = Store::of(layout);
    let session = ralph_loop::loops::session_key(session);
    let hooked = store.has_after_hooks(&session);
    let mut in_command = None;
    for snap in store.pending(&session) {
        settle(layout, &snap);
        if hooked && watch::now() <= snap.taken + snap.timeout_s + 5 {
            in_command = Some(snap.command.clone());
        } else {
            store.remove(&snap);
        }
    }
    in_command
}

/// Compares the files `snap` holds with now, puts back what changed, journals it; returns
/// the agent's text when anything changed.
fn settle(layout: &Layout, snap: &Snapshot) -> Option<String> {
    let paths: Vec<PathBuf> = snap.files.keys().cloned().collect();
    let mut now_paths = watch::watched(layout, &[]);
    now_paths.extend(paths);
    now_paths.sort();
    now_paths.dedup();
    let effects = watch::changes(&snap.files, &watch::read(&now_paths));
    if effects.is_empty() {
        return None;
    }
    let left = watch::restore(&snap.files, &effects);
    let show = |e: &watch::Effect| {
        let p = e.path();
        let shown = p.strip_prefix(layout.root()).unwrap_or(p);
        format!("{} {}", shown.display(), e.verb())
    };
    let done: Vec<String> = effects
        .iter()
        .filter(|e| !left.contains(e))
        .map(show)
        .collect();
    let failed: Vec<String> = left.iter().map(show).collect();
    let _ = journal::append(
        layout,
        Entry::Restored(LoopEvent {
            session: snap.session.clone(),
            ..LoopEvent::new(
                format!("session {}", snap.session),
                "",
                format!(
                    "`{}`: {}",
                    ralph_base::text::shorten(&snap.command, 300),
                    done.iter()
                        .map(|d| format!("{d} (put back)"))
                        .chain(
                            failed
                                .iter()
                                .map(|f| format!("{f} (could not be put back)"))
                        )
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        }),
    );
    Some(crate::words::restored(&snap.command, &done, &failed))
}
