//! Planning: which gates a set of files triggers, and the exact runs (jobs) each needs. No
//! process is started; the file system is seen only through [`ProjectFs`], so plans are cheap
//! to compute and easy to test on a project held in memory.

use crate::costs::Costs;
use crate::schedule::Cost;
use ralph_config::{Config, Driver, FileMatch, Gate, Phase, Scope};
pub mod drivers;

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes of file arguments per run. Linux allows about 2 MiB for argv and the environment
/// together; staying far below it leaves room for large environments and other systems.
pub const ARG_BUDGET: usize = 128 * 1024;

/// One process to start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Job {
    /// Working directory, relative to the project root (empty = the root itself).
    pub dir: PathBuf,
    /// A driver's program and options, run directly with `args` after them. `None`: the
    /// gate's `run` template through `/bin/sh`, with `args` as `"$@"`.
    pub argv: Option<Vec<OsString>>,
    /// File arguments, relative to `dir`.
    pub args: Vec<OsString>,
    /// The files whose content decides the run's result, relative to the project root: its
    /// own files, a project's files, declared inputs, what a driver found the run reads. A
    /// path that does not exist may be listed: its absence is part of the result too.
    pub inputs: Vec<PathBuf>,
    /// Where the search for the gate's tools starts (`path` entries are looked up here and in
    /// every folder above), relative to the project root.
    pub tools_from: PathBuf,
    /// What this run covers, when the command alone does not say (`packages/a/tsconfig.json`).
    pub label: Option<String>,
    /// Why no key can hold everything this run's result depends on: it is never cached.
    pub no_cache: Option<String>,
    /// Files a driver writes under `.ralph/` before the run (relative path, content).
    pub setup: Vec<(PathBuf, String)>,
    /// Files and folders removed before the run (build state it must not read: under
    /// `.ralph/`, or a `tsc -b` project's own build-info files), before `setup` is written.
    pub clear: Vec<PathBuf>,
    /// What to say when the program in `argv` is not there, instead of "not on PATH" (the
    /// project's own compiler, declared in package.json but not installed).
    pub missing_note: Option<String>,
    /// Runs with the same name never overlap (they share a build-info file).
    pub exclusive: Option<String>,
    /// A folder under `.ralph/` holding the run's build state and the configs written for
    /// it, when that state must not outlive the run (every run but edit feedback): each run
    /// gets its own copy of it, made afresh under a name nobody can know in advance and
    /// removed after, so nothing left running can plant a forged build-info file or config
    /// for it. Paths in `argv` and `setup` that start with it are moved into the copy.
    pub private: Option<PathBuf>,
}

impl Job {
    /// The KiB of files this job checks: its file arguments, by `size` (relative to the
    /// root), each as [`crate::costs::kib`] counts it.
    pub fn kib(&self, size: impl Fn(&Path) -> u64) -> f64 {
        self.args
            .iter()
            .map(|a| crate::costs::kib(size(&self.dir.join(a))))
            .sum()
    }
}

#[derive(Debug, Clone)]
pub struct PlannedGate {
    /// Index into `Config::gates`.
    pub gate: usize,
    /// Files the gate matched.
    pub files: Vec<PathBuf>,
    /// Empty when nothing matched: the gate has nothing to check.
    pub jobs: Vec<Job>,
    /// Selected paths the gate may be meant for but no run of it can check (an unreadable
    /// `#!` line, a link to nothing, a folder): reported as unverified, never silently left
    /// out.
    pub unverified: Vec<Unverified>,
    /// What each job is expected to cost, in `jobs`' order (empty when the plan was made
    /// without costs: the edit hook's one or two files need no schedule).
    pub costs: Vec<Cost>,
    /// The KiB of files each job checks (see [`crate::costs::kib`]), as `costs`.
    pub kib: Vec<f64>,
    /// Into how many runs the scheduler split the gate's files, for a batch it may split.
    pub split: Option<usize>,
    /// The same gate in the split chosen last time, where the scheduler now chose another:
    /// runs of that split may have stored results, and a new split is worth a process, never
    /// a stored verdict (see [`Plan::keeping_stored`]).
    pub previous: Option<Box<PlannedGate>>,
}

