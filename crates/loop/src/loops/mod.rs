//! A loop's life, in one place: started (`loop start`), claimed by the first session whose
//! hook comes in it, advanced one iteration at each refused stop, and ended (completed, at its
//! limit, stuck, cancelled). The stop hook, the `loop` commands and the dashboard call these;
//! nothing else writes a loop's state file, progress record or pin copy, but for
//! [`crate::watch::restore`] putting back what an agent's shell command changed (told of
//! every write here through `watch::Store::accept`).
//!
//! The state file's format is in [`file`]; "has anything changed since the last stop" is in
//! [`progress`].

mod file;
pub mod progress;

pub use file::*;

use crate::journal::{self, Entry, LoopEvent};
use ralph_base::state::Layout;
use ralph_surface::pin::{self, store::Store, Pin};
use ralph_surface::surface::Surface;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: ReadError,
    },
    #[error("{0}")]
    Pick(String),
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> LoopError + 'a {
    move |source| LoopError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// What a new loop is.
pub struct Spec<'a> {
    pub prompt: &'a str,
    pub max_iterations: u64,
    pub promise: Option<&'a str>,
    /// The session that owns it (empty: the first to stop claims it).
    pub session: &'a str,
    pub agent: ralph_base::agent::Agent,
    /// The stop gates it is held to, when the config loads (else its first stop pins them).
    pub pin: Option<&'a Pin>,
    /// The verification surface it is held to, described with the pin.
    pub surface: Option<&'a Surface>,
    /// Who starts it, for the journal.
    pub who: String,
    /// It holds the session's own goal, whose condition is the prompt, read this far
    /// ([`crate::goals::Goal::mark`]).
    pub goal: Option<u64>,
}

/// What a loop starting now is held to: the stop gates in force and the verification surface,
/// `None` where the surface cannot be described (the caller decides whether the gates alone
/// are pinned then). The one place `loop start` and a goal's first stop take them.
pub fn held_now(
    project: &mut ralph_plan::project::Project,
    env: &ralph_base::env::Environment,
) -> (Pin, Option<Surface>) {
    let surface = ralph_surface::surface::of_project(project, env).ok();
    (pin::of(&project.config), surface)
}

/// Starts a loop: its state file (the main one, or a further one with an id), its pin (in
/// the state file and the copy), and a journal line. Returns the state file's path.
pub fn start(layout: &Layout, spec: &Spec<'_>) -> Result<PathBuf, LoopError> {
    let dir = layout.loop_dir(spec.agent);
    let main = dir.join(MAIN_FILE);
    // A goal's loop and a `loop run`'s never take the main file, which the official
    // plugin's own stop hook also reads and would feed back as a prompt.
    let own_file = spec.goal.is_some() || spec.session == ralph_base::state::RUN_SESSION;
    let (path, id) = if main.exists() || own_file {
        let id = new_id();
        (dir.join(format!("ralph-loop-{id}.local.md")), Some(id))
    } else {
        (main, None)
    };
    let mut state = LoopState::new(
        spec.prompt,
        spec.max_iterations,
        spec.promise,
        spec.session,
        id.as_deref(),
        &journal::now(),
        spec.agent,
    );
    if let Some(mark) = spec.goal {
        state.mark_goal();
        state.set_goal_seen(mark);
    }
    let loop_file = key(&path);
    // A progress record left by an earlier loop of this file name must not count here.
    let _ = std::fs::remove_file(layout.progress(&loop_file));
    // A person starts this loop anew: a pin of an earlier loop of this file name goes.
    Store::of(layout).remove(&loop_file);
    if let Some(pin) = spec.pin {
        pin_to(
            layout,
            &loop_file,
            &mut state,
            (pin, spec.surface),
            Tree::Now,
        )?;
    }
    ralph_base::atomic::write(&path, state.render().as_bytes()).map_err(io("write", &path))?;
    crate::watch::Store::of(layout).accept(layout);
    let _ = journal::append(
        layout,
        Entry::Start(LoopEvent::new(
            spec.who.clone(),
            &loop_file,
            first_line(spec.prompt),
        )),
    );
    Ok(path)
}

/// Which work tree a loop's pin holds as its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    /// The work tree as it is now: a loop starting, or a person approving.
    Now,
    /// The one the loop's pin already holds (now, when it holds none): a stop pinning again.
    Kept,
}

