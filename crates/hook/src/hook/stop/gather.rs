//! Every fact of a stop, found before anything is decided. The only things done here are
//! those that must come first: what the session's shell commands changed is put back before
//! anything is read, the session's loop is claimed (its lock held to the end of the stop),
//! and a held goal seen for the first time gets its loop, pinned as it is found.

use super::{goal_loop, pins, verify, StopError, Stopping};
use crate::hook::promise;
use crate::hook::Ask;
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::goals::Goal;
use ralph_loop::loops::{self, progress, Claimed, LoopState, Orphan};
use ralph_plan::project::{OpenError, Project};
use ralph_runner::runner::{GateResult, Reuse};
use ralph_surface::differential;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a stop found.
pub enum Found {
    /// An iteration of `loop run`: its driver judges it when the agent's process ends.
    RunIteration,
    /// The stop came while the session's shell command `command` still ran: from inside it
    /// (`ralph-gate hook stop` run by the agent), not the agent's own stop.
    InsideCommand { command: String },
    /// The loop ended or changed hands while this stop waited for it.
    Gone,
    /// The session's loop files are gone without ralph-gate ending them.
    Orphaned(Vec<Orphan>),
    /// No loop of this session. `gated`: the stop gates' results, when `gate_every_stop`
    /// holds every stop to them; `unreadable`: state files that could not be read.
    NoLoop {
        unreadable: Vec<String>,
        gated: Option<Gated>,
    },
    /// A goal's loop whose goal holds nothing any more, for the reason `why`.
    GoalOver { path: PathBuf, why: String },
    /// A loop's stop (boxed: it holds everything the stop saw).
    Loop(Box<LoopStop>),
}

/// `gate_every_stop` without a loop: the stop gates' results.
pub struct Gated {
    pub results: Vec<GateResult>,
    pub block_cap: u32,
    pub ci: bool,
}

/// A loop's stop: the loop, its goal, and what was seen of it.
pub struct LoopStop {
    pub path: PathBuf,
    pub state: LoopState,
    pub goal: Option<Goal>,
    /// What the stop saw, or why the config the loop is judged with does not load.
    pub seen: Result<Seen, OpenError>,
    /// Stops in a row with nothing changed that end the loop as stuck.
    pub stuck_after: u32,
    /// The loop's lock, when this stop claimed it: held until the stop is carried out, so
    /// concurrent stops of one loop take turns.
    pub guard: Option<ralph_base::atomic::Lock>,
}

/// What a loop's stop saw: the promise, the pin, the gates, the progress, and the notes a
/// person should read in the journal.
pub struct Seen {
    pub loop_file: String,
    pub promise: Option<String>,
    pub misplaced: bool,
    pub pinning: pins::Pinning,
    pub hold: Option<String>,
    pub results: Vec<GateResult>,
    pub progress: progress::Progress,
    pub block_cap: u32,
    /// Strict: a skipped gate fails (CI, `RALPH_GATE_STRICT`).
    pub ci: bool,
    pub notes: Vec<String>,
}

/// Gathers a session's stop.
pub fn stop(at: &Stopping<'_>, base: &Path, started: Instant) -> Result<Found, StopError> {
    let Stopping {
        ask, env, layout, ..
    } = *at;
    if env
        .loop_run
        .as_deref()
        .is_some_and(|run| loops::is_run(layout, run))
    {
        return Ok(Found::RunIteration);
    }
    if let Some(command) = crate::hook::shell_effect::at_stop(layout, &ask.session) {
        return Ok(Found::InsideCommand { command });
    }
    let (path, state, guard) = match claim(at, base)? {
        Claimed::Loop { path, state, guard } => (path, *state, guard),
        Claimed::Gone => return Ok(Found::Gone),
        Claimed::None { unreadable } => return no_loop(at, base, started, unreadable),
    };
    let goal = match goal_loop::now(ask, env, &state) {
        goal_loop::Now::Over(why) => return Ok(Found::GoalOver { path, why }),
        goal_loop::Now::Held(g) => Some(g),
        goal_loop::Now::NotAGoal => None,
    };
    let mut found = of_loop(at, path, state, started, goal)?;
    found.guard = Some(guard);
    Ok(Found::Loop(Box::new(found)))
}