/// A path a gate may be meant for that no run of it checks, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    pub path: PathBuf,
    pub why: Unchecked,
}

/// Why a path a gate may be meant for is not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unchecked {
    /// Its `#!` line names no interpreter that can be told.
    Interpreter,
    /// No checker can open it: the bare tool given it fails.
    Unopenable(crate::files::Unopenable),
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub gates: Vec<PlannedGate>,
}

impl Plan {
    /// This plan with `other`'s gates in place of its own entries for them (a gate planned
    /// over the whole project beside the runs an edit asks for).
    #[must_use]
    pub fn with_gates_of(mut self, other: Plan) -> Plan {
        for planned in other.gates {
            match self.gates.iter_mut().find(|g| g.gate == planned.gate) {
                Some(mine) => *mine = planned,
                None => self.gates.push(planned),
            }
        }
        self
    }

    /// This plan with each batch the scheduler re-split back in its previous split where
    /// `stored` says every run of that split would be served from the cache. Either split
    /// checks the same files; this only chooses which runs the verdict comes from.
    #[must_use]
    pub fn keeping_stored(mut self, stored: impl Fn(&PlannedGate) -> bool) -> Plan {
        for planned in &mut self.gates {
            if let Some(previous) = planned.previous.take() {
                if stored(&previous) {
                    *planned = *previous;
                }
            }
        }
        self
    }

    /// A batch was re-split: [`Plan::keeping_stored`] has something to decide.
    pub fn has_previous_splits(&self) -> bool {
        self.gates.iter().any(|g| g.previous.is_some())
    }
}

/// What a plan is made for.
pub struct Request<'a> {
    /// The selected files (relative to the root).
    pub files: &'a [PathBuf],
    /// Every project file, or just `files` when only those matter: a project gate's result
    /// depends on all of its root's files, not only the selected ones.
    pub universe: &'a [PathBuf],
    pub phase: Phase,
    /// Run only these gates (by name); empty = all.
    pub only: &'a [String],
    /// Selected paths no checker can open ([`crate::files::Listing`]): a gate whose globs
    /// match one reports it unverified.
    pub unopenable: &'a [(PathBuf, crate::files::Unopenable)],
}

/// How the project is seen and how runs are sized.
pub struct Context<'a> {
    pub fs: &'a dyn ProjectFs,
    /// Bytes of file arguments per run.
    pub arg_budget: usize,
    /// A batch is spread over this many runs (the cores), unless the gate is `serial`.
    pub spread: usize,
    /// What runs cost, learned from past runs: with it, batches are split and every job's
    /// cost estimated for the scheduler; without it (edit feedback), batches are spread by
    /// file size alone.
    pub costs: Option<&'a Costs>,
    /// A tool may read the build state its earlier runs left under `.ralph/` (tsc's build
    /// info). Only for edit feedback: a verdict that can end a loop or pass a commit (stop,
    /// check) never rests on a file the agent could have written, so those runs start from
    /// nothing.
    pub reuse_build_state: bool,
}

/// The project's files as the planner and the drivers read them. Paths are relative to the
/// project root.
pub trait ProjectFs: Sync {
    fn is_file(&self, rel: &Path) -> bool;
    fn read(&self, rel: &Path) -> Option<Vec<u8>>;
    /// The size in bytes (0 when unknown).
    fn size(&self, rel: &Path) -> u64;
    /// Where a path really leads, symbolic links followed (`None` outside a work tree).
    fn real_path(&self, _rel: &Path) -> Option<PathBuf> {
        None
    }
    /// A folder is there (`node_modules`).
    fn is_dir(&self, rel: &Path) -> bool {
        self.real_path(rel).is_some_and(|p| p.is_dir())
    }
    /// The first bytes (a `#!` line).
    fn head(&self, rel: &Path) -> Option<Vec<u8>> {
        self.read(rel).map(|mut b| {
            b.truncate(256);
            b
        })
    }
}

/// The real project on disk; files read, and sizes asked, once per plan (a batch's sizes are
/// asked to split it, to spread it and to estimate each run).
pub struct DiskFs {
    root: PathBuf,
    read: Mutex<HashMap<PathBuf, Option<std::sync::Arc<Vec<u8>>>>>,
    sizes: Mutex<HashMap<PathBuf, u64>>,
}

