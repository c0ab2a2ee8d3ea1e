//! Process exit codes. "A gate failed" (1) is never confused with "ralph-gate itself could not
//! run" (2), so CI and git hooks can tell a red build from a broken setup.

use std::process::ExitCode;

/// Every selected gate passed (or had nothing to check).
pub const SUCCESS: u8 = 0;
/// At least one gate failed, timed out, or was skipped where skipping counts as failure (`CI=true`).
pub const GATE_FAILED: u8 = 1;
/// ralph-gate could not do its job: bad usage, bad config, I/O error.
pub const USAGE_OR_SETUP: u8 = 2;

/// Hook mode: the event's JSON could not be read. Claude Code shows the first line of stderr
/// to the user and goes on; without a readable input there is no session to hold.
pub const HOOK_BAD_INPUT: u8 = 1;
/// Hook mode: the answer could not be written (stdout closed); a non-blocking error.
pub const HOOK_NO_ANSWER: u8 = 1;
/// Hook mode: ralph-gate could not record or check a stop (state not writable, ...). Claude
/// Code treats 2 as "block" and gives stderr to the agent, so a loop never ends on an error.
pub const HOOK_BLOCKING_ERROR: u8 = 2;

pub fn code(c: u8) -> ExitCode {
    ExitCode::from(c)
}