/// The session's loop, claimed; a held goal with no loop yet gets one first.
fn claim(at: &Stopping<'_>, base: &Path) -> Result<Claimed, StopError> {
    let (ask, layout) = (at.ask, at.layout);
    Ok(match loops::claim(layout, &ask.session, ask.agent)? {
        Claimed::None { unreadable } if goal_loop::start(ask, at.env, layout, base, at.config)? => {
            match loops::claim(layout, &ask.session, ask.agent)? {
                Claimed::None { .. } => Claimed::None { unreadable },
                c => c,
            }
        }
        c => c,
    })
}

/// A stop with no loop of this session: its orphans, else what `gate_every_stop` asks.
fn no_loop(
    at: &Stopping<'_>,
    base: &Path,
    started: Instant,
    unreadable: Vec<String>,
) -> Result<Found, StopError> {
    let (ask, env) = (at.ask, at.env);
    let orphans = loops::orphans_of(at.layout, &ask.session, ask.agent);
    if !orphans.is_empty() {
        return Ok(Found::Orphaned(orphans));
    }
    let gated = match Project::open(base, at.config) {
        Ok(mut project) if project.config.settings.hooks.gate_every_stop => {
            let deadline = started + project.config.settings.hooks.stop_budget;
            let root = project.root().to_path_buf();
            let results = verify::stop_gates(&mut project, env, deadline, &[], Reuse::Everything)
                .map_err(|source| StopError::Files { root, source })?;
            Some(Gated {
                results,
                block_cap: ask.agent.block_cap(env),
                ci: env.strict(),
            })
        }
        _ => None,
    };
    Ok(Found::NoLoop { unreadable, gated })
}

/// Gathers the stop of the loop at `path` (read as `state`).
pub fn of_loop(
    at: &Stopping<'_>,
    path: PathBuf,
    state: LoopState,
    started: Instant,
    goal: Option<Goal>,
) -> Result<LoopStop, StopError> {
    let Stopping {
        ask,
        env,
        layout,
        config,
        ..
    } = *at;
    // The loop's project, whatever folder the agent stops in: the root its gates were pinned
    // in, else (a loop nobody pinned yet) the workspace the loop lives in.
    let loop_file = loops::key(&path);
    let the_loop = pins::Read::of(layout, &loop_file, &state);
    let root = the_loop
        .pinned_root()
        .unwrap_or_else(|| layout.root().to_path_buf());
    let (seen, stuck_after) = match Project::open(&root, config) {
        Ok(mut project) => {
            let held = goal.is_some();
            let seen = Seen::gather(ask, env, layout, the_loop, &mut project, started, held)?;
            let stuck_after = at
                .stuck_after
                .unwrap_or(project.config.settings.hooks.stuck_after);
            (Ok(seen), stuck_after)
        }
        Err(e) => (Err(e), 0),
    };
    Ok(LoopStop {
        path,
        state,
        goal,
        seen,
        stuck_after,
        guard: None,
    })
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
        pinning
            .excuse_presets_gone(project, &mut notes)
            .map_err(files_error)?;
        let expected = state.completion_promise.as_deref().map(promise::normalize);
        // A goal's every stop is its claim of done.
        let promised = goal || (expected.is_some() && expected == promise);
        pinning
            .describe(project, env, promised)
            .map_err(files_error)?;
        let mut judgement = Judgement::prepare(&pinning, project.root(), promised);
        judgement.kept = pinning
            .start_key()
            .map(|key| (ralph_surface::pin::store::Store::of(layout), key));
        let weakened = pinning.hold(&judgement.put_back(), &mut notes);
        let hold = crate::words::pin_hold(&pinning.verdict)
            .or(weakened)
            .or(judgement.hold.take());
        let deadline = started + project.config.settings.hooks.stop_budget;
        let final_run = promised && hold.is_none();
        let mut results =
            verify::for_stop(project, env, deadline, final_run, &mut notes).map_err(files_error)?;
        // Every stop: an agent shown old findings as its own would suppress them.
        judgement.excuse(project, env, deadline, (&pinning, &mut results), &mut notes);
        let hold = match hold {
            None if final_run => {
                judgement.conclude(project, env, deadline, &results, &mut pinning, &mut notes)
            }
            hold => hold,
        };
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
}

