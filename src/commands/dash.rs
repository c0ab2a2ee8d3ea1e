//! `ralph-gate dash`: the live dashboard (drawn by `crate::dash`).

use super::AppError;
use crate::env::Environment;
use std::path::Path;

pub fn run(env: &Environment, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    crate::dash::run(cwd, config, env)?;
    Ok(crate::exit::SUCCESS)
}
