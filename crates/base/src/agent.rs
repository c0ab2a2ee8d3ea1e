//! The coding agents ralph-gate serves, and what is known about each without reading its
//! payloads: its name, the folder its loops live in, its cap on refusals. The adapters that
//! speak each agent's protocol are in the `agents` module.

/// The `loop_limit` `init --agent cursor` writes on Cursor's stop hook: its cap on refusals.
pub const CURSOR_LOOP_LIMIT: u32 = 25;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    #[default]
    Claude,
    Codex,
    Copilot,
    Gemini,
    Cursor,
    Qwen,
    Droid,
    /// OpenCode, through the plugin in `hooks/opencode/`, which sends Claude-shaped payloads.
    Opencode,
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Agent {
    pub const ALL: [Agent; 8] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Copilot,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Qwen,
        Agent::Droid,
        Agent::Opencode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Qwen => "qwen",
            Agent::Droid => "droid",
            Agent::Opencode => "opencode",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The folder (under the project) that holds this agent's loop state files: its own
    /// config folder, so a loop driven by Codex never writes `.claude/`.
    pub fn state_dir(self) -> &'static str {
        match self {
            Agent::Claude => ".claude",
            Agent::Codex => ".codex",
            Agent::Copilot => ".copilot",
            Agent::Gemini => ".gemini",
            Agent::Cursor => ".cursor",
            Agent::Qwen => ".qwen",
            Agent::Droid => ".factory",
            Agent::Opencode => ".opencode",
        }
    }

    /// How many refusals in a row the agent allows before it ends the turn anyway (0: no
    /// cap known). ralph-gate says so near the cap and journals it.
    pub fn block_cap(self, env: &crate::env::Environment) -> u32 {
        match self {
            Agent::Claude => env.stop_block_cap,
            Agent::Qwen => env.qwen_block_cap.min(100),
            Agent::Copilot => 8,
            Agent::Cursor => CURSOR_LOOP_LIMIT,
            Agent::Codex | Agent::Gemini | Agent::Droid | Agent::Opencode => 0,
        }
    }

    /// Agents whose stop payload lacks the final message, so a response hook keeps it.
    pub fn keeps_replies(self) -> bool {
        self == Agent::Cursor
    }

    /// The agents' session ids as their shells see them, for `loop start` run by the agent.
    pub fn session_from_env(self, env: &crate::env::Environment) -> Option<String> {
        match self {
            Agent::Claude => env.claude_session_id.clone(),
            Agent::Gemini => env.gemini_session_id.clone(),
            _ => None,
        }
    }
}

/// Where the last assistant text came from, for the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextSource {
    LastAssistantMessage,
    Transcript,
    /// Recorded from the agent's own after-response hook (Cursor).
    Recorded,
    #[default]
    None,
}
