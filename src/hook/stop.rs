//! `ralph-gate hook stop`: gathers the facts (loop, promise, pin, gate results, progress),
//! asks `decide`, and carries the decision out: state file, pin, journal, output.

mod pins;
mod progress;
mod verify;

use super::decide::{self, Outcome, StateChange, StopFacts};
use super::promise::{self, TextSource};
use super::protocol::{cap, TEXT_CAP};
use super::{Ask, Verdict};
use crate::agent::Agent;
use crate::atomic;
use crate::env::Environment;
use crate::files;
use crate::journal;
use crate::loop_state::{self, LoopState};
use crate::pin::{store::Store, Verdict as PinVerdict};
use crate::project::Project;
use crate::report::counts_as_failure;
use crate::runner::{GateResult, Reuse};
use serde::Serialize;
use std::path::{Path, PathBuf};
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

/// Where a loop's "has anything changed" record lives.
pub fn progress_path(ws: &Path, loop_file: &str) -> PathBuf {
    progress::path(ws, loop_file)
}

pub fn ralph_dir(ws: &Path) -> PathBuf {
    ws.join(files::STATE_DIR)
}

/// A loop's state file and what it held when read.
type Found = (PathBuf, LoopState);

/// The loop this stop belongs to, claimed for the session if it was unclaimed, and the state
/// files that could not be read.
fn find_loop(
    ws: &Path,
    session: &str,
    agent: Agent,
) -> Result<(Option<Found>, Vec<String>), StopError> {
    if !loop_state::maybe_any(ws) {
        return Ok((None, Vec::new()));
    }
    // Listing, claiming and selecting happen under the lock: a listing made without it can
    // miss a state file that another stop is renaming into place at that moment.
    let lock_path = ralph_dir(ws).join("locks/stop.lock");
    let _guard = atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
    let files = loop_state::list(ws);
    let unreadable: Vec<String> = files
        .iter()
        .filter_map(|f| {
            f.state
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", f.path.display()))
        })
        .collect();
    let ours = match loop_state::select(&files, session, agent) {
        Some(f) => {
            let mut state = f.state.clone().expect("select returns readable states");
            if state.session_id.is_empty() && !session.is_empty() {
                state.claim(session);
                atomic::write(&f.path, state.render().as_bytes())
                    .map_err(io("claim the loop in", &f.path))?;
            }
            Some((f.path.clone(), state))
        }
        None => None,
    };
    Ok((ours, unreadable))
}

/// What a stop finds.
enum Claimed {
    /// No loop of this session (and these state files could not be read).
    None { unreadable: Vec<String> },
    /// The loop ended or changed hands while this stop waited for it.
    Gone,
    /// This session's loop, read again under its own lock, which is held to the end of the
    /// stop: concurrent stops of one loop take turns, so each decides on the true iteration
    /// (the limit is never overrun), while other sessions' loops are not held up.
    Loop {
        path: PathBuf,
        state: Box<LoopState>,
        guard: atomic::Lock,
    },
}

fn claim(ws: &Path, session: &str, agent: Agent) -> Result<Claimed, StopError> {
    let (ours, unreadable) = find_loop(ws, session, agent)?;
    for u in &unreadable {
        let _ = journal::append(
            ws,
            &journal::Event {
                session,
                ..journal::Event::new(
                    "state_unreadable",
                    format!("session {session}"),
                    "",
                    format!("{u}: this loop is not enforced until the file is fixed or removed"),
                )
            },
        );
    }
    let Some((path, state)) = ours else {
        return Ok(Claimed::None { unreadable });
    };
    let lock = ralph_dir(ws)
        .join("locks")
        .join(format!("{}.lock", loop_state::key(&path)));
    let guard = atomic::lock(&lock).map_err(io("lock", &lock))?;
    Ok(match loop_state::read(&path) {
        Ok(fresh) if fresh.session_id == state.session_id => Claimed::Loop {
            path,
            state: Box::new(fresh),
            guard,
        },
        _ => Claimed::Gone,
    })
}

