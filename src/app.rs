//! The top layer: turns parsed arguments into a run and a run into an exit code.

use crate::cli::{Cli, Command};
use crate::commands;
use crate::env::Environment;
use crate::project::{OpenError, Project};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Files(#[from] crate::files::FilesError),
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

pub fn run(cli: Cli) -> Result<u8, AppError> {
    let env = Environment::from_process();
    let cwd = std::env::current_dir()?;
    let mut project = Project::open(&cwd, cli.config.as_deref())?;
    match cli.command {
        Command::Check(args) => commands::check::run(&mut project, &args, &env),
        Command::Gates(args) => commands::gates::run(&project, &args),
    }
}
