//! Runs a plan: every job on a bounded pool, each gate's result handed to the caller as soon
//! as all of its runs are done. The runner never prints; reporters consume its results.

mod aggregate;
mod bytecode;
pub mod capture;
mod job;
mod node_runners;
mod paths;
pub mod process;
mod pytest;
mod records;
pub mod testbin;

use crate::cache::context::ContextFiles;
use crate::cache::Cache;
use ralph_base::digest::Digests;
use ralph_base::env::Environment;
use ralph_config::Config;
use ralph_plan::files::Unopenable;
use ralph_plan::plan::Plan;
use ralph_plan::schedule::Cost;
use ralph_plan::tools::{Remembered, Toolbox};
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use crate::observe::OfTests;
pub use aggregate::names_its_commands;
pub use job::{tools_used, Invocation};

/// How much may run at once, and until when.
#[derive(Debug, Clone)]
pub struct Limits {
    pub jobs: usize,
    /// No run may go past this instant (a hook's budget); `None` = gate timeouts only.
    pub deadline: Option<Instant>,
    /// Cargo builds here instead of the project's `target/`: at a loop's stops, ralph-gate's
    /// own folder outside the project, so no test binary the agent overwrote is run; Python's
    /// bytecode goes beside it (`PYTHONPYCACHEPREFIX`), so no forged `.pyc` is either.
    pub cargo_target: Option<std::path::PathBuf>,
    /// Each run gets a temporary folder of its own, made just before it starts and removed
    /// after (`TMPDIR`, and Python's bytecode there): a tool's cache in the temporary folder
    /// (jest's transforms) or ralph-gate's own bytecode folder, which a run before could
    /// fill, feeds nothing to a verdict that decides a loop's end or `check --base`.
    pub private_tmp: bool,
    /// `check --staged`: the files git does not track (and does not ignore), relative to the
    /// root. The commit will not contain them, so a run seen to read one fails, saying so.
    pub untracked: Option<std::sync::Arc<std::collections::BTreeSet<std::path::PathBuf>>>,
    /// Observe the runs even where nothing is stored: what they read decides something
    /// (a loop's start tree, whose tests' reach its end is compared with).
    pub observe: bool,
    /// A run in a checkout standing for the work tree: the two trees' top folders (the work
    /// tree's, the checkout's). An editable install names the work tree's code wherever a
    /// run is; pytest's listener has such a run import the checkout's own file at the same
    /// place instead (see `ralph_gate_told.py`), so a tree's tests run on that tree's code.
    pub checkout_of: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    Pass,
    Fail,
    Timeout,
    /// A required tool is missing.
    Skipped,
    /// The gate matched no file, so there was nothing to run.
    #[default]
    NoFiles,
}

impl GateStatus {
    pub fn label(self) -> &'static str {
        match self {
            GateStatus::Pass => "pass",
            GateStatus::Fail => "fail",
            GateStatus::Timeout => "timeout",
            GateStatus::Skipped => "skipped",
            GateStatus::NoFiles => "no files",
        }
    }
}

/// A tool as reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolInfo {
    pub name: String,
    /// Where it was found (relative to the project root when inside it).
    pub path: String,
    /// What really runs, when that is another file (a symlink's target, what a version
    /// manager's shim runs).
    pub runs: Option<String>,
    pub version: Option<String>,
}

impl std::fmt::Display for ToolInfo {
    /// `tsc = node_modules/.bin/tsc -> /usr/lib/node_modules/typescript/bin/tsc (typescript 5.9.3)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}", self.name, self.path)?;
        if let Some(r) = &self.runs {
            write!(f, " -> {r}")?;
        }
        if let Some(v) = &self.version {
            write!(f, " ({v})")?;
        }
        Ok(())
    }
}

