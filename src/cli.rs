//! Command-line surface (clap derive only). The core enums are given their command-line names
//! here; `app` turns each command's arguments into that command's own options, so nothing
//! below `app` sees clap.

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use ralph_base::agent::Agent;
use ralph_config::Phase;
use ralph_runner::report::Format;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Debug, Parser)]
#[command(
    name = "ralph-gate",
    version,
    about = "Verification gates for coding agents run in a loop",
    long_about = "Runs the checks that fit each file (tsc, py_compile, shellcheck, cargo, ...) \
                  from one config, ralph.toml, or from embedded presets chosen by what the \
                  project contains. The same gates serve the agent's hooks, git pre-commit and CI.\n\n\
                  Exit codes: 0 all gates passed, 1 a gate failed or timed out, 2 ralph-gate could \
                  not run (usage, config, I/O)."
)]
pub struct Cli {
    /// Use this config file instead of searching for ralph.toml upward from the current folder.
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gates on the project's files (all files by default): pre-commit, CI, by hand.
    Check(CheckArgs),
    /// List the resolved gates and where each came from, or explain what paths would trigger.
    Gates(GatesArgs),
    /// Agent hook entry points: read the event's JSON on stdin, answer on stdout.
    Hook {
        /// Who registered this hook. `plugin`: stand down when the project's or the user's
        /// settings register ralph-gate's hook for the same event, so only one acts.
        #[arg(long, global = true, value_enum, default_value = "settings")]
        via: HookVia,
        /// The agent that runs this hook: its payload is read, and its answer written, in
        /// that agent's format. A payload that is certainly another agent's is refused.
        #[arg(long, global = true, value_enum, default_value = "claude")]
        agent: Named<Agent>,
        #[command(subcommand)]
        event: HookCommand,
    },
    /// Start, inspect and cancel agent loops (the state files of the ralph-loop plugin).
    #[command(subcommand)]
    Loop(LoopCommand),
    /// A live terminal dashboard of the loops, the gates and the stop decisions.
    Dash,
    /// Loops, every gate's latest result and recent stop decisions, printed once.
    Status {
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: StatusFormat,
    },
    /// The result cache in .ralph/cache.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Find what would make the verdict untrustworthy here: conflicting plugins, hooks
    /// registered twice or not on PATH, a hook timeout below the stop budget, missing tools,
    /// leftovers of cancelled loops, gates changed since a loop started. Exit 1 on any.
    Doctor,
    /// Print a shell completion script (e.g. `ralph-gate completions bash > /etc/bash_completion.d/ralph-gate`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `ralph-gate man > ralph-gate.1`.
    Man,
    /// How a gate's test binaries are started (`go test`'s `-exec`, cargo's runner), so that
    /// their own report is read: not for people.
    #[command(name = "told-exec", hide = true)]
    ToldExec {
        harness: String,
        told: PathBuf,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        argv: Vec<std::ffi::OsString>,
    },
    /// The tests the stop gates run on a loop's start tree, taken in the background while the
    /// agent works (`loop start` starts it), so the stop that ends the loop need not: not for
    /// people.
    #[command(name = "start-tests", hide = true)]
    StartTests {
        /// The loop's state file's key.
        loop_file: String,
    },
    /// Set a project up: ralph.toml, Claude Code hooks, git pre-commit hook, .gitignore.
    Init {
        /// Replace a pre-commit hook that is not ralph-gate's (the old one is kept beside it).
        #[arg(long)]
        force: bool,
        /// Write this binary's absolute path into the hooks (when ralph-gate is not on the
        /// PATH that Claude Code and git will use).
        #[arg(long)]
        absolute: bool,
        /// Register the hooks of this agent in its own config file (repeatable; `all` for
        /// every one). Default: Claude Code and each agent the project shows signs of.
        #[arg(long = "agent", value_name = "AGENT", value_parser = parse_agent_choice)]
        agents: Vec<Vec<Agent>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFormat {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Delete every stored result (this checkout's and, when shared, the worktrees' common
    /// store) and the file-hash index.
    Clear,
    /// Where results are stored, how many and how big, and the hits and misses of the runs
    /// so far, with where each hit came from (this checkout or another worktree).
    Stats {
        #[arg(long, value_enum, default_value = "human")]
        format: StatusFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookVia {
    Settings,
    Plugin,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Before Write/Edit/MultiEdit/NotebookEdit/Bash: while a loop runs, deny changes to the
    /// config, ralph-gate's state, the loop's state file, hook settings and git hooks.
    PreToolUse,
    /// After Write/Edit/MultiEdit/NotebookEdit: run the edit gates for the edited file.
    PostToolUse,
    /// When the agent stops: hold the loop to its promise and the stop gates.
    Stop,
    /// The agent's reply, kept for its next stop (Cursor's afterAgentResponse: its stop
    /// payload carries no final message).
    AgentResponse,
    /// When the user submits a prompt: tells the agent what its last turn left undone (a
    /// held goal whose turn ended on the agent's cap on refusals while gates failed).
    UserPromptSubmit,
    /// After every tool call of a batch resolved (Claude Code's PostToolBatch): the edit gates,
    /// once for all the files the batch wrote. Once a session has sent one, its PostToolUse
    /// hooks of edit tools stand down, so a batch of parallel edits makes one run.
    PostToolBatch,
}

#[derive(Debug, Subcommand)]
pub enum LoopCommand {
    /// Start a loop: the prompt is fed back at every stop until the promise is made and every
    /// stop gate passes.
    Start(LoopStartArgs),
    /// Run the original Ralph loop: a NEW agent process per iteration with the prompt, the
    /// stop gates after each, until the final message ends with the promise and every stop
    /// gate passes. Exit 0 when done, 1 when a budget is spent or nothing changes any more,
    /// 2 when the agent cannot run.
    Run(LoopRunArgs),
    /// Show every loop in detail.
    Status,
    /// One line per loop.
    List,
    /// Cancel a loop: the only one, the main one, or the one with this id.
    Cancel {
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// Accept the stop gates as they are now for a running loop whose gates changed since it
    /// started. For a person at a terminal: agents are told never to run it.
    Approve {
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct LoopRunArgs {
    /// The agent to run (its non-interactive mode): claude or codex. Default: the agent the
    /// project is set up for.
    #[arg(long, value_enum)]
    pub agent: Option<Named<Agent>>,

    /// Read the prompt from this file (PROMPT.md, as the original loop does).
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompt_file: Option<PathBuf>,

    /// The text the final message must end with, as <promise>TEXT</promise>.
    #[arg(long, value_name = "TEXT", default_value = "COMPLETE")]
    pub promise: String,

    /// Stop after this many iterations (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_iterations: u64,

    /// Stop once the run has taken this long (`90m`, `2h`).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_time: Option<std::time::Duration>,

    /// Stop once the agent reports this much spent, in US dollars (Claude Code reports it).
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// Kill an iteration's agent (with its process group) after this long.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    pub iteration_timeout: std::time::Duration,

    /// End the run after this many iterations in a row with no change to the tree and the
    /// same failing gates (default: `[hooks] stuck_after`, 3).
    #[arg(long, value_name = "N")]
    pub stall: Option<u32>,

    /// Work through the user stories of this prd.json (`userStories` with `id`, `title`,
    /// `acceptanceCriteria`, `priority`, `passes`; optional `gates` and `verify`): each
    /// iteration is told the highest-priority story that does not pass, and ralph-gate sets
    /// `passes` once its checks and every stop gate pass on a fresh run. Done when every
    /// story passes; no promise is needed.
    #[arg(long, value_name = "FILE")]
    pub prd: Option<PathBuf>,

    /// With --prd: work on N stories at once, each in a git worktree and branch of its own
    /// (sharing the result cache); a story that passes is rebased onto the starting branch,
    /// checked again there when the base moved, and fast-forwarded into it. A conflict is
    /// reported and the story retried on the new base.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "prd")]
    pub parallel: usize,

    /// Work on this story of the prd only (what each --parallel worker runs).
    #[arg(long, value_name = "ID", requires = "prd", hide = true)]
    pub story: Option<String>,

    /// After each iteration that changed the tree, commit its work (the pre-commit hook runs;
    /// never --no-verify). The message names the iteration and the gates' outcome.
    #[arg(long)]
    pub commit: bool,

    /// An argument added to every iteration's agent command (repeatable), e.g.
    /// `--agent-arg=--model --agent-arg=opus`.
    #[arg(long = "agent-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub agent_args: Vec<String>,

    /// The prompt (words are joined with spaces).
    #[arg(value_name = "PROMPT", required_unless_present = "prompt_file", num_args = 1..)]
    pub prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LoopStartArgs {
    /// Stop after this many iterations even if unfinished (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_iterations: u64,

    /// The text the agent must output as <promise>TEXT</promise> to finish
    /// (`--completion-promise` as in the official ralph-loop plugin).
    #[arg(long, value_name = "TEXT", visible_alias = "completion-promise")]
    pub promise: Option<String>,

    /// Read the prompt from this file.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt")]
    pub prompt_file: Option<PathBuf>,

    /// The agent whose stops the loop holds; its state file goes in that agent's folder
    /// (`.claude/`, `.codex/`, `.gemini/`, ...). Default: the agent the project is set up
    /// for (`init --agent`); among several, the one whose session runs this, else Claude
    /// Code, else the first (and the others are named).
    #[arg(long, value_enum)]
    pub agent: Option<Named<Agent>>,

    /// Session that owns the loop (default: CLAUDE_CODE_SESSION_ID, else claimed by the first
    /// session that stops).
    #[arg(long, value_name = "ID", conflicts_with = "any_session")]
    pub session: Option<String>,

    /// Any session of the agent may stop this loop: for agents run once per iteration in a
    /// shell loop (`codex exec`, `opencode run`, `claude -p`), where each run is a new session.
    #[arg(long)]
    pub any_session: bool,

    /// The prompt (words are joined with spaces). Options may come before or after it, as
    /// with the official plugin's command; put `--` before a prompt that starts with `-`.
    #[arg(value_name = "PROMPT", required_unless_present = "prompt_file", num_args = 1..)]
    pub prompt: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or folders to check (relative to the current folder).
    #[arg(value_name = "PATH", conflicts_with_all = ["all", "staged", "changed"])]
    pub paths: Vec<PathBuf>,

    /// Every project file: git-tracked plus untracked files git does not ignore (the default).
    #[arg(long, conflicts_with_all = ["staged", "changed"])]
    pub all: bool,

    /// Files staged for commit (for a git pre-commit hook).
    #[arg(long, conflicts_with = "changed")]
    pub staged: bool,

    /// Files changed in the working tree against REV (default HEAD), untracked files included.
    #[arg(long, value_name = "REV", num_args = 0..=1, default_missing_value = "HEAD")]
    pub changed: Option<String>,

    /// Also compare what the gates check with the tree at REV (a pull request's base):
    /// options that check less, suppressions added, tests gone, files no gate checks any
    /// more. Reported as the `integrity` result; fails the run unless the base's ralph.toml
    /// sets `[integrity] on_weakening = "warn"`.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Run only this gate (repeatable).
    #[arg(long = "gate", value_name = "NAME")]
    pub gates: Vec<String>,

    /// Which phase's gates to run.
    #[arg(long, value_enum, default_value = "check")]
    pub phase: Named<Phase>,

    /// Gates run at once (default: `jobs` from the config, else the number of cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Output format (default: human; github under GITHUB_ACTIONS=true).
    #[arg(long, value_enum)]
    pub format: Option<Named<Format>>,

    /// Print only failures and, on failure, the summary.
    #[arg(short, long)]
    pub quiet: bool,

    /// Run every gate, reusing no stored result and storing none (what was stored for the
    /// runs is removed, so no later run serves an older verdict).
    #[arg(long)]
    pub no_cache: bool,

    /// A gate whose tool is missing fails instead of being skipped (always so with CI=true
    /// or RALPH_GATE_STRICT=1); `optional = true` gates may still be skipped.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct GatesArgs {
    /// Show which gates, and the exact commands, these paths would trigger.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    pub explain: Vec<PathBuf>,

    /// With --explain: only this phase (default: every phase).
    #[arg(long, value_enum)]
    pub phase: Option<Named<Phase>>,
}

/// `claude`, `codex`, ... or `all`.
fn parse_agent_choice(s: &str) -> Result<Vec<Agent>, String> {
    if s == "all" {
        return Ok(Agent::ALL.to_vec());
    }
    Agent::from_name(s).map(|a| vec![a]).ok_or_else(|| {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
        format!("unknown agent `{s}`; one of: {}, all", names.join(", "))
    })
}

/// A value of a type from the crates below, named on the command line from a fixed set:
/// clap's `ValueEnum` is implemented here, at the edge, so those crates never see clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named<T>(pub T);

impl ValueEnum for Named<Agent> {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<Named<Agent>>> = OnceLock::new();
        ALL.get_or_init(|| Agent::ALL.into_iter().map(Named).collect())
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let v = PossibleValue::new(self.0.name());
        Some(match self.0 {
            Agent::Opencode => v.help(
                "OpenCode, through the plugin in `hooks/opencode/`, which sends Claude-shaped payloads",
            ),
            _ => v,
        })
    }
}

impl ValueEnum for Named<Phase> {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<Named<Phase>>> = OnceLock::new();
        ALL.get_or_init(|| Phase::ALL.into_iter().map(Named).collect())
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Phase::Edit => "After an agent edits a file (PostToolUse hook)",
            Phase::Stop => "When the agent tries to end the loop (Stop hook)",
            Phase::Check => "`ralph-gate check`: the CLI, git pre-commit hook and CI",
        };
        Some(PossibleValue::new(self.0.as_str()).help(help))
    }
}

impl ValueEnum for Named<Format> {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Named(Format::Human),
            Named(Format::Json),
            Named(Format::Junit),
            Named(Format::Github),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Format::Human => PossibleValue::new("human"),
            Format::Json => PossibleValue::new("json"),
            Format::Junit => PossibleValue::new("junit"),
            Format::Github => PossibleValue::new("github").help(
                "GitHub Actions: the human report in groups, and annotations (the default under `GITHUB_ACTIONS=true`)",
            ),
        })
    }
}
