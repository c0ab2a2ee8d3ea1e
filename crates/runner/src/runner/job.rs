//! One job: resolve its tools, make its cache key, reuse a stored result or run it in a
//! process group of its own, and store what it found.

use super::process::{self, Exit, SpawnError, Spec, Step};
use super::{
    bytecode, node_runners, paths, pytest, testbin, GateStatus, Limits, RunContext, ToolInfo,
};
use crate::cache::{self, key};
use crate::observe;
use ralph_base::atomic;
use ralph_config::{template, Gate};
use ralph_plan::plan::Job;
use ralph_plan::tools::{self, Tool};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The script that runs a driver's argv as it is.
const EXEC: &str = "exec \"$@\"";

/// What a job does, known before it runs (also what `gates --explain` shows).
pub struct Invocation {
    pub cwd: PathBuf,
    /// The PATH the gate runs with: the folders its tools were searched in, with the folders
    /// of what script shims run placed before PATH's own (see [`ralph_plan::tools::Tool::bypass`]).
    pub process_path: Vec<PathBuf>,
    /// The tools it uses, resolved: its `requires`, a driver's program, and the programs its
    /// command names.
    pub tools: Vec<Arc<Tool>>,
    /// The tools reports name (required ones and a driver's program), with versions.
    pub shown_tools: Vec<ToolInfo>,
    /// Shown tools whose version is being asked while the job runs: (index, tool).
    versions: Vec<(usize, Arc<Tool>)>,
    /// The first required tool that is not there.
    pub missing: Option<String>,
    /// Why, when it is the interpreter a found tool's `#!` line names.
    missing_because: Option<String>,
    script: String,
    args: Vec<OsString>,
    /// The command as a person would type it.
    pub display: String,
    /// The cache key, or why the run cannot be cached.
    pub key: Result<String, key::NoKey>,
}

/// The tools a job uses, as found.
struct Found {
    tools: Vec<Arc<Tool>>,
    shown: Vec<ToolInfo>,
    versions: Vec<(usize, Arc<Tool>)>,
    missing: Option<String>,
    missing_because: Option<String>,
}

impl Invocation {
    pub fn new(cx: &RunContext<'_>, gate: &Gate, job: &Job) -> Self {
        let root = &cx.config.root;
        let cwd = root.join(&job.dir);
        let search = tools::search_path(root, &job.tools_from, &gate.path, cx.env.path.as_deref());
        let required = required(gate, job);
        // PATH's own folders. Only a tool the user installed (found in one) is asked its
        // version: one from a folder the config names is the project's, and is not run to
        // ask. Shims' targets go in front of them on the gate's PATH.
        let user_dirs: Vec<PathBuf> = cx
            .env
            .path
            .as_deref()
            .map(|p| std::env::split_paths(p).collect())
            .unwrap_or_default();
        let mut found = find_tools(cx, &required, &search, &cwd, &user_dirs);
        found
            .tools
            .extend(run_tools(cx.toolbox, gate, &required, &search, &cwd));
        let (script, args, display) = command(cx, gate, job);
        let display = if job.dir.as_os_str().is_empty() {
            display
        } else {
            format!(
                "cd {} && {display}",
                template::shell_quote(&job.dir.to_string_lossy())
            )
        };
        let key = if found.missing.is_some() {
            Err(key::NoKey::ToolMissing)
        } else {
            key::compose(
                &key::Parts {
                    config_digest: &cx.config.digest,
                    gate,
                    job,
                    tools: &found.tools,
                    vars: &cx.env.gate_vars,
                },
                cx.digests,
                cx.context,
            )
        };
        Self {
            cwd,
            process_path: process_path(search, &user_dirs, &found.tools),
            tools: found.tools,
            shown_tools: found.shown,
            versions: found.versions,
            missing: found.missing,
            missing_because: found.missing_because,
            script,
            args,
            display,
            key,
        }
    }
}

/// Resolves the `required` tools; a tool from PATH's own folders (`user_dirs`) is asked its
/// version.
fn find_tools(
    cx: &RunContext<'_>,
    required: &[String],
    search: &[PathBuf],
    cwd: &Path,
    user_dirs: &[PathBuf],
) -> Found {
    let root = &cx.config.root;
    let mut found = Found {
        tools: Vec::new(),
        shown: Vec::new(),
        versions: Vec::new(),
        missing: None,
        missing_because: None,
    };
    for name in required {
        let Some(t) = cx.toolbox.resolve(name, search, cwd) else {
            found.missing.get_or_insert_with(|| name.clone());
            continue;
        };
        if let (Some(needs), None) = (&t.needs, &found.missing) {
            found.missing = Some(needs.clone());
            found.missing_because = Some(format!(
                "`{name}` runs `{needs}` (its #! line), which is not on PATH"
            ));
        }
        let found_real = t.found.canonicalize().unwrap_or_else(|_| t.found.clone());
        let from_user = t
            .found
            .parent()
            .is_some_and(|d| user_dirs.iter().any(|u| u == d));
        found.shown.push(ToolInfo {
            // A driver's program named by its path (`node_modules/typescript/bin/tsc`) is
            // shown by its name; the path follows.
            name: Path::new(&t.name)
                .file_name()
                .map_or_else(|| t.name.clone(), |n| n.to_string_lossy().into_owned()),
            path: shown_path(root, &t.found),
            runs: (t.real != t.found && t.real != found_real).then(|| shown_path(root, &t.real)),
            version: t.package.clone(),
        });
        if from_user {
            // Asked while the job runs; filled in when it is done (see `run`).
            cx.toolbox.ask_version(&t);
            found.versions.push((found.shown.len() - 1, Arc::clone(&t)));
        }
        found.tools.push(t);
    }
    found
}

