//! `ralph-gate hook stop`: gathers the facts (loop, promise, pin, gate results, progress),
//! asks `decide`, and carries the decision out: state file, pin, journal, output.

mod goal_loop;
mod pins;
pub mod verify;

use super::decide::{self, Outcome, StateChange, StopFacts};
use super::promise::{self, TextSource};
use super::{Ask, Verdict};
use crate::words as agent;
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::journal::{self, Decision, Entry};
use ralph_loop::loops::{self, progress, Change, Claimed, LoopError};
use ralph_plan::project::Project;
use ralph_runner::runner::{GateResult, Reuse};
use ralph_surface::pin::Verdict as PinVerdict;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error("cannot list the files of {}: {source}", root.display())]
    Files {
        root: PathBuf,
        #[source]
        source: ralph_plan::files::FilesError,
    },
    #[error("cannot append to {}: {source}", path.display())]
    Journal {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Judges a stop of the agent working in `base`, whose loops live in `layout`.
pub fn run(
    ask: &Ask,
    env: &Environment,
    layout: &Layout,
    base: &Path,
    config: Option<&Path>,
) -> Result<Verdict, StopError> {
    // `--config` names a file from where the hook runs, not from the loop's root.
    let config = config.map(|c| base.join(c));
    let config = config.as_deref();
    let started = Instant::now();
    // An iteration of `loop run`: its driver judges it when the agent's process ends.
    if env
        .loop_run
        .as_deref()
        .is_some_and(|run| loops::is_run(layout, run))
    {
        return Ok(Verdict::Silent);
    }
    // What the session's shell commands changed is put back before anything is read. A stop
    // that comes while one of them still runs came from inside it (`ralph-gate hook stop`
    // run by the agent): it is not the agent's stop, and counts for nothing.
    if let Some(command) = &super::shell_effect::at_stop(layout, &ask.session) {
        let _ = journal::append(
            layout,
            Entry::Refused(journal::LoopEvent {
                session: loops::session_key(&ask.session),
                ..journal::LoopEvent::new(
                    format!("session {}", ask.session),
                    "",
                    format!(
                        "a stop while the shell command `{}` ran: not counted",
                        ralph_base::text::shorten(command, 300)
                    ),
                )
            }),
        );
        return Ok(Verdict::Block {
            reason: agent::stop_in_command(command),
            system: None,
        });
    }
    let claimed = match loops::claim(layout, &ask.session, ask.agent)? {
        Claimed::None { unreadable } if goal_loop::start(ask, env, layout, base, config)? => {
            match loops::claim(layout, &ask.session, ask.agent)? {
                Claimed::None { .. } => Claimed::None { unreadable },
                c => c,
            }
        }
        c => c,
    };
    let (loop_path, state, _loop_guard) = match claimed {
        Claimed::Loop { path, state, guard } => (path, *state, guard),
        Claimed::Gone => return Ok(Verdict::Silent),
        Claimed::None { unreadable } => {
            let gone = loops::orphans_of(layout, &ask.session, ask.agent);
            if !gone.is_empty() {
                gone.iter()
                    .for_each(|o| loops::note_orphan(layout, &ask.session, o));
                let (reason, system) = agent::state_gone(&gone);
                return Ok(Verdict::Block {
                    reason,
                    system: Some(system),
                });
            }
            return no_loop(base, config, env, layout, ask, started, &unreadable);
        }
    };
    let goal = match goal_loop::now(ask, env, &state) {
        goal_loop::Now::Over(why) => return goal_loop::end(layout, ask, &loop_path, &why),
        goal_loop::Now::Held(g) => Some(g),
        goal_loop::Now::NotAGoal => None,
    };
    let at = Stopping {
        ask,
        env,
        layout,
        config,
        stuck_after: None,
    };
    let judged = judge(&at, &loop_path, &state, started, goal)?;
    Ok(judged.map_or(Verdict::Silent, |j| j.decision.output))
}

/// A loop's stop, judged and carried out: what the loop was held to and what was found.
pub struct Judged {
    pub decision: decide::StopDecision,
    /// The stop gates that failed.
    pub failing: Vec<String>,
    /// Their errors, worded for an agent that starts afresh.
    pub errors: String,
    /// What holds the loop besides the gates (its pin or surface weakened, tampering).
    pub hold: Option<String>,
}

/// Who stops, where: the stop's ask, the workspace and the config to judge it with.
pub struct Stopping<'a> {
    pub ask: &'a Ask,
    pub env: &'a Environment,
    pub layout: &'a Layout,
    pub config: Option<&'a Path>,
    /// Stops in a row with nothing changed that end the loop as stuck (`None`: the config's
    /// `stuck_after`).
    pub stuck_after: Option<u32>,
}

