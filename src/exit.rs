//! Process exit codes. "A gate failed" (1) is never confused with "ralph-gate itself could not
//! run" (2), so CI and git hooks can tell a red build from a broken setup.

use std::process::ExitCode;

/// Every selected gate passed (or had nothing to check).
pub const SUCCESS: u8 = 0;
/// At least one gate failed, timed out, or was skipped where skipping counts as failure (`CI=true`).
pub const GATE_FAILED: u8 = 1;
/// ralph-gate could not do its job: bad usage, bad config, I/O error.
pub const USAGE_OR_SETUP: u8 = 2;

pub fn code(c: u8) -> ExitCode {
    ExitCode::from(c)
}