/// True when every stop gate passed and verified what it matched.
fn green(results: &[GateResult], strict: bool) -> bool {
    !results.iter().any(|r| r.counts_as_failure(strict))
        && crate::hook::decide::unverified(results, strict).is_empty()
}

/// The judgement of one tree against the loop's start: the tree the final run judges, what a
/// differential run puts back in it, and why the loop is held when that cannot be known.
struct Judgement {
    prepared: Option<differential::Prepared>,
    hold: Option<String>,
    /// Where the tests that ran on the loop's start tree are kept, and their key.
    kept: Option<(ralph_surface::pin::store::Store, String)>,
}

impl Judgement {
    /// Before the final run of a stop that may end the loop (`promised`), with a start tree
    /// to compare with: the tree now and the checks changed since the start.
    fn prepare(pinning: &pins::Pinning, root: &Path, promised: bool) -> Self {
        let (start_tree, start_surface) = pinning.start();
        let Some(start) = start_tree.filter(|_| promised && !pinning.verdict.holds()) else {
            return Self {
                prepared: None,
                hold: None,
                kept: None,
            };
        };
        let surfaces = (start_surface, pinning.surface.as_ref());
        match differential::prepare(root, (start, pinning.start_ignored()), surfaces) {
            Ok(p) => Self {
                prepared: Some(p),
                hold: None,
                kept: None,
            },
            Err(e) => Self {
                prepared: None,
                hold: Some(crate::words::unconfirmed(&e.to_string())),
                kept: None,
            },
        }
    }

    /// The failures of `baseline` gates that are as they were on the start tree, and the
    /// runs that could not start there either, in folders the loop did not touch: passes,
    /// at every stop (the final run's and the others').
    fn excuse(
        &self,
        project: &Project,
        env: &Environment,
        deadline: Instant,
        (pinning, results): (&pins::Pinning, &mut [GateResult]),
        notes: &mut Vec<String>,
    ) {
        let (Some(tree), start_surface) = pinning.start() else {
            return;
        };
        if !super::baseline::asked(&project.config, env.strict(), results) {
            return;
        }
        // A stop with no promise prepares nothing else: the tree is described for this.
        let made;
        let prepared = match self.prepared.as_ref() {
            Some(p) => p,
            None => {
                let surfaces = (start_surface, pinning.surface.as_ref());
                let start = (tree, pinning.start_ignored());
                made = differential::prepare(project.root(), start, surfaces);
                match made.as_ref() {
                    Ok(p) => p,
                    Err(e) => return notes.push(format!("baseline not known: {e}")),
                }
            }
        };
        let start = super::baseline::Start {
            tree,
            kept: self.kept.as_ref(),
            prepared,
        };
        super::baseline::excuse_old_failures(project, env, deadline, &start, results, notes);
    }

    /// The files a differential run puts back, as the surface names them.
    fn put_back(&self) -> std::collections::BTreeSet<String> {
        self.prepared
            .iter()
            .flat_map(|p| p.put_back.iter().map(|b| b.shown.clone()))
            .collect()
    }