/// Holds the loop `loop_file` to `pin` and `surface`: the state file's line (in `state`,
/// written by the caller) and the copy outside `.ralph/`, with the start tree `tree` says.
pub fn pin_to(
    layout: &Layout,
    loop_file: &str,
    state: &mut LoopState,
    (pin, surface): (&Pin, Option<&Surface>),
    tree: Tree,
) -> Result<(), LoopError> {
    let store = Store::of(layout);
    let kept = match tree {
        Tree::Kept => store
            .read(loop_file)
            .ok()
            .flatten()
            .filter(|r| r.started_at == state.started_at && r.tree.is_some())
            .map(|r| (r.tree, r.ignored, r.since_ns)),
        Tree::Now => None,
    };
    let root = if pin.root.is_empty() {
        layout.root()
    } else {
        Path::new(&pin.root)
    };
    // Outside git there is no tree: the loop is then held by its surface alone.
    let (tree, ignored, since_ns) = kept.unwrap_or_else(|| {
        // Taken before the tree: a file changed while it is read counts as changed after.
        let since = i64::try_from(ralph_base::clock::coarse_now()).ok();
        let tree = ralph_base::snapshot::work_tree(root).ok();
        (tree, ralph_base::snapshot::ignored_state(root).ok(), since)
    });
    let record = pin::Record {
        pin: pin.clone(),
        started_at: state.started_at.clone(),
        session: state.session_id.clone(),
        surface: surface.cloned(),
        tree,
        ignored,
        since_ns,
    };
    state.set_pin(&record.seal());
    store
        .write(loop_file, &record)
        .map_err(io("write the pin in", store.dir()))
}

/// What a stop finds.
pub enum Claimed {
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
        guard: ralph_base::atomic::Lock,
    },
}

/// The loop a stop of `session` belongs to, claimed for the session if it was unclaimed. The
/// state files that cannot be read are journaled: their loops are not enforced.
pub fn claim(
    layout: &Layout,
    session: &str,
    agent: ralph_base::agent::Agent,
) -> Result<Claimed, LoopError> {
    let (ours, unreadable) = find(layout, session, agent)?;
    for u in &unreadable {
        let _ = journal::append(
            layout,
            Entry::StateUnreadable(LoopEvent {
                session: session.to_string(),
                ..LoopEvent::new(
                    format!("session {session}"),
                    "",
                    format!("{u}: this loop is not enforced until the file is fixed or removed"),
                )
            }),
        );
    }
    let Some((path, state)) = ours else {
        return Ok(Claimed::None { unreadable });
    };
    let lock = layout.lock(&key(&path));
    let guard = ralph_base::atomic::lock(&lock).map_err(io("lock", &lock))?;
    Ok(match read(&path) {
        Ok(fresh) if fresh.session_id == state.session_id => Claimed::Loop {
            path,
            state: Box::new(fresh),
            guard,
        },
        _ => Claimed::Gone,
    })
}

/// Claims the unclaimed loop a hook of `session` would belong to. Called by every hook, so
/// the session's first hook of any kind makes a person's loop the session's, and no stop
/// made up with another session's id can take it over. Best effort: a loop that cannot be
/// claimed here is claimed at the session's first stop.
pub fn claim_early(layout: &Layout, session: &str, agent: ralph_base::agent::Agent) {
    if session.is_empty() || !maybe_any(layout) {
        return;
    }
    let files = list(layout);
    let unclaimed = select(&files, session, agent)
        .and_then(|f| f.state.as_ref().ok())
        .is_some_and(|s| s.session_id.is_empty());
    if unclaimed {
        let _ = find(layout, session, agent);
    }
}

/// A loop's state file and what it held when read.
type Found = (PathBuf, LoopState);

/// The loop this stop belongs to, claimed for the session if it was unclaimed, and the state
/// files that could not be read.
fn find(
    layout: &Layout,
    session: &str,
    agent: ralph_base::agent::Agent,
) -> Result<(Option<Found>, Vec<String>), LoopError> {
    if !maybe_any(layout) {
        return Ok((None, Vec::new()));
    }
    // Listing, claiming and selecting happen under the lock: a listing made without it can
    // miss a state file that another stop is renaming into place at that moment.
    let lock_path = layout.lock("stop");
    let _guard = ralph_base::atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
    let files = list(layout);
    let unreadable: Vec<String> = files
        .iter()
        .filter_map(|f| {
            f.state
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", f.path.display()))
        })
        .collect();
    let ours = match select(&files, session, agent) {
        Some(f) => {
            let mut state = f.state.clone().expect("select returns readable states");
            if state.session_id.is_empty() && !session.is_empty() {
                state.claim(session);
                ralph_base::atomic::write(&f.path, state.render().as_bytes())
                    .map_err(io("claim the loop in", &f.path))?;
                crate::watch::Store::of(layout).accept(layout);
            }
            Some((f.path.clone(), state))
        }
        None => None,
    };
    Ok((ours, unreadable))
}

