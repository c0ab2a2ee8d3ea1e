//! `ralph-gate status`: the loops, every gate's latest result and the recent journal, once.

use super::AppError;
use ralph_base::env::Environment;
use ralph_plan::project::Project;
use std::io::Write;
use std::path::Path;

/// How `status` (and `cache stats`) print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

pub fn run(
    format: Format,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, AppError> {
    let mut project = Project::open(cwd, config)?;
    let layout = ralph_base::state::Layout::workspace(env, cwd);
    // Described once here; the dashboard, which redraws, does not.
    let surface = ralph_surface::surface::of_project(&mut project, env)?;
    let st = crate::overview::gather(
        &project.config,
        project.describe_config(),
        &layout,
        Some(&surface),
    );
    let text = match format {
        Format::Human => crate::overview::render_text(&st, ralph_runner::results::now_ms()),
        Format::Json => serde_json::to_string_pretty(&st).expect("status serialises") + "\n",
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ralph_base::exit::SUCCESS)
}
