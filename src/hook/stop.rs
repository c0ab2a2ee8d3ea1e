//! `ralph-gate hook stop`: gathers the facts (loop, promise, gate results, progress), asks
//! `decide`, and carries the decision out: state file, journal, output.

use super::decide::{self, Outcome, StateChange, StopFacts};
use super::promise::{self, TextSource};
use super::protocol::{cap, HookInput, HookOutput, TEXT_CAP};
use crate::atomic;
use crate::config::Phase;
use crate::env::Environment;
use crate::files;
use crate::loop_state;
use crate::project::Project;
use crate::report::counts_as_failure;
use crate::runner::{self, GateResult, Limits};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StopError + 'a {
    move |source| StopError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The folder that holds `.claude/` and `.ralph/`: the Claude Code project folder when known,
/// else the git work tree (or folder) of the hook's working directory.
pub fn workspace(env: &Environment, base: &Path) -> PathBuf {
    env.claude_project_dir
        .clone()
        .or_else(|| files::git_toplevel(base))
        .unwrap_or_else(|| base.to_path_buf())
}

pub fn ralph_dir(ws: &Path) -> PathBuf {
    ws.join(files::STATE_DIR)
}

pub fn run(
    input: &HookInput,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<Option<HookOutput>, StopError> {
    let started = Instant::now();
    let session = input.session_id.clone().unwrap_or_default();
    let base = input.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = workspace(env, &base);
    let lock_path = ralph_dir(&ws).join("locks/stop.lock");

    // Listing, claiming and selecting happen under the lock: a listing made without it can
    // miss a state file that another stop is renaming into place at that moment.
    let (ours, unreadable) = if loop_state::maybe_any(&ws) {
        let _guard = atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
        let files = loop_state::list(&ws);
        let unreadable: Vec<String> = files
            .iter()
            .filter_map(|f| {
                f.state
                    .as_ref()
                    .err()
                    .map(|e| format!("{}: {e}", f.path.display()))
            })
            .collect();
        let ours = match loop_state::select(&files, &session) {
            Some(f) => {
                let mut state = f.state.clone().expect("select returns readable states");
                if state.session_id.is_empty() && !session.is_empty() {
                    state.claim(&session);
                    atomic::write(&f.path, state.render().as_bytes())
                        .map_err(io("claim the loop in", &f.path))?;
                }
                Some((f.path.clone(), state))
            }
            None => None,
        };
        (ours, unreadable)
    } else {
        (None, Vec::new())
    };

    let Some((loop_path, state)) = ours else {
        if let Ok(project) = Project::open(&base, config) {
            if project.config.settings.hooks.gate_every_stop {
                return gate_plain_stop(project, env, &ws, &session, input, started).map(Some);
            }
        }
        if !unreadable.is_empty() {
            return Ok(Some(HookOutput {
                system_message: Some(cap(
                    &format!(
                        "ralph-gate: cannot read loop state ({}); that loop is not being enforced.",
                        unreadable.join("; ")
                    ),
                    TEXT_CAP,
                )),
                ..Default::default()
            }));
        }
        return Ok(None);
    };

    // This loop's own lock, held to the end of the stop: concurrent stops of one loop take
    // turns, so each decides on the true iteration (the limit is never overrun), while
    // other sessions' loops are not held up.
    let loop_lock = ralph_dir(&ws)
        .join("locks")
        .join(format!("{}.lock", file_name(&loop_path)));
    let _loop_guard = atomic::lock(&loop_lock).map_err(io("lock", &loop_lock))?;
    let state = match loop_state::read(&loop_path) {
        Ok(fresh) if fresh.session_id == state.session_id => fresh,
        // Ended or cancelled by the stop before us, or taken over: nothing to hold.
        _ => return Ok(None),
    };

    let (text, source) = promise::last_text(
        input.last_assistant_message.as_deref(),
        input.transcript_path.as_deref(),
    );
    let seen = text.as_deref().and_then(promise::extract);
    let project = match Project::open(&base, config) {
        Ok(p) => p,
        Err(e) => {
            // Fail closed: a loop may not end on a config nobody can check against.
            let out = HookOutput {
                decision: Some("block"),
                reason: Some(cap(&format!("ralph-gate cannot load its config, so the stop gates cannot run. Fix it, then finish the task:\n{e}"), TEXT_CAP)),
                system_message: Some("ralph-gate: config error, loop continues".into()),
                ..Default::default()
            };
            return Ok(Some(out));
        }
    };
    let stuck_after = project.config.settings.hooks.stuck_after;
    let results = stop_gates(project, env, started)?;

    let progress_path = ralph_dir(&ws)
        .join("progress")
        .join(format!("{}.json", file_name(&loop_path)));
    let fingerprint = fingerprint(&ws, &results, env.strict());
    let previous: Option<Progress> = std::fs::read(&progress_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let unchanged_stops = match previous {
        Some(p) if p.fingerprint == fingerprint => p.unchanged_stops.saturating_add(1),
        _ => 0,
    };

    let decision = decide::decide(&StopFacts {
        state: &state,
        promise_seen: seen.as_deref(),
        results: &results,
        ci: env.strict(),
        unchanged_stops,
        stuck_after,
    });

    {
        let _guard = atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
        match (&decision.state, loop_state::read(&loop_path)) {
            // Cancelled while the gates ran: nothing left to hold the agent to.
            (_, Err(_)) if !loop_path.exists() => return Ok(None),
            (StateChange::Remove, _) => {
                std::fs::remove_file(&loop_path).map_err(io("remove", &loop_path))?;
                let _ = std::fs::remove_file(&progress_path);
            }
            (StateChange::SetIteration(n), Ok(mut fresh)) => {
                fresh.set_iteration((*n).max(fresh.iteration.saturating_add(1)));
                atomic::write(&loop_path, fresh.render().as_bytes())
                    .map_err(io("update", &loop_path))?;
                let record = serde_json::to_vec(&Progress {
                    fingerprint,
                    unchanged_stops,
                })
                .expect("serialises");
                atomic::write(&progress_path, &record).map_err(io("write", &progress_path))?;
            }
            (StateChange::SetIteration(_), Err(e)) => {
                return Err(StopError::Io {
                    what: "re-read",
                    path: loop_path.clone(),
                    source: std::io::Error::other(e),
                })
            }
        }
        journal(
            &ws,
            &Entry {
                time: now(),
                session: &session,
                loop_file: file_name(&loop_path),
                iteration: state.iteration,
                promise_expected: state.completion_promise.as_deref(),
                promise_seen: seen.as_deref(),
                promise_source: source,
                stop_hook_active: input.stop_hook_active.unwrap_or(false),
                unchanged_stops,
                gates: journal_gates(&results, env.strict()),
                decision: if decision.blocks() { "block" } else { "allow" },
                outcome: decision.outcome,
                why: &decision.why,
            },
        )?;
    }
    Ok(Some(decision.output))
}

/// `gate_every_stop` without a loop: the stop gates must pass before the agent may stop, but
/// there is no promise, prompt or iteration count.
fn gate_plain_stop(
    project: Project,
    env: &Environment,
    ws: &Path,
    session: &str,
    input: &HookInput,
    started: Instant,
) -> Result<HookOutput, StopError> {
    let results = stop_gates(project, env, started)?;
    let failing: Vec<&GateResult> = results
        .iter()
        .filter(|r| counts_as_failure(r, env.strict()))
        .collect();
    let output = if failing.is_empty() {
        HookOutput::default()
    } else {
        let per = (TEXT_CAP / failing.len()).saturating_sub(200).max(300);
        let mut reason = format!(
            "ralph-gate: {} failing. Fix them before you stop:\n",
            crate::report::text::plural(failing.len(), "stop gate is", "stop gates are")
        );
        for r in &failing {
            reason.push_str(&super::post_tool_use::gate_section(r, per));
        }
        HookOutput {
            decision: Some("block"),
            reason: Some(cap(&reason, TEXT_CAP)),
            system_message: Some(format!(
                "ralph-gate: {} failing",
                crate::report::text::plural(failing.len(), "gate", "gates")
            )),
            ..Default::default()
        }
    };
    let blocks = output.decision.is_some();
    journal(
        ws,
        &Entry {
            time: now(),
            session,
            loop_file: String::new(),
            iteration: 0,
            promise_expected: None,
            promise_seen: None,
            promise_source: TextSource::None,
            stop_hook_active: input.stop_hook_active.unwrap_or(false),
            unchanged_stops: 0,
            gates: journal_gates(&results, env.strict()),
            decision: if blocks { "block" } else { "allow" },
            outcome: if blocks {
                Outcome::Continue
            } else {
                Outcome::Completed
            },
            why: if blocks {
                "no loop; gate_every_stop and gates fail"
            } else {
                "no loop; gate_every_stop and every gate passes"
            },
        },
    )?;
    Ok(output)
}

fn journal_gates(results: &[GateResult], ci: bool) -> Vec<JournalGate<'_>> {
    results
        .iter()
        .map(|r| JournalGate {
            gate: &r.name,
            status: r.status.label(),
            failing: counts_as_failure(r, ci),
            duration_ms: r.duration.as_millis(),
            files: r.files,
        })
        .collect()
}

/// Every stop-phase gate over the whole project, inside the stop budget.
fn stop_gates(
    mut project: Project,
    env: &Environment,
    started: Instant,
) -> Result<Vec<GateResult>, StopError> {
    let root = project.root().to_path_buf();
    let all = project.all_files().map_err(|e| StopError::Io {
        what: "list files in",
        path: root.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let plan = project.plan(&all, &all, Phase::Stop, &[]);
    let config = &project.config;
    let limits = Limits {
        jobs: config.settings.jobs,
        deadline: Some(started + config.settings.hooks.stop_budget),
    };
    Ok(runner::run_recorded(
        config,
        &plan,
        &limits,
        env,
        false,
        Phase::Stop,
        &|_| {},
    ))
}

#[derive(Debug, Serialize, Deserialize)]
struct Progress {
    fingerprint: String,
    unchanged_stops: u32,
}

/// What "no progress" compares: the working tree against HEAD (tracked changes and untracked
/// files, with contents) and which gates fail with what output. ralph-gate's own state
/// (`.ralph/`, `.claude/`) is left out: it changes at every stop by design.
fn fingerprint(ws: &Path, results: &[GateResult], ci: bool) -> String {
    let mut h = blake3::Hasher::new();
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(ws)
            .args(args)
            .env("LC_ALL", "C")
            .output()
            .map(|o| o.stdout)
            .unwrap_or_default()
    };
    let outside_state = ["--", ".", ":(exclude).ralph", ":(exclude).claude"];
    h.update(&git(&[
        &["diff", "HEAD", "--binary", "--no-color"][..],
        &outside_state[..],
    ]
    .concat()));
    h.update(&git(&[
        &["diff", "--cached", "--binary", "--no-color"][..],
        &outside_state[..],
    ]
    .concat()));
    let untracked = git(&[
        &["ls-files", "-z", "--others", "--exclude-standard"][..],
        &outside_state[..],
    ]
    .concat());
    for name in untracked.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        h.update(name);
        let path = ws.join(std::ffi::OsStr::new(&*String::from_utf8_lossy(name)));
        if let Ok(bytes) = std::fs::read(path) {
            h.update(blake3::hash(&bytes).as_bytes());
        }
    }
    for r in results.iter().filter(|r| counts_as_failure(r, ci)) {
        h.update(r.name.as_bytes());
        h.update(crate::report::text::strip_ansi(&r.output).as_bytes());
    }
    h.finalize().to_hex().to_string()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[derive(Serialize)]
struct JournalGate<'a> {
    gate: &'a str,
    status: &'static str,
    failing: bool,
    duration_ms: u128,
    files: usize,
}

/// One line of `.ralph/journal.jsonl`.
#[derive(Serialize)]
struct Entry<'a> {
    time: String,
    session: &'a str,
    loop_file: String,
    iteration: u64,
    promise_expected: Option<&'a str>,
    promise_seen: Option<&'a str>,
    promise_source: TextSource,
    stop_hook_active: bool,
    unchanged_stops: u32,
    gates: Vec<JournalGate<'a>>,
    decision: &'static str,
    outcome: Outcome,
    why: &'a str,
}

fn journal(ws: &Path, entry: &Entry<'_>) -> Result<(), StopError> {
    files::ignore_own_state(ws);
    let dir = ralph_dir(ws);
    let path = dir.join("journal.jsonl");
    let line = serde_json::to_string(entry).expect("journal entry serialises");
    atomic::append_line(&path, &dir.join("locks/journal.lock"), &line)
        .map_err(io("append to", &path))
}

/// Used by `loop start` for `started_at`.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