/// The tools a job runs, resolved as its run resolves them (see [`Invocation::new`]), for
/// a caller that runs nothing: the verification surface.
pub fn tools_used(
    toolbox: &tools::Toolbox<'_>,
    path: Option<&std::ffi::OsStr>,
    root: &Path,
    gate: &Gate,
    job: &Job,
) -> Vec<Arc<Tool>> {
    let cwd = root.join(&job.dir);
    let search = tools::search_path(root, &job.tools_from, &gate.path, path);
    let required = required(gate, job);
    let mut out: Vec<Arc<Tool>> = required
        .iter()
        .filter_map(|name| toolbox.resolve(name, &search, &cwd))
        .collect();
    out.extend(run_tools(toolbox, gate, &required, &search, &cwd));
    out
}

/// The tools a job must have: its `requires` and a driver's program.
fn required(gate: &Gate, job: &Job) -> Vec<String> {
    let mut required: Vec<String> = gate.requires.clone();
    if let Some(program) = job.argv.as_ref().and_then(|a| a.first()) {
        let program = program.to_string_lossy().into_owned();
        if !required.contains(&program) {
            required.insert(0, program);
        }
    }
    required
}

/// The programs a `run` command names besides the required ones: they decide the verdict
/// as much as the required ones.
fn run_tools(
    toolbox: &tools::Toolbox<'_>,
    gate: &Gate,
    required: &[String],
    search: &[PathBuf],
    cwd: &Path,
) -> Vec<Arc<Tool>> {
    let Some(run) = &gate.run else {
        return Vec::new();
    };
    tools::command_words(&run.shell_script())
        .into_iter()
        .filter(|word| !required.contains(word))
        .filter_map(|word| toolbox.resolve(&word, search, cwd))
        .collect()
}

/// The script, its arguments and the command as a person would type it.
fn command(cx: &RunContext<'_>, gate: &Gate, job: &Job) -> (String, Vec<OsString>, String) {
    let cwd = cx.config.root.join(&job.dir);
    match (&job.argv, &gate.run) {
        (Some(argv), _) => {
            let mut all = argv.clone();
            all.extend(job.args.iter().cloned());
            let shown: Vec<String> = all
                .iter()
                .map(|a| template::shell_quote(&a.to_string_lossy()))
                .collect();
            (EXEC.to_string(), all, shown.join(" "))
        }
        (None, Some(run)) => {
            let shown_args: Vec<String> = job
                .args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            (
                run.shell_script(),
                job.args.clone(),
                run.display_with(&shown_args, &cwd.to_string_lossy()),
            )
        }
        (None, None) => (String::from("exit 0"), Vec::new(), String::new()),
    }
}

/// The gate's PATH: the search path, with the folders of what script shims run placed
/// before PATH's own folders.
fn process_path(search: Vec<PathBuf>, user_dirs: &[PathBuf], tools: &[Arc<Tool>]) -> Vec<PathBuf> {
    let mut path = search;
    let at = path.len().saturating_sub(user_dirs.len());
    for dir in tools.iter().filter_map(|t| t.bypass.clone()).rev() {
        if !path[..at].contains(&dir) {
            path.insert(at, dir);
        }
    }
    path
}

fn shown_path(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
}

pub struct Outcome {
    pub started: Instant,
    pub cached: bool,
    /// The run's time limit was the caller's deadline, not the gate's own timeout.
    pub cut_by_budget: bool,
    pub exit: Option<Exit>,
    pub duration: Duration,
    /// CPU time of the process and what it waited for, when it ran and the kernel said.
    pub cpu: Option<Duration>,
    pub output: String,
    pub command: String,
    pub dir: PathBuf,
    pub label: Option<String>,
    pub skipped_because: Option<String>,
    /// The required tool that is not there.
    pub missing: Option<String>,
    /// `skipped_because` already says how to install it (a driver's note: "run the package
    /// manager's install in examples/app"): no other hint beside it.
    pub install_said: bool,
    pub not_cached: Option<String>,
    pub tools: Vec<ToolInfo>,
    /// The files outside the project the run was seen to read (absolute).
    pub outside: Vec<PathBuf>,
    /// The files inside the project the run was seen to read (see [`RunDetail::read`]).
    pub read: Option<Vec<String>>,
    /// The files inside the project the run gave another name (see [`RunDetail::linked`]).
    pub linked: Vec<String>,
    /// The files inside the project the run wrote (see [`RunDetail::wrote`]).
    pub wrote: Vec<String>,
    /// The files its runner ran as part of itself (pytest's plugins; absolute).
    pub loaded: Vec<PathBuf>,
    /// The files its runner said are its tests' (see [`crate::observe::OfTests`]; absolute).
    pub of_tests: Vec<(PathBuf, crate::observe::OfTests)>,
    /// The tests its runners said they ran (see [`RunDetail::tests`]); `None` when it did not
    /// run now.
    pub tests: Option<Vec<String>>,
    /// Those of them that failed, when known (see [`RunDetail::failed_tests`]).
    pub failed_tests: Option<Vec<String>>,
    /// The Go subtests it ran (see [`RunDetail::subtests`]).
    pub subtests: Vec<String>,
}

impl Outcome {
    pub fn status(&self) -> GateStatus {
        match &self.exit {
            None => GateStatus::Skipped,
            Some(Exit::Code(0)) => GateStatus::Pass,
            Some(Exit::TimedOut) => GateStatus::Timeout,
            Some(_) => GateStatus::Fail,
        }
    }
}

/// The outcomes a job can have, shaped alike.
struct Shape<'a> {
    started: Instant,
    inv: &'a Invocation,
    job: &'a Job,
}

