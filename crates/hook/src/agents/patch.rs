//! The files a Codex-style patch (`*** Begin Patch` ... `*** End Patch`) writes, as Codex's
//! `apply_patch`, Copilot's `apply_patch` and Droid's `ApplyPatch` send it: every added or
//! updated file and every move target; deleted files have nothing left to check.

use std::path::PathBuf;

pub fn written(patch: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let path = ["*** Add File: ", "*** Update File: ", "*** Move to: "]
            .iter()
            .find_map(|marker| line.strip_prefix(marker));
        if let Some(p) = path.map(str::trim).filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_updated_and_moved_files_are_written_deleted_ones_are_not() {
        let patch = "*** Begin Patch\n*** Add File: bad.py\n+def f(:\n*** Update File: ok.py\n@@\n-x = 1\n+x = 2\n*** Update File: old/name.py\n*** Move to: new/name.py\n@@\n-a\n+b\n*** Delete File: gone.py\n*** End Patch";
        assert_eq!(
            written(patch),
            ["bad.py", "ok.py", "old/name.py", "new/name.py"].map(PathBuf::from)
        );
        assert!(written("not a patch").is_empty());
        assert_eq!(
            written("*** Add File: a b.py\r\n*** Add File: a b.py\r\n"),
            [PathBuf::from("a b.py")],
            "CRLF patches and repeated names"
        );
    }
}
