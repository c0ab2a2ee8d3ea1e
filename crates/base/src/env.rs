//! The environment variables ralph-gate reads, read in one place (clippy.toml sends every
//! other read here).
#![allow(clippy::disallowed_methods)]

use std::ffi::OsString;
use std::path::PathBuf;

/// The variable `loop run` sets for each iteration's agent: its hooks then know which run
/// their process belongs to.
pub const LOOP_RUN: &str = "RALPH_GATE_LOOP_RUN";

/// The variables agent CLIs set for the processes they start (tools, hooks): any one set
/// and not off marks a process started inside an agent's session.
pub const AGENT_MARKS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_SANDBOX",
    "GEMINI_CLI",
    "QWEN_CODE",
    "COPILOT_CLI",
];

/// A flag's value that is on: set, and neither `0` nor `false`.
/// One variable as this process inherited it: what a child started with `Command`'s own
/// environment gets, unless the command sets or removes it (the observer adds to
/// `LD_PRELOAD` and `ASAN_OPTIONS` after what a gate would have had).
pub fn inherited(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

pub fn is_on(value: &str) -> bool {
    !value.is_empty() && value != "0" && !value.eq_ignore_ascii_case("false")
}

/// Claude Code's default cap on Stop refusals in a row (claude-code-hooks.md).
pub const DEFAULT_STOP_BLOCK_CAP: u32 = 8;

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
    /// Running under an agent (one of [`AGENT_MARKS`]): commands meant for a person refuse
    /// to run.
    pub in_agent: bool,
    /// `RALPH_GATE_NO_CACHE` set and non-empty: never reuse stored results (hooks have no flags).
    pub no_cache: bool,
    /// `RALPH_GATE_STRICT` set and non-empty: a missing tool fails, as under CI.
    pub strict: bool,
    /// Claude Code ends a turn after this many Stop refusals in a row
    /// (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, default 8; 0 = no cap).
    pub stop_block_cap: u32,
    /// Qwen Code's cap (`QWEN_CODE_STOP_HOOK_BLOCK_CAP`, default 8, at most 100).
    pub qwen_block_cap: u32,
    /// `RALPH_GATE_REMOTE_CACHE`: the remote store's URL (secrets stay out of ralph.toml).
    pub remote_cache: Option<String>,
    /// `GITHUB_ACTIONS=true`: `check` speaks GitHub's workflow commands by default.
    pub github_actions: bool,
    /// `GITHUB_STEP_SUMMARY`: where `check` appends its Markdown job summary.
    pub github_step_summary: Option<std::path::PathBuf>,
    /// The variables that decide which executable a version manager's shim runs (`HOME`,
    /// `RUSTUP_*`, `PYENV_*`, ...): part of a tool's identity.
    pub tool_vars: std::collections::BTreeMap<String, OsString>,
    /// Every variable a gate inherits that can change how a tool checks (`RUSTFLAGS`,
    /// `GOFLAGS`, `NODE_OPTIONS`, `PYTHONPATH`, `MYPYPATH`, ...): all but those naming the
    /// session, terminal, user or CI run ([`names_the_session`]). Part of every result key.
    pub gate_vars: std::collections::BTreeMap<OsString, OsString>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_STATE_HOME`: where pins go outside git (else `$HOME/.local/state`).
    pub xdg_state_home: Option<PathBuf>,
    /// `XDG_CACHE_HOME`: where the stamps of files outside projects are shared (else
    /// `$HOME/.cache`).
    pub xdg_cache_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`: where ShellCheck also reads a `shellcheckrc`.
    pub xdg_config_home: Option<PathBuf>,
    /// `CARGO_HOME`: Cargo's own `config.toml` (else `$HOME/.cargo`).
    pub cargo_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR`: Claude Code's user folder (else `~/.claude`).
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME`: Codex's folder, goals database included (else found from the rollout's
    /// path, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `CLAUDE_PLUGIN_ROOT`: the plugin's folder when a plugin's hook runs us.
    pub claude_plugin_root: Option<PathBuf>,
    /// `GEMINI_SESSION_ID`: the session a Gemini CLI shell command belongs to.
    pub gemini_session_id: Option<String>,
    /// `RALPH_GATE_LOOP_RUN`: the loop file of the `loop run` whose iteration this agent
    /// process is (set by the driver): its stops are the driver's to judge.
    pub loop_run: Option<String>,
    /// `COLUMNS`: the terminal's width when the shell says it.
    pub columns: Option<usize>,
    /// `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`: the
    /// remote cache's S3 settings.
    pub aws: Aws,
}

