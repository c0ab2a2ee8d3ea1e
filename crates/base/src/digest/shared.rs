//! Stamps of files outside every project (an interpreter's library, the C library, node),
//! shared by the projects of one user: a new clone's first check finds them there instead of
//! reading libpython's 23 MB again. Read only when a project's own index misses, written
//! merged with what other runs wrote meanwhile. It spares work and decides nothing: a stamp
//! that no longer matches its file is a miss, and the file is read.

use super::{parse_index, render_index, Stamp};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// More entries than this and the index starts again from what this run learned: it stays
/// quick to read (every new clone reads it whole once), and what it loses is re-read once.
const MOST: usize = 20_000;

pub(super) struct Shared {
    index: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The index as read, on the first miss of a project's own index.
    read: Option<HashMap<Vec<u8>, Stamp>>,
    /// What this run hashed, for the next.
    learned: HashMap<Vec<u8>, Stamp>,
}

impl Shared {
    pub(super) fn at(index: PathBuf) -> Self {
        Self {
            index,
            state: Mutex::new(State::default()),
        }
    }

    /// The stamp remembered for the absolute path `id`.
    pub(super) fn get(&self, id: &[u8]) -> Option<Stamp> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let index = &self.index;
        st.read.get_or_insert_with(|| read(index)).get(id).cloned()
    }

    pub(super) fn learn(&self, id: Vec<u8>, stamp: Stamp) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.learned.insert(id, stamp);
    }

    /// Adds what this run learned to the index as it is now on disk (another project's run
    /// may have written it since it was read), atomically.
    pub(super) fn save(&self) {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.learned.is_empty() {
            return;
        }
        let mut all = read(&self.index);
        if all.len() + st.learned.len() > MOST {
            all.clear();
        }
        all.extend(st.learned.iter().map(|(k, v)| (k.clone(), v.clone())));
        let _ = crate::atomic::write(&self.index, render_index(&all).as_bytes());
    }
}

fn read(index: &PathBuf) -> HashMap<Vec<u8>, Stamp> {
    std::fs::read_to_string(index)
        .map(|t| parse_index(&t))
        .unwrap_or_default()
}