impl Shape<'_> {
    /// The job cannot start: `tool` is not there.
    fn missing(&self, tool: &str) -> Outcome {
        let (inv, job) = (self.inv, self.job);
        Outcome {
            skipped_because: Some(
                inv.missing_because
                    .clone()
                    .or_else(|| job.missing_note.clone())
                    .unwrap_or_else(|| format!("requires `{tool}`, which is not on PATH")),
            ),
            missing: Some(tool.to_string()),
            // A driver's note says how to install what it found missing, and where.
            install_said: inv.missing_because.is_none() && job.missing_note.is_some(),
            not_cached: None,
            ..self.outcome(None, String::new())
        }
    }

    fn outcome(&self, exit: Option<Exit>, output: String) -> Outcome {
        Outcome {
            started: self.started,
            cached: false,
            cut_by_budget: false,
            exit,
            duration: self.started.elapsed(),
            cpu: None,
            output,
            command: self.inv.display.clone(),
            dir: self.job.dir.clone(),
            label: self.job.label.clone(),
            skipped_because: None,
            missing: None,
            install_said: false,
            not_cached: self.inv.key.as_ref().err().map(ToString::to_string),
            tools: self.inv.shown_tools.clone(),
            outside: Vec::new(),
            read: None,
            linked: Vec::new(),
            wrote: Vec::new(),
            loaded: Vec::new(),
            of_tests: Vec::new(),
            tests: None,
            failed_tests: None,
            subtests: Vec::new(),
        }
    }

    fn cached(&self, entry: cache::Entry, (places, root): (&observe::Places, &Path)) -> Outcome {
        let exit = if entry.timed_out {
            Exit::TimedOut
        } else {
            Exit::Code(entry.exit_code)
        };
        let outside = entry
            .observed
            .as_deref()
            .map(|i| observe::outside(i, places))
            .unwrap_or_default();
        Outcome {
            cached: true,
            outside,
            // What the run that made it read: the same inputs, so what this one would.
            read: entry.observed.as_deref().map(observe::inside),
            of_tests: entry
                .of_tests
                .iter()
                .map(|(rel, part)| (root.join(rel), *part))
                .collect(),
            ..self.outcome(Some(exit), entry.output)
        }
    }

    /// The caller's deadline came before the run could (finish or start).
    fn stopped_by_budget(&self) -> Outcome {
        Outcome {
            cut_by_budget: true,
            ..self.outcome(Some(Exit::TimedOut), String::new())
        }
    }
}

pub fn run(cx: &RunContext<'_>, gate: &Gate, job: &Job, limits: &Limits) -> Outcome {
    let (outcome, confirmed) = run_once(cx, gate, job, limits);
    if confirmed {
        return outcome;
    }
    // The run started on a remembered shim answer its version manager did not give: its
    // outcome does not count. Every answer is known now, so this run guesses nothing.
    run_once(cx, gate, job, limits).0
}

/// One run of the job with its tools as resolved now, and whether every guess they rest on
/// was confirmed (see [`ralph_plan::tools::Toolbox::confirm`]).
fn run_once(cx: &RunContext<'_>, gate: &Gate, job: &Job, limits: &Limits) -> (Outcome, bool) {
    let mut inv = Invocation::new(cx, gate, job);
    let tools = inv.tools.clone();
    let versions = std::mem::take(&mut inv.versions);
    let mut outcome = attempt(cx, gate, job, limits, inv);
    let confirmed = cx.toolbox.confirm(&tools);
    for (i, tool) in versions {
        if let Some(shown) = outcome.tools.get_mut(i) {
            shown.version = cx.toolbox.version(&tool);
        }
    }
    (outcome, confirmed)
}

fn attempt(
    cx: &RunContext<'_>,
    gate: &Gate,
    job: &Job,
    limits: &Limits,
    mut inv: Invocation,
) -> Outcome {
    let started = Instant::now();
    // The key is the planned job's; the run itself uses its own private folder.
    let moved = job.private.as_ref().map(|p| {
        let to = unguessable(p);
        inv.args = inv.args.iter().map(|a| move_path(a, p, &to)).collect();
        privately(job, p, &to)
    });
    let job = moved.as_ref().unwrap_or(job);
    let shape = Shape {
        started,
        inv: &inv,
        job,
    };
    if let Some(tool) = &inv.missing {
        return shape.missing(tool);
    }
    let key = inv.key.as_ref().ok();
    let cache = cx.cache;
    let places = places(cx, job, limits);
    let stored = |k: &str| fresh_hit(cx, &places, k);
    let served = |hit: cache::Entry| {
        // A hit from another checkout (the remote cache) tells this one what the run reads.
        if let Some(inputs) = &hit.observed {
            remember_readers(cx, gate, job, inputs);
        }
        let read = untracked_read(&cx.config.root, hit.observed.as_deref(), limits);
        outside_commit(shape.cached(hit, (&places, &cx.config.root)), read)
    };
    let _claim = match key {
        Some(k) if cache.read => {
            if let Some(hit) = stored(k) {
                return served(hit);
            }
            // While an identical run is under way (another hook, another session), wait for
            // its result instead of starting a second tsc or cargo.
            let Some(lock) = cache.claim(k, limits.deadline) else {
                return shape.stopped_by_budget();
            };
            if let Some(hit) = stored(k) {
                return served(hit);
            }
            Some(lock)
        }
        _ => None,
    };
    // Runs that share a build-info file take turns.
    let _exclusive = match &job.exclusive {
        Some(name) => match wait_lock(&cx.config.root, name, limits.deadline) {
            Some(lock) => Some(lock),
            None => return shape.stopped_by_budget(),
        },
        None => None,
    };
    if let Err(why) = prepare(&cx.config.root, job) {
        return shape.outcome(Some(Exit::SpawnFailed(why)), String::new());
    }
    bytecode::drop_stale(&cx.config.root, &job.inputs);
    let outcome = execute(cx, gate, &shape, limits, key.map(|k| (k.as_str(), &places)));
    if let Some(p) = &job.private {
        let _ = std::fs::remove_dir_all(cx.config.root.join(p));
    }
    outcome
}

/// Whether a run of `job` now would be served from the cache: a result is stored under its
/// key and every input that run was seen to read is as it was. It decides only which of two
/// splits of the same files runs ([`ralph_plan::plan::Plan::keeping_stored`]); the run itself
/// looks again, and confirms its tools, as any run does.
pub fn stored(cx: &RunContext<'_>, gate: &Gate, job: &Job, limits: &Limits) -> bool {
    if !cx.cache.read || job.private.is_some() {
        return false;
    }
    let inv = Invocation::new(cx, gate, job);
    match (&inv.missing, &inv.key) {
        (None, Ok(k)) => fresh_hit(cx, &places(cx, job, limits), k).is_some(),
        _ => false,
    }
}