impl DiskFs {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            read: Mutex::new(HashMap::new()),
            sizes: Mutex::new(HashMap::new()),
        }
    }
}

impl ProjectFs for DiskFs {
    fn is_file(&self, rel: &Path) -> bool {
        self.root.join(rel).is_file()
    }

    fn real_path(&self, rel: &Path) -> Option<PathBuf> {
        self.root.join(rel).canonicalize().ok()
    }

    fn read(&self, rel: &Path) -> Option<Vec<u8>> {
        if let Some(hit) = self.read.lock().unwrap_or_else(|e| e.into_inner()).get(rel) {
            return hit.as_ref().map(|b| b.to_vec());
        }
        let bytes = std::fs::read(self.root.join(rel))
            .ok()
            .map(std::sync::Arc::new);
        let out = bytes.as_ref().map(|b| b.to_vec());
        self.read
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(rel.to_path_buf(), bytes);
        out
    }

    fn head(&self, rel: &Path) -> Option<Vec<u8>> {
        crate::files::head(&self.root.join(rel))
    }

    fn size(&self, rel: &Path) -> u64 {
        let mut sizes = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
        *sizes
            .entry(rel.to_path_buf())
            .or_insert_with(|| std::fs::metadata(self.root.join(rel)).map_or(0, |m| m.len()))
    }
}

/// Every gate of `config` that runs in the request's phase, with the files it matches and
/// the jobs to run.
pub fn plan(config: &Config, req: &Request<'_>, cx: &Context<'_>) -> Plan {
    let mut gates: Vec<PlannedGate> = config
        .gates
        .iter()
        .enumerate()
        .filter(|(_, g)| g.runs_in(req.phase))
        .filter(|(_, g)| req.only.is_empty() || req.only.iter().any(|n| n == &g.name))
        .map(|(index, gate)| plan_gate(index, gate, req, cx))
        .collect();
    if let Some(costs) = cx.costs {
        split_batches(config, &mut gates, costs, cx);
    }
    for planned in &mut gates {
        let gate = &config.gates[planned.gate];
        if planned.jobs.is_empty() && splittable(gate) && !planned.files.is_empty() {
            let parts = planned.split.unwrap_or(cx.spread);
            planned.jobs = batch_jobs(&planned.files, parts, planned.split.is_some(), cx);
        }
        finish_jobs(gate, planned, req.universe);
        if let Some(costs) = cx.costs {
            estimate(gate, planned, costs, cx.fs);
            planned.previous = in_previous_split(gate, planned, costs, req, cx).map(Box::new);
        }
    }
    Plan { gates }
}

/// `planned`, a batch the scheduler split, in the split chosen for it last time, where that
/// differs from this time's.
fn in_previous_split(
    gate: &Gate,
    planned: &PlannedGate,
    costs: &Costs,
    req: &Request<'_>,
    cx: &Context<'_>,
) -> Option<PlannedGate> {
    let now = planned.split?;
    let before = costs
        .previous_split(&gate.name)
        .filter(|&p| p != now && p >= 1 && p <= planned.files.len())?;
    let mut previous = PlannedGate {
        gate: planned.gate,
        files: planned.files.clone(),
        jobs: batch_jobs(&planned.files, before, true, cx),
        unverified: planned.unverified.clone(),
        costs: Vec::new(),
        kib: Vec::new(),
        split: Some(before),
        previous: None,
    };
    finish_jobs(gate, &mut previous, req.universe);
    estimate(gate, &mut previous, costs, cx.fs);
    Some(previous)
}

