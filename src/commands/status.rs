//! `ralph-gate status`: the loops, every gate's latest result and the recent journal, once.

use super::AppError;
use crate::cli::StatusFormat;
use crate::env::Environment;
use crate::project::Project;
use std::io::Write;
use std::path::Path;

pub fn run(
    format: StatusFormat,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, AppError> {
    let project = Project::open(cwd, config)?;
    let ws = crate::hook::stop::workspace(env, cwd);
    let st = crate::status::gather(&project.config, project.describe_config(), &ws);
    let text = match format {
        StatusFormat::Human => crate::status::render_text(&st, crate::results::now_ms()),
        StatusFormat::Json => serde_json::to_string_pretty(&st).expect("status serialises") + "\n",
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(crate::exit::SUCCESS)
}
