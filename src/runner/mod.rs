//! Runs a plan: every job on a bounded pool, each gate's result handed to the caller as soon
//! as all of its runs are done. The runner never prints; reporters consume its results.

pub mod capture;
mod process;
pub mod signals;

use crate::cache::{self, Cache};
use crate::config::{template, Config, Gate, Scope};
use crate::env::Environment;
use crate::plan::{Job, Plan};
use process::{Exit, Spec};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How much may run at once, and until when.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub jobs: usize,
    /// No run may go past this instant (a hook's budget); `None` = gate timeouts only.
    pub deadline: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    Pass,
    Fail,
    Timeout,
    /// A required tool is missing.
    Skipped,
    /// The gate matched no file, so there was nothing to run.
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

#[derive(Debug, Clone)]
pub struct GateResult {
    /// Index into `Config::gates`.
    pub gate: usize,
    pub name: String,
    pub status: GateStatus,
    pub duration: Duration,
    pub files: usize,
    pub runs: usize,
    /// The command as a person would type it (first run; file names quoted).
    pub command: String,
    /// Output of the runs that failed (all runs if none failed), whole, possibly coloured.
    pub output: String,
    pub exit_code: Option<i32>,
    /// Why the status is what it is, where the status alone does not say.
    pub reason: Option<String>,
    pub optional: bool,
    /// Every run's result came from the cache (or from an identical run in progress).
    pub cached: bool,
}

impl GateResult {
    pub fn failed(&self) -> bool {
        matches!(self.status, GateStatus::Fail | GateStatus::Timeout)
    }
}

struct JobOutcome {
    cached: bool,
    /// The run's time limit was the caller's deadline, not the gate's own timeout.
    cut_by_budget: bool,
    exit: Option<Exit>,
    duration: Duration,
    output: String,
    command: String,
    skipped_because: Option<String>,
}

/// Runs `plan` the way every caller does: with the project's result cache (unless `no_cache`
/// or `RALPH_GATE_NO_CACHE`), then records each gate's latest result in `.ralph/results` for
/// `status` and the dashboard. A record that cannot be written does not fail the run.
pub fn run_recorded(
    config: &Config,
    plan: &Plan,
    limits: &Limits,
    env: &Environment,
    no_cache: bool,
    phase: crate::config::Phase,
    on_gate: &(dyn Fn(&GateResult) + Sync),
) -> Vec<GateResult> {
    let cache = Cache::for_run(config, env, no_cache);
    let results = run(config, plan, limits, env, cache.as_ref(), on_gate);
    let _ = crate::results::record(&config.root, phase.as_str(), &results);
    results
}

/// Runs every job in `plan` with at most `jobs` at once. `on_gate` is called (from worker
/// threads) once per planned gate, in completion order; the returned results are in plan order.
fn run(
    config: &Config,
    plan: &Plan,
    limits: &Limits,
    env: &Environment,
    cache: Option<&Cache>,
    on_gate: &(dyn Fn(&GateResult) + Sync),
) -> Vec<GateResult> {
    signals::install();
    let results: Vec<Mutex<Option<GateResult>>> =
        plan.gates.iter().map(|_| Mutex::new(None)).collect();
    let outcomes: Vec<Vec<Mutex<Option<JobOutcome>>>> = plan
        .gates
        .iter()
        .map(|g| g.jobs.iter().map(|_| Mutex::new(None)).collect())
        .collect();
    let remaining: Vec<AtomicUsize> = plan
        .gates
        .iter()
        .map(|g| AtomicUsize::new(g.jobs.len()))
        .collect();

    let finish_gate = |pi: usize| {
        let planned = &plan.gates[pi];
        let gate = &config.gates[planned.gate];
        let done: Vec<JobOutcome> = outcomes[pi]
            .iter()
            .map(|m| {
                m.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .expect("every job reports")
            })
            .collect();
        let result = aggregate(planned.gate, gate, planned.files.len(), done);
        on_gate(&result);
        *results[pi].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    };

    for (pi, planned) in plan.gates.iter().enumerate() {
        if planned.jobs.is_empty() {
            finish_gate(pi);
        }
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(limits.jobs.max(1))
        .thread_name(|i| format!("ralph-gate-worker-{i}"))
        .build()
        .expect("a thread pool can be built");
    // Whole-project gates (tsc, cargo, go vet) are nearly always the long pole, so they start
    // first; the rest follow in config order (FIFO). Reports keep config order regardless.
    let mut start_order: Vec<usize> = (0..plan.gates.len()).collect();
    start_order.sort_by_key(|&pi| match config.gates[plan.gates[pi].gate].scope {
        Scope::Project => 0,
        Scope::Batch | Scope::File => 1,
    });
    pool.scope_fifo(|scope| {
        for pi in start_order {
            let planned = &plan.gates[pi];
            let gate = &config.gates[planned.gate];
            for (ji, job) in planned.jobs.iter().enumerate() {
                let (outcomes, remaining, finish_gate) = (&outcomes, &remaining, &finish_gate);
                scope.spawn_fifo(move |_| {
                    let outcome = run_job(config, gate, job, env, limits, cache);
                    *outcomes[pi][ji].lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
                    if remaining[pi].fetch_sub(1, Ordering::AcqRel) == 1 {
                        finish_gate(pi);
                    }
                });
            }
        }
    });

    if let Some(c) = cache {
        c.save();
    }
    results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every gate finishes")
        })
        .collect()
}

