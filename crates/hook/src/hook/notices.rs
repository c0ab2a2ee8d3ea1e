//! What a session has already been told once (which tools are missing), so the agent hears
//! it the first time and is not nagged after every edit. One small file per session under
//! `.ralph/notices/`, written atomically; an unreadable one means "told nothing yet".

use std::path::{Path, PathBuf};

fn file(root: &Path, session: &str) -> PathBuf {
    ralph_base::state::Layout::at(root).notices(session)
}

/// The tools this session was told are missing.
pub fn told(root: &Path, session: &str) -> Vec<String> {
    std::fs::read(file(root, session))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Adds `tools` to what this session was told. Best effort: failing to remember only means
/// saying it again.
pub fn remember(root: &Path, session: &str, tools: &[String]) {
    let mut all = told(root, session);
    for t in tools {
        if !all.contains(t) {
            all.push(t.clone());
        }
    }
    if let Ok(bytes) = serde_json::to_vec(&all) {
        let _ = ralph_base::atomic::write(&file(root, session), &bytes);
    }
}
