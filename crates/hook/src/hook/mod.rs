//! The hooks' decisions, agent-neutral: what an agent asks (an edit was made, it wants to
//! stop, it is about to run a tool) comes in as an [`Ask`] that an adapter in
//! the `agents` module parsed from that agent's payload, and what ralph-gate decides goes out as
//! a [`Verdict`] that the same adapter renders in the agent's own format.

pub mod batches;
pub mod decide;
pub mod notices;
pub mod post_tool_use;
pub mod pre_tool_use;
pub mod promise;
pub mod prompt;
pub mod protocol;
pub mod shell_effect;
pub mod stop;

use crate::guard::Call;
use promise::TextSource;
use ralph_base::agent::Agent;
use std::path::PathBuf;

/// What a hook call asks, whatever agent sent it.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    pub agent: Agent,
    /// The agent's session (conversation) id; empty when the payload has none.
    pub session: String,
    /// The folder the agent works in, when the payload says.
    pub cwd: Option<PathBuf>,
    /// After an edit: the files the tool wrote (absolute, or relative to `cwd`).
    pub edited: Vec<PathBuf>,
    /// At a stop: the agent's final message, from the payload or its transcript.
    pub final_text: Option<String>,
    pub text_source: TextSource,
    /// At a stop: the agent is already continuing because a stop was refused.
    pub continuing: bool,
    /// Before a tool runs: what it would do. After a shell command: the command.
    pub call: Option<Call>,
    /// The tool call's id (`tool_use_id`), which ties a call's hooks before and after it.
    pub call_id: Option<String>,
    /// The shell command's timeout in milliseconds, when the agent gave one.
    pub call_timeout_ms: Option<u64>,
    /// At a stop: where the agent records the session's own goal (`/goal`), if it has them.
    pub goal: Option<ralph_loop::goals::Source>,
    /// At a prompt: the session's transcript, when the payload names it.
    pub transcript: Option<PathBuf>,
}

/// What ralph-gate answers, whatever agent asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Verdict {
    /// Nothing to say: go on.
    #[default]
    Silent,
    /// After an edit: text for the model (failing gates, a notice), and a line for the user.
    Context {
        text: String,
        system: Option<String>,
    },
    /// At a stop: refused; `reason` is the agent's next instruction.
    Block {
        reason: String,
        system: Option<String>,
    },
    /// At a stop: allowed, with a line for the user.
    Allow { system: Option<String> },
    /// Before a tool: denied, with why.
    Deny { reason: String },
}

impl Verdict {
    /// Two edits' feedback as one: the texts one after the other, the first line for the
    /// user. Only `Context` adds; anything else is kept as it is.
    pub fn and(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::Silent, other) => other,
            (
                Verdict::Context { text, system },
                Verdict::Context {
                    text: more,
                    system: more_system,
                },
            ) => Verdict::Context {
                text: format!("{text}\n\n{more}"),
                system: system.or(more_system),
            },
            (mine, _) => mine,
        }
    }

    pub fn blocks(&self) -> bool {
        matches!(self, Verdict::Block { .. })
    }

    /// The refusal's reason or the denial's, if this is one.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Block { reason, .. } | Verdict::Deny { reason } => Some(reason),
            _ => None,
        }
    }

    /// The line shown to the user, if any.
    pub fn system(&self) -> Option<&str> {
        match self {
            Verdict::Context { system, .. }
            | Verdict::Block { system, .. }
            | Verdict::Allow { system } => system.as_deref(),
            _ => None,
        }
    }
}