/// One run of a gate.
#[derive(Debug, Clone, Default)]
pub struct RunDetail {
    /// The folder it ran in, relative to the project root ("." for the root).
    pub dir: String,
    /// What the run covers, when the command does not say (a tsconfig, a workspace).
    pub label: Option<String>,
    pub command: String,
    pub status: GateStatus,
    pub exit_code: Option<i32>,
    pub duration: Duration,
    /// CPU time of the run's processes, when it ran and the kernel said.
    pub cpu: Option<Duration>,
    pub cached: bool,
    /// Why it did not run (a tool or the project's install is missing), when it did not.
    pub skipped: Option<String>,
    /// Why the run could not be cached, when it could not.
    pub not_cached: Option<String>,
    pub tools: Vec<ToolInfo>,
    /// The files outside the project it was seen to read, when it was observed (absolute).
    pub outside: Vec<std::path::PathBuf>,
    /// The files inside the project it was seen to open (relative to the root), when it
    /// was observed (or its stored result was); `None` otherwise. A loop's end compares the
    /// code its tests reached with what they reached at its start.
    pub read: Option<Vec<String>>,
    /// The files inside the project it gave another name (`link`; relative to the root),
    /// when it ran now observed: their change time moved by its own hand, their content
    /// as it was. A loop's end does not take that for the tree changing while judged.
    pub linked: Vec<String>,
    /// The files inside the project it wrote, created or renamed onto (relative to the
    /// root), when it ran now observed: what its tests read there afterwards is the run's
    /// own making, not something found.
    pub wrote: Vec<String>,
    /// The files its test runner ran as part of itself (pytest's plugins; absolute).
    pub loaded: Vec<std::path::PathBuf>,
    /// The files its test runner said are its tests' rather than the code's, by what it did
    /// (pytest's: the files it collected tests from, loaded as plugins, and those its
    /// tests read; absolute).
    pub of_tests: Vec<(std::path::PathBuf, OfTests)>,
    /// The tests its runners said they ran, passed or failed (pytest's node ids; go's and
    /// libtest's `<package folder>: [binary ]name`), when it ran now and they named them all;
    /// `None` when its result came from the cache, no test runner ran, or one ran tests it did
    /// not name. A loop's end compares them with those that ran at its start.
    pub tests: Option<Vec<String>>,
    /// Those of `tests` that failed, where every runner that named them said which did
    /// (pytest's, node's, jest's, vitest's); `None` when that is not known.
    pub failed_tests: Option<Vec<String>>,
    /// The Go subtests its test binaries said ran, passed or failed (`<package folder>:
    /// TestA/case`), when it ran now: not compared as tests, but what tells a test folded
    /// into another's table from one dropped.
    pub subtests: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct GateResult {
    /// Index into `Config::gates`.
    pub gate: usize,
    pub name: String,
    pub status: GateStatus,
    /// Wall time from the first run's start to the last run's end.
    pub duration: Duration,
    /// The runs' times added up.
    pub total: Duration,
    pub files: usize,
    pub runs: usize,
    /// The command as a person would type it (first failing run, else the first; file names
    /// quoted).
    pub command: String,
    /// Output of the runs that failed (all runs if none failed), whole, possibly coloured.
    pub output: String,
    pub exit_code: Option<i32>,
    /// Why the status is what it is, where the status alone does not say.
    pub reason: Option<String>,
    pub optional: bool,
    /// Every run's result came from the cache (or from an identical run in progress).
    pub cached: bool,
    /// The required tool that is not installed, for a skipped gate.
    pub missing: Option<String>,
    /// How to install it.
    pub install: Option<String>,
    /// Every run, in plan order.
    pub run_details: Vec<RunDetail>,
    /// The distinct tools its runs used.
    pub tools: Vec<ToolInfo>,
    /// Paths it may be meant for but no run of it checked: an unreadable `#!` line, or a
    /// path no checker can open (those also in `unopenable`, with why).
    pub unverified: Vec<String>,
    /// Of `unverified`, the paths no checker can open.
    pub unopenable: Vec<(String, Unopenable)>,
}

impl GateResult {
    pub fn failed(&self) -> bool {
        matches!(self.status, GateStatus::Fail | GateStatus::Timeout)
    }