/// The stored result under `k`, if every input its run was seen to read is as it was.
fn fresh_hit(cx: &RunContext<'_>, places: &observe::Places, k: &str) -> Option<cache::Entry> {
    let entry = cx.cache.get(k)?;
    match &entry.observed {
        Some(inputs) if observe::changed(inputs, places, cx.digests).is_some() => None,
        _ => Some(entry),
    }
}

/// Where a run's observed paths are judged from: what is never an input of it.
fn places(cx: &RunContext<'_>, job: &Job, limits: &Limits) -> observe::Places {
    let root = &cx.config.root;
    let mut skip = vec![ralph_base::state::Layout::at(root).dir()];
    skip.extend(job.private.as_ref().map(|p| root.join(p)));
    skip.extend(limits.cargo_target.clone());
    observe::Places::new(root.clone(), cx.env.home.clone(), skip)
}

/// `dir` with a suffix nobody can know in advance (the standard library's hasher keys are
/// drawn from the operating system's randomness).
pub(super) fn unguessable(dir: &Path) -> PathBuf {
    use std::hash::BuildHasher;
    let n = std::collections::hash_map::RandomState::new().hash_one((
        std::process::id(),
        Instant::now(),
        dir,
    ));
    let mut name = dir.as_os_str().to_owned();
    name.push(format!("-{n:016x}"));
    PathBuf::from(name)
}

/// `arg` with a leading `from` replaced by `to`.
fn move_path(arg: &OsString, from: &Path, to: &Path) -> OsString {
    match Path::new(arg).strip_prefix(from) {
        Ok(rest) if rest.as_os_str().is_empty() => to.as_os_str().to_owned(),
        Ok(rest) => to.join(rest).into_os_string(),
        Err(_) => arg.clone(),
    }
}

/// The job as it runs in its private folder `to` instead of `from`.
fn privately(job: &Job, from: &Path, to: &Path) -> Job {
    let moved = |p: &Path| PathBuf::from(move_path(&p.as_os_str().to_owned(), from, to));
    Job {
        argv: job
            .argv
            .as_ref()
            .map(|a| a.iter().map(|x| move_path(x, from, to)).collect()),
        setup: job
            .setup
            .iter()
            .map(|(p, text)| (moved(p), text.clone()))
            .collect(),
        private: Some(to.to_path_buf()),
        ..job.clone()
    }
}

/// Runs the job's process within the gate's timeout and the caller's deadline, and stores
/// what it found under `key`.
fn execute(
    cx: &RunContext<'_>,
    gate: &Gate,
    shape: &Shape<'_>,
    limits: &Limits,
    key: Option<(&str, &observe::Places)>,
) -> Outcome {
    let (inv, job) = (shape.inv, shape.job);
    let Some((timeout, cut_by_budget)) = budget(gate, limits) else {
        return shape.stopped_by_budget();
    };
    let started = observe::coarse_now();
    // Lives until the run has ended: its folder goes with it.
    let private = limits.private_tmp.then(private_tmp).flatten();
    let spec = spec(
        cx,
        (gate, inv),
        (limits, private.as_ref().map(tempfile::TempDir::path)),
        timeout,
        key.is_some(),
    );
    let Heard {
        finished,
        told,
        loaded,
        of_tests,
        tests,
        failed_tests,
        subtests,
        built,
    } = heard_untraced_if_it_traces(spec, (gate, private.is_some()), cx);
    told_if_nothing_to_learn(cx, gate, key.is_some(), &finished);
    let output = paths::relative_to_root(&finished.output.text(), &cx.config.root, &job.dir);
    let output = paths::private_tmp_named(output, private.as_ref().map(tempfile::TempDir::path));
    let output = match told {
        Some(why) => format!("{output}\nralph-gate: {why}\n"),
        None => output,
    };
    let heard = (&finished, output.as_str(), &of_tests[..]);
    let (not_stored, seen) = match key {
        Some(key) => observed_and_stored(
            cx,
            (gate, job, limits),
            key,
            heard,
            (started, cut_by_budget),
        ),
        None => (None, Seen::default()),
    };
    let outcome = Outcome {
        cut_by_budget,
        duration: finished.duration,
        cpu: finished.cpu,
        not_cached: not_stored.or_else(|| inv.key.as_ref().err().map(ToString::to_string)),
        outside: seen.outside,
        read: opened(&finished, &cx.config.root, built),
        linked: linked(&finished, &cx.config.root),
        wrote: wrote(&finished, &cx.config.root),
        loaded,
        of_tests,
        tests,
        failed_tests,
        subtests,
        ..shape.outcome(Some(finished.exit), output)
    };
    outside_commit(outcome, seen.untracked)
}

/// What a finished run read, learned and stored with its result under `key`; why it was not
/// stored, when it was not.
fn observed_and_stored(
    cx: &RunContext<'_>,
    (gate, job, limits): (&Gate, &Job, &Limits),
    (k, places): (&str, &observe::Places),
    (finished, output, of_tests): (&process::Finished, &str, &[(PathBuf, observe::OfTests)]),
    (started, cut_by_budget): (i128, bool),
) -> (Option<String>, Seen) {
    let mut seen = Seen::default();
    if let Some(why) = exec_failed(&finished.exit) {
        return (Some(why.to_string()), seen);
    }
    let observed = match &finished.observed {
        Some(Ok(record)) => {
            if let Some(why) = observe::foreign_server(&record.sockets, started) {
                return (Some(why.to_string()), seen);
            }
            let paths = observe::without_own_state(record, &cx.config.root);
            match observe::inputs(&paths, places, cx.observed, started) {
                Ok(inputs) => {
                    seen = Seen::of(cx, limits, (&inputs, places));
                    // What it read, told in part, would key the result by part of its
                    // inputs: a change to the rest would be served this result.
                    if let Some(why) = &record.incomplete {
                        return (Some(format!("what the run read was not seen whole ({why}), so its result is not stored")), seen);
                    }
                    remember_readers(cx, gate, job, &inputs);
                    Some(inputs)
                }
                Err(why) => return (Some(why.to_string()), seen),
            }
        }
        Some(Err(why)) if why.nowhere_here() => {
            return (Some(format!(
                "runs cannot be observed here ({why}): a result keyed by the drivers' model alone could serve a stale pass when a file no model names changes, so it is not stored ([cache] observe = false stores it so)"
            )), seen)
        }
        // Not observed (observation off, the run made again untraced): the key alone,
        // as the model makes it.
        _ => None,
    };
    let said = observe::said_inside(of_tests, &cx.config.root);
    store(
        cx.cache,
        k,
        (finished, output, cut_by_budget),
        observed,
        said,
    );
    (None, seen)
}