/// How a stop leaves its loop.
pub enum Change<'a> {
    /// The loop is over (completed, at its limit, stuck).
    End,
    /// One more iteration (at least `to`), with this progress record, and the gates and the
    /// surface pinned again to `repin` when the stop says so.
    Advance {
        to: u64,
        progress: &'a progress::Progress,
        repin: Option<(&'a Pin, Option<&'a Surface>)>,
        /// A held goal's mark at this stop.
        goal_seen: Option<u64>,
    },
}

/// Carries a stop's decision out under the stop lock. False when the loop was cancelled while
/// the gates ran: nothing is left to hold the agent to.
pub fn settle(layout: &Layout, path: &Path, change: Change<'_>) -> Result<bool, LoopError> {
    let lock_path = layout.lock("stop");
    let _guard = ralph_base::atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
    let loop_file = key(path);
    match (change, read(path)) {
        (_, Err(_)) if !path.exists() => return Ok(false),
        (Change::End, _) => end(layout, path)?,
        (
            Change::Advance {
                to,
                progress,
                repin,
                goal_seen,
            },
            Ok(mut fresh),
        ) => {
            fresh.set_iteration(to.max(fresh.iteration.saturating_add(1)));
            if let Some(mark) = goal_seen {
                fresh.set_goal_seen(mark);
            }
            if let Some((pin, surface)) = repin {
                pin_to(layout, &loop_file, &mut fresh, (pin, surface), Tree::Kept)?;
            }
            ralph_base::atomic::write(path, fresh.render().as_bytes())
                .map_err(io("update", path))?;
            let record = serde_json::to_vec(progress).expect("serialises");
            let at = layout.progress(&loop_file);
            ralph_base::atomic::write(&at, &record).map_err(io("write", &at))?;
        }
        (Change::Advance { .. }, Err(source)) => {
            return Err(LoopError::Unreadable {
                path: path.to_path_buf(),
                source,
            })
        }
    }
    crate::watch::Store::of(layout).accept(layout);
    Ok(true)
}

/// Ends a loop: its state file, progress record and pin copy go. The one way a loop ends,
/// whether a stop completes it or a person cancels it.
fn end(layout: &Layout, path: &Path) -> Result<(), LoopError> {
    std::fs::remove_file(path).map_err(io("remove", path))?;
    let loop_file = key(path);
    let _ = std::fs::remove_file(layout.progress(&loop_file));
    Store::of(layout).remove(&loop_file);
    Ok(())
}

/// Ends a loop outside a stop (`loop cancel`, the dashboard), and journals who did it, so an
/// agent that cancels its own loop is seen.
pub fn cancel(layout: &Layout, path: &Path, who: &str) -> Result<(), LoopError> {
    end(layout, path)?;
    crate::watch::Store::of(layout).accept(layout);
    let _ = journal::append(
        layout,
        Entry::Cancel(LoopEvent::new(who, &key(path), "cancelled")),
    );
    Ok(())
}

/// `loop approve`: a person accepts `now` (the gates and the surface in force) as the loop's
/// pin. Returns what changed since the pin it replaces, weakenings of the surface included.
pub fn approve(
    layout: &Layout,
    f: &LoopFile,
    now: (&Pin, &Surface),
    who: &str,
) -> Result<String, LoopError> {
    let (now, surface) = now;
    let mut state = f.state.clone().map_err(|source| LoopError::Unreadable {
        path: f.path.clone(),
        source,
    })?;
    let loop_file = key(&f.path);
    let before = Store::of(layout)
        .read(&loop_file)
        .ok()
        .flatten()
        .filter(|c| c.started_at == state.started_at);
    let changes = match &before {
        Some(b) => {
            let mut all: Vec<String> = pin::compare(&b.pin, now)
                .iter()
                .map(ToString::to_string)
                .collect();
            if let Some(was) = &b.surface {
                let c = ralph_surface::surface::compare(was, surface);
                all.extend(c.weaker.iter().map(|f| format!("weakened: {f}")));
            }
            all
        }
        None => vec!["(no earlier pin could be read)".to_string()],
    };
    pin_to(
        layout,
        &loop_file,
        &mut state,
        (now, Some(surface)),
        Tree::Now,
    )?;
    ralph_base::atomic::write(&f.path, state.render().as_bytes()).map_err(io("update", &f.path))?;
    crate::watch::Store::of(layout).accept(layout);
    let summary = if changes.is_empty() {
        "no change".to_string()
    } else {
        changes.join("; ")
    };
    let _ = journal::append(
        layout,
        Entry::Approve(LoopEvent::new(who, &loop_file, summary.clone())),
    );
    Ok(summary)
}