    /// Whether this result stops "done": the one pass/fail rule of every report, stop and
    /// story. A skipped gate (missing tool) or one that left files unverified passes locally,
    /// visibly, but fails under CI (`ci`: also `--strict`) unless the gate is optional: CI
    /// must not go green on a tool it lacks.
    pub fn counts_as_failure(&self, ci: bool) -> bool {
        let unverified = self.status == GateStatus::Skipped || !self.unverified.is_empty();
        self.failed() || (unverified && ci && !self.optional)
    }

    /// The tests its runners said failed, when that is known: every run ran now (not from
    /// the cache) and its runners said which failed, or it passed (none).
    pub fn failed_tests_now(&self, ci: bool) -> Option<std::collections::BTreeSet<String>> {
        if self.cached || self.run_details.iter().any(|d| d.cached) {
            return None;
        }
        if !self.counts_as_failure(ci) {
            return Some(Default::default());
        }
        let said: Option<Vec<&Vec<String>>> = self
            .run_details
            .iter()
            .map(|d| d.failed_tests.as_ref())
            .collect();
        Some(said?.into_iter().flatten().cloned().collect())
    }
}

pub use crate::cache::Reuse;

/// The value a gate's run sees for `name`, before a listener adds to it: the gate's own
/// `env`, else the environment's.
fn given_var(
    gate_env: &std::collections::BTreeMap<String, String>,
    env: &Environment,
    name: &str,
) -> Option<std::ffi::OsString> {
    gate_env
        .get(name)
        .map(std::ffi::OsString::from)
        .or_else(|| env.gate_vars.get(std::ffi::OsStr::new(name)).cloned())
}

/// What every job of a run shares: where results are cached, file digests, tools.
pub struct RunContext<'a> {
    pub config: &'a Config,
    pub env: &'a Environment,
    pub cache: &'a Cache,
    pub digests: &'a Digests,
    /// Digests for what a finished run was seen to read, stored with its result: remembered
    /// stamps are used even when `digests` may not (a fresh run). No verdict rests on them:
    /// a fresh run's result is its own, and a digest a forged stamp gives is given alike to
    /// every later lookup, which then serves that same fresh result or misses.
    pub observed: &'a Digests,
    pub toolbox: &'a Toolbox<'a>,
    pub context: &'a ContextFiles,
}

