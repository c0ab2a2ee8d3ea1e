//! The records a listener inside a gate's run leaves in its folder (pytest's sessions, the
//! test binaries' contradictions): JSON files, read in name order once the run has ended. A
//! file that cannot be read or parsed is left out: a record is only ever written whole
//! (renamed into place), so such a file is not one.

use serde::de::DeserializeOwned;
use std::path::Path;

pub(super) fn read<T: DeserializeOwned>(dir: &Path) -> Vec<T> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, T)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| {
            let text = std::fs::read(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                serde_json::from_slice(&text).ok()?,
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, r)| r).collect()
}