/// A pinned loop whose state file is gone without ralph-gate ending it: deleted, moved away
/// (`git stash -u`), or renamed. It stays held until the file comes back or a person cancels
/// it: an agent cannot end its loop by making the state file disappear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    pub loop_file: String,
    pub started_at: String,
    /// The session it was pinned for (empty: unclaimed then, or not known).
    pub session: String,
}

/// Every pinned loop whose state file is gone.
pub fn orphans(layout: &Layout) -> Vec<Orphan> {
    let store = Store::of(layout);
    store
        .open_loops()
        .into_iter()
        .filter(|loop_file| !exists(layout, loop_file))
        .map(|loop_file| {
            let copy = store.read(&loop_file).ok().flatten();
            Orphan {
                started_at: store
                    .marked(&loop_file)
                    .or_else(|| copy.as_ref().and_then(|c| c.started_at.clone()))
                    .unwrap_or_default(),
                session: copy.map(|c| c.session).unwrap_or_default(),
                loop_file,
            }
        })
        .collect()
}

/// The orphaned loops a stop of `session` by `agent` is held by: its own, or unclaimed ones.
pub fn orphans_of(layout: &Layout, session: &str, agent: ralph_base::agent::Agent) -> Vec<Orphan> {
    let key_ = session_key(session);
    orphans(layout)
        .into_iter()
        .filter(|o| agent_of(&o.loop_file) == agent)
        .filter(|o| o.session.is_empty() || o.session == key_ || o.session == ANY_SESSION)
        .collect()
}

/// True when a loop exists here: a state file, or a pinned loop whose state file is gone.
pub fn any_open(layout: &Layout) -> bool {
    maybe_any(layout) || !Store::of(layout).open_loops().is_empty()
}

/// Whether `loop_file` is the loop of a live `loop run` ([`ralph_base::state::RUN_SESSION`]).
pub fn is_run(layout: &Layout, loop_file: &str) -> bool {
    maybe_any(layout)
        && list(layout).iter().any(|f| {
            key(&f.path) == loop_file
                && f.state
                    .as_ref()
                    .is_ok_and(|s| s.active && s.session_id == ralph_base::state::RUN_SESSION)
        })
}

/// Ends a loop whose state file is gone (`loop cancel` by a person).
pub fn cancel_orphan(layout: &Layout, o: &Orphan, who: &str) {
    let _ = std::fs::remove_file(layout.progress(&o.loop_file));
    Store::of(layout).remove(&o.loop_file);
    crate::watch::Store::of(layout).accept(layout);
    let _ = journal::append(
        layout,
        Entry::Cancel(LoopEvent::new(
            who,
            &o.loop_file,
            "cancelled (its state file was gone)",
        )),
    );
}

/// The journal's line for a loop whose state file is gone, noticed at a stop of `session`:
/// the loop is held.
pub fn orphan_noticed(session: &str, o: &Orphan) -> Entry {
    Entry::StateDeleted(LoopEvent {
            session: session.to_string(),
            ..LoopEvent::new(
                format!("noticed at a stop of session {session}"),
                &o.loop_file,
                format!(
                    "the loop's state file is gone without ralph-gate ending it (loop of session {}, started {}): held until it is restored or a person cancels it",
                    if o.session.is_empty() { "(unclaimed)" } else { &o.session },
                o.started_at
            ),
        )
    })
}

/// The loop `id` names (by `loop_id` or file name), else the only one, else the main one.
pub fn pick<'a>(files: &'a [LoopFile], id: Option<&str>) -> Result<&'a LoopFile, LoopError> {
    let target = match id {
        Some(id) => files.iter().find(|f| {
            f.state
                .as_ref()
                .is_ok_and(|s| s.loop_id.as_deref() == Some(id))
                || f.name() == id
        }),
        None if files.len() <= 1 => files.first(),
        None => files.iter().find(|f| f.name() == MAIN_FILE),
    };
    target.ok_or_else(|| {
        LoopError::Pick(match id {
            Some(id) => format!("no loop with id `{id}` (see `ralph-gate loop list`)"),
            None if files.is_empty() => "no loop".into(),
            None => "several loops: name one (see `ralph-gate loop list`)".into(),
        })
    })
}

/// The first line of a prompt, cut to 120 characters, for the journal.
fn first_line(prompt: &str) -> String {
    prompt
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}