fn run_job(
    config: &Config,
    gate: &Gate,
    job: &Job,
    env: &Environment,
    limits: &Limits,
    cache: Option<&Cache>,
) -> JobOutcome {
    let started = Instant::now();
    let cwd = config.root.join(&job.dir);
    let root_text = cwd.to_string_lossy().into_owned();
    let shown_args: Vec<String> = job
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let outcome = |exit: Option<Exit>, output: String| JobOutcome {
        cached: false,
        cut_by_budget: false,
        exit,
        duration: started.elapsed(),
        output,
        command: gate.run.display_with(&shown_args, &root_text),
        skipped_because: None,
    };
    let path = search_path(&cwd, &gate.path, env.path.as_deref());
    if let Some(missing) = gate
        .requires
        .iter()
        .find(|tool| !is_executable(tool, &cwd, &path))
    {
        return JobOutcome {
            skipped_because: Some(format!("requires `{missing}`, which is not on PATH")),
            ..outcome(None, String::new())
        };
    }
    let key = cache.filter(|_| gate.cache).and_then(|c| {
        c.key(gate, job, &config.digest, env.path.as_deref())
            .map(|k| (c, k))
    });
    let from_cache = |entry: cache::Entry| JobOutcome {
        cached: true,
        ..outcome(Some(Exit::Code(entry.exit_code)), entry.output)
    };
    if let Some(hit) = key.as_ref().and_then(|(c, k)| c.get(k)) {
        return from_cache(hit);
    }
    // While an identical run is under way (another hook, another session), wait for its
    // result instead of starting a second tsc or cargo.
    let _claim = match &key {
        Some((c, k)) => match c.claim(k, limits.deadline) {
            Some(lock) => Some(lock),
            None => {
                return JobOutcome {
                    cut_by_budget: true,
                    ..outcome(Some(Exit::TimedOut), String::new())
                }
            }
        },
        None => None,
    };
    if let Some(hit) = key.as_ref().and_then(|(c, k)| c.get(k)) {
        return from_cache(hit);
    }

    let mut vars: Vec<(OsString, OsString)> = gate
        .env
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    vars.push((template::ROOT_ENV.into(), cwd.clone().into_os_string()));
    vars.push(("RALPH_GATE".into(), "1".into()));
    vars.push(("RALPH_GATE_NAME".into(), gate.name.clone().into()));
    if let Some(joined) = join_path(&path) {
        vars.push(("PATH".into(), joined));
    }
    // A hook has a budget of its own: no run may outlast it, whatever the gate's timeout.
    let left = limits
        .deadline
        .map(|d| d.saturating_duration_since(Instant::now()));
    let timeout = left.map_or(gate.timeout, |l| l.min(gate.timeout));
    let cut_by_budget = left.is_some_and(|l| l < gate.timeout);
    if timeout.is_zero() {
        return JobOutcome {
            cut_by_budget: true,
            ..outcome(Some(Exit::TimedOut), String::new())
        };
    }
    let finished = process::run(&Spec {
        script: gate.run.shell_script(),
        args: job.args.clone(),
        cwd,
        env: vars,
        timeout,
    });
    let output = finished.output.text();
    if let (Some((c, k)), Exit::Code(code)) = (&key, &finished.exit) {
        let _ = c.put(&cache::Entry {
            key: k.clone(),
            exit_code: *code,
            duration_ms: finished.duration.as_millis() as u64,
            output: output.clone(),
        });
    }
    JobOutcome {
        cut_by_budget,
        duration: finished.duration,
        ..outcome(Some(finished.exit), output)
    }
}

