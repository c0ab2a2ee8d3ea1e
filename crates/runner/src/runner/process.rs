//! Starting one gate process: `sh -c SCRIPT ralph-gate ARGS...` in a new process group, with
//! stdout and stderr merged into one bounded capture, and a timeout that kills the whole group.

use super::capture::Captured;
use crate::observe::trace;
use ralph_base::child;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a timed-out group gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long to keep reading after the gate exited. Anything still holding the pipe after this
/// escaped its process group (a daemon that called setsid); its output is not waited for.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

#[derive(Clone)]
pub struct Spec {
    pub script: String,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Duration,
    /// Record the files the run's process tree names (see [`crate::observe`]).
    pub observe: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    SpawnFailed(SpawnError),
}

/// Why a gate's process could not be run: the gate fails with this reason. The system's
/// error kind is kept (a missing folder is not a permission refused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// Making ready what the run needs (its own folder, a driver's files) failed.
    #[error("cannot {}: {message}", step.doing(path))]
    Prepare {
        step: Step,
        path: PathBuf,
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error("cannot create a pipe: {message}")]
    Pipe {
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error("cannot start /bin/sh in {}: {message}", dir.display())]
    Start {
        dir: PathBuf,
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error("the tracer lost the gate")]
    TracerLost,
    #[error("cannot wait for the gate")]
    Wait,
}

/// A step of making a run ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Make the run's own folder.
    MakeFolder,
    /// Remove build state the run must start without.
    Remove,
    /// Write a file a driver sets up.
    Write,
}

impl Step {
    fn doing(self, path: &std::path::Path) -> String {
        let path = path.display();
        match self {
            Step::MakeFolder => format!("make the run's own folder {path}"),
            Step::Remove => format!("remove {path} before the run"),
            Step::Write => format!("write {path}"),
        }
    }
}

impl SpawnError {
    /// `step` on `path` failed with `e`, kept by kind.
    pub fn prepare(step: Step, path: &std::path::Path, e: &std::io::Error) -> Self {
        SpawnError::Prepare {
            step,
            path: path.to_path_buf(),
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

#[derive(Debug)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    pub output: Captured,
    /// What the run named, when it was observed; `Err` says why it could not be.
    pub observed: Option<Result<trace::Record, trace::Unavailable>>,
    /// CPU time (user + system) of the process and the descendants it waited for, when the
    /// kernel told it (the scheduler learns from it how many cores a run really uses).
    pub cpu: Option<Duration>,
}

pub fn run(spec: &Spec) -> Finished {
    let started = Instant::now();
    let (child, captured, drained) = match start(spec) {
        Ok(started) => started,
        Err(message) => {
            return Finished {
                exit: Exit::SpawnFailed(message),
                duration: started.elapsed(),
                output: Captured::new(),
                observed: None,
                cpu: None,
            }
        }
    };
    let ((exit, cpu), observed) = match child {
        Child::Plain(group) => (wait(group, spec.timeout), None),
        Child::Traced(traced) => {
            let (exit, cpu, observed) = wait_traced(&traced, spec.timeout);
            ((exit, cpu), observed)
        }
        Child::Unobserved(group, why) => (wait(group, spec.timeout), Some(Err(why))),
    };
    let duration = started.elapsed();
    let _ = drained.recv_timeout(DRAIN_GRACE);

    let output = captured.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Finished {
        exit,
        duration,
        output,
        observed,
        cpu,
    }
}

/// A started gate process.
enum Child {
    Plain(child::Group),
    Traced(trace::Traced),
    /// Meant to be observed, but this machine does not allow it.
    Unobserved(child::Group, trace::Unavailable),
}

/// A started gate: its process, what it printed so far, and word when its output ended.
type Started = (Child, Arc<Mutex<Captured>>, std::sync::mpsc::Receiver<()>);

/// Starts `/bin/sh -c script` in a process group of its own, stdout and stderr into one pipe
/// read on a thread of its own; traced when the spec asks and the machine allows.
fn start(spec: &Spec) -> Result<Started, SpawnError> {
    let (reader, writer) = std::io::pipe().map_err(|e| SpawnError::Pipe {
        kind: e.kind(),
        message: e.to_string(),
    })?;
    let spawned = spawn(spec, &writer);
    // The parent's copies of the pipe's write end must go, or the reader never sees
    // end-of-file.
    drop(writer);
    let child = spawned.map_err(|e| SpawnError::Start {
        dir: spec.cwd.clone(),
        kind: e.kind(),
        message: e.to_string(),
    })?;
    let captured = Arc::new(Mutex::new(Captured::new()));
    let drained = drain(reader, Arc::clone(&captured));
    Ok((child, captured, drained))
}

/// Starts the gate, traced when the spec asks and the machine allows, its group registered
/// with the signal handler before a signal can arrive in between ([`child`]).
fn spawn(spec: &Spec, writer: &std::io::PipeWriter) -> std::io::Result<Child> {
    let unobserved = if spec.observe {
        let traced = child::start_with(
            || match trace::spawn(command(spec, writer)?) {
                Ok(t) => Ok(Ok(t)),
                Err(trace::StartError::Spawn(e)) => Err(e),
                Err(trace::StartError::Unavailable(why)) => Ok(Err(why)),
            },
            // A machine that cannot trace started nothing: no group to register.
            |t| t.as_ref().ok().map(|t| t.pid),
        )?;
        match traced {
            Ok(t) => return Ok(Child::Traced(t)),
            Err(why) => Some(why),
        }
    } else {
        None
    };
    let group = child::start(&mut command(spec, writer)?)?;
    Ok(match unobserved {
        Some(why) => Child::Unobserved(group, why),
        None => Child::Plain(group),
    })
}

fn command(spec: &Spec, writer: &std::io::PipeWriter) -> std::io::Result<Command> {
    let mut command = ralph_base::child::command("/bin/sh");
    command
        .arg("-c")
        .arg(&spec.script)
        // $0: the shell's own messages ("sh: 1: nosuchlinter: not found") read as the
        // shell's, not as ralph-gate's.
        .arg("sh")
        .args(&spec.args)
        .current_dir(&spec.cwd);
    // The tools see the tree as when run by hand, not the repository of a hook git runs.
    for name in ralph_base::git::REPOSITORY_ENV {
        command.env_remove(name);
    }
    command
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer.try_clone()?);
    ralph_base::platform::own_group(&mut command);
    Ok(command)
}

/// Reads the gate's output into `sink` until end-of-file, then says so.
fn drain(
    mut reader: std::io::PipeReader,
    sink: Arc<Mutex<Captured>>,
) -> std::sync::mpsc::Receiver<()> {
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => sink
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = done_tx.send(());
    });
    done_rx
}