/// The S3 settings a remote cache at `s3://` reads, as the AWS tools name them.
#[derive(Debug, Clone, Default)]
pub struct Aws {
    pub region: Option<String>,
    pub endpoint: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
}

impl Environment {
    /// A missing tool is a failure, not a skip: under CI, or with `RALPH_GATE_STRICT`.
    pub fn strict(&self) -> bool {
        self.ci || self.strict
    }

    /// `CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub fn claude_home(&self) -> Option<PathBuf> {
        self.claude_config_dir
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".claude")))
    }

    /// `XDG_STATE_HOME`, else `~/.local/state`.
    pub fn user_state_dir(&self) -> Option<PathBuf> {
        self.xdg_state_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state")))
    }

    /// `XDG_CACHE_HOME`, else `~/.cache`.
    pub fn user_cache_dir(&self) -> Option<PathBuf> {
        self.xdg_cache_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".cache")))
    }

    pub fn from_process() -> Self {
        let truthy = |k: &str| std::env::var(k).is_ok_and(|v| is_on(&v));
        let text = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let path = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Self {
            gate_vars: std::env::vars_os()
                .filter(|(k, _)| !k.to_str().is_some_and(names_the_session))
                .collect(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            xdg_state_home: std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
            xdg_config_home: path("XDG_CONFIG_HOME"),
            xdg_cache_home: path("XDG_CACHE_HOME"),
            cargo_home: path("CARGO_HOME"),
            claude_config_dir: path("CLAUDE_CONFIG_DIR"),
            claude_plugin_root: std::env::var_os("CLAUDE_PLUGIN_ROOT").map(PathBuf::from),
            codex_home: path("CODEX_HOME"),
            gemini_session_id: text("GEMINI_SESSION_ID"),
            loop_run: text(LOOP_RUN),
            columns: std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()),
            aws: Aws {
                region: std::env::var("AWS_REGION").ok(),
                endpoint: std::env::var("AWS_ENDPOINT_URL").ok(),
                access_key_id: std::env::var("AWS_ACCESS_KEY_ID").ok(),
                secret_access_key: std::env::var("AWS_SECRET_ACCESS_KEY").ok(),
            },
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
            strict: truthy("RALPH_GATE_STRICT"),
            remote_cache: std::env::var("RALPH_GATE_REMOTE_CACHE")
                .ok()
                .filter(|v| !v.is_empty()),
            github_actions: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
            github_step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|v| !v.is_empty())
                .map(Into::into),
            in_agent: AGENT_MARKS.iter().any(|k| truthy(k)),
            stop_block_cap: std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_STOP_BLOCK_CAP),
            qwen_block_cap: std::env::var("QWEN_CODE_STOP_HOOK_BLOCK_CAP")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_STOP_BLOCK_CAP),
            tool_vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
                .filter(|(k, _)| {
                    const MANAGERS: [&str; 7] = [
                        "RUSTUP_",
                        "PYENV",
                        "RBENV_",
                        "NODENV_",
                        "ASDF_",
                        "MISE_",
                        "CARGO_HOME",
                    ];
                    k == "HOME" || MANAGERS.iter().any(|m| k.starts_with(m))
                })
                .collect(),
        }
    }
}

