//! Built-in knowledge of tools whose projects are not "a folder with a marker file": how their
//! runs are grouped (a Cargo workspace, a tsconfig with its references), the command for each,
//! and every file a run's result depends on. A gate opts in with `driver = "..."`; the presets
//! for Rust, TypeScript and shell do.

pub mod cargo;
pub mod shellcheck;
pub mod typescript;

use std::path::{Component, Path, PathBuf};

/// Lexically resolves `.` and `..` in a relative path; `None` when it climbs above its start
/// (outside the project).
pub fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(_) => out.push(c),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out.iter().collect())
}

/// `dir` joined with a relative `path`, normalised; `None` when it leaves the project.
pub fn join_inside(dir: &Path, path: &str) -> Option<PathBuf> {
    if Path::new(path).is_absolute() {
        return None;
    }
    normalize(&dir.join(path))
}

/// Universe files under `dir` (every file when `dir` is the root).
pub fn under<'a>(universe: &'a [PathBuf], dir: &'a Path) -> impl Iterator<Item = &'a PathBuf> {
    universe.iter().filter(move |f| f.starts_with(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_stays_inside() {
        assert_eq!(
            normalize(Path::new("a/./b/../c")),
            Some(PathBuf::from("a/c"))
        );
        assert_eq!(normalize(Path::new("a/../..")), None);
        assert_eq!(
            join_inside(Path::new("x"), "../y"),
            Some(PathBuf::from("y"))
        );
        assert_eq!(join_inside(Path::new("x"), "/etc"), None);
    }
}
