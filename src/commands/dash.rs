//! `ralph-gate dash`: the live dashboard (drawn by `crate::dash`).

use super::AppError;
use ralph_base::env::Environment;
use std::path::Path;

pub fn run(env: &Environment, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    crate::dash::run(cwd, config, env)?;
    Ok(ralph_base::exit::SUCCESS)
}
