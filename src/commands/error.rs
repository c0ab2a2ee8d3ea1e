//! The command layer's one error type: what stops a command before it can give a verdict
//! (usage, config, files, output). Exit code 2 (see `exit`).

use crate::project::OpenError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Files(#[from] crate::files::FilesError),
    #[error(transparent)]
    Staged(#[from] crate::staged::StagedError),
    #[error(transparent)]
    Loop(#[from] crate::loops::LoopError),
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
        source: crate::git::GitError,
    },
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}
