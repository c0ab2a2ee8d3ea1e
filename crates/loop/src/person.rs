//! Who may approve or cancel a loop: a person, told apart from an agent's session by what
//! the kernel says about the command's process and those above it, never by the variables
//! the command was given (`env -i` empties those).
//!
//! Two facts are gathered. Every hook call of a workspace with a loop records the agent
//! program that ran it (the hook's nearest ancestor that is not a shell or a wrapper):
//! whatever that program starts, through any number of shells, ptys or cleared
//! environments, has it above. And each process above a command keeps the environment it
//! was started with, where agent CLIs mark their tools' shells (`CLAUDECODE=1`...). The
//! decision over both is pure ([`judge`]); an approval's confirmation on the terminal is the
//! command's.

use ralph_base::process::{Identity, Process};
use ralph_base::state::Layout;
use serde::{Deserialize, Serialize};

/// An agent program whose hooks ran in this workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    pub id: Identity,
    pub name: String,
}

/// The agents kept: older ones are dropped first, and none is dropped while it runs
/// unless this many newer ones ran since.
const KEPT: usize = 64;

/// Why a command was not taken for a person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An agent whose hooks ran here is above it.
    UnderAgent { name: String, pid: u32 },
    /// A process above it was started inside an agent's session.
    Marked {
        name: String,
        pid: u32,
        mark: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::UnderAgent { name, pid } => write!(
                f,
                "it runs under `{name}` (pid {pid}), the agent whose hooks run in this project"
            ),
            Refusal::Marked { name, pid, mark } => write!(
                f,
                "it runs under `{name}` (pid {pid}), which an agent's session started ({mark} is set in its environment)"
            ),
        }
    }
}

/// Pure: whether the command whose process and ancestors are `chain` (its own first) may
/// be a person's. Its own variables count like its ancestors'.
pub fn judge(chain: &[Process], known: &[Known]) -> Result<(), Refusal> {
    for p in chain {
        if known.iter().any(|k| k.id == p.id) {
            return Err(Refusal::UnderAgent {
                name: p.name(),
                pid: p.id.pid,
            });
        }
        if let Some(mark) = p.marks.first() {
            return Err(Refusal::Marked {
                name: p.name(),
                pid: p.id.pid,
                mark: mark.clone(),
            });
        }
    }
    Ok(())
}

/// Pure: the agent program above a hook whose process and ancestors are `chain`: the
/// nearest that is not a shell or a wrapper that only starts what it is given.
pub fn agent_of_hook(chain: impl IntoIterator<Item = Process>) -> Option<Process> {
    chain.into_iter().skip(1).find(|p| !p.only_passes_on())
}

/// The agents recorded in `layout`; none when the record is missing or unreadable.
pub fn known(layout: &Layout) -> Vec<Known> {
    std::fs::read(layout.agents())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// From a hook: records the agent program above this process, unless it is recorded. A
/// write that fails is not the hook's failure; the environment marks still hold.
pub fn remember(layout: &Layout) {
    let Some(agent) = agent_of_hook(ralph_base::process::ancestors(std::process::id())) else {
        return;
    };
    if known(layout).iter().any(|k| k.id == agent.id) {
        return;
    }
    let Ok(_lock) = ralph_base::atomic::lock(&layout.lock("agents")) else {
        return;
    };
    // Read again under the lock: hooks of one session run side by side.
    let mut all = known(layout);
    if all.iter().any(|k| k.id == agent.id) {
        return;
    }
    all.push(Known {
        id: agent.id,
        name: agent.name(),
    });
    let drop = all.len().saturating_sub(KEPT);
    all.drain(..drop);
    if let Ok(bytes) = serde_json::to_vec_pretty(&all) {
        let _ = std::fs::create_dir_all(layout.pins());
        let _ = ralph_base::atomic::write(&layout.agents(), &bytes);
        // Another session's shell command pending now did not write it: its check after
        // the command compares with this.
        crate::watch::Store::of(layout).accept(layout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn proc(pid: u32, exe: &str, marks: &[&str]) -> Process {
        Process {
            id: Identity {
                pid,
                started: pid as u64 * 10,
            },
            parent: pid.saturating_sub(1),
            exe: Some(PathBuf::from(exe)),
            marks: marks.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn no_agent_above_is_a_person() {
        let chain = [
            proc(9, "/usr/bin/ralph-gate", &[]),
            proc(8, "/bin/bash", &[]),
        ];
        assert_eq!(judge(&chain, &[]), Ok(()));
    }

    #[test]
    fn a_recorded_agent_anywhere_above_refuses_whatever_the_variables() {
        let claude = proc(5, "/usr/bin/node", &[]);
        let known = [Known {
            id: claude.id,
            name: "node".into(),
        }];
        let chain = [
            proc(9, "/usr/bin/ralph-gate", &[]),
            proc(8, "/usr/bin/script", &[]),
            proc(7, "/bin/bash", &[]),
            claude,
        ];
        assert_eq!(
            judge(&chain, &known),
            Err(Refusal::UnderAgent {
                name: "node".into(),
                pid: 5
            })
        );
        // The same pid started at another time is another process.
        let reused = [Known {
            id: Identity { pid: 5, started: 1 },
            name: "node".into(),
        }];
        assert_eq!(judge(&chain, &reused), Ok(()));
    }

    #[test]
    fn a_marked_ancestor_refuses_though_the_command_cleared_its_own() {
        let chain = [
            proc(9, "/usr/bin/ralph-gate", &[]),
            proc(8, "/usr/bin/python3", &["CLAUDECODE"]),
        ];
        assert!(matches!(
            judge(&chain, &[]),
            Err(Refusal::Marked { pid: 8, .. })
        ));
    }

    #[test]
    fn the_agent_of_a_hook_is_the_first_program_above_its_shells() {
        let chain = [
            proc(9, "/usr/bin/ralph-gate", &[]),
            proc(8, "/bin/sh", &[]),
            proc(7, "/usr/bin/timeout", &[]),
            proc(6, "/usr/local/bin/codex", &[]),
            proc(5, "/usr/bin/tmux", &[]),
        ];
        assert_eq!(agent_of_hook(chain).map(|p| p.id.pid), Some(6));
    }
}