/// Variables that say who runs ralph-gate, where, in which terminal, agent session or CI
/// run, on which host or container, and where caches and temporary files go, never how a
/// checker checks: left out of result keys, so a hook, a terminal and other machines share
/// results. `PATH` and `HOME` are out too: which tools run is in the key as their identity,
/// and the files read under home as their content. Everything else is in: the locale
/// (`LANG`, `LC_*`) and `CI` among them, which tests and tools read (a message in another
/// language, a test skipped on CI).
pub fn names_the_session(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "TERM",
        "COLORTERM",
        "COLUMNS",
        "LINES",
        "LS_COLORS",
        "HOSTNAME",
        "MAIL",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "LESS",
        "LESSOPEN",
        "LESSCLOSE",
        "TMPDIR",
        "TMUX",
        "TMUX_PANE",
        "STY",
        "WINDOW",
        "HISTFILE",
        "HISTSIZE",
        "HISTCONTROL",
        "PROMPT_COMMAND",
        "PS1",
        "PS2",
        "MOTD_SHOWN",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "DBUS_SESSION_BUS_ADDRESS",
        "DESKTOP_SESSION",
        "SESSION_MANAGER",
        "GPG_TTY",
        "CLAUDECODE",
        "HOST",
        "container",
        "CONTAINER_NAME",
        "CODESPACES",
        "CODESPACE_NAME",
        "REMOTE_CONTAINERS",
        "TMP",
        "TEMP",
        // Where tools keep caches: what is there follows from the inputs.
        "XDG_CACHE_HOME",
        "GOCACHE",
        "PIP_CACHE_DIR",
        "UV_CACHE_DIR",
        "npm_config_cache",
        "NPM_CONFIG_CACHE",
        "YARN_CACHE_FOLDER",
        "PYTHONPYCACHEPREFIX",
        "MYPY_CACHE_DIR",
        "RUFF_CACHE_DIR",
        "MANPATH",
        "INFOPATH",
        "TERMINFO",
    ];
    const PREFIXES: &[&str] = &[
        "SSH_",
        "XDG_SESSION_",
        "XDG_RUNTIME_DIR",
        "XDG_SEAT",
        "XDG_VTNR",
        "TERM_",
        "ITERM_",
        "KITTY_",
        "WT_",
        "ALACRITTY_",
        "KONSOLE_",
        "GNOME_",
        "VSCODE_",
        "CLAUDE_",
        "CODEX_",
        "GEMINI_",
        "QWEN_",
        "COPILOT_",
        "CURSOR_",
        "FACTORY_",
        "DROID_",
        "OPENCODE",
        "ANTHROPIC_",
        "OPENAI_",
        "AWS_",
        "GITHUB_",
        "RUNNER_",
        "GITLAB_",
        "CI_",
        "BUILDKITE",
        "CIRCLE",
        "JENKINS_",
        "TRAVIS",
        "RALPH_GATE",
        "GIT_",
        "NVM_",
        "npm_lifecycle_",
        "npm_package_",
        "npm_command",
        "npm_execpath",
        "npm_node_execpath",
        "NEXTEST_",
        "CARGO_BIN_EXE_",
        "CARGO_TARGET_TMPDIR",
        "RUST_TEST_",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::names_the_session;

    #[test]
    fn the_locale_and_ci_are_in_the_key_where_things_live_is_not() {
        for in_key in [
            "LANG",
            "LANGUAGE",
            "LC_ALL",
            "LC_MESSAGES",
            "CI",
            "XDG_CONFIG_HOME",
            "PYTHONPATH",
            "GOFLAGS",
        ] {
            assert!(!names_the_session(in_key), "{in_key} decides results");
        }
        for out in [
            "HOME",
            "HOSTNAME",
            "container",
            "XDG_CACHE_HOME",
            "GOCACHE",
            "TMPDIR",
            "CI_JOB_ID",
            "GITHUB_RUN_ID",
        ] {
            assert!(names_the_session(out), "{out} names where, not how");
        }
    }
}