/// The time a run may take: the gate's timeout, cut to what is left of a hook's budget (no
/// run may outlast it), and whether it was cut; `None` when nothing is left.
fn budget(gate: &Gate, limits: &Limits) -> Option<(Duration, bool)> {
    let left = limits
        .deadline
        .map(|d| d.saturating_duration_since(Instant::now()));
    let timeout = left.map_or(gate.timeout, |l| l.min(gate.timeout));
    (!timeout.is_zero()).then_some((timeout, left.is_some_and(|l| l < gate.timeout)))
}

/// What an observed run was seen to read, beside what its result is stored with.
#[derive(Default)]
struct Seen {
    /// The first file git does not track that it opened, when a commit is checked.
    untracked: Option<String>,
    /// The files outside the project it read (absolute).
    outside: Vec<PathBuf>,
}

impl Seen {
    fn of(
        cx: &RunContext<'_>,
        limits: &Limits,
        (inputs, places): (&[observe::Input], &observe::Places),
    ) -> Self {
        Self {
            untracked: untracked_read(&cx.config.root, Some(inputs), limits),
            outside: observe::outside(inputs, places),
        }
    }
}

/// The project's files an observed run opened ([`RunDetail::read`]); `None` when it was
/// not observed, or after a build ran compiled test binaries (`built`): a build opens only
/// the sources it finds out of date.
fn opened(finished: &process::Finished, root: &Path, built: bool) -> Option<Vec<String>> {
    match &finished.observed {
        Some(Ok(record)) if !built => Some(observe::opened(&record.paths, root)),
        _ => None,
    }
}

/// The project's files an observed run gave another name, relative to the root.
fn linked(finished: &process::Finished, root: &Path) -> Vec<String> {
    observed_inside(finished, root, |record| record.linked.iter().collect())
}

/// The files inside `root` a finished, observed run wrote, created or renamed onto
/// (relative to it): its own outputs, not what it found there.
fn wrote(finished: &process::Finished, root: &Path) -> Vec<String> {
    observed_inside(finished, root, |record| {
        let written = record.paths.iter();
        written
            .filter(|(_, a)| **a == observe::Access::Write)
            .map(|(p, _)| p)
            .collect()
    })
}

/// The paths `of` an observed run's record that lie inside `root`, relative to it; none
/// when the run was not observed.
fn observed_inside<'a>(
    finished: &'a process::Finished,
    root: &Path,
    of: impl FnOnce(&'a observe::trace::Record) -> Vec<&'a PathBuf>,
) -> Vec<String> {
    let Some(Ok(record)) = &finished.observed else {
        return Vec::new();
    };
    let inside = of(record)
        .into_iter()
        .filter_map(|p| p.strip_prefix(root).ok());
    inside
        .filter_map(|r| r.to_str().map(str::to_string))
        .collect()
}

/// A new temporary folder only its run knows, in the system's (so what a run makes there is
/// never an input: `observe::Places::temp`). `None` when none can be made: the run then
/// uses the one it would have.
fn private_tmp() -> Option<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("ralph-gate-run")
        .tempdir()
        .ok()
}

/// What starts the job's process.
fn spec(
    cx: &RunContext<'_>,
    (gate, inv): (&Gate, &Invocation),
    (limits, private): (&Limits, Option<&Path>),
    timeout: Duration,
    keyed: bool,
) -> Spec {
    Spec {
        script: inv.script.clone(),
        args: inv.args.clone(),
        cwd: inv.cwd.clone(),
        env: variables(gate, inv, (limits, private)),
        timeout,
        // Observed only when there is a result to store, or a verdict that rests on what the
        // run read (a commit's untracked files, a start tree's reach).
        observe: keyed
            && cx.config.settings.observe_inputs
            && (cx.cache.store || limits.untracked.is_some() || limits.observe),
    }
}

/// [`heard`], made again unobserved when a process of the observed run called ptrace (a
/// debugger's tests, a leak checker at exit): under ralph-gate's tracer that call fails, so
/// the run is not the bare tool's. The second run's result is stored under the key alone.
fn heard_untraced_if_it_traces(
    spec: Spec,
    (gate, fresh): (&Gate, bool),
    cx: &RunContext<'_>,
) -> Heard {
    // Only an observed run can be made again: the spec is kept for it alone.
    if !spec.observe {
        return heard(spec, (gate, fresh), cx);
    }
    let first = heard(spec.clone(), (gate, fresh), cx);
    let traced = matches!(&first.finished.observed, Some(Ok(r)) if r.traced_itself);
    if !traced {
        return first;
    }
    let mut again = heard(
        Spec {
            observe: false,
            ..spec
        },
        (gate, fresh),
        cx,
    );
    again.finished.observed = Some(Err(observe::trace::Unavailable::Incomplete(
        "the run traces processes itself (ptrace), which it cannot do under observation".into(),
    )));
    again
}

/// Why a run that ended as a shell does when it could not start a command (126: found but
/// not executable; 127: not found) is not stored: an exec that fails is not observed, so
/// `chmod +x` or the command's file made later would still be served this failure.
fn exec_failed(exit: &Exit) -> Option<&'static str> {
    matches!(exit, Exit::Code(126 | 127)).then_some(
        "the run ended with 126 or 127, a command that could not be started; \
         a failed exec is not observed, so the result is not stored",
    )
}

