//! What an observed run reports, whatever observes it: the Linux tracer ([`super::trace`]
//! in a build with the `observe` feature) or nothing (every other build, whose runs are
//! keyed by the drivers' static model alone).

use super::Access;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;

/// What the tree named, and why the record may be incomplete.
#[derive(Debug, Default)]
pub struct Record {
    pub paths: HashMap<PathBuf, Access>,
    pub incomplete: Option<String>,
    /// A process of the run called ptrace: under this tracer that call fails, so the run
    /// is not what the bare tool does (made again unobserved).
    pub traced_itself: bool,
    /// The Unix sockets (by path) its processes connected to: servers, which read files
    /// the record does not show unless the run started them itself.
    pub sockets: HashSet<PathBuf>,
    /// The files its processes gave another name (`link`): their change time moved by the
    /// run's own hand, with their content as it was.
    pub linked: HashSet<PathBuf>,
    /// The processes that named each path, by pid: what a process that told nothing of
    /// itself asked of or listed (a shell's `test -e`, an `ls`) no listener heard.
    pub by: HashMap<PathBuf, Vec<i32>>,
    /// Each process or thread the run started, by id, with the one that started it: what a
    /// process and everything it started named (a test binary's threads and children).
    pub parent: HashMap<i32, i32>,
    /// The files that were there that its processes opened read-write (a database, a
    /// lock): outside the project, a tool's own state, which the run itself rewrites.
    pub updated: HashSet<PathBuf>,
    /// How many calls stopped for the tracer, and how many the programs recorded in
    /// process (the preloaded library): what observing the run cost.
    pub stops: usize,
    pub in_process: usize,
}

/// Word from the tracer thread.
pub enum Report {
    /// The command's own process ended, with this wait status and the CPU time (user +
    /// system) it and the descendants it waited for used.
    Exited(i32, std::time::Duration),
    /// Every traced process is gone.
    Done(Box<Record>),
}

pub struct Traced {
    pub pid: i32,
    pub reports: Receiver<Report>,
}

/// Why runs are not observed here, or a run's observation is not whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("not supported on this architecture")]
    Architecture,
    /// This build has no observer: built without the `observe` feature, or for a platform
    /// without ptrace and seccomp (only Linux has them).
    #[error("this build does not observe runs (no `observe` feature, or not Linux)")]
    NotBuilt,
    /// The kernel or the sandbox refused tracing.
    #[error("cannot trace: {message}")]
    Refused {
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error("the tracer thread ended")]
    TracerEnded,
    #[error("cannot start `true`: {message}")]
    Probe {
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error("the run's processes did not all end")]
    NotAllEnded,
    /// The record of a run that the tracer could not follow whole (its reason).
    #[error("{0}")]
    Incomplete(String),
}

impl Unavailable {
    /// True when no run can be observed here: a build without the observer, an
    /// architecture without its filter, a kernel or sandbox that refuses tracing. Not a run
    /// whose own observation was cut short (it is made again, or its reason is its own).
    pub fn nowhere_here(&self) -> bool {
        matches!(
            self,
            Self::NotBuilt | Self::Architecture | Self::Refused { .. } | Self::Probe { .. }
        )
    }
}

/// Why a run could not be observed (the caller then runs it unobserved).
#[derive(Debug)]
pub enum StartError {
    /// This kernel, architecture or sandbox does not allow it.
    Unavailable(Unavailable),
    /// The command itself could not start.
    Spawn(std::io::Error),
}