/// Builds the shared run context for `config` (cache, digests, tools) and hands it to `f`;
/// what was learned about files and tools is saved afterwards.
pub fn with_context<T>(
    config: &Config,
    env: &Environment,
    reuse: Reuse,
    f: impl FnOnce(&RunContext<'_>) -> T,
) -> T {
    ralph_base::state::Layout::at(&config.root).ignore_self();
    let cache = Cache::for_run(config, env, reuse);
    let trusted = reuse == Reuse::Everything;
    // A run that stores nothing keys its runs (and their tools) only to remove what is stored
    // under those keys, the keys a later run looks up: from remembered stamps, as that run's
    // are, without reading every file and tool again. Its verdicts rest on no key.
    let stamps = trusted || !cache.store;
    // Wherever this project's stamps are trusted, so are those of files outside it that the
    // user's other projects remembered (an interpreter's library: a new clone reads none).
    let shared = || {
        env.user_cache_dir()
            .map(|d| d.join("ralph-gate").join("files.tsv"))
    };
    let digests = Digests::load(&config.root, stamps.then(|| cache.digest_index()))
        .sharing(stamps.then(shared).flatten());
    let remembered = (!stamps)
        .then(|| Digests::load(&config.root, Some(cache.digest_index())).sharing(shared()));
    // A run that trusts nothing remembered still starts its gates on the shim answers an
    // earlier run was given, while the managers are asked again (see `tools::guesses`).
    let toolbox = Toolbox::new(
        &digests,
        env.tool_vars.clone(),
        if trusted {
            Remembered::Trusted(cache.tool_store())
        } else {
            Remembered::Guesses(cache.tool_store())
        },
    );
    let context = ContextFiles::new(
        &config.root,
        ralph_plan::manifests::outside_configs(&config.root, env),
    );
    let out = f(&RunContext {
        config,
        env,
        cache: &cache,
        digests: &digests,
        observed: remembered.as_ref().unwrap_or(&digests),
        toolbox: &toolbox,
        context: &context,
    });
    digests.save();
    if let Some(r) = &remembered {
        r.save();
    }
    toolbox.save();
    cache.record_stats();
    out
}

/// What a run reports as it goes, from worker threads.
pub enum Event<'a> {
    /// The first run of the gate (index into `Config::gates`) started.
    Started(usize),
    /// Every run of the gate is done.
    Finished(&'a GateResult),
}

/// `plan`, with each batch the scheduler re-split kept in its previous split where every run
/// of that split would be served from the cache: costs learned from noisy runs may favour
/// another split, and the stored results of this one hold for the files they checked.
pub fn keeping_stored<'p>(
    cx: &RunContext<'_>,
    plan: &'p Plan,
    limits: &Limits,
) -> std::borrow::Cow<'p, Plan> {
    if !plan.has_previous_splits() {
        return std::borrow::Cow::Borrowed(plan);
    }
    std::borrow::Cow::Owned(plan.clone().keeping_stored(|previous| {
        let gate = &cx.config.gates[previous.gate];
        previous
            .jobs
            .iter()
            .all(|j| job::stored(cx, gate, j, limits))
    }))
}

/// Runs every job in `plan` with at most `jobs` at once. `on_event` hears each gate start
/// and finish (from worker threads, finishes in completion order); the returned results are
/// in plan order.
pub fn run(
    cx: &RunContext<'_>,
    plan: &Plan,
    limits: &Limits,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Vec<GateResult> {
    ralph_base::signals::install();
    let board = Board::new(cx.config, plan, on_event);
    for (pi, planned) in plan.gates.iter().enumerate() {
        if planned.jobs.is_empty() {
            board.finish_gate(pi);
        }
    }
    let slots = limits.jobs.max(1);
    let queue = Queue::new(cx.config, plan, slots);
    std::thread::scope(|scope| {
        for i in 0..slots.min(queue.order.len()) {
            let (queue, board) = (&queue, &board);
            std::thread::Builder::new()
                .name(format!("ralph-gate-worker-{i}"))
                .spawn_scoped(scope, move || {
                    while let Some(taken) = queue.next() {
                        let (pi, ji) = (taken.pi, taken.ji);
                        let planned = &plan.gates[pi];
                        let gate = &cx.config.gates[planned.gate];
                        board.job_started(pi);
                        board.job_done(pi, ji, job::run(cx, gate, &planned.jobs[ji], limits));
                    }
                })
                .expect("a worker thread can be started");
        }
    });
    board.results()
}

/// The jobs in the order they start ([`ralph_plan::schedule::order`]: whole-project runs first,
/// then longest expected first), handed to the workers while the cores they are counted at
/// are free ([`ralph_plan::schedule::may_start`]).
struct Queue {
    /// (planned gate, job, cores counted).
    order: Vec<(usize, usize, f64)>,
    slots: usize,
    /// (next in `order`, cores busy).
    state: Mutex<(usize, f64)>,
    freed: std::sync::Condvar,
}

impl Queue {
    fn new(config: &Config, plan: &Plan, slots: usize) -> Self {
        let mut jobs = Vec::new();
        let mut costs = Vec::new();
        for (pi, planned) in plan.gates.iter().enumerate() {
            let gate = &config.gates[planned.gate];
            for (ji, job) in planned.jobs.iter().enumerate() {
                jobs.push((pi, ji));
                costs.push(planned.costs.get(ji).copied().unwrap_or(Cost {
                    whole: ralph_plan::plan::whole(gate, job),
                    ..Cost::default()
                }));
            }
        }
        let order = ralph_plan::schedule::order(&costs)
            .into_iter()
            .map(|i| (jobs[i].0, jobs[i].1, costs[i].counted(slots)))
            .collect();
        Self {
            order,
            slots,
            state: Mutex::new((0, 0.0)),
            freed: std::sync::Condvar::new(),
        }
    }

    /// The next job to start, once the cores allow; `None` when every job has started. Its
    /// cores are given back when the returned claim is dropped, however the job ends (a
    /// panicking job must not leave the other workers waiting for ever).
    fn next(&self) -> Option<Taken<'_>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let (pi, ji, cores) = *self.order.get(st.0)?;
            if ralph_plan::schedule::may_start(st.1, self.slots) {
                st.0 += 1;
                st.1 += cores;
                return Some(Taken {
                    queue: self,
                    pi,
                    ji,
                    cores,
                });
            }
            st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A job taken from the [`Queue`], holding its cores until dropped.
struct Taken<'a> {
    queue: &'a Queue,
    pi: usize,
    ji: usize,
    cores: f64,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut st = self.queue.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 = (st.1 - self.cores).max(0.0);
        self.queue.freed.notify_all();
    }
}

