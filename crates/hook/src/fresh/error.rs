//! What ends `loop run` before a verdict: the project cannot be opened, the stories file
//! cannot be read, the run's own state was lost. The command maps it to exit code 2.

use ralph_loop::loops::LoopError;
use ralph_plan::project::OpenError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error(transparent)]
    Files(#[from] ralph_plan::files::FilesError),
    #[error(transparent)]
    Prd(#[from] super::prd::PrdError),
    #[error(transparent)]
    Unsupported(#[from] super::cli::Unsupported),
    #[error("cannot make the run's scratch folder: {0}")]
    Scratch(#[from] std::io::Error),
    /// The run was asked for what it cannot do (no such story, a loop already running, an
    /// agent it cannot drive), or lost what it needs to go on; the message says which.
    #[error("{0}")]
    Refused(String),
}
