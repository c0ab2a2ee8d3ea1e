//! Claude Code's PostToolBatch (2.1.119 and later) fires once after every tool call of a batch
//! has resolved, with all of them: one edit-gate run for a batch of parallel edits instead of
//! one per edit. A settings file cannot say which Claude Code reads it, and an older one never
//! sends the batch, so the PostToolUse hooks of edit tools stand down only in a session that
//! has sent one: its first batch is checked by them (the batch hook, which comes after them,
//! only takes note), every later one by the batch hook alone. Shell commands keep their
//! PostToolUse check (`shell_effect`), which is per call.

use ralph_base::state::Layout;

/// Records that `session`'s agent sends PostToolBatch; true when it had sent one before.
/// Best effort: unrecorded, the edit hooks keep running, which costs time and never feedback.
pub fn note(layout: &Layout, session: &str) -> bool {
    if session.is_empty() {
        return false;
    }
    if seen(layout, session) {
        return true;
    }
    let _ = ralph_base::atomic::write(&layout.batched(session), b"");
    false
}

/// Whether `session`'s agent has sent a PostToolBatch.
pub fn seen(layout: &Layout, session: &str) -> bool {
    !session.is_empty() && layout.batched(session).exists()
}
