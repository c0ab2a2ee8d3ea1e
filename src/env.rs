//! The environment variables ralph-gate reads, read in one place.

use std::ffi::OsString;

#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub path: Option<OsString>,
    /// `CI=true` (or `1`): a skipped gate counts as a failure unless it is optional.
    pub ci: bool,
    /// `NO_COLOR` set and non-empty: never colour.
    pub no_color: bool,
    /// `CLAUDE_PROJECT_DIR`: where a Claude Code session started; loop state lives there.
    pub claude_project_dir: Option<std::path::PathBuf>,
    /// `CLAUDE_CODE_SESSION_ID`: the session a hook (or a command it runs) belongs to.
    pub claude_session_id: Option<String>,
    /// `RALPH_GATE_NO_CACHE` set and non-empty: never reuse stored results (hooks have no flags).
    pub no_cache: bool,
}

impl Environment {
    pub fn from_process() -> Self {
        let truthy = |k: &str| {
            std::env::var(k)
                .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
        };
        Self {
            path: std::env::var_os("PATH"),
            ci: truthy("CI"),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            claude_project_dir: std::env::var_os("CLAUDE_PROJECT_DIR")
                .filter(|v| !v.is_empty())
                .map(Into::into),
            no_cache: std::env::var_os("RALPH_GATE_NO_CACHE").is_some_and(|v| !v.is_empty()),
            claude_session_id: std::env::var("CLAUDE_CODE_SESSION_ID")
                .ok()
                .filter(|v| !v.is_empty()),
        }
    }
}