/// Judges the stop of the loop at `loop_path` (read as `state`), carries the decision out
/// (state file, pin, journal) and returns it; `None` when the loop was cancelled while its
/// gates ran. The one judgement of "done" for a session's stop and for `loop run`'s
/// iterations alike.
pub fn judge(
    at: &Stopping<'_>,
    loop_path: &Path,
    state: &loops::LoopState,
    started: Instant,
    goal: Option<ralph_loop::goals::Goal>,
) -> Result<Option<Judged>, StopError> {
    let Stopping {
        ask,
        env,
        layout,
        config,
        ..
    } = *at;
    // The loop's project, whatever folder the agent stops in: the root its gates were pinned
    // in, else (a loop nobody pinned yet) the workspace the loop lives in.
    let loop_file = loops::key(loop_path);
    let the_loop = pins::Read::of(layout, &loop_file, state);
    let root = the_loop
        .pinned_root()
        .unwrap_or_else(|| layout.root().to_path_buf());
    let mut project = match Project::open(&root, config) {
        Ok(p) => p,
        Err(e) => {
            // Fail closed: a loop may not end on a config nobody can check against.
            let (reason, system) = agent::stop_config_error(&e);
            return Ok(Some(Judged {
                decision: decide::StopDecision {
                    outcome: journal::Outcome::Continue,
                    output: Verdict::Block {
                        reason,
                        system: Some(system),
                    },
                    state: StateChange::SetIteration(state.iteration),
                    why: format!("the config does not load: {e}"),
                },
                failing: Vec::new(),
                errors: String::new(),
                hold: Some("the config does not load".into()),
            }));
        }
    };
    let mut seen = Seen::gather(
        ask,
        env,
        layout,
        the_loop,
        &mut project,
        started,
        goal.is_some(),
    )?;
    let stuck_after = at
        .stuck_after
        .unwrap_or(project.config.settings.hooks.stuck_after);
    let decision = decide::decide(&seen.facts(state, stuck_after, goal.as_ref()));
    seen.note_cap(&decision);
    let change = match decision.state {
        StateChange::Remove => Change::End,
        StateChange::SetIteration(to) => Change::Advance {
            to,
            progress: &seen.progress,
            repin: seen.pinning.repin(),
            goal_seen: goal.as_ref().map(|g| g.mark),
        },
    };
    if !loops::settle(layout, loop_path, change)? {
        return Ok(None);
    }
    seen.note_strengthened();
    let failed: Vec<&GateResult> = seen
        .results
        .iter()
        .filter(|r| r.counts_as_failure(seen.ci))
        .collect();
    let errors = agent::failing_gates(&failed, crate::words::TEXT_CAP);
    let failing = failed.iter().map(|r| r.name.clone()).collect();
    let verdict = goal.and_then(|g| g.verdict);
    let hold = seen.hold.clone();
    record(layout, seen.entry(ask, state, &decision, verdict))?;
    Ok(Some(Judged {
        decision,
        failing,
        errors,
        hold,
    }))
}