fn aggregate(index: usize, gate: &Gate, files: usize, done: Vec<JobOutcome>) -> GateResult {
    let base = GateResult {
        gate: index,
        name: gate.name.clone(),
        status: GateStatus::NoFiles,
        duration: Duration::ZERO,
        files,
        runs: done.len(),
        command: gate.run.source().to_string(),
        output: String::new(),
        exit_code: None,
        reason: None,
        optional: gate.optional,
        cached: false,
    };
    if done.is_empty() {
        if gate.require_files {
            return GateResult {
                status: GateStatus::Fail,
                reason: Some("checked 0 files, and the gate has require_files = true".into()),
                ..base
            };
        }
        return base;
    }
    let bad = |o: &JobOutcome| !matches!(o.exit, Some(Exit::Code(0)) | None);
    let any_bad = done.iter().any(bad);
    let timed_out = done.iter().any(|o| o.exit == Some(Exit::TimedOut));
    let skipped = done.iter().find_map(|o| o.skipped_because.clone());
    let status = if timed_out {
        GateStatus::Timeout
    } else if any_bad {
        GateStatus::Fail
    } else if skipped.is_some() {
        GateStatus::Skipped
    } else {
        GateStatus::Pass
    };
    let budget_hit = done
        .iter()
        .any(|o| o.exit == Some(Exit::TimedOut) && o.cut_by_budget);
    let reason = if budget_hit {
        Some("stopped: the hook's time budget ran out before this gate finished".to_string())
    } else if timed_out {
        Some(format!(
            "timed out after {}",
            crate::config::duration::display(gate.timeout)
        ))
    } else if let Some(Exit::SpawnFailed(m)) = done
        .iter()
        .find_map(|o| o.exit.clone().filter(|e| matches!(e, Exit::SpawnFailed(_))))
    {
        Some(m)
    } else if let Some(Exit::Signal(sig)) = done
        .iter()
        .find_map(|o| o.exit.clone().filter(|e| matches!(e, Exit::Signal(_))))
    {
        Some(format!("killed by signal {sig}"))
    } else {
        skipped
    };
    let exit_code = done.iter().find_map(|o| match o.exit {
        Some(Exit::Code(c)) if c != 0 => Some(c),
        _ => None,
    });
    let shown: Vec<&JobOutcome> = if any_bad {
        done.iter().filter(|o| bad(o)).collect()
    } else {
        done.iter().collect()
    };
    let output = if shown.len() == 1 {
        shown[0].output.clone()
    } else {
        shown
            .iter()
            .filter(|o| !o.output.is_empty())
            .map(|o| format!("$ {}\n{}", o.command, o.output))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A gate that exits 0 can still say it checked nothing ("0 tests ran"): `fail_on`.
    let matched = (status == GateStatus::Pass)
        .then(|| {
            let plain = crate::report::text::strip_ansi(&output);
            gate.fail_on
                .iter()
                .find(|p| p.is_match(&plain))
                .map(|p| p.as_str().to_string())
        })
        .flatten();
    let (status, reason) = match matched {
        Some(p) => (
            GateStatus::Fail,
            Some(format!(
                "exited 0, but its output matched fail_on pattern `{p}`"
            )),
        ),
        None => (status, reason),
    };
    GateResult {
        cached: done.iter().all(|o| o.cached),
        status,
        duration: done.iter().map(|o| o.duration).max().unwrap_or_default(),
        command: shown
            .first()
            .map_or(base.command.clone(), |o| o.command.clone()),
        output,
        exit_code,
        reason,
        ..base
    }
}

/// The directories searched for a gate's tools: its `path` entries (relative to where it
/// runs), then PATH.
fn search_path(cwd: &Path, extra: &[String], path_var: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.iter().map(|d| cwd.join(d)).collect();
    if let Some(p) = path_var {
        dirs.extend(std::env::split_paths(p));
    }
    dirs
}

fn join_path(dirs: &[PathBuf]) -> Option<OsString> {
    std::env::join_paths(dirs).ok()
}

fn is_executable(tool: &str, cwd: &Path, dirs: &[PathBuf]) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let ok = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if tool.contains('/') {
        return ok(&cwd.join(tool));
    }
    dirs.iter().any(|d| ok(&d.join(tool)))
}