/// Marks `gate` told (its runs chosen by its globs, see [`cache::readers::told`]) when no
/// observation here can ever tell what its runs read and a run of it for a file no glob
/// names would only be served from the cache under the same key: observation off, or a
/// kernel that refuses tracing. Not a run with no key: it is never stored, so running it
/// whole is a fresh verdict (a tsconfig extending one beside the project). Only a run that
/// ended by itself counts.
fn told_if_nothing_to_learn(
    cx: &RunContext<'_>,
    gate: &Gate,
    keyed: bool,
    finished: &process::Finished,
) {
    let refused = matches!(&finished.observed, Some(Err(why)) if why.nowhere_here());
    let nothing = keyed && (!cx.config.settings.observe_inputs || refused);
    if matches!(finished.exit, Exit::Code(_)) && nothing {
        cache::readers::told(&cx.config.root, &gate.name);
    }
}

/// Records what the observed run of `gate` for `job` read besides the files that plan it
/// (see [`cache::readers`]).
fn remember_readers(cx: &RunContext<'_>, gate: &Gate, job: &Job, inputs: &[observe::Input]) {
    let files = own_files(gate, job);
    let run = (job.dir.as_path(), files.as_slice());
    let plans = |p: &Path| match files.is_empty() {
        true => p.starts_with(&job.dir) && gate.matches_file(p, &|_| None),
        false => files.iter().any(|f| f == p),
    };
    cache::readers::record(&cx.config.root, &gate.name, run, &plans, inputs);
}

/// The files a run of `gate` was for, relative to the root: none for a `project` gate's run,
/// which is the whole of its folder.
fn own_files(gate: &Gate, job: &Job) -> Vec<PathBuf> {
    match gate.scope {
        ralph_config::Scope::Project => Vec::new(),
        _ => job.args.iter().map(|a| job.dir.join(a)).collect(),
    }
}

/// What a run's runners said of it, beside its exit.
struct Heard {
    finished: process::Finished,
    /// Why the exit status does not count, when a runner's own report contradicts it.
    told: Option<String>,
    /// The files the runner ran as part of itself (pytest's plugins).
    loaded: Vec<PathBuf>,
    /// The files it said are its tests' (pytest's).
    of_tests: Vec<(PathBuf, crate::observe::OfTests)>,
    /// The tests the runners said they ran; `None` when no test runner was heard, or one ran
    /// tests it did not name.
    tests: Option<Vec<String>>,
    /// Those that failed, when every runner heard said which did.
    failed_tests: Option<Vec<String>>,
    /// The Go subtests its test binaries said ran.
    subtests: Vec<String>,
    /// A compiled test binary ran (go's, libtest's): the build before it opened only the
    /// sources it found out of date, so what the run read says nothing of its tests' reach.
    built: bool,
}

/// Runs `spec` with the test runners' own reports heard: pytest's listener ([`pytest`]), the
/// test binaries' wrapper ([`testbin`]) and node's runners, jest and vitest ([`node_runners`]). A run that exited 0 while a report says a test
/// failed, or never reached its end, is a failure (exit 1, and why). A run whose pytest could
/// not load the listener is made again without it.
fn heard(mut spec: Spec, (gate, fresh): (&Gate, bool), cx: &RunContext<'_>) -> Heard {
    let binaries = testbin::Listening::open();
    if let Some(b) = &binaries {
        let vars = b.vars(&gate.env, cx.env, &spec.cwd);
        spec.env.extend(vars);
    }
    let plain = spec.clone();
    let node = node_runners::Listening::open(fresh, &cx.config.root);
    if let Some(n) = &node {
        spec.env.extend(n.vars(&gate.env, cx.env, true));
    }
    let mut heard = heard_pytest(spec, gate, cx);
    // The command chose node's reporters itself: run it again without ralph-gate's (jest
    // and vitest still heard).
    if let Some(n) = node.as_ref().filter(|n| {
        heard.finished.exit != Exit::Code(0) && n.refused(&heard.finished.output.text())
    }) {
        let mut spec = plain;
        spec.env.extend(n.vars(&gate.env, cx.env, false));
        heard = heard_pytest(spec, gate, cx);
    }
    // A wrapper that found a contradiction already exited 1 in the binary's place; its
    // reason says why the tool failed. A node runner's results that say a test failed
    // contradict an exit 0.
    let root = &cx.config.root;
    let from_binaries = binaries.as_ref().and_then(testbin::Listening::told);
    let from_node = (heard.finished.exit == Exit::Code(0))
        .then(|| node.as_ref().and_then(|n| n.contradiction(root)))
        .flatten();
    let contradicted = [from_binaries, from_node]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"));
    if contradicted.is_some() && heard.finished.exit == Exit::Code(0) {
        heard.finished.exit = Exit::Code(1);
    }
    if let Some(n) = &node {
        heard.of_tests.extend(n.of_tests());
        if n.started_a_process() {
            let (read, _) = observed_reads(&heard.finished, &cx.config.root);
            heard.of_tests.extend(n.read_through_processes(&read));
        }
    }
    heard
        .of_tests
        .extend(read_by_binaries(binaries.as_ref(), &heard.finished, root));
    tests_named(&mut heard, (binaries.as_ref(), node.as_ref()), root);
    heard.told = match (heard.told.take(), contradicted) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    heard
}

/// The tests (and Go's subtests) the runs' runners named, added to what pytest said: the
/// test binaries' wrappers and node's runners.
fn tests_named(
    heard: &mut Heard,
    (binaries, node): (
        Option<&testbin::Listening>,
        Option<&node_runners::Listening>,
    ),
    root: &Path,
) {
    let from_node = node.and_then(|n| n.ran(root));
    let from_binaries = binaries.and_then(|b| b.ran(root));
    heard.built = from_binaries.is_some();
    heard.subtests = binaries.map(|b| b.subtests(root)).unwrap_or_default();
    // Test binaries' wrappers name what ran, not what failed.
    if from_binaries.is_some() {
        heard.failed_tests = None;
    } else if from_node.is_some() {
        let failed = node.map(|n| n.failed(root)).unwrap_or_default();
        heard.failed_tests = match (heard.tests.is_some(), heard.failed_tests.take()) {
            (true, Some(mut mine)) => {
                mine.extend(failed);
                Some(mine)
            }
            (true, None) => None,
            (false, _) => Some(failed),
        };
    }
    for theirs in [from_binaries, from_node].into_iter().flatten() {
        heard.tests = match heard.tests.take() {
            Some(mut mine) => {
                mine.extend(theirs);
                Some(mine)
            }
            None => Some(theirs),
        };
    }
}