    /// What holds the loop after a final run that nothing held before: when every gate
    /// passed, what [`Self::after`] finds; else the losses left to a differential run,
    /// worded as they were found, so the agent reads what it took away beside what fails.
    fn conclude(
        self,
        project: &Project,
        env: &Environment,
        deadline: Instant,
        results: &[GateResult],
        pinning: &mut pins::Pinning,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        if !green(results, env.strict()) {
            let lost = &pinning.deferred;
            return (!lost.is_empty()).then(|| crate::words::surface_hold(lost));
        }
        let hold = self.after(project, env, deadline, (results, pinning), notes);
        if hold.is_some() {
            pinning.keep_start();
        }
        hold
    }

    /// After a green final run: the tree must be the one judged, and the checks as they were
    /// must pass on it too.
    fn after(
        self,
        project: &Project,
        env: &Environment,
        deadline: Instant,
        (results, pinning): (&[GateResult], &pins::Pinning),
        notes: &mut Vec<String>,
    ) -> Option<String> {
        let kept = self.kept;
        let mut p = self.prepared?;
        if let Some(hold) = moved_hold(&p, results, notes) {
            return Some(hold);
        }
        if let Some(changed) = outside_changed(project.root(), results, pinning.since()) {
            let names: Vec<String> = changed
                .iter()
                .map(|c| c.path.display().to_string())
                .collect();
            notes.push(format!(
                "changed outside the work tree after the loop began: {}",
                ralph_base::text::listed(&names, 20)
            ));
            return Some(crate::words::outside_changed(&changed, &p.names()));
        }
        let start = match at_start(
            kept.as_ref(),
            &p,
            project,
            env,
            (deadline, pinning),
            results,
        ) {
            Ok(start) => start,
            Err(why) => {
                notes.push(format!("the tests that ran at the start not known: {why}"));
                return Some(crate::words::unconfirmed(&why.to_string()));
            }
        };
        // What the runners said is their tests', at the start (a case file deleted since)
        // and now.
        let mut said = differential::said::roles(&start.said);
        said.extend(differential::said::by_runners(project.root(), results));
        if let Err(e) = p.also_checks(&said) {
            return Some(crate::words::unconfirmed(&e.to_string()));
        }
        if start.read.is_empty() {
            if let Err(why) = ralph_runner::observe::trace::probe() {
                // Said to the person: the reach rule rests on what runs read.
                notes.push(format!(
                    "what the tests read was not compared with the start's (code moved out of their reach is not seen): runs cannot be observed here ({why})"
                ));
            }
        }
        let unreached = p.out_of_reach(&start.read, &differential::reached(results));
        if !p.changed() {
            return unreached_hold(&unreached, notes).or_else(|| not_run_hold(&start, notes));
        }
        differential(
            project,
            env,
            deadline,
            (&p, results, pinning),
            (&start, &unreached),
            notes,
        )
    }
}

/// Why the loop is held when the tree changed while it was judged, or checked code moved
/// out of every gate's reach.
fn moved_hold(
    p: &differential::Prepared,
    results: &[GateResult],
    notes: &mut Vec<String>,
) -> Option<String> {
    let linked: std::collections::BTreeSet<String> = results
        .iter()
        .flat_map(|r| &r.run_details)
        .flat_map(|d| d.linked.iter().cloned())
        .collect();
    match p.moved_during(&linked) {
        Ok(moved) if moved.is_empty() => {}
        Ok(moved) => {
            notes.push(format!(
                "the work tree changed while judged: {}",
                moved.join(", ")
            ));
            return Some(crate::words::moved_during(&moved));
        }
        Err(e) => return Some(crate::words::unconfirmed(&e.to_string())),
    }
    if p.left_reach.is_empty() {
        return None;
    }
    let moved: Vec<String> = p
        .left_reach
        .iter()
        .map(|(f, t)| format!("{f} -> {t}"))
        .collect();
    notes.push(format!(
        "checked code moved out of every gate's reach: {}",
        moved.join(", ")
    ));
    Some(crate::words::left_reach(&p.left_reach))
}

