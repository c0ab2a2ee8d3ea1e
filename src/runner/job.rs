//! One job: resolve its tools, make its cache key, reuse a stored result or run it in a
//! process group of its own, and store what it found.

use super::process::{self, Exit, Spec};
use super::{paths, GateStatus, Limits, RunContext, ToolInfo};
use crate::atomic;
use crate::cache::{self, key};
use crate::config::{template, Gate};
use crate::plan::Job;
use crate::tools::{self, Tool};
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
    /// of what script shims run placed before PATH's own (see [`crate::tools::Tool::bypass`]).
    pub process_path: Vec<PathBuf>,
    /// The tools it uses, resolved: its `requires`, a driver's program, and the programs its
    /// command names.
    pub tools: Vec<Arc<Tool>>,
    /// The tools reports name (required ones and a driver's program), with versions.
    pub shown_tools: Vec<ToolInfo>,
    /// The first required tool that is not there.
    pub missing: Option<String>,
    script: String,
    args: Vec<OsString>,
    /// The command as a person would type it.
    pub display: String,
    /// The cache key, or why the run cannot be cached.
    pub key: Result<String, String>,
}

impl Invocation {
    pub fn new(cx: &RunContext<'_>, gate: &Gate, job: &Job) -> Self {
        let root = &cx.config.root;
        let cwd = root.join(&job.dir);
        let search = tools::search_path(root, &job.tools_from, &gate.path, cx.env.path.as_deref());
        let mut required: Vec<String> = gate.requires.clone();
        if let Some(program) = job.argv.as_ref().and_then(|a| a.first()) {
            let program = program.to_string_lossy().into_owned();
            if !required.contains(&program) {
                required.insert(0, program);
            }
        }
        let mut tools: Vec<Arc<Tool>> = Vec::new();
        let mut shown_tools: Vec<ToolInfo> = Vec::new();
        let mut missing = None;
        // PATH's own folders. Only a tool the user installed (found in one) is asked its
        // version: one from a folder the config names is the project's, and is not run to
        // ask. Shims' targets go in front of them on the gate's PATH.
        let user_dirs: Vec<PathBuf> = cx
            .env
            .path
            .as_deref()
            .map(|p| std::env::split_paths(p).collect())
            .unwrap_or_default();
        for name in &required {
            match cx.toolbox.resolve(name, &search, &cwd) {
                Some(t) => {
                    let found_real = t.found.canonicalize().unwrap_or_else(|_| t.found.clone());
                    shown_tools.push(ToolInfo {
                        name: t.name.clone(),
                        path: shown_path(root, &t.found),
                        runs: (t.real != t.found && t.real != found_real)
                            .then(|| shown_path(root, &t.real)),
                        version: if t
                            .found
                            .parent()
                            .is_some_and(|d| user_dirs.iter().any(|u| u == d))
                        {
                            cx.toolbox.version(&t)
                        } else {
                            t.package.clone()
                        },
                    });
                    tools.push(t);
                }
                None => {
                    missing.get_or_insert_with(|| name.clone());
                }
            }
        }
        let (script, args, display) = match (&job.argv, &gate.run) {
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
                for word in tools::command_words(&run.shell_script()) {
                    if !required.contains(&word) {
                        if let Some(t) = cx.toolbox.resolve(&word, &search, &cwd) {
                            tools.push(t);
                        }
                    }
                }
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
        };
        let mut process_path = search.clone();
        let at = process_path.len().saturating_sub(user_dirs.len());
        for dir in tools.iter().filter_map(|t| t.bypass.clone()).rev() {
            if !process_path[..at].contains(&dir) {
                process_path.insert(at, dir);
            }
        }
        let display = if job.dir.as_os_str().is_empty() {
            display
        } else {
            format!(
                "cd {} && {display}",
                template::shell_quote(&job.dir.to_string_lossy())
            )
        };
        let key = if missing.is_some() {
            Err("a required tool is missing".to_string())
        } else {
            key::compose(
                &key::Parts {
                    config_digest: &cx.config.digest,
                    gate,
                    job,
                    tools: &tools,
                },
                cx.digests,
                cx.context,
            )
        };
        Self {
            cwd,
            process_path,
            tools,
            shown_tools,
            missing,
            script,
            args,
            display,
            key,
        }
    }
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
    pub output: String,
    pub command: String,
    pub dir: PathBuf,
    pub label: Option<String>,
    pub skipped_because: Option<String>,
    /// The required tool that is not there.
    pub missing: Option<String>,
    pub not_cached: Option<String>,
    pub tools: Vec<ToolInfo>,
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

pub fn run(cx: &RunContext<'_>, gate: &Gate, job: &Job, limits: &Limits) -> Outcome {
    let started = Instant::now();
    let inv = Invocation::new(cx, gate, job);
    let outcome = |exit: Option<Exit>, output: String| Outcome {
        started,
        cached: false,
        cut_by_budget: false,
        exit,
        duration: started.elapsed(),
        output,
        command: inv.display.clone(),
        dir: job.dir.clone(),
        label: job.label.clone(),
        skipped_because: None,
        missing: None,
        not_cached: inv.key.as_ref().err().cloned(),
        tools: inv.shown_tools.clone(),
    };
    if let Some(tool) = &inv.missing {
        return Outcome {
            skipped_because: Some(format!("requires `{tool}`, which is not on PATH")),
            missing: Some(tool.clone()),
            not_cached: None,
            ..outcome(None, String::new())
        };
    }
    let key = inv.key.as_ref().ok();
    let cache = cx.cache;
    let from_cache = |entry: cache::Entry| Outcome {
        cached: true,
        ..outcome(
            Some(if entry.timed_out {
                Exit::TimedOut
            } else {
                Exit::Code(entry.exit_code)
            }),
            entry.output,
        )
    };
    let stopped_by_budget = || Outcome {
        cut_by_budget: true,
        ..outcome(Some(Exit::TimedOut), String::new())
    };
    let _claim = match key {
        Some(k) if cache.read => {
            if let Some(hit) = cache.get(k) {
                return from_cache(hit);
            }
            // While an identical run is under way (another hook, another session), wait for
            // its result instead of starting a second tsc or cargo.
            let Some(lock) = cache.claim(k, limits.deadline) else {
                return stopped_by_budget();
            };
            if let Some(hit) = cache.get(k) {
                return from_cache(hit);
            }
            Some(lock)
        }
        _ => None,
    };
    // Runs that share a build-info file take turns.
    let _exclusive = match &job.exclusive {
        Some(name) => match wait_lock(&cx.config.root, name, limits.deadline) {
            Some(lock) => Some(lock),
            None => return stopped_by_budget(),
        },
        None => None,
    };
    for rel in &job.clear {
        let path = cx.config.root.join(rel);
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
        // A tool must not read the state it was meant to start without.
        if let Err(e) = removed {
            return outcome(
                Some(Exit::SpawnFailed(format!(
                    "cannot remove {} before the run: {e}",
                    path.display()
                ))),
                String::new(),
            );
        }
    }
    for (rel, text) in &job.setup {
        let path = cx.config.root.join(rel);
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            if let Err(e) = atomic::write(&path, text.as_bytes()) {
                return outcome(
                    Some(Exit::SpawnFailed(format!(
                        "cannot write {}: {e}",
                        path.display()
                    ))),
                    String::new(),
                );
            }
        }
    }