pub fn run(
    ask: &Ask,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<Verdict, StopError> {
    let started = Instant::now();
    let session = ask.session.clone();
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = workspace(env, &base);

    let (loop_path, state, _loop_guard) = match claim(&ws, &session, ask.agent)? {
        Claimed::Loop { path, state, guard } => (path, *state, guard),
        Claimed::Gone => return Ok(Verdict::Silent),
        Claimed::None { unreadable } => {
            notice_deleted_loops(&ws, &session);
            return no_loop(&base, config, env, &ws, ask, started, &unreadable);
        }
    };
    let loop_file = loop_state::key(&loop_path);

    let mut notes = Vec::new();
    if state.iteration > 1 && !journal::path(&ws).exists() {
        notes.push(format!(
            "the journal is gone at iteration {}: {} was deleted during the loop",
            state.iteration,
            files::STATE_DIR
        ));
    }
    let (text, source) = (ask.final_text.clone(), ask.text_source);
    let seen = text.as_deref().and_then(promise::extract);
    let misplaced = seen.is_none() && text.as_deref().is_some_and(promise::has_tag);
    let mut project = match Project::open(&base, config) {
        Ok(p) => p,
        Err(e) => {
            // Fail closed: a loop may not end on a config nobody can check against.
            return Ok(Verdict::Block {
                reason: cap(&format!("ralph-gate cannot load its config, so the stop gates cannot run. Fix it, then finish the task:\n{e}"), TEXT_CAP),
                system: Some("ralph-gate: config error, loop continues".into()),
            });
        }
    };

    let pinning = pins::Pinning::judge(&ws, &loop_file, &state, &project.config, &mut notes);
    let verdict = &pinning.verdict;
    let hold = pins::hold_reason(verdict);

    let deadline = started + project.config.settings.hooks.stop_budget;
    let stuck_after = project.config.settings.hooks.stuck_after;
    let expected = state.completion_promise.as_deref().map(promise::normalize);
    let promised = matches!((&expected, &seen), (Some(e), Some(s)) if e == s);
    let results = verify::for_stop(
        &mut project,
        env,
        deadline,
        promised && hold.is_none(),
        &mut notes,
    )
    .map_err(|e| StopError::Io {
        what: "list files in",
        path: ws.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;

    let progress_path = progress::path(&ws, &loop_file);
    let previous = progress::read(&progress_path).unwrap_or_else(|e| {
        notes.push(format!(
            "progress record unreadable ({e}); counting from zero"
        ));
        None
    });
    let now = progress::next(
        previous.as_ref(),
        progress::fingerprint(&ws, &results, env.strict()),
        ask.continuing,
    );
    let block_cap = ask.agent.block_cap(env);

    let decision = decide::decide(&StopFacts {
        state: &state,
        promise_seen: seen.as_deref(),
        results: &results,
        ci: env.strict(),
        unchanged_stops: now.unchanged_stops,
        stuck_after,
        hold,
        promise_misplaced: misplaced,
        blocks_in_a_row: now.blocks_in_a_row,
        block_cap,
    });
    if decision.blocks() && block_cap > 0 && now.blocks_in_a_row >= block_cap {
        notes.push(format!(
            "{} refusals in a row with nothing changed: the agent's stop-block cap ({block_cap}) likely ends its turn here, leaving the loop unfinished",
            now.blocks_in_a_row
        ));
    }

    let settled = settle(
        &Settle {
            ws: &ws,
            loop_path: &loop_path,
            loop_file: &loop_file,
            pinning: &pinning,
            progress_path: &progress_path,
            progress: &now,
        },
        &decision,
    )?;
    if !settled {
        return Ok(Verdict::Silent);
    }
    if let PinVerdict::Stronger(changes) = verdict {
        notes.push(format!(
            "stop gates strengthened and pinned again: {}",
            changes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    journal::append(
        &ws,
        &Entry {
            time: journal::now(),
            event: "stop",
            agent: ask.agent,
            block_cap,
            session: &session,
            loop_file: loop_file.clone(),
            iteration: state.iteration,
            promise_expected: state.completion_promise.as_deref(),
            promise_seen: seen.as_deref(),
            promise_source: source,
            stop_hook_active: ask.continuing,
            unchanged_stops: now.unchanged_stops,
            blocks_in_a_row: now.blocks_in_a_row,
            pin: pins::word(verdict),
            gates: journal_gates(&results, env.strict()),
            decision: if decision.blocks() { "block" } else { "allow" },
            outcome: decision.outcome,
            why: &decision.why,
            notes: &notes,
        },
    )
    .map_err(io("append to", &journal::path(&ws)))?;
    Ok(decision.output)
}

/// What a stop changes besides its answer, for [`settle`].
struct Settle<'a> {
    ws: &'a Path,
    loop_path: &'a Path,
    loop_file: &'a str,
    pinning: &'a pins::Pinning,
    progress_path: &'a Path,
    progress: &'a progress::Progress,
}

/// Carries the decision out under the stop lock: the loop ends (state file, progress and pin
/// removed) or counts one more iteration (and is pinned again when the pin says so). False
/// when the loop was cancelled while the gates ran: nothing is left to hold the agent to.
fn settle(s: &Settle<'_>, decision: &decide::StopDecision) -> Result<bool, StopError> {
    let lock_path = ralph_dir(s.ws).join("locks/stop.lock");
    let _guard = atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
    match (&decision.state, loop_state::read(s.loop_path)) {
        // Cancelled while the gates ran: nothing left to hold the agent to.
        (_, Err(_)) if !s.loop_path.exists() => return Ok(false),
        (StateChange::Remove, _) => {
            std::fs::remove_file(s.loop_path).map_err(io("remove", s.loop_path))?;
            let _ = std::fs::remove_file(s.progress_path);
            s.pinning.store.remove(s.loop_file);
        }
        (StateChange::SetIteration(n), Ok(mut fresh)) => {
            fresh.set_iteration((*n).max(fresh.iteration.saturating_add(1)));
            if s.pinning.verdict.repins() {
                s.pinning
                    .repin(s.loop_file, &mut fresh)
                    .map_err(io("write the pin in", s.pinning.store.dir()))?;
            }
            atomic::write(s.loop_path, fresh.render().as_bytes())
                .map_err(io("update", s.loop_path))?;
            let record = serde_json::to_vec(s.progress).expect("serialises");
            atomic::write(s.progress_path, &record).map_err(io("write", s.progress_path))?;
        }
        (StateChange::SetIteration(_), Err(e)) => {
            return Err(StopError::Io {
                what: "re-read",
                path: s.loop_path.to_path_buf(),
                source: std::io::Error::other(e),
            })
        }
    }
    Ok(true)
}

/// Pinned loops whose state file is gone without ralph-gate ending or cancelling them: the
/// file was deleted by hand (or by a tool). Journaled once, then forgotten.
fn notice_deleted_loops(ws: &Path, session: &str) {
    let store = Store::for_workspace(ws);
    for (loop_file, record) in store.pinned() {
        if loop_state::exists(ws, &loop_file) {
            continue;
        }
        let _ = journal::append(
            ws,
            &journal::Event {
                session,
                ..journal::Event::new(
                    "state_deleted",
                    format!("noticed at a stop of session {session}"),
                    &loop_file,
                    format!(
                        "the loop's state file was deleted outside ralph-gate (loop of session {}, started {})",
                        if record.session.is_empty() { "(unclaimed)" } else { &record.session },
                        record.started_at.as_deref().unwrap_or("?")
                    ),
                )
            },
        );
        store.remove(&loop_file);
    }
}

/// A stop with no loop of this session: `gate_every_stop` may still hold it to the gates.
fn no_loop(
    base: &Path,
    config: Option<&Path>,
    env: &Environment,
    ws: &Path,
    ask: &Ask,
    started: Instant,
    unreadable: &[String],
) -> Result<Verdict, StopError> {
    if let Ok(project) = Project::open(base, config) {
        if project.config.settings.hooks.gate_every_stop {
            return gate_plain_stop(project, env, ws, ask, started);
        }
    }
    if unreadable.is_empty() {
        return Ok(Verdict::Silent);
    }
    Ok(Verdict::Allow {
        system: Some(cap(
            &format!(
                "ralph-gate: cannot read loop state ({}); that loop is not being enforced.",
                unreadable.join("; ")
            ),
            TEXT_CAP,
        )),
    })
}

/// `gate_every_stop` without a loop: the stop gates must pass before the agent may stop, but
/// there is no promise, prompt or iteration count.
fn gate_plain_stop(
    mut project: Project,
    env: &Environment,
    ws: &Path,
    ask: &Ask,
    started: Instant,
) -> Result<Verdict, StopError> {
    let session = ask.session.as_str();
    let deadline = started + project.config.settings.hooks.stop_budget;
    let results =
        verify::stop_gates(&mut project, env, deadline, &[], Reuse::Everything).map_err(|e| {
            StopError::Io {
                what: "list files in",
                path: ws.to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            }
        })?;
    let failing: Vec<&GateResult> = results
        .iter()
        .filter(|r| counts_as_failure(r, env.strict()))
        .collect();
    let output = if failing.is_empty() {
        Verdict::Silent
    } else {
        let per = (TEXT_CAP / failing.len()).saturating_sub(200).max(300);
        let mut reason = format!(
            "ralph-gate: {} failing. Fix them before you stop:\n",
            crate::text::plural(failing.len(), "stop gate is", "stop gates are")
        );
        for r in &failing {
            reason.push_str(&super::post_tool_use::gate_section(r, per));
        }
        Verdict::Block {
            reason: cap(&reason, TEXT_CAP),
            system: Some(format!(
                "ralph-gate: {} failing",
                crate::text::plural(failing.len(), "gate", "gates")
            )),
        }
    };
    let blocks = output.blocks();
    journal::append(
        ws,
        &Entry {
            time: journal::now(),
            event: "stop",
            agent: ask.agent,
            block_cap: ask.agent.block_cap(env),
            session,
            loop_file: String::new(),
            iteration: 0,
            promise_expected: None,
            promise_seen: None,
            promise_source: TextSource::None,
            stop_hook_active: ask.continuing,
            unchanged_stops: 0,
            blocks_in_a_row: 0,
            pin: "",
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
            notes: &[],
        },
    )
    .map_err(io("append to", &journal::path(ws)))?;
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

#[derive(Serialize)]
struct JournalGate<'a> {
    gate: &'a str,
    status: &'static str,
    failing: bool,
    duration_ms: u128,
    files: usize,
}

/// One stop decision in `.ralph/journal.jsonl`.
#[derive(Serialize)]
struct Entry<'a> {
    time: String,
    event: &'static str,
    agent: Agent,
    /// Refusals in a row the agent allows before it ends the turn anyway (0: none known).
    block_cap: u32,
    session: &'a str,
    loop_file: String,
    iteration: u64,
    promise_expected: Option<&'a str>,
    promise_seen: Option<&'a str>,
    promise_source: TextSource,
    stop_hook_active: bool,
    unchanged_stops: u32,
    blocks_in_a_row: u32,
    /// How the gates in force compare with the loop's pin.
    pin: &'static str,
    gates: Vec<JournalGate<'a>>,
    decision: &'static str,
    outcome: Outcome,
    why: &'a str,
    /// Tampering and other things a person should know about this stop.
    notes: &'a [String],
}
