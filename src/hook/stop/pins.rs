//! A stop's view of the loop's pin: how the stop gates in force compare with the ones the
//! loop started with, what the agent is told when they were weakened, and pinning again.

use crate::config::Config;
use crate::env::Environment;
use crate::files::FilesError;
use crate::loops::LoopState;
use crate::pin::{self, store::Store, Pin, Record, Verdict as PinVerdict};
use crate::project::Project;
use crate::state::Layout;
use crate::surface::{Finding, Surface};

pub struct Pinning {
    pub verdict: PinVerdict,
    /// The stop gates as resolved now.
    pub now: Pin,
    /// This loop's copy of its pin, when it has one.
    copy: Option<Record>,
    /// The surface described at this stop, when the stop needed it.
    pub surface: Option<Surface>,
    /// What it lost against the surface the loop is held to.
    pub weakened: Vec<Finding>,
}

impl Pinning {
    /// Compares the gates in force with this loop's pin (state file and copy); what a person
    /// should know goes to `notes`.
    pub fn judge(
        layout: &Layout,
        loop_file: &str,
        state: &LoopState,
        config: &Config,
        notes: &mut Vec<String>,
    ) -> Self {
        let store = Store::of(layout);
        let now = pin::of(config);
        let mut mine_kept = None;
        let verdict = match store.read(loop_file) {
            Ok(copy) => {
                // A copy left by an earlier loop of the same file name is not this loop's.
                // It is said, since a state file rewritten with a new start time looks the same.
                let (mine, earlier) = match copy {
                    Some(c) if c.started_at == state.started_at => (Some(c), None),
                    other => (None, other),
                };
                if let Some(e) = earlier {
                    notes.push(format!(
                        "a pin of an earlier loop in {loop_file} (started {}) remained; this loop (started {}) is judged without it",
                        e.started_at.as_deref().unwrap_or("?"),
                        state.started_at.as_deref().unwrap_or("?")
                    ));
                }
                let verdict = pin::judge(state.gates_pin.as_deref(), mine.as_ref(), &now);
                mine_kept = mine;
                verdict
            }
            Err(e) => PinVerdict::Tampered(format!("the pin's copy cannot be read: {e}")),
        };
        if let PinVerdict::Tampered(why) = &verdict {
            notes.push(format!("pin tampered: {why}"));
        }
        Self {
            verdict,
            now,
            copy: mine_kept,
            surface: None,
            weakened: Vec::new(),
        }
    }

    /// Describes the surface when this stop needs it (at the first stop of a loop nobody
    /// pinned, to record it; at a stop that could end the loop, `may_end`, to compare) and
    /// compares it with the one the loop is held to. Returns why the loop may not end when
    /// it was weakened; the weakenings go to `notes` for the journal.
    pub fn surface(
        &mut self,
        project: &mut Project,
        env: &Environment,
        may_end: bool,
        notes: &mut Vec<String>,
    ) -> Result<Option<String>, FilesError> {
        let wanted = self.verdict == PinVerdict::First || (may_end && !self.verdict.holds());
        if !wanted {
            return Ok(None);
        }
        let now = crate::surface::of_project(project, env)?;
        if let Some(was) = self.copy.as_ref().and_then(|c| c.surface.as_ref()) {
            self.weakened = crate::surface::compare(was, &now).weaker;
        }
        self.surface = Some(now);
        if self.weakened.is_empty() {
            return Ok(None);
        }
        let each: Vec<String> = self.weakened.iter().map(ToString::to_string).collect();
        notes.push(format!("surface weakened: {}", each.join("; ")));
        Ok(Some(crate::report::agent::surface_hold(&self.weakened)))
    }

    /// The gates and surface to pin again at this stop: the gates when the verdict says so,
    /// the surface when it was described and lost nothing (a stronger one raises the bar, a
    /// weaker one never replaces it).
    pub fn repin(&self) -> Option<(&Pin, Option<&Surface>)> {
        let held = self.copy.as_ref().and_then(|c| c.surface.as_ref());
        let raised = self.surface.as_ref().filter(|_| self.weakened.is_empty());
        let surface = raised.or(held);
        if self.verdict.repins() {
            return Some((&self.now, surface));
        }
        // By what is stored: the surface described now also knows the tree's files.
        let moved = raised.is_some() && raised.map(Surface::digest) != held.map(Surface::digest);
        (self.verdict == PinVerdict::Same && moved).then_some((&self.now, surface))
    }
}

pub fn word(verdict: &PinVerdict) -> &'static str {
    match verdict {
        PinVerdict::Same => "same",
        PinVerdict::First => "pinned",
        PinVerdict::Reworded => "reworded",
        PinVerdict::Stronger(_) => "strengthened",
        PinVerdict::Weaker(_) => "weakened",
        PinVerdict::Tampered(_) => "tampered",
    }
}