/// A gate's matched files and, unless it is a batch the scheduler splits, its jobs.
fn plan_gate(index: usize, gate: &Gate, req: &Request<'_>, cx: &Context<'_>) -> PlannedGate {
    let head = |p: &Path| cx.fs.head(p);
    // One look at each file (a `#!` line is read once): checked, or one the gate may be
    // meant for but cannot tell how to check.
    let (mut matched, mut unverified) = (Vec::new(), Vec::new());
    let unchecked = |path: &PathBuf, why| Unverified {
        path: path.clone(),
        why,
    };
    for f in req.files {
        match gate.classify(f, &head) {
            FileMatch::Matched => matched.push(f.clone()),
            FileMatch::CannotTell => unverified.push(unchecked(f, Unchecked::Interpreter)),
            FileMatch::No => {}
        }
    }
    // What no checker can open has no `#!` line to read: it is the gate's when its globs
    // match.
    for (f, why) in req.unopenable {
        if gate.classify(f, &|_| None) != FileMatch::No {
            unverified.push(unchecked(f, Unchecked::Unopenable(*why)));
        }
    }
    let jobs = if matched.is_empty() || splittable(gate) {
        Vec::new()
    } else {
        match gate.driver {
            Some(Driver::Cargo) => drivers::cargo::plan(gate, &matched, req.universe, cx),
            Some(Driver::Typescript) => drivers::typescript::plan(gate, &matched, req.universe, cx),
            Some(Driver::Shellcheck) => drivers::shellcheck::plan(gate, &matched, req.universe, cx),
            None => jobs_for(gate, &matched, req.universe, cx),
        }
    };
    PlannedGate {
        gate: index,
        files: matched,
        jobs,
        unverified,
        costs: Vec::new(),
        kib: Vec::new(),
        split: None,
        previous: None,
    }
}

/// A batch whose files may be split into any number of runs.
fn splittable(gate: &Gate) -> bool {
    gate.driver.is_none() && gate.scope == Scope::Batch && !gate.serial
}

/// Declared inputs joined to every job, inputs sorted. A file beside the project
/// (`../shared/limits.cfg`, named whole: the config refuses a pattern there) is in no
/// listing of it, so it joins as named; its content, or its absence, is in the key.
fn finish_jobs(gate: &Gate, planned: &mut PlannedGate, universe: &[PathBuf]) {
    if !gate.inputs.is_empty() {
        let mut declared: Vec<PathBuf> = universe
            .iter()
            .filter(|f| gate.is_input(f))
            .cloned()
            .collect();
        declared.extend(
            gate.inputs
                .iter()
                .map(|w| w.trim())
                .filter(|w| w.starts_with("../"))
                .map(PathBuf::from),
        );
        for job in &mut planned.jobs {
            job.inputs.extend(declared.iter().cloned());
        }
    }
    for job in &mut planned.jobs {
        job.inputs.sort();
        job.inputs.dedup();
    }
}

/// Decides into how many runs each splittable batch goes, given every other job's cost.
fn split_batches(config: &Config, gates: &mut [PlannedGate], costs: &Costs, cx: &Context<'_>) {
    let mut fixed = Vec::new();
    for planned in gates.iter_mut() {
        let gate = &config.gates[planned.gate];
        if !splittable(gate) {
            estimate(gate, planned, costs, cx.fs);
            fixed.extend(planned.costs.iter().copied());
        }
    }
    let batches: Vec<(usize, crate::schedule::Batch)> = gates
        .iter()
        .enumerate()
        .filter(|(_, p)| splittable(&config.gates[p.gate]) && !p.files.is_empty())
        .map(|(i, p)| {
            let kib: f64 = p
                .files
                .iter()
                .map(|f| crate::costs::kib(cx.fs.size(f)))
                .sum();
            let name = &config.gates[p.gate].name;
            (i, costs.batch(name, kib, p.files.len(), cx.spread))
        })
        .collect();
    let only: Vec<crate::schedule::Batch> = batches.iter().map(|(_, b)| b.clone()).collect();
    let parts = crate::schedule::split(&fixed, &only, cx.spread);
    for ((i, _), n) in batches.iter().zip(parts) {
        gates[*i].split = Some(n);
    }
}

/// Every job's expected cost and size, for the scheduler and for learning afterwards.
fn estimate(gate: &Gate, planned: &mut PlannedGate, costs: &Costs, fs: &dyn ProjectFs) {
    if planned.costs.len() == planned.jobs.len() {
        return;
    }
    planned.kib.clear();
    planned.costs.clear();
    for job in &planned.jobs {
        let kib = job.kib(|p| fs.size(p));
        let cost = if whole(gate, job) {
            costs.whole_run(&crate::costs::whole_id(
                &gate.name,
                &job.dir,
                job.label.as_deref(),
            ))
        } else {
            costs.files_run(&gate.name, kib)
        };
        planned.kib.push(kib);
        planned.costs.push(cost);
    }
}