/// What the run's compiled test binaries (their threads, the processes they started)
/// opened in the project: their tests' data or the code's input, not known which.
fn read_by_binaries(
    binaries: Option<&testbin::Listening>,
    finished: &process::Finished,
    root: &Path,
) -> Vec<(PathBuf, observe::OfTests)> {
    let (Some(b), Some(Ok(record))) = (binaries, &finished.observed) else {
        return Vec::new();
    };
    // Most runs start no test binary: no pass over what they read.
    let pids = b.test_pids();
    if pids.is_empty() {
        return Vec::new();
    }
    let opened = observe::opened_by(record, &pids, root);
    opened
        .into_iter()
        .map(|f| (f, observe::OfTests::Binary))
        .collect()
}

fn heard_pytest(mut spec: Spec, gate: &Gate, cx: &RunContext<'_>) -> Heard {
    let Some(listening) = pytest::Listening::open() else {
        return Heard {
            finished: process::run(&spec),
            told: None,
            loaded: Vec::new(),
            of_tests: Vec::new(),
            tests: None,
            failed_tests: None,
            subtests: Vec::new(),
            built: false,
        };
    };
    let plain = spec.env.clone();
    spec.env
        .extend(listening.vars((&gate.env, &cx.env.gate_vars), &cx.config.root));
    let mut finished = process::run(&spec);
    let loaded = listening.loaded();
    let mut of_tests = listening.of_tests();
    // Only a run a session was heard in has reads to account for: no stat of what every
    // other run (tsc, ShellCheck) read.
    if listening.imported() {
        let read = observed_reads(&finished, &cx.config.root);
        let named = match &finished.observed {
            Some(Ok(record)) => observe::named_inside(record, &cx.config.root),
            _ => Vec::new(),
        };
        of_tests.extend(listening.read_through_processes(read, &named));
    }
    let tests = listening.imported().then(|| listening.ran());
    let failed_tests = listening.imported().then(|| listening.failed());
    let told = match finished.exit {
        Exit::Code(0) => {
            let told = listening.contradiction();
            if told.is_some() {
                finished.exit = Exit::Code(1);
            }
            told
        }
        Exit::Code(_) if listening.not_loaded(&finished.output.text()) => {
            spec.env = plain;
            finished = process::run(&spec);
            None
        }
        _ => None,
    };
    Heard {
        finished,
        told,
        loaded,
        of_tests,
        tests,
        failed_tests,
        subtests: Vec::new(),
        built: false,
    }
}

/// The files inside the project an observed run opened for reading, and the folders it
/// listed (absolute); none when it was not observed.
fn observed_reads(finished: &process::Finished, root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Some(Ok(record)) = &finished.observed else {
        return (Vec::new(), Vec::new());
    };
    let absolute = |rel: Vec<String>| rel.into_iter().map(|r| root.join(r)).collect();
    let (files, folders) = observe::opened_and_listed(&record.paths, root);
    (absolute(files), absolute(folders))
}

/// The first file git does not track that a run was seen to open, when the caller checks a
/// commit (`check --staged`). One it only asked about (a stat in a walk of the folder) is
/// not: its content decided nothing.
fn untracked_read(
    root: &Path,
    inputs: Option<&[observe::Input]>,
    limits: &Limits,
) -> Option<String> {
    let untracked = limits.untracked.as_ref()?;
    // Through a link too: a tracked `words.cfg -> real/bad.cfg` whose target the commit
    // stops tracking leaves the commit a link to nothing.
    let read = cache::readers::names(root, inputs?.iter().filter(|i| !i.probed));
    read.into_iter().find(|p| untracked.contains(Path::new(p)))
}

/// A run that read a file the commit will not contain fails, saying which: its verdict is
/// the working tree's, not the commit's.
fn outside_commit(mut outcome: Outcome, read: Option<String>) -> Outcome {
    let Some(path) = read else {
        return outcome;
    };
    if outcome.status() == GateStatus::Pass {
        outcome.exit = Some(Exit::Code(1));
    }
    outcome.output = format!(
        "ralph-gate: this run read {path}, which git does not track: the commit will not contain it. Add it (git add {}), have git ignore it if it is not the project's (an installed package), or stop using it.\n{}",
        template::shell_quote(&path),
        outcome.output
    );
    outcome
}

/// Removes what the job must start without (build state: a `tsc -b` project's build-info
/// files) and writes the files it needs (the tsconfig naming the files a project does not
/// include). A tool must not read the state it was meant to start without.
fn prepare(root: &Path, job: &Job) -> Result<(), SpawnError> {
    if let Some(p) = &job.private {
        // Made here, and only here: a folder that already exists was not made for this run.
        let dir = root.join(p);
        let made = dir
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::create_dir(&dir));
        made.map_err(|e| SpawnError::prepare(Step::MakeFolder, &dir, &e))?;
    }
    for rel in &job.clear {
        let path = root.join(rel);
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        removed.map_err(|e| SpawnError::prepare(Step::Remove, &path, &e))?;
    }
    for (rel, text) in &job.setup {
        let path = root.join(rel);
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            atomic::write(&path, text.as_bytes())
                .map_err(|e| SpawnError::prepare(Step::Write, &path, &e))?;
        }
    }
    Ok(())
}

