//! The command layer's one error type: what stops a command before it can give a verdict
//! (usage, config, files, output). Exit code 2 (see `exit`).

use ralph_plan::project::OpenError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Files(#[from] ralph_plan::files::FilesError),
    #[error(transparent)]
    Staged(#[from] ralph_runner::staged::StagedError),
    #[error(transparent)]
    Loop(#[from] ralph_loop::loops::LoopError),
    #[error(transparent)]
    Run(#[from] ralph_hook::fresh::error::RunError),
    #[error("cannot read {what} {}: {source}", path.display())]
    Read {
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot compare with the base {rev}: {source}")]
    Base {
        rev: String,
        #[source]
        source: ralph_base::git::GitError,
    },
    /// A hook file init would add to is not what its agent reads; nothing was changed.
    #[error("{} {problem}; fix it and run init again (nothing was changed)", path.display())]
    HookFile {
        path: std::path::PathBuf,
        problem: HookFileProblem,
    },
    #[error(transparent)]
    Git(#[from] ralph_base::git::GitError),
    /// A person's command (`loop approve`, `loop cancel`, a second `loop start`) run from
    /// inside an agent's session, or under it: refused, whatever the arguments.
    #[error("{0}")]
    AgentRefused(String),
    /// A person's confirmation on the terminal was not given.
    #[error("{0}")]
    NotConfirmed(String),
    #[error("{}: {source}", path.display())]
    LoopState {
        path: std::path::PathBuf,
        #[source]
        source: ralph_loop::loops::ReadError,
    },
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

/// What is wrong with a hook file.
#[derive(Debug, thiserror::Error)]
pub enum HookFileProblem {
    #[error("is not valid JSON ({0})")]
    Json(#[from] serde_json::Error),
    #[error("has the wrong shape: {0}")]
    Shape(#[from] super::init::hook_files::ShapeError),
}