/// A run of a whole project (tsc, cargo, a project-scope gate) rather than of some files.
pub fn whole(gate: &Gate, job: &Job) -> bool {
    gate.scope == Scope::Project || job.args.is_empty()
}

/// A batch's runs: its files split into `parts` of about equal work (`exact`: that many, as
/// the scheduler chose; otherwise at most that many, fewer when the work is too small to be
/// worth another process), each cut to the argument budget.
fn batch_jobs(files: &[PathBuf], parts: usize, exact: bool, cx: &Context<'_>) -> Vec<Job> {
    let own = |f: &PathBuf| (as_argument(f), f.clone());
    let size = |f: &Path| cx.fs.size(f);
    let groups = if exact {
        spread_into(files, parts, &size)
    } else {
        spread(files, parts, &size)
    };
    groups
        .into_iter()
        .flat_map(|part| chunk(PathBuf::new(), part.iter().map(own), cx.arg_budget))
        .collect()
}

fn jobs_for(gate: &Gate, matched: &[PathBuf], universe: &[PathBuf], cx: &Context<'_>) -> Vec<Job> {
    let own = |f: &PathBuf| (as_argument(f), f.clone());
    match gate.scope {
        Scope::File => matched
            .iter()
            .map(|f| Job {
                args: vec![as_argument(f)],
                inputs: vec![f.clone()],
                label: Some(f.display().to_string()),
                ..Job::default()
            })
            .collect(),
        Scope::Batch if gate.serial => {
            chunk(PathBuf::new(), matched.iter().map(own), cx.arg_budget)
        }
        Scope::Batch => batch_jobs(matched, cx.spread, false, cx),
        Scope::Project => {
            let head = |p: &Path| cx.fs.head(p);
            let mut cache: BTreeMap<PathBuf, Option<PathBuf>> = BTreeMap::new();
            group_by_root(matched, |f| {
                project_root(f, &gate.root_markers, cx.fs, &mut cache)
                    .or_else(|| (!gate.roots_only).then(PathBuf::new))
            })
            .into_iter()
            .flat_map(|(root, args)| {
                let inputs: Vec<PathBuf> = universe
                    .iter()
                    .filter(|f| f.starts_with(&root) && gate.matches_file(f, &head))
                    .cloned()
                    .collect();
                chunk(root.clone(), args.into_iter(), cx.arg_budget)
                    .into_iter()
                    .map(move |job| Job {
                        inputs: inputs.clone(),
                        tools_from: root.clone(),
                        ..job
                    })
            })
            .collect()
        }
    }
}

/// Files grouped by the root `root_of` gives each (files without one are left out), each with
/// its argument relative to that root.
pub fn group_by_root(
    files: &[PathBuf],
    mut root_of: impl FnMut(&PathBuf) -> Option<PathBuf>,
) -> BTreeMap<PathBuf, Vec<(OsString, PathBuf)>> {
    let mut by_root: BTreeMap<PathBuf, Vec<(OsString, PathBuf)>> = BTreeMap::new();
    for f in files {
        if let Some(root) = root_of(f) {
            let inside = f.strip_prefix(&root).unwrap_or(f);
            by_root
                .entry(root)
                .or_default()
                .push((as_argument(inside), f.clone()));
        }
    }
    by_root
}

/// Work (bytes, rounded up to powers of two) below which a batch is not split further: an
/// interpreter's start-up costs about what reading this much does.
pub const SPREAD_MIN_WORK: u64 = 64 * 1024;

/// Splits files into at most `parts` runs of about equal work, a file's work being its size
/// rounded up to a power of two (a tool's time grows with what it reads): the heaviest file
/// goes to the lightest run, and so on (ties broken by a digest of the path). The groups
/// depend on the set of paths and on sizes only by their power of two, so most edits re-run
/// only the edited file's group (a file added or removed, or one that doubles in size, may
/// regroup the rest). Each group lists its files in path order.
pub fn spread(files: &[PathBuf], parts: usize, size: &dyn Fn(&Path) -> u64) -> Vec<Vec<PathBuf>> {
    let weights: u64 = files
        .iter()
        .map(|f| (size(f) + 512).next_power_of_two())
        .sum();
    // Another process only pays when the work it takes over outweighs its start-up.
    let worth = (weights / SPREAD_MIN_WORK).max(1) as usize;
    spread_into(files, parts.min(worth), size)
}