/// The gate's environment: its own variables, where the project is, and its PATH; and for
/// a Cargo gate, the target folder the caller gives (unless the gate names its own).
fn variables(
    gate: &Gate,
    inv: &Invocation,
    (limits, private): (&Limits, Option<&Path>),
) -> Vec<(OsString, OsString)> {
    let cargo_target = limits.cargo_target.as_deref();
    let mut vars: Vec<(OsString, OsString)> = gate
        .env
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    if let Some(dir) = cargo_target.filter(|_| runs_cargo(gate)) {
        if !gate.env.contains_key(CARGO_TARGET) {
            vars.push((CARGO_TARGET.into(), dir.as_os_str().to_owned()));
        }
    }
    // Python runs the bytecode it finds in `__pycache__` when its header names the source's
    // mtime and size, whatever code it holds: at a loop's stops it reads and writes its own
    // beside ralph-gate's build folder instead, which no path in the project feeds.
    // A run whose verdict must not lean on anything written before it has both in a folder
    // of its own.
    let pycache = match (private, cargo_target) {
        (Some(tmp), _) => Some(tmp.join("pycache")),
        (None, Some(dir)) => {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            Some(dir.with_file_name(format!("{name}-pycache")))
        }
        (None, None) => None,
    };
    if let Some(pycache) = pycache.filter(|_| !gate.env.contains_key(PYCACHE_PREFIX)) {
        vars.push((PYCACHE_PREFIX.into(), pycache.into_os_string()));
    }
    if let Some(tmp) = private.filter(|_| !gate.env.contains_key(TMPDIR)) {
        vars.push((TMPDIR.into(), tmp.as_os_str().to_owned()));
    }
    // Only what a command asks for: code under test that could see it ran under ralph-gate
    // could behave as it would not under the bare tool.
    if gate
        .run
        .as_ref()
        .is_some_and(|r| r.uses(template::Placeholder::Root))
    {
        vars.push((template::ROOT_ENV.into(), inv.cwd.clone().into_os_string()));
    }
    if let Ok(joined) = std::env::join_paths(&inv.process_path) {
        vars.push(("PATH".into(), joined));
    }
    vars.extend(pytest::checkout_vars(limits.checkout_of.as_ref()));
    vars
}

const CARGO_TARGET: &str = "CARGO_TARGET_DIR";
const PYCACHE_PREFIX: &str = "PYTHONPYCACHEPREFIX";
const TMPDIR: &str = "TMPDIR";

/// True when the gate runs Cargo: the Cargo driver, or a command that starts with `cargo`.
fn runs_cargo(gate: &Gate) -> bool {
    gate.driver == Some(ralph_config::Driver::Cargo)
        || gate
            .run
            .as_ref()
            .is_some_and(|r| r.source().split_whitespace().next() == Some("cargo"))
}

/// Stores a finished run under `key`: an exit code, or a timeout of the gate's own (one cut
/// by a hook's budget says nothing about the inputs, and a run that could not start neither).
fn store(
    cache: &cache::Cache,
    key: &str,
    (finished, output, cut_by_budget): (&process::Finished, &str, bool),
    observed: Option<Vec<observe::Input>>,
    of_tests: Vec<(String, observe::OfTests)>,
) {
    let stored = match &finished.exit {
        Exit::Code(code) => Some((*code, false)),
        Exit::TimedOut if !cut_by_budget => Some((0, true)),
        _ => None,
    };
    if !cache.store {
        if cache.forget {
            cache.forget(key);
        }
        return;
    }
    if let Some((exit_code, timed_out)) = stored {
        let _ = cache.put(&cache::Entry {
            key: key.to_string(),
            origin: None,
            exit_code,
            timed_out,
            duration_ms: finished.duration.as_millis() as u64,
            output: output.to_string(),
            observed,
            of_tests,
        });
    }
}

/// The lock `.ralph/locks/NAME.lock`, waited for until `deadline`.
fn wait_lock(root: &Path, name: &str, deadline: Option<Instant>) -> Option<atomic::Lock> {
    let path = ralph_base::state::Layout::at(root).lock(name);
    // A lock that cannot be made must not stop the gate: it only avoids double work.
    atomic::lock_until(&path, deadline).unwrap_or_else(|_| Some(atomic::Lock::none()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_gets_a_name_nobody_knows_and_the_run_follows_it() {
        let from = Path::new(".ralph/tsc/f-abc");
        let (a, b) = (unguessable(from), unguessable(from));
        assert_ne!(a, b, "two runs, two folders");
        assert!(a.to_string_lossy().starts_with(".ralph/tsc/f-abc-"));
        assert_eq!(a.parent(), from.parent(), "at the same depth");
        let job = Job {
            argv: Some(vec![
                "tsc".into(),
                "-b".into(),
                from.join("x/tsconfig.json").into(),
            ]),
            setup: vec![(from.join("x/tsconfig.json"), "{}".into())],
            private: Some(from.to_path_buf()),
            ..Job::default()
        };
        let moved = privately(&job, from, &a);
        assert_eq!(
            moved.argv.unwrap()[2],
            a.join("x/tsconfig.json").into_os_string()
        );
        assert_eq!(moved.setup[0].0, a.join("x/tsconfig.json"));
        assert_eq!(moved.private.as_deref(), Some(a.as_path()));
        assert_eq!(
            move_path(&".ralph/tsc/f-abcdef/x".into(), from, &a),
            OsString::from(".ralph/tsc/f-abcdef/x"),
            "only whole components move"
        );
    }

    #[test]
    fn a_private_folder_that_already_exists_was_not_made_for_the_run() {
        let root = tempfile::tempdir().unwrap();
        let job = Job {
            private: Some(PathBuf::from(".ralph/tsc/f-x-1")),
            ..Job::default()
        };
        std::fs::create_dir_all(root.path().join(".ralph/tsc/f-x-1")).unwrap();
        let err = prepare(root.path(), &job).unwrap_err();
        assert!(err.to_string().contains("own folder"), "{err}");
        // The kind is kept: the folder exists, it is not a permission refused.
        assert!(
            matches!(
                err,
                SpawnError::Prepare {
                    step: Step::MakeFolder,
                    kind: std::io::ErrorKind::AlreadyExists,
                    ..
                }
            ),
            "{err:?}"
        );
        std::fs::remove_dir(root.path().join(".ralph/tsc/f-x-1")).unwrap();
        prepare(root.path(), &job).unwrap();
        assert!(root.path().join(".ralph/tsc/f-x-1").is_dir());
    }
}
