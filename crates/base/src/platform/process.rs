//! What the kernel says about a process and the processes above it (Linux `/proc`). A
//! process cannot change who started it, nor the environment its ancestors were started
//! with: these facts tell a command a person typed from one an agent's session started,
//! whatever that command did to its own variables. Where `/proc` is not there (macOS), the
//! facts are empty and the callers say what they could not see.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A process as the kernel names it: its id and when it started (clock ticks after boot),
/// so that an id reused by a later process is not taken for the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    pub pid: u32,
    pub started: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub id: Identity,
    pub parent: u32,
    /// The program it runs, as the kernel resolved it.
    pub exe: Option<PathBuf>,
    /// The agent markers (`env::AGENT_MARKS`) set in the environment it was started with.
    pub marks: Vec<String>,
}

impl Process {
    /// The program's file name, or `?` when the kernel does not say.
    pub fn name(&self) -> String {
        self.exe
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| {
                n.to_string_lossy()
                    .trim_end_matches(" (deleted)")
                    .to_string()
            })
            .unwrap_or_else(|| "?".into())
    }

    /// A shell, or a wrapper that only starts the program it is given (`env`, `timeout`):
    /// not the program that asked for what runs below it.
    pub fn only_passes_on(&self) -> bool {
        const PASSING: &[&str] = &[
            "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "busybox", "env",
            "timeout", "nice", "nohup", "stdbuf", "setsid", "ionice", "time",
        ];
        PASSING.contains(&self.name().as_str())
    }
}

/// The process `pid`, or `None` when it is gone or `/proc` cannot be read.
pub fn read(pid: u32) -> Option<Process> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (parent, started) = parse_stat(&stat)?;
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    Some(Process {
        id: Identity { pid, started },
        parent,
        exe: std::fs::read_link(format!("/proc/{pid}/exe")).ok(),
        marks: marks_in(&environ),
    })
}

/// `pid` and every process above it, nearest first, up to the first that cannot be read
/// (init, or a process of another user); read only as far as it is walked.
pub fn ancestors(pid: u32) -> impl Iterator<Item = Process> {
    std::iter::successors(read(pid), |p| {
        (p.parent > 0).then(|| read(p.parent)).flatten()
    })
    // A bound, not an expectation: ancestries are a handful deep.
    .take(256)
}

/// This process and the ones above it.
pub fn own_ancestry() -> Vec<Process> {
    ancestors(std::process::id()).collect()
}

/// Pure: the parent and the start time from a `/proc/PID/stat` line. The
/// command name in parentheses may hold spaces and parentheses, so fields are counted from
/// the last `)`.
fn parse_stat(stat: &str) -> Option<(u32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is fields[0]: ppid is field 4, starttime field 22.
    Some((fields.get(1)?.parse().ok()?, fields.get(19)?.parse().ok()?))
}

/// Pure: the agent markers set (and not off) in a NUL-separated environment block.
fn marks_in(environ: &[u8]) -> Vec<String> {
    environ
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let text = std::str::from_utf8(entry).ok()?;
            let (name, value) = text.split_once('=')?;
            (crate::env::AGENT_MARKS.contains(&name) && crate::env::is_on(value))
                .then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line =
            "4242 (a (b) c) S 17 4242 4000 34817 4242 4194304 0 0 0 0 1 2 0 0 20 0 1 0 987654 0 0";
        assert_eq!(parse_stat(line), Some((17, 987654)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn only_set_markers_mark_an_environment() {
        let block = b"PATH=/bin\0CLAUDECODE=1\0GEMINI_CLI=0\0COPILOT_CLI=\0X=CLAUDECODE=1\0";
        assert_eq!(marks_in(block), vec!["CLAUDECODE".to_string()]);
    }

    #[test]
    fn this_process_and_its_parent_are_read() {
        let chain = own_ancestry();
        assert!(chain.len() >= 2, "{chain:?}");
        assert_eq!(chain[0].id.pid, std::process::id());
        assert_eq!(chain[0].parent, chain[1].id.pid);
        assert!(chain[0].id.started >= chain[1].id.started);
    }
}