/// [`spread`] into exactly `parts` groups (at most one per file), however small the work.
pub fn spread_into(
    files: &[PathBuf],
    parts: usize,
    size: &dyn Fn(&Path) -> u64,
) -> Vec<Vec<PathBuf>> {
    let parts = parts.clamp(1, files.len().max(1));
    let mut ordered: Vec<(std::cmp::Reverse<u64>, [u8; 32], &PathBuf)> = files
        .iter()
        .map(|f| {
            let weight = (size(f) + 512).next_power_of_two();
            let digest = *blake3::hash(f.as_os_str().as_encoded_bytes()).as_bytes();
            (std::cmp::Reverse(weight), digest, f)
        })
        .collect();
    ordered.sort();
    let mut groups: Vec<(u64, Vec<PathBuf>)> = vec![(0, Vec::new()); parts];
    for (std::cmp::Reverse(weight), _, f) in ordered {
        let lightest = (0..parts)
            .min_by_key(|i| (groups[*i].0, *i))
            .expect("at least one group");
        groups[lightest].0 += weight;
        groups[lightest].1.push(f.clone());
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort();
            g
        })
        .filter(|g| !g.is_empty())
        .collect()
}

/// The nearest folder above `file` (up to the project root) that holds a marker; the project
/// root when none does.
fn project_root(
    file: &Path,
    markers: &[String],
    fs: &dyn ProjectFs,
    cache: &mut BTreeMap<PathBuf, Option<PathBuf>>,
) -> Option<PathBuf> {
    let start = file.parent().unwrap_or(Path::new("")).to_path_buf();
    if let Some(hit) = cache.get(&start) {
        return hit.clone();
    }
    let found = start
        .ancestors()
        .find(|dir| markers.iter().any(|m| fs.is_file(&dir.join(m))))
        .map(Path::to_path_buf);
    cache.insert(start, found.clone());
    found
}

/// A path as a command argument: `./` in front of a leading `-`, so no tool reads a file
/// called `-rf.py` as an option.
pub fn as_argument(path: &Path) -> OsString {
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.first() == Some(&b'-') {
        let mut v = b"./".to_vec();
        v.extend_from_slice(bytes);
        ralph_base::platform::os_string(v)
    } else {
        path.as_os_str().to_owned()
    }
}

/// Splits (argument, file) pairs into runs whose arguments stay under `budget` bytes.
pub fn chunk(
    dir: PathBuf,
    args: impl Iterator<Item = (OsString, PathBuf)>,
    budget: usize,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    let mut current = Job {
        dir: dir.clone(),
        ..Job::default()
    };
    let mut size = 0;
    for (arg, file) in args {
        let cost = arg.len() + 1 + std::mem::size_of::<usize>();
        if !current.args.is_empty() && size + cost > budget {
            let next = Job {
                dir: dir.clone(),
                ..Job::default()
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

/// A project held in memory, for tests of the planner, the drivers and the surface (the
/// `testing` feature).
#[cfg(any(test, feature = "testing"))]
pub struct MemFs(pub std::collections::BTreeMap<PathBuf, Vec<u8>>);

#[cfg(any(test, feature = "testing"))]
impl MemFs {
    pub fn new(files: &[(&str, &str)]) -> Self {
        Self(
            files
                .iter()
                .map(|(p, t)| (PathBuf::from(p), t.as_bytes().to_vec()))
                .collect(),
        )
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.0.keys().cloned().collect()
    }
}

#[cfg(any(test, feature = "testing"))]
impl ProjectFs for MemFs {
    fn is_file(&self, rel: &Path) -> bool {
        self.0.contains_key(rel)
    }

    fn read(&self, rel: &Path) -> Option<Vec<u8>> {
        self.0.get(rel).cloned()
    }

    fn size(&self, rel: &Path) -> u64 {
        self.0.get(rel).map_or(0, |b| b.len() as u64)
    }

    fn is_dir(&self, rel: &Path) -> bool {
        self.0.keys().any(|k| k != rel && k.starts_with(rel))
    }
}

#[cfg(test)]
mod tests;