/// The tests of the loop's start tree, by gate.
#[derive(Default)]
struct AtStart {
    /// Those that ran there and not in the final run.
    not_run: differential::Tests,
    /// Those that ran there, and those of them that failed (of the gates where known).
    ran: differential::Tests,
    failed: differential::Tests,
    /// The project files each test runner's gate read there.
    read: differential::Tests,
    /// What the runners said of the project's files there.
    said: std::collections::BTreeMap<String, ralph_runner::runner::OfTests>,
}

/// The tests that ran on the loop's start tree (kept from an earlier stop, else run now in a
/// checkout of it), and which of them the final run did not run.
fn at_start(
    kept: Option<&(ralph_surface::pin::store::Store, String)>,
    p: &differential::Prepared,
    project: &Project,
    env: &Environment,
    (deadline, pinning): (Instant, &pins::Pinning),
    results: &[GateResult],
) -> Result<AtStart, differential::RunError> {
    let now = differential::ran_or_silent(results);
    let Some(start) = pinning.start().0.filter(|_| !now.is_empty()) else {
        return Ok(AtStart::default());
    };
    let phase = (ralph_config::Phase::Stop, deadline);
    let take = || differential::start_runs(project, env, phase, p, start);
    let at_start = match kept {
        Some((store, key)) => super::start_tests::at_stop(store, key, deadline, take)?,
        None => take()?.into(),
    };
    Ok(AtStart {
        not_run: differential::not_run(&at_start.tests, &now),
        ran: at_start.tests,
        failed: at_start.failed,
        read: at_start.read,
        said: at_start.said,
    })
}

/// The tests of `tests` as a line: each gate's, named.
fn shown(tests: &differential::Tests) -> String {
    let parts: Vec<String> = tests
        .iter()
        .map(|(gate, ids)| {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            format!("{gate}: {}", ids.join(", "))
        })
        .collect();
    parts.join("; ")
}

/// The differential run of a stop whose checks changed: load-bearing, or honest when the tests
/// that ran at the start but not at the end (`not_run`) ran with the checks put back.
fn differential(
    project: &Project,
    env: &Environment,
    deadline: Instant,
    (p, results, pinning): (&differential::Prepared, &[GateResult], &pins::Pinning),
    (start, unreached): (&AtStart, &[differential::Unreached]),
    notes: &mut Vec<String>,
) -> Option<String> {
    let not_run = &start.not_run;
    let clock = Instant::now();
    let outcome = differential::run(
        project,
        env,
        (ralph_config::Phase::Stop, deadline),
        p,
        results,
    );
    let names = p.names();
    let took = clock.elapsed().as_secs_f64();
    match outcome {
        differential::Outcome::Honest { ran: then, read } => {
            let still = differential::not_run(not_run, &then);
            if !still.is_empty() {
                notes.push(format!(
                    "differential run ({took:.1} s): tests that ran at the start did not run even with {} as at the start: {}",
                    ralph_base::text::listed(&names, 20),
                    shown(&still)
                ));
                return Some(crate::words::not_run(&still, true));
            }
            let still = differential::still_unreached(unreached, &read);
            if let Some(hold) = unreached_hold(&still, notes) {
                return Some(hold);
            }
            notes.push(format!(
                "differential run ({took:.1} s): with {} as at the start the stop gates pass: the change is honest",
                ralph_base::text::listed(&names, 20)
            ));
            None
        }
        differential::Outcome::LoadBearing(failing) => {
            let phase = (ralph_config::Phase::Stop, deadline);
            let starts = (&start.ran, &start.failed);
            if let Some(gone) =
                differential::gone_with_their_code(project, env, phase, (p, results), starts)
            {
                let still = differential::still_unreached(unreached, &gone.read);
                let hold = unreached_hold(&still, notes);
                return hold.or_else(|| gone_with_their_code(&gone, not_run, notes));
            }
            let gates: Vec<&str> = failing.iter().map(|f| f.0.as_str()).collect();
            notes.push(format!(
                "differential run ({took:.1} s): with {} as at the start, {} fail: the change is load-bearing",
                ralph_base::text::listed(&names, 20),
                gates.join(", ")
            ));
            Some(crate::words::load_bearing(p, &failing, &pinning.deferred))
        }
        differential::Outcome::Unavailable(why) => {
            notes.push(format!("differential run not made: {why}"));
            Some(crate::words::unconfirmed(&why))
        }
    }
}

