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
    lexical(path).and_then(|(up, rest)| (up == 0).then_some(rest))
}

/// A relative `path` resolved by its components alone: how many folders it climbs above
/// its start, and the path from there. `None` for an absolute path.
fn lexical(path: &Path) -> Option<(usize, PathBuf)> {
    let (mut up, mut out) = (0usize, Vec::new());
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if out.pop().is_none() => up += 1,
            Component::ParentDir => {}
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some((up, out.iter().collect()))
}

/// `dir` joined with a relative `path`, normalised; `None` when it leaves the project.
pub fn join_inside(dir: &Path, path: &str) -> Option<PathBuf> {
    if Path::new(path).is_absolute() {
        return None;
    }
    normalize(&dir.join(path))
}

/// `dir` joined with a relative `path` that leaves the project, normalised from the root
/// (`../shared/lib.sh`): a file beside the project that a run reads, whose content the key
/// can hold. `None` when it stays inside (see [`join_inside`]) or is absolute.
pub fn join_beside(dir: &Path, path: &str) -> Option<PathBuf> {
    if Path::new(path).is_absolute() {
        return None;
    }
    let (up, rest) = lexical(&dir.join(path)).filter(|(up, _)| *up > 0)?;
    let mut rel: PathBuf = std::iter::repeat_n("..", up).collect();
    rel.extend(rest.iter());
    Some(rel)
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
        assert_eq!(
            join_beside(Path::new("x"), "../../shared/./lib.sh"),
            Some(PathBuf::from("../shared/lib.sh"))
        );
        assert_eq!(join_beside(Path::new("x"), "../y"), None, "inside");
    }
}

/// What the drivers' tests share: a config from text, a driver's plan over a project held in
/// memory, and a job shown as the command line it is.
#[cfg(test)]
pub mod testing {
    use crate::plan::{Context, Job, MemFs, ARG_BUDGET};
    use ralph_config::{self as config, Config, Gate};
    use std::path::{Path, PathBuf};

    pub type DriverPlan = fn(&Gate, &[PathBuf], &[PathBuf], &Context<'_>) -> Vec<Job>;

    pub fn config(text: &str) -> Config {
        let file = config::parse(Path::new("ralph.toml"), text.to_string()).unwrap();
        config::resolve(PathBuf::from("/p"), Some(file), &mut Vec::new).unwrap()
    }

    /// The jobs `plan` makes for the config's first gate, for edit feedback (build state
    /// reused); `selected: None` selects every file the gate matches.
    pub fn jobs(plan: DriverPlan, c: &Config, fs: &MemFs, selected: Option<&[&str]>) -> Vec<Job> {
        jobs_reusing(plan, c, fs, selected, true)
    }

    pub fn jobs_reusing(
        plan: DriverPlan,
        c: &Config,
        fs: &MemFs,
        selected: Option<&[&str]>,
        reuse_build_state: bool,
    ) -> Vec<Job> {
        let universe = fs.paths();
        let head = |p: &Path| crate::plan::ProjectFs::head(fs, p);
        let files: Vec<PathBuf> = match selected {
            Some(list) => list.iter().map(PathBuf::from).collect(),
            None => universe
                .iter()
                .filter(|f| c.gates[0].matches_file(f, &head))
                .cloned()
                .collect(),
        };
        plan(
            &c.gates[0],
            &files,
            &universe,
            &Context {
                fs,
                arg_budget: ARG_BUDGET,
                spread: 1,
                costs: None,
                reuse_build_state,
            },
        )
    }

    pub fn shown(j: &Job) -> String {
        j.argv
            .iter()
            .flatten()
            .chain(j.args.iter())
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}