    let mut vars: Vec<(OsString, OsString)> = gate
        .env
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    vars.push((template::ROOT_ENV.into(), inv.cwd.clone().into_os_string()));
    vars.push(("RALPH_GATE".into(), "1".into()));
    vars.push(("RALPH_GATE_NAME".into(), gate.name.clone().into()));
    if let Ok(joined) = std::env::join_paths(&inv.process_path) {
        vars.push(("PATH".into(), joined));
    }
    // A hook has a budget of its own: no run may outlast it, whatever the gate's timeout.
    let left = limits
        .deadline
        .map(|d| d.saturating_duration_since(Instant::now()));
    let timeout = left.map_or(gate.timeout, |l| l.min(gate.timeout));
    let cut_by_budget = left.is_some_and(|l| l < gate.timeout);
    if timeout.is_zero() {
        return stopped_by_budget();
    }
    let finished = process::run(&Spec {
        script: inv.script.clone(),
        args: inv.args.clone(),
        cwd: inv.cwd.clone(),
        env: vars,
        timeout,
    });
    let mut output = finished.output.text();
    if !job.dir.as_os_str().is_empty() {
        output = paths::relative_to_root(&output, &cx.config.root, &job.dir);
    }
    if let Some(k) = key {
        let stored = match &finished.exit {
            Exit::Code(code) => Some((*code, false)),
            Exit::TimedOut if !cut_by_budget => Some((0, true)),
            _ => None,
        };
        if let Some((exit_code, timed_out)) = stored {
            let _ = cache.put(&cache::Entry {
                key: k.clone(),
                origin: None,
                exit_code,
                timed_out,
                duration_ms: finished.duration.as_millis() as u64,
                output: output.clone(),
            });
        }
    }
    Outcome {
        cut_by_budget,
        duration: finished.duration,
        ..outcome(Some(finished.exit), output)
    }
}

/// The lock `.ralph/locks/NAME.lock`, waited for until `deadline`.
fn wait_lock(root: &Path, name: &str, deadline: Option<Instant>) -> Option<atomic::Lock> {
    let path = root
        .join(crate::files::STATE_DIR)
        .join("locks")
        .join(format!("{name}.lock"));
    // A lock that cannot be made must not stop the gate: it only avoids double work.
    atomic::lock_until(&path, deadline).unwrap_or_else(|_| Some(atomic::Lock::none()))
}