/// The hold of a stop whose final run did not run tests that ran at the start, where
/// nothing of the checks changed; `None` when every one ran.
fn not_run_hold(start: &AtStart, notes: &mut Vec<String>) -> Option<String> {
    if start.not_run.is_empty() {
        return None;
    }
    notes.push(format!(
        "tests that ran at the start did not run: {}",
        shown(&start.not_run)
    ));
    Some(crate::words::not_run(&start.not_run, false))
}

/// The hold of a stop whose tests no longer read code they read at the start (see
/// [`differential::Prepared::out_of_reach`]); `None` when there is none.
fn unreached_hold(
    unreached: &[differential::Unreached],
    notes: &mut Vec<String>,
) -> Option<String> {
    if unreached.is_empty() {
        return None;
    }
    let files: Vec<&str> = unreached.iter().map(|u| u.file.as_str()).collect();
    notes.push(format!(
        "code the tests read at the start, still there, that they no longer read: {}",
        files.join(", ")
    ));
    Some(crate::words::out_of_reach(unreached))
}

/// The stop's verdict where the checks changed only by test files deleted with the code they
/// tested: honest, if every other test that ran at the start ran with the rest put back.
fn gone_with_their_code(
    gone: &differential::Gone,
    not_run: &differential::Tests,
    notes: &mut Vec<String>,
) -> Option<String> {
    let still = gone.still_not_run(not_run);
    if !still.is_empty() {
        notes.push(format!(
            "tests that ran at the start did not run even with the checks as at the start: {}",
            shown(&still)
        ));
        return Some(crate::words::not_run(&still, true));
    }
    notes.push(format!(
        "differential run: {} went with the code they tested (their tests passed at the start; put back on the final code they fail only where what they import is gone); the other checks as at the start pass: the change is honest",
        gone.files.join(", ")
    ));
    None
}

/// The files outside the repository that the final run read, or whose runner ran them (those
/// inside it that git ignores included), and that changed after the loop's start (`since`);
/// `None` when there are none.
fn outside_changed(
    root: &Path,
    results: &[GateResult],
    since: Option<i128>,
) -> Option<Vec<ralph_surface::outside::Changed>> {
    use ralph_surface::outside::{changed_since, Read};
    let since = since?;
    let repo = ralph_base::git::toplevel(root).unwrap_or_else(|| root.to_path_buf());
    // What git ignores is asked once, and only when the runner ran something inside the
    // repository or its tests read there.
    let listing = std::cell::OnceCell::new();
    let listed = || {
        listing
            .get_or_init(|| ralph_base::snapshot::ignored(&repo).unwrap_or_default())
            .as_slice()
    };
    let ignored = |path: &Path| {
        path.strip_prefix(&repo)
            .is_ok_and(|rel| listed().iter().any(|i| rel.starts_with(i)))
    };
    let mut reads: Vec<Read> = results
        .iter()
        .flat_map(|r| {
            r.run_details.iter().flat_map(move |d| {
                let read = d.outside.iter().map(|p| (p, false));
                read.chain(d.loaded.iter().map(|p| (p, true)))
                    .map(|(path, loaded)| Read {
                        gate: r.name.clone(),
                        path: path.clone(),
                        loaded,
                        ignored: false,
                        data: false,
                    })
            })
        })
        .map(|mut r| {
            r.ignored = r.loaded && ignored(&r.path);
            r
        })
        .collect();
    // The folders a differential run lends whole, as they are now: what git ignores, and
    // other repositories inside this one (a submodule, a nested clone of cases).
    let lent = || {
        let ignored = listed()
            .iter()
            .filter(|rel| repo.join(rel).is_dir())
            .cloned();
        let nested = ralph_base::snapshot::nested(&repo).unwrap_or_default();
        ignored.chain(nested).collect()
    };
    reads.extend(tests_data_lent(&repo, results, lent));
    let changed = changed_since(&reads, since, &repo);
    (!changed.is_empty()).then_some(changed)
}

