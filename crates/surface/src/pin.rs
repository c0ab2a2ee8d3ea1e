//! The stop gates a loop is held to, pinned when the loop starts.
//!
//! An agent that wants out could weaken the gates instead of fixing the code: run `true`, drop
//! a gate, exclude the broken file, delete `ralph.toml` so that presets missing the failure
//! apply. The pin is a description of every resolved stop gate (and of where the config came
//! from, and which ralph-gate judged it); at each stop the gates in force are described again
//! and compared. Pure functions here; [`store`] keeps the pin where a plain edit is seen.

pub mod store;

use ralph_config::{Config, Gate, Phase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One stop gate, as far as its verdict is concerned. Every field is text so that the pin
/// stays readable in `.git/ralph-gate/` and comparable across versions of the config types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedGate {
    pub name: String,
    /// Field name to its value; a field that changes is named in the refusal.
    pub fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// blake3 of everything below: what the state file holds.
    pub digest: String,
    pub version: String,
    /// `ralph.toml (blake3 …)` or `presets: python, shell`.
    pub source: String,
    /// The project root the gates run in: a stop is judged there, whatever folder the agent
    /// stops in, and a loop judged in another root is held. Empty in pins made before it was
    /// recorded.
    #[serde(default)]
    pub root: String,
    pub gates: Vec<PinnedGate>,
}

/// The pin of `config`'s stop gates as resolved now.
pub fn of(config: &Config) -> Pin {
    of_phase(config, Phase::Stop)
}

/// The pin of `config`'s gates of `phase`: what `check --base` compares.
pub fn of_phase(config: &Config, phase: Phase) -> Pin {
    let source = match &config.file {
        Some(path) => {
            let text = std::fs::read(path).unwrap_or_default();
            let name = path
                .strip_prefix(&config.root)
                .unwrap_or(path)
                .display()
                .to_string();
            format!("{name} (blake3 {})", &blake3::hash(&text).to_hex()[..16])
        }
        None => {
            let names: Vec<&str> = config.presets.iter().map(|p| p.name).collect();
            format!("presets: {}", names.join(", "))
        }
    };
    let gates = config
        .gates
        .iter()
        .filter(|g| g.phases.contains(&phase))
        .map(describe)
        .collect();
    let root = config.root.display().to_string();
    seal(env!("CARGO_PKG_VERSION").to_string(), source, root, gates)
}

fn seal(version: String, source: String, root: String, gates: Vec<PinnedGate>) -> Pin {
    let mut pin = Pin {
        digest: String::new(),
        version,
        source,
        root,
        gates,
    };
    let body = serde_json::to_vec(&(&pin.version, &pin.source, &pin.root, &pin.gates))
        .expect("serialises");
    pin.digest = blake3::hash(&body).to_hex()[..32].to_string();
    pin
}

/// Everything about a gate that can turn a failure into a pass ([`Gate::pinned_fields`]).
fn describe(g: &Gate) -> PinnedGate {
    PinnedGate {
        name: g.name.clone(),
        fields: g.pinned_fields(),
    }
}

/// True when the pinned stop gate `name` is a gate of the embedded presets, unchanged, and
/// no file of `files` (relative to `config`'s root) is one it checks: the preset the
/// project's files picked went with the last of them, and its going leaves nothing
/// unchecked. Code moved out of its reach is judged apart (by content, see `differential`).
pub fn preset_gone_with_its_files(
    pinned: &Pin,
    name: &str,
    config: &Config,
    files: &[std::path::PathBuf],
) -> bool {
    let Some(gate) = ralph_config::preset_gate(name, config.settings.timeout) else {
        return false;
    };
    let unchanged = pinned.gates.iter().any(|g| *g == describe(&gate));
    let head = |rel: &std::path::Path| ralph_base::shebang::head(&config.root.join(rel));
    unchanged && !files.iter().any(|f| gate.matches_file(f, &head))
}

