//! `ralph-gate cache clear`.

use super::AppError;
use crate::cli::CacheCommand;
use crate::project::Project;
use std::io::Write;
use std::path::Path;

pub fn run(cmd: &CacheCommand, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    match cmd {
        CacheCommand::Clear => {
            let project = Project::open(cwd, config)?;
            let freed = crate::cache::clear(project.root())?;
            writeln!(
                std::io::stdout().lock(),
                "ralph-gate: cache cleared ({} KiB freed)",
                freed / 1024
            )?;
        }
    }
    Ok(crate::exit::SUCCESS)
}
