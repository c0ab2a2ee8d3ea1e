//! A loop's life, in one place: started (`loop start`), claimed by the first session that
//! stops in it, advanced one iteration at each refused stop, and ended (completed, at its
//! limit, stuck, cancelled). The stop hook, the `loop` commands and the dashboard call these;
//! nothing else writes a loop's state file, progress record or pin copy.
//!
//! The state file's format is in [`file`]; "has anything changed since the last stop" is in
//! [`progress`].

mod file;
pub mod progress;

pub use file::*;

use crate::journal::{self, Entry, LoopEvent};
use crate::pin::{self, store::Store, Pin};
use crate::state::Layout;
use crate::surface::Surface;
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
    pub agent: crate::agent::Agent,
    /// The stop gates it is held to, when the config loads (else its first stop pins them).
    pub pin: Option<&'a Pin>,
    /// The verification surface it is held to, described with the pin.
    pub surface: Option<&'a Surface>,
    /// Who starts it, for the journal.
    pub who: String,
}

/// Starts a loop: its state file (the main one, or a further one with an id), its pin (in
/// the state file and the copy), and a journal line. Returns the state file's path.
pub fn start(layout: &Layout, spec: &Spec<'_>) -> Result<PathBuf, LoopError> {
    let dir = layout.loop_dir(spec.agent);
    let main = dir.join(MAIN_FILE);
    let (path, id) = if main.exists() {
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
    let loop_file = key(&path);
    // A progress record left by an earlier loop of this file name must not count here.
    let _ = std::fs::remove_file(layout.progress(&loop_file));
    if let Some(pin) = spec.pin {
        pin_to(layout, &loop_file, &mut state, pin, spec.surface)?;
    }
    crate::atomic::write(&path, state.render().as_bytes()).map_err(io("write", &path))?;
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

/// Holds the loop `loop_file` to `pin` and `surface`: the state file's line (in `state`,
/// written by the caller) and the copy outside `.ralph/`.
pub fn pin_to(
    layout: &Layout,
    loop_file: &str,
    state: &mut LoopState,
    pin: &Pin,
    surface: Option<&Surface>,
) -> Result<(), LoopError> {
    let record = pin::Record {
        pin: pin.clone(),
        started_at: state.started_at.clone(),
        session: state.session_id.clone(),
        surface: surface.cloned(),
    };
    state.set_pin(&record.seal());
    let store = Store::of(layout);
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
        guard: crate::atomic::Lock,
    },
}

/// The loop a stop of `session` belongs to, claimed for the session if it was unclaimed. The
/// state files that cannot be read are journaled: their loops are not enforced.
pub fn claim(
    layout: &Layout,
    session: &str,
    agent: crate::agent::Agent,
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
    let guard = crate::atomic::lock(&lock).map_err(io("lock", &lock))?;
    Ok(match read(&path) {
        Ok(fresh) if fresh.session_id == state.session_id => Claimed::Loop {
            path,
            state: Box::new(fresh),
            guard,
        },
        _ => Claimed::Gone,
    })
}

/// A loop's state file and what it held when read.
type Found = (PathBuf, LoopState);

/// The loop this stop belongs to, claimed for the session if it was unclaimed, and the state
/// files that could not be read.
fn find(
    layout: &Layout,
    session: &str,
    agent: crate::agent::Agent,
) -> Result<(Option<Found>, Vec<String>), LoopError> {
    if !maybe_any(layout) {
        return Ok((None, Vec::new()));
    }
    // Listing, claiming and selecting happen under the lock: a listing made without it can
    // miss a state file that another stop is renaming into place at that moment.
    let lock_path = layout.lock("stop");
    let _guard = crate::atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
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
                crate::atomic::write(&f.path, state.render().as_bytes())
                    .map_err(io("claim the loop in", &f.path))?;
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
    },
}

/// Carries a stop's decision out under the stop lock. False when the loop was cancelled while
/// the gates ran: nothing is left to hold the agent to.
pub fn settle(layout: &Layout, path: &Path, change: Change<'_>) -> Result<bool, LoopError> {
    let lock_path = layout.lock("stop");
    let _guard = crate::atomic::lock(&lock_path).map_err(io("lock", &lock_path))?;
    let loop_file = key(path);
    match (change, read(path)) {
        (_, Err(_)) if !path.exists() => return Ok(false),
        (Change::End, _) => end(layout, path)?,
        (
            Change::Advance {
                to,
                progress,
                repin,
            },
            Ok(mut fresh),
        ) => {
            fresh.set_iteration(to.max(fresh.iteration.saturating_add(1)));
            if let Some((pin, surface)) = repin {
                pin_to(layout, &loop_file, &mut fresh, pin, surface)?;
            }
            crate::atomic::write(path, fresh.render().as_bytes()).map_err(io("update", path))?;
            let record = serde_json::to_vec(progress).expect("serialises");
            let at = layout.progress(&loop_file);
            crate::atomic::write(&at, &record).map_err(io("write", &at))?;
        }
        (Change::Advance { .. }, Err(source)) => {
            return Err(LoopError::Unreadable {
                path: path.to_path_buf(),
                source,
            })
        }
    }
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
                let c = crate::surface::compare(was, surface);
                all.extend(c.weaker.iter().map(|f| format!("weakened: {f}")));
            }
            all
        }
        None => vec!["(no earlier pin could be read)".to_string()],
    };
    pin_to(layout, &loop_file, &mut state, now, Some(surface))?;
    crate::atomic::write(&f.path, state.render().as_bytes()).map_err(io("update", &f.path))?;
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

/// Pinned loops whose state file is gone without ralph-gate ending or cancelling them: the
/// file was deleted by hand (or by a tool). Journaled once, then forgotten.
pub fn notice_deleted(layout: &Layout, session: &str) {
    let store = Store::of(layout);
    for (loop_file, record) in store.pinned() {
        if exists(layout, &loop_file) {
            continue;
        }
        let _ = journal::append(
            layout,
            Entry::StateDeleted(LoopEvent {
                session: session.to_string(),
                ..LoopEvent::new(
                    format!("noticed at a stop of session {session}"),
                    &loop_file,
                    format!(
                        "the loop's state file was deleted outside ralph-gate (loop of session {}, started {})",
                        if record.session.is_empty() { "(unclaimed)" } else { &record.session },
                        record.started_at.as_deref().unwrap_or("?")
                    ),
                )
            }),
        );
        store.remove(&loop_file);
    }
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