/// Waits up to `timeout`; past it, the whole group gets SIGTERM, then SIGKILL ([`child`]).
fn wait(group: child::Group, timeout: Duration) -> (Exit, Option<Duration>) {
    let waited = group.wait(timeout, TERM_GRACE);
    let exit = match (waited.timed_out, waited.status) {
        (true, _) => Exit::TimedOut,
        (false, Some(status)) => exit_of(status),
        (false, None) => Exit::SpawnFailed(SpawnError::Wait),
    };
    (exit, waited.cpu)
}

/// Waits for a traced gate as [`wait`] does, then for the tracer's record of its tree.
fn wait_traced(
    traced: &trace::Traced,
    timeout: Duration,
) -> (
    Exit,
    Option<Duration>,
    Option<Result<trace::Record, trace::Unavailable>>,
) {
    let pgid = traced.pid;
    let cpu = std::cell::Cell::new(None);
    let exited = |within: Duration| match traced.reports.recv_timeout(within) {
        Ok(trace::Report::Exited(status, used)) => {
            cpu.set(Some(used));
            Some(Ok(status))
        }
        Ok(trace::Report::Done(_)) | Err(RecvTimeoutError::Disconnected) => Some(Err(())),
        Err(RecvTimeoutError::Timeout) => None,
    };
    let exit = match exited(timeout) {
        Some(Ok(status)) => raw_exit(status),
        Some(Err(())) => Exit::SpawnFailed(SpawnError::TracerLost),
        None => {
            child::stop(pgid, TERM_GRACE, &exited);
            Exit::TimedOut
        }
    };
    child::end(pgid);
    let record = match traced.reports.recv_timeout(Duration::from_secs(5)) {
        Ok(trace::Report::Done(r)) => Ok(*r),
        _ => Err(trace::Unavailable::NotAllEnded),
    };
    (exit, cpu.get(), Some(record))
}

/// A wait status as an exit.
fn raw_exit(status: i32) -> Exit {
    exit_of(child::raw_status(status))
}

fn exit_of(status: child::Status) -> Exit {
    match status {
        child::Status::Code(code) => Exit::Code(code),
        child::Status::Signal(sig) => Exit::Signal(sig),
    }
}