/// What differs between the pin and the gates in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added(String),
    Removed(String),
    Changed {
        gate: String,
        field: String,
        from: String,
        to: String,
    },
    Source {
        from: String,
        to: String,
    },
    Version {
        from: String,
        to: String,
    },
    /// The gates are judged in another project root (a copy of the config in a subfolder).
    Root {
        from: String,
        to: String,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |s: &str| {
            if s.is_empty() {
                "(none)".to_string()
            } else {
                format!("`{s}`")
            }
        };
        match self {
            Change::Added(g) => write!(f, "stop gate `{g}` added"),
            Change::Removed(g) => write!(f, "stop gate `{g}` removed"),
            Change::Changed {
                gate,
                field,
                from,
                to,
            } => {
                let what = match field.as_str() {
                    "globs" | "exclude" | "shebangs" | "roots_only" | "root_markers" => {
                        "coverage changed: "
                    }
                    "command" | "driver" => "command changed: ",
                    _ => "",
                };
                write!(
                    f,
                    "stop gate `{gate}`: {what}{field} {} -> {}",
                    shown(from),
                    shown(to)
                )
            }
            Change::Source { from, to } => write!(f, "config {from} -> {to}"),
            Change::Version { from, to } => write!(f, "ralph-gate {from} -> {to}"),
            Change::Root { from, to } => write!(f, "project root {from} -> {to}"),
        }
    }
}

/// Every difference from `pinned` to `now`; empty when they are the same gates.
pub fn compare(pinned: &Pin, now: &Pin) -> Vec<Change> {
    if pinned.digest == now.digest {
        return Vec::new();
    }
    let mut out = Vec::new();
    if pinned.version != now.version {
        out.push(Change::Version {
            from: pinned.version.clone(),
            to: now.version.clone(),
        });
    }
    if !pinned.root.is_empty() && pinned.root != now.root {
        out.push(Change::Root {
            from: pinned.root.clone(),
            to: now.root.clone(),
        });
    }
    let find = |gates: &[PinnedGate], name: &str| gates.iter().find(|g| g.name == name).cloned();
    for old in &pinned.gates {
        match find(&now.gates, &old.name) {
            None => out.push(Change::Removed(old.name.clone())),
            Some(new) => {
                let keys: std::collections::BTreeSet<&String> =
                    old.fields.keys().chain(new.fields.keys()).collect();
                for k in keys {
                    let (a, b) = (old.fields.get(k), new.fields.get(k));
                    if a != b {
                        out.push(Change::Changed {
                            gate: old.name.clone(),
                            field: k.clone(),
                            from: a.cloned().unwrap_or_default(),
                            to: b.cloned().unwrap_or_default(),
                        });
                    }
                }
            }
        }
    }
    for new in &now.gates {
        if find(&pinned.gates, &new.name).is_none() {
            out.push(Change::Added(new.name.clone()));
        }
    }
    // The config text alone changed (a comment, a setting outside the stop gates): the gates
    // are the same, so nothing a stop is judged by changed.
    if out.is_empty() && pinned.source != now.source {
        let same_kind = pinned.source.starts_with("presets:") == now.source.starts_with("presets:");
        if !same_kind {
            out.push(Change::Source {
                from: pinned.source.clone(),
                to: now.source.clone(),
            });
        }
    }
    out
}