/// Where a run stands, shared by the workers: each job's outcome, how many of each gate's
/// jobs are left, and each gate's result once its last job is done.
struct Board<'a> {
    config: &'a Config,
    plan: &'a Plan,
    on_event: &'a (dyn Fn(Event<'_>) + Sync),
    results: Vec<Mutex<Option<GateResult>>>,
    outcomes: Vec<Vec<Mutex<Option<job::Outcome>>>>,
    started: Vec<std::sync::atomic::AtomicBool>,
    remaining: Vec<AtomicUsize>,
}

impl<'a> Board<'a> {
    fn new(config: &'a Config, plan: &'a Plan, on_event: &'a (dyn Fn(Event<'_>) + Sync)) -> Self {
        Self {
            config,
            plan,
            on_event,
            results: plan.gates.iter().map(|_| Mutex::new(None)).collect(),
            outcomes: plan
                .gates
                .iter()
                .map(|g| g.jobs.iter().map(|_| Mutex::new(None)).collect())
                .collect(),
            started: plan
                .gates
                .iter()
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
            remaining: plan
                .gates
                .iter()
                .map(|g| AtomicUsize::new(g.jobs.len()))
                .collect(),
        }
    }

    /// The first job of a gate to start announces the gate.
    fn job_started(&self, pi: usize) {
        if !self.started[pi].swap(true, Ordering::AcqRel) {
            (self.on_event)(Event::Started(self.plan.gates[pi].gate));
        }
    }

    /// The last job of a gate to finish finishes the gate.
    fn job_done(&self, pi: usize, ji: usize, outcome: job::Outcome) {
        *self.outcomes[pi][ji]
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(outcome);
        if self.remaining[pi].fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finish_gate(pi);
        }
    }

    fn finish_gate(&self, pi: usize) {
        let planned = &self.plan.gates[pi];
        let gate = &self.config.gates[planned.gate];
        let done: Vec<job::Outcome> = self.outcomes[pi]
            .iter()
            .map(|m| {
                m.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .expect("every job reports")
            })
            .collect();
        let mut result = aggregate::gate_result(planned.gate, gate, planned.files.len(), done);
        let unverified = aggregate::unprocessed(&planned.unverified, &result, &self.config.root);
        aggregate::note_unverified(&mut result, &unverified);
        (self.on_event)(Event::Finished(&result));
        *self.results[pi].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    }

    fn results(self) -> Vec<GateResult> {
        self.results
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every gate finishes")
            })
            .collect()
    }
}
