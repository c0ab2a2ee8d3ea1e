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
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}
