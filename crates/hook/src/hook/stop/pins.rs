//! A stop's view of the loop's pin: how the stop gates in force compare with the ones the
//! loop started with, what the agent is told when they were weakened, and pinning again.

use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_config::Config;
use ralph_loop::loops::LoopState;
use ralph_plan::files::FilesError;
use ralph_plan::project::Project;
use ralph_surface::pin::store::{ReadError, Store};
use ralph_surface::pin::{self, Pin, Record, Verdict as PinVerdict};
use ralph_surface::surface::{Finding, Surface};
use std::collections::BTreeSet;
use std::path::PathBuf;

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
    /// Losses in files a differential run puts back: that run decides whether they count.
    pub deferred: Vec<Finding>,
}

impl Pinning {
    /// The gates as the loop pinned them, nothing else known (the stop property's).
    pub fn fixed() -> Self {
        Self {
            verdict: PinVerdict::Same,
            now: Pin {
                digest: String::new(),
                version: String::new(),
                source: String::new(),
                root: String::new(),
                gates: Vec::new(),
            },
            copy: None,
            surface: None,
            weakened: Vec::new(),
            deferred: Vec::new(),
        }
    }

    /// Compares the gates in force with this loop's pin (state file and copy); what a person
    /// should know goes to `notes`.
    pub fn judge(
        layout: &Layout,
        the_loop: Read<'_>,
        config: &Config,
        notes: &mut Vec<String>,
    ) -> Self {
        let Read {
            loop_file,
            state,
            copy,
        } = the_loop;
        let store = Store::of(layout);
        let now = pin::of(config);
        let mut mine_kept = None;
        let verdict = match copy {
            // A copy made for another start time, or none where the loop was pinned: the
            // state file was edited or the pin removed, so that the weakened gates would be
            // pinned as if the loop were new. Only a person starts a loop anew.
            Ok(Some(c)) if c.started_at != state.started_at => PinVerdict::Tampered(format!(
                "the state file says the loop started {}, its pin was made for the loop started {}",
                state.started_at.as_deref().unwrap_or("(nowhere)"),
                c.started_at.as_deref().unwrap_or("?")
            )),
            Ok(None) if state.gates_pin.is_none() && store.marked(loop_file).is_some() => {
                PinVerdict::Tampered(
                    "the loop was pinned, and its pin was removed from the state file and the git folder".into(),
                )
            }
            Ok(copy) => {
                let verdict = pin::judge(state.gates_pin.as_deref(), copy.as_ref(), &now);
                mine_kept = copy;
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
            deferred: Vec::new(),
        }
    }

    /// Takes out of a weaker verdict the stop gates of a preset that went with the last file
    /// it checked (see [`pin::preset_gone_with_its_files`]): told in `notes`, never a hold;
    /// and the presets written out into a config file, judged against the presets the tree
    /// would pick now ([`pin::judge_written_out`]).
    pub fn excuse_presets_gone(
        &mut self,
        project: &mut Project,
        notes: &mut Vec<String>,
    ) -> Result<(), FilesError> {
        let (PinVerdict::Weaker(changes), Some(copy)) = (&self.verdict, &self.copy) else {
            return Ok(());
        };
        let files = project.listing()?.files.clone();
        let presets =
            ralph_config::resolve(project.root().to_path_buf(), None, &mut || files.clone());
        let changes = match presets {
            Ok(p) => pin::judge_written_out(changes.clone(), &self.now, &pin::of(&p)),
            Err(_) => changes.clone(),
        };
        let (gone, kept): (Vec<pin::Change>, Vec<pin::Change>) =
            changes.iter().cloned().partition(|c| {
                matches!(c, pin::Change::Removed(g)
                    if pin::preset_gone_with_its_files(&copy.pin, g, &project.config, &files))
            });
        for c in &gone {
            notes.push(format!(
                "{c}: its preset went with the last file it checked"
            ));
        }
        self.verdict = match kept {
            kept if kept.is_empty() => PinVerdict::Reworded,
            kept if pin::only_stronger(&kept) => PinVerdict::Stronger(kept),
            kept => PinVerdict::Weaker(kept),
        };
        Ok(())
    }

    /// Describes the surface when this stop needs it (at the first stop of a loop nobody
    /// pinned, to record it; at a stop that could end the loop, `may_end`, to compare) and
    /// finds what it lost against the surface the loop is held to.
    pub fn describe(
        &mut self,
        project: &mut Project,
        env: &Environment,
        may_end: bool,
    ) -> Result<(), FilesError> {
        let wanted = self.verdict == PinVerdict::First || (may_end && !self.verdict.holds());
        if !wanted {
            return Ok(());
        }
        let mut now = ralph_surface::surface::of_project(project, env)?;
        if let Some(was) = self.start().1 {
            still_on_disk(was, project.root(), &mut now);
            self.weakened = ralph_surface::surface::compare(was, &now).weaker;
        }
        self.surface = Some(now);
        Ok(())
    }

    /// Why the loop may not end for what the surface lost, but for the losses in files a
    /// differential run puts back (`put_back`, relative to the project root): those wait for
    /// that run. Both go to `notes` for the journal.
    pub fn hold(&mut self, put_back: &BTreeSet<String>, notes: &mut Vec<String>) -> Option<String> {
        let (later, now) = std::mem::take(&mut self.weakened)
            .into_iter()
            .partition(|f| put_back.contains(&f.file));
        (self.deferred, self.weakened) = (later, now);
        let listed = |all: &[Finding]| {
            all.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        if !self.deferred.is_empty() {
            notes.push(format!(
                "surface findings left to the differential run: {}",
                listed(&self.deferred)
            ));
        }
        if self.weakened.is_empty() {
            return None;
        }
        notes.push(format!("surface weakened: {}", listed(&self.weakened)));
        // Held anyway: every loss is worded, those a differential run would have judged too.
        let all: Vec<Finding> = self
            .weakened
            .iter()
            .chain(&self.deferred)
            .cloned()
            .collect();
        Some(crate::words::surface_hold(&all))
    }

    /// Forgets the surface described at this stop, so it is not pinned: the stop was held
    /// for what changed since the start, and a surface that holds the change must never
    /// become what later stops are compared with.
    pub fn keep_start(&mut self) {
        self.surface = None;
    }

    /// When the loop's start tree was taken (nanoseconds, the clock of file times).
    pub fn since(&self) -> Option<i128> {
        self.copy.as_ref().and_then(|c| c.since_ns).map(i128::from)
    }

    /// What git ignored in the work tree when the loop started, from its pin's copy.
    pub fn start_ignored(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.copy.as_ref().and_then(|c| c.ignored.as_ref())
    }

    /// The loop's start: its work tree (a git tree) and the surface it is held to, from its
    /// pin's copy.
    /// What names the tests that ran on the loop's start tree (with its pinned gates).
    pub fn start_key(&self) -> Option<String> {
        self.copy.as_ref().and_then(Record::start_key)
    }

    pub fn start(&self) -> (Option<&str>, Option<&Surface>) {
        let copy = self.copy.as_ref();
        (
            copy.and_then(|c| c.tree.as_deref()),
            copy.and_then(|c| c.surface.as_ref()),
        )
    }

    /// The gates and surface to pin again at this stop: the gates when the verdict says so,
    /// the surface when it was described and lost nothing (a stronger one raises the bar, a
    /// weaker one never replaces it).
    pub fn repin(&self) -> Option<(&Pin, Option<&Surface>)> {
        let held = self.copy.as_ref().and_then(|c| c.surface.as_ref());
        let lost = !(self.weakened.is_empty() && self.deferred.is_empty());
        let raised = self.surface.as_ref().filter(|_| !lost);
        let surface = raised.or(held);
        if self.verdict.repins() {
            return Some((&self.now, surface));
        }
        // By what is stored: the surface described now also knows the tree's files.
        let moved = raised.is_some() && raised.map(Surface::digest) != held.map(Surface::digest);
        (self.verdict == PinVerdict::Same && moved).then_some((&self.now, surface))
    }
}

/// A loop as a stop reads it: its key, its state file, and its pin's copy, read once (it
/// holds the surface, which can be large) for the root and the judgement both.
pub struct Read<'a> {
    pub loop_file: &'a str,
    pub state: &'a LoopState,
    pub copy: Result<Option<Record>, ReadError>,
}

impl<'a> Read<'a> {
    pub fn of(layout: &Layout, loop_file: &'a str, state: &'a LoopState) -> Self {
        Self {
            loop_file,
            state,
            copy: Store::of(layout).read(loop_file),
        }
    }

    /// The project root this loop's gates were pinned in, from its copy (when it is this
    /// loop's and records one).
    pub fn pinned_root(&self) -> Option<PathBuf> {
        let copy = self.copy.as_ref().ok()?.as_ref()?;
        let root = &copy.pin.root;
        (copy.started_at == self.state.started_at && !root.is_empty()).then(|| PathBuf::from(root))
    }
}

/// Counts as present every file a stop gate checked at the start that is still on disk though
/// git no longer lists it (untracked and ignored where it is): code hidden that way has left
/// the gates, not the project, and is named as no longer checked.
fn still_on_disk(was: &Surface, root: &std::path::Path, now: &mut Surface) {
    for f in was.checked.values().flatten() {
        if !now.present.contains(f) && root.join(f).is_file() {
            now.present.insert(f.clone());
        }
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
