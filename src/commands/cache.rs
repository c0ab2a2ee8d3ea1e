//! `ralph-gate cache clear|stats`.

use super::status::Format;
use super::AppError;
use ralph_plan::project::Project;
use std::io::Write;
use std::path::Path;

/// `cache clear|stats`.
#[derive(Debug, Clone, Copy)]
pub enum Command {
    Clear,
    Stats { format: Format },
}

pub fn run(cmd: &Command, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    let project = Project::open(cwd, config)?;
    let share = project.config.settings.share_cache;
    let text = match cmd {
        Command::Clear => {
            let freed = ralph_runner::cache::clear(project.root(), share)?;
            format!("ralph-gate: cache cleared ({} KiB freed)\n", freed / 1024)
        }
        Command::Stats { format } => {
            let t = ralph_runner::cache::totals(project.root(), share);
            match format {
                Format::Json => serde_json::to_string_pretty(&t).expect("stats serialise") + "\n",
                Format::Human => {
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
    Ok(ralph_base::exit::SUCCESS)
}