/// What a loop's stop found: the promise, the pin, the gates, the progress, and the notes a
/// person should read in the journal.
struct Seen {
    loop_file: String,
    promise: Option<String>,
    misplaced: bool,
    pinning: pins::Pinning,
    hold: Option<String>,
    results: Vec<GateResult>,
    progress: progress::Progress,
    block_cap: u32,
    /// Strict: a skipped gate fails (CI, `RALPH_GATE_STRICT`).
    ci: bool,
    notes: Vec<String>,
}

impl Seen {
    fn gather(
        ask: &Ask,
        env: &Environment,
        layout: &Layout,
        the_loop: pins::Read<'_>,
        project: &mut Project,
        started: Instant,
        goal: bool,
    ) -> Result<Self, StopError> {
        let (loop_file, state) = (the_loop.loop_file.to_string(), the_loop.state);
        let mut notes = Vec::new();
        if state.iteration > 1 && !layout.journal().exists() {
            notes.push(format!(
                "the journal is gone at iteration {}: {} was deleted during the loop",
                state.iteration,
                ralph_base::state::DIR
            ));
        }
        let text = ask.final_text.as_deref();
        let promise = text.and_then(promise::extract);
        let misplaced = promise.is_none() && text.is_some_and(promise::has_tag);
        let files_error = |source| StopError::Files {
            root: layout.root().to_path_buf(),
            source,
        };
        let mut pinning = pins::Pinning::judge(layout, the_loop, &project.config, &mut notes);
        let expected = state.completion_promise.as_deref().map(promise::normalize);
        // A goal's every stop is its claim of done.
        let promised = goal || (expected.is_some() && expected == promise);
        let weakened = pinning
            .surface(project, env, promised, &mut notes)
            .map_err(files_error)?;
        let hold = agent::pin_hold(&pinning.verdict).or(weakened);
        let deadline = started + project.config.settings.hooks.stop_budget;
        let final_run = promised && hold.is_none();
        let results =
            verify::for_stop(project, env, deadline, final_run, &mut notes).map_err(files_error)?;
        let previous = progress::read(&layout.progress(&loop_file)).unwrap_or_else(|e| {
            notes.push(format!(
                "progress record unreadable ({e}); counting from zero"
            ));
            None
        });
        let progress = progress::next(
            previous.as_ref(),
            progress::fingerprint(layout.root(), &results, env.strict()),
            ask.continuing,
        );
        Ok(Self {
            loop_file,
            promise,
            misplaced,
            pinning,
            hold,
            results,
            progress,
            block_cap: ask.agent.block_cap(env),
            ci: env.strict(),
            notes,
        })
    }