/// `changes` with a move from the embedded presets to a config file judged by effect: the
/// file's gates against the gates the presets would give the tree now (`presets_now`), not
/// against where they came from. Writing the presets out (what `init` does) weakens nothing;
/// each preset gate the file leaves out or changes (a language the presets would check now
/// and the file does not) is named. Other changes are kept as they are.
pub fn judge_written_out(changes: Vec<Change>, now: &Pin, presets_now: &Pin) -> Vec<Change> {
    let moved =
        |c: &Change| matches!(c, Change::Source { from, .. } if from.starts_with("presets:"));
    if !changes.iter().any(moved) {
        return changes;
    }
    let mut out: Vec<Change> = changes.into_iter().filter(|c| !moved(c)).collect();
    for c in compare(presets_now, now) {
        if matches!(c, Change::Removed(_) | Change::Changed { .. }) && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// True when every change can only make completion harder: stop gates were added and nothing
/// else moved. Those are accepted without a person, because a loop that must now also pass
/// a new gate is held to more, never less; anything else waits for `loop approve`.
pub fn only_stronger(changes: &[Change]) -> bool {
    changes.iter().all(|c| matches!(c, Change::Added(_)))
}

/// The pin as the copy kept outside the work tree holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub pin: Pin,
    /// The loop's `started_at`: tells this loop's copy from one left by an earlier loop of
    /// the same file name.
    pub started_at: Option<String>,
    /// The session that owned the loop when it was pinned (empty: not yet claimed).
    #[serde(default)]
    pub session: String,
    /// The verification surface the loop is held to: recorded when it started, raised when a
    /// stop found it stronger, replaced only by `loop approve`.
    #[serde(default)]
    pub surface: Option<crate::surface::Surface>,
    /// The work tree when the loop started, as a git tree (untracked files in it): what a
    /// differential run puts the loop's checks back from. Set once, replaced only by
    /// `loop approve`; never raised by a stop, so no weakening made between stops becomes
    /// the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// What git ignored in the work tree then (`ralph_base::snapshot::ignored_state`): a
    /// differential run lends only what is still as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<std::collections::BTreeMap<String, String>>,
    /// When the start tree was taken, in nanoseconds on the clock file times come from: a
    /// file outside the work tree that the stop gates read and that changed after it is a
    /// change no differential run can put back. Set with `tree`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ns: Option<i64>,
}

impl Record {
    /// What names the tests that ran on this record's start tree: the tree, the gates pinned
    /// and when the start was taken; `None` outside git. The time is in it because what the
    /// tree's tests run also depends on files outside the tree (a user's config, a plugin
    /// installed into the environment): tests taken for an earlier loop, or before a
    /// person's approval, may have run under other ones. From the time on, the stop holds any
    /// such file that changes (`outside`), so the tests taken after it stay true.
    pub fn start_key(&self) -> Option<String> {
        let tree = self.tree.as_deref()?;
        let since = self.since_ns.map(|n| n.to_string()).unwrap_or_default();
        let all = format!("{tree}:{}:{since}", self.pin.digest);
        Some(blake3::hash(all.as_bytes()).to_hex()[..32].to_string())
    }

    /// What the loop's state file names: the pin's digest, bound to the surface when there
    /// is one, so that an edit of either in the copy is seen.
    pub fn seal(&self) -> String {
        let mut parts = vec![self.pin.digest.clone()];
        parts.extend(self.surface.as_ref().map(crate::surface::Surface::digest));
        parts.extend(self.tree.iter().map(|t| format!("tree {t}")));
        parts.extend(self.since_ns.map(|n| format!("since {n}")));
        if let Some(ignored) = &self.ignored {
            let body = serde_json::to_vec(ignored).expect("serialises");
            parts.push(format!("ignored {}", blake3::hash(&body).to_hex()));
        }
        if parts.len() == 1 {
            return self.pin.digest.clone();
        }
        blake3::hash(parts.join(":").as_bytes()).to_hex()[..32].to_string()
    }
}

/// What a stop learns from comparing the pin with the gates in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The same gates.
    Same,
    /// No pin yet (a loop started by the official plugin's command): pin the gates now.
    First,
    /// The config text changed but no stop gate did: pin again, nothing to approve.
    Reworded,
    /// Stop gates were only added: accepted, pinned again.
    Stronger(Vec<Change>),
    /// Anything that could turn a failure into a pass: the loop cannot complete until a
    /// person approves.
    Weaker(Vec<Change>),
    /// The pin itself was edited or removed.
    Tampered(String),
}

impl Verdict {
    /// True when this stop may not end the loop, whatever the gates say.
    pub fn holds(&self) -> bool {
        matches!(self, Verdict::Weaker(_) | Verdict::Tampered(_))
    }

    /// True when the pin is to be written again (state file and copy).
    pub fn repins(&self) -> bool {
        matches!(
            self,
            Verdict::First | Verdict::Reworded | Verdict::Stronger(_)
        )
    }
}

/// Judges the gates in force (`now`) against the pin in the state file (`in_state`) and its
/// copy (`copy`, already matched to this loop by `started_at`).
pub fn judge(in_state: Option<&str>, copy: Option<&Record>, now: &Pin) -> Verdict {
    match (in_state, copy) {
        (None, None) => Verdict::First,
        (Some(_), None) => Verdict::Tampered(
            "the state file names a pin whose copy under the git folder is gone".into(),
        ),
        (None, Some(_)) => {
            Verdict::Tampered("the `gates_pin` line was removed from the loop's state file".into())
        }
        // The digests are not shown: the one expected is what a forged state file needs.
        (Some(s), Some(c)) if s != c.seal() => Verdict::Tampered(
            "the state file's gates_pin differs from its copy under the git folder".into(),
        ),
        (Some(_), Some(c)) => {
            if c.pin.digest == now.digest {
                return Verdict::Same;
            }
            let changes = compare(&c.pin, now);
            if changes.is_empty() {
                Verdict::Reworded
            } else if only_stronger(&changes) {
                Verdict::Stronger(changes)
            } else {
                Verdict::Weaker(changes)
            }
        }
    }
}

#[cfg(test)]
mod tests;