/// What the final run's tests opened as theirs (their code read it, their runner collected
/// tests from it, or a compiled test binary of Go's or libtest's opened it) inside a folder
/// git ignores (their cases in
/// `fixtures/generated/`), but what the run wrote there itself. A differential run lends
/// such a folder whole, as it is now: an edit there is in no tree it could put back. A
/// tool's cache (`__pycache__`, `.ralph/`) is lent to none: the differential run judges
/// without it. What only a process the tests started read (a `grep -r` over the tree), or
/// what they only listed, may be anyone's: left to the runs that compare.
/// The same holds inside a submodule or a repository nested in this one, which a checkout
/// links as it is now. `lent`: those folders (relative to `repo`), asked when needed.
fn tests_data_lent(
    repo: &Path,
    results: &[GateResult],
    lent: impl Fn() -> Vec<PathBuf>,
) -> Vec<ralph_surface::outside::Read> {
    use ralph_runner::runner::OfTests;
    let told = results.iter().flat_map(|r| {
        r.run_details.iter().flat_map(move |d| {
            let theirs = d.of_tests.iter().filter(|(_, part)| {
                matches!(part, OfTests::Read | OfTests::Collected | OfTests::Binary)
            });
            theirs.map(move |(path, _)| (r.name.as_str(), d, path))
        })
    });
    let real_repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    let mut folders = None;
    let mut found = Vec::new();
    for (gate, detail, path) in told {
        // The file itself, and where a tracked link it was read through leads.
        let real = path.canonicalize().ok();
        let rels = [
            path.strip_prefix(repo).ok(),
            real.as_deref()
                .and_then(|r| r.strip_prefix(&real_repo).ok()),
        ];
        let own = |rel: &Path| detail.wrote.iter().any(|w| Path::new(w) == rel);
        if rels.iter().flatten().any(|rel| own(rel)) {
            continue;
        }
        let folders = folders.get_or_insert_with(&lent);
        let in_one = |rel: &&Path| {
            differential::lent(rel) && folders.iter().any(|f| rel.starts_with(f) && rel != f)
        };
        let Some(rel) = rels.into_iter().flatten().find(in_one) else {
            continue;
        };
        found.push(ralph_surface::outside::Read {
            gate: gate.to_string(),
            path: repo.join(rel),
            loaded: false,
            ignored: true,
            data: true,
        });
    }
    found
}

impl Seen {
    /// A stop's sight made up for the stop property ([`super::plan::property`]): `flags`
    /// says whether the promise was made (4), misplaced (8), strict (1), and a hold (2).
    pub fn fixed(state: &LoopState, results: Vec<GateResult>, flags: u8) -> Self {
        let expected = state.completion_promise.as_deref().map(promise::normalize);
        Self {
            loop_file: "ralph-loop.local.md".into(),
            promise: (flags & 4 == 4).then_some(expected).flatten(),
            misplaced: flags & 8 == 8,
            pinning: pins::Pinning::fixed(),
            hold: (flags & 2 == 2).then(|| "gates changed".to_string()),
            results,
            progress: progress::Progress {
                fingerprint: String::new(),
                unchanged_stops: u32::from(flags >> 5),
                blocks_in_a_row: u32::from(flags >> 5),
            },
            block_cap: 8,
            ci: flags & 1 == 1,
            notes: Vec::new(),
        }
    }
}
