//! `ralph-gate cache clear|stats`.

use super::AppError;
use crate::cli::{CacheCommand, StatusFormat};
use crate::project::Project;
use std::io::Write;
use std::path::Path;

pub fn run(cmd: &CacheCommand, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    let project = Project::open(cwd, config)?;
    let share = project.config.settings.share_cache;
    let text = match cmd {
        CacheCommand::Clear => {
            let freed = crate::cache::clear(project.root(), share)?;
            format!("ralph-gate: cache cleared ({} KiB freed)\n", freed / 1024)
        }
        CacheCommand::Stats { format } => {
            let t = crate::cache::totals(project.root(), share);
            match format {
                StatusFormat::Json => {
                    serde_json::to_string_pretty(&t).expect("stats serialise") + "\n"
                }
                StatusFormat::Human => {
                    let hits: u64 = t.hits.values().sum();
                    let mut out = format!(
                        "ralph-gate cache: {}{}\n  {} entries, {} KiB\n  {} runs: {hits} hits, {} misses\n",
                        t.dir,
                        if t.shared { " (shared by every worktree of this repository)" } else { "" },
                        t.entries,
                        t.bytes / 1024,
                        t.runs,
                        t.misses
                    );
                    for (from, n) in &t.hits {
                        out.push_str(&format!("  {n} hits from {from}\n"));
                    }
                    out
                }
            }
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(crate::exit::SUCCESS)
}
