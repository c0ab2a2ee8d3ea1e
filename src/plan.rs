//! Pure planning: which gates a set of files triggers, and the exact runs (jobs) each needs.
//! No process is started and the file system is only consulted through `is_file`, so plans
//! are cheap to compute and easy to test.

use crate::config::{Config, Gate, Phase, Scope};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Bytes of file arguments per run. Linux allows about 2 MiB for argv and the environment
/// together; staying far below it leaves room for large environments and other systems.
pub const ARG_BUDGET: usize = 128 * 1024;

/// One process to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Working directory, relative to the project root (empty = the root itself).
    pub dir: PathBuf,
    /// Arguments handed to the command as `"$@"`, relative to `dir`.
    pub args: Vec<OsString>,
    /// The files whose content decides the run's result, relative to the project root: its
    /// own files, or for a project gate every project file it matches under `dir`.
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct PlannedGate {
    /// Index into `Config::gates`.
    pub gate: usize,
    /// Files the gate matched.
    pub files: Vec<PathBuf>,
    /// Empty when nothing matched: the gate has nothing to check.
    pub jobs: Vec<Job>,
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub gates: Vec<PlannedGate>,
}

pub struct Filter<'a> {
    pub phase: Phase,
    /// Run only these gates (by name); empty = all.
    pub only: &'a [String],
}

/// Every gate of `config` that runs in the filter's phase, with the files of `files` it
/// matches and the jobs to run. `is_file(root_relative)` answers root-marker lookups.
/// `universe` is every project file (or just `files` when only those matter): a project
/// gate's result depends on all of its root's files, not only the selected ones.
pub fn plan(
    config: &Config,
    files: &[PathBuf],
    universe: &[PathBuf],
    filter: &Filter<'_>,
    is_file: &dyn Fn(&Path) -> bool,
    arg_budget: usize,
) -> Plan {
    let gates = config
        .gates
        .iter()
        .enumerate()
        .filter(|(_, g)| g.runs_in(filter.phase))
        .filter(|(_, g)| filter.only.is_empty() || filter.only.iter().any(|n| n == &g.name))
        .map(|(index, gate)| {
            let matched: Vec<PathBuf> = files.iter().filter(|f| gate.matches(f)).cloned().collect();
            let jobs = jobs_for(gate, &matched, universe, is_file, arg_budget);
            PlannedGate {
                gate: index,
                files: matched,
                jobs,
            }
        })
        .collect();
    Plan { gates }
}

fn jobs_for(
    gate: &Gate,
    matched: &[PathBuf],
    universe: &[PathBuf],
    is_file: &dyn Fn(&Path) -> bool,
    budget: usize,
) -> Vec<Job> {
    if matched.is_empty() {
        return Vec::new();
    }
    let own = |f: &PathBuf| (as_argument(f), f.clone());
    match gate.scope {
        Scope::File => matched
            .iter()
            .map(|f| Job {
                dir: PathBuf::new(),
                args: vec![as_argument(f)],
                inputs: vec![f.clone()],
            })
            .collect(),
        Scope::Batch => chunk(PathBuf::new(), matched.iter().map(own), budget),
        Scope::Project => {
            let mut by_root: BTreeMap<PathBuf, Vec<(OsString, PathBuf)>> = BTreeMap::new();
            let mut cache: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
            for f in matched {
                let root = project_root(f, &gate.root_markers, is_file, &mut cache);
                let inside = f.strip_prefix(&root).unwrap_or(f);
                by_root
                    .entry(root)
                    .or_default()
                    .push((as_argument(inside), f.clone()));
            }
            by_root
                .into_iter()
                .flat_map(|(root, args)| {
                    let inputs: Vec<PathBuf> = universe
                        .iter()
                        .filter(|f| f.starts_with(&root) && gate.matches(f))
                        .cloned()
                        .collect();
                    chunk(root, args.into_iter(), budget)
                        .into_iter()
                        .map(move |job| Job {
                            inputs: inputs.clone(),
                            ..job
                        })
                })
                .collect()
        }
    }
}

/// The nearest folder above `file` (up to the project root) that holds a marker; the project
/// root when none does.
fn project_root(
    file: &Path,
    markers: &[String],
    is_file: &dyn Fn(&Path) -> bool,
    cache: &mut BTreeMap<PathBuf, PathBuf>,
) -> PathBuf {
    let start = file.parent().unwrap_or(Path::new("")).to_path_buf();
    if let Some(hit) = cache.get(&start) {
        return hit.clone();
    }
    let found = start
        .ancestors()
        .find(|dir| markers.iter().any(|m| is_file(&dir.join(m))))
        .map_or_else(PathBuf::new, Path::to_path_buf);
    cache.insert(start, found.clone());
    found
}

/// A path as a command argument: `./` in front of a leading `-`, so no tool reads a file
/// called `-rf.py` as an option.
fn as_argument(path: &Path) -> OsString {
    let bytes = path.as_os_str().as_bytes();
    if bytes.first() == Some(&b'-') {
        let mut v = b"./".to_vec();
        v.extend_from_slice(bytes);
        OsString::from_vec(v)
    } else {
        path.as_os_str().to_owned()
    }
}

/// Splits (argument, file) pairs into runs whose arguments stay under `budget` bytes.
fn chunk(dir: PathBuf, args: impl Iterator<Item = (OsString, PathBuf)>, budget: usize) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut current = Job {
        dir: dir.clone(),
        args: Vec::new(),
        inputs: Vec::new(),
    };
    let mut size = 0;
    for (arg, file) in args {
        let cost = arg.len() + 1 + std::mem::size_of::<usize>();
        if !current.args.is_empty() && size + cost > budget {
            let next = Job {
                dir: dir.clone(),
                args: Vec::new(),
                inputs: Vec::new(),
            };
            jobs.push(std::mem::replace(&mut current, next));
            size = 0;
        }
        size += cost;
        current.args.push(arg);
        current.inputs.push(file);
    }
    if !current.args.is_empty() {
        jobs.push(current);
    }
    jobs
}

/// For messages: a path's text, lossily.
pub fn shown(p: &OsStr) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests;