    fn facts<'a>(
        &'a self,
        state: &'a loops::LoopState,
        stuck_after: u32,
        goal: Option<&'a ralph_loop::goals::Goal>,
    ) -> StopFacts<'a> {
        StopFacts {
            state,
            promise_seen: self.promise.as_deref(),
            results: &self.results,
            ci: self.ci,
            unchanged_stops: self.progress.unchanged_stops,
            stuck_after,
            hold: self.hold.clone(),
            promise_misplaced: self.misplaced,
            blocks_in_a_row: self.progress.blocks_in_a_row,
            block_cap: self.block_cap,
            goal,
        }
    }

    /// A refusal that likely meets the agent's cap on refusals in a row is worth a note.
    fn note_cap(&mut self, decision: &decide::StopDecision) {
        let (cap, blocks) = (self.block_cap, self.progress.blocks_in_a_row);
        if decision.blocks() && cap > 0 && blocks >= cap {
            self.notes.push(format!(
                "{blocks} refusals in a row with nothing changed: the agent's stop-block cap ({cap}) likely ends its turn here, leaving the loop unfinished"
            ));
        }
    }

    fn note_strengthened(&mut self) {
        if let PinVerdict::Stronger(changes) = &self.pinning.verdict {
            self.notes.push(format!(
                "stop gates strengthened and pinned again: {}",
                changes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }

    /// The journal's line for this stop.
    fn entry(
        self,
        ask: &Ask,
        state: &loops::LoopState,
        decision: &decide::StopDecision,
        goal_verdict: Option<String>,
    ) -> journal::Stop {
        journal::Stop {
            agent: ask.agent,
            block_cap: self.block_cap,
            session: ask.session.clone(),
            loop_file: self.loop_file,
            iteration: state.iteration,
            promise_expected: state.completion_promise.clone(),
            promise_seen: self.promise,
            promise_source: ask.text_source,
            stop_hook_active: ask.continuing,
            unchanged_stops: self.progress.unchanged_stops,
            blocks_in_a_row: self.progress.blocks_in_a_row,
            pin: pins::word(&self.pinning.verdict).to_string(),
            gates: journal_gates(&self.results, self.ci),
            decision: if decision.blocks() {
                Decision::Block
            } else {
                Decision::Allow
            },
            outcome: decision.outcome,
            why: decision.why.clone(),
            notes: self.notes,
            goal_verdict,
        }
    }
}

/// A stop with no loop of this session: `gate_every_stop` may still hold it to the gates.
fn no_loop(
    base: &Path,
    config: Option<&Path>,
    env: &Environment,
    layout: &Layout,
    ask: &Ask,
    started: Instant,
    unreadable: &[String],
) -> Result<Verdict, StopError> {
    if let Ok(project) = Project::open(base, config) {
        if project.config.settings.hooks.gate_every_stop {
            return gate_plain_stop(project, env, layout, ask, started);
        }
    }
    if unreadable.is_empty() {
        return Ok(Verdict::Silent);
    }
    Ok(Verdict::Allow {
        system: Some(agent::unreadable_loops(unreadable)),
    })
}

/// `gate_every_stop` without a loop: the stop gates must pass before the agent may stop, but
/// there is no promise, prompt or iteration count.
fn gate_plain_stop(
    mut project: Project,
    env: &Environment,
    layout: &Layout,
    ask: &Ask,
    started: Instant,
) -> Result<Verdict, StopError> {
    let deadline = started + project.config.settings.hooks.stop_budget;
    let root = project.root().to_path_buf();
    let results = verify::stop_gates(&mut project, env, deadline, &[], Reuse::Everything)
        .map_err(|source| StopError::Files { root, source })?;
    let failing: Vec<&GateResult> = results
        .iter()
        .filter(|r| r.counts_as_failure(env.strict()))
        .collect();
    let output = if failing.is_empty() {
        Verdict::Silent
    } else {
        let (reason, system) = agent::plain_stop(&failing);
        Verdict::Block {
            reason,
            system: Some(system),
        }
    };
    let blocks = output.blocks();
    record(
        layout,
        journal::Stop {
            agent: ask.agent,
            block_cap: ask.agent.block_cap(env),
            session: ask.session.clone(),
            loop_file: String::new(),
            iteration: 0,
            promise_expected: None,
            promise_seen: None,
            promise_source: TextSource::None,
            stop_hook_active: ask.continuing,
            unchanged_stops: 0,
            blocks_in_a_row: 0,
            pin: String::new(),
            gates: journal_gates(&results, env.strict()),
            decision: if blocks {
                Decision::Block
            } else {
                Decision::Allow
            },
            outcome: if blocks {
                Outcome::Continue
            } else {
                Outcome::Completed
            },
            why: if blocks {
                "no loop; gate_every_stop and gates fail"
            } else {
                "no loop; gate_every_stop and every gate passes"
            }
            .into(),
            notes: Vec::new(),
            goal_verdict: None,
        },
    )?;
    Ok(output)
}

/// Journals one stop decision; a stop that cannot be recorded is not let through.
fn record(layout: &Layout, stop: journal::Stop) -> Result<(), StopError> {
    journal::append(layout, Entry::Stop(Box::new(stop))).map_err(|source| StopError::Journal {
        path: layout.journal(),
        source,
    })
}

fn journal_gates(results: &[GateResult], ci: bool) -> Vec<journal::Gate> {
    results.iter().map(|r| journal::Gate::of(r, ci)).collect()
}
