//! Starting one gate process: `sh -c SCRIPT ralph-gate ARGS...` in a new process group, with
//! stdout and stderr merged into one bounded capture, and a timeout that kills the whole group.

use super::capture::Captured;
use crate::observe::trace;
use ralph_base::signals;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// How long a timed-out group gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long to keep reading after the gate exited. Anything still holding the pipe after this
/// escaped its process group (a daemon that called setsid); its output is not waited for.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

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
    SpawnFailed(String),
}

#[derive(Debug)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    pub output: Captured,
    /// What the run named, when it was observed; `Err` says why it could not be.
    pub observed: Option<Result<trace::Record, String>>,
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
        Child::Plain(mut child) => {
            let pgid = child.id() as i32;
            (wait(&mut child, pgid, spec.timeout), None)
        }
        Child::Traced(traced) => {
            let (exit, cpu, observed) = wait_traced(&traced, spec.timeout);
            ((exit, cpu), observed)
        }
        Child::Unobserved(mut child, why) => {
            let pgid = child.id() as i32;
            (wait(&mut child, pgid, spec.timeout), Some(Err(why)))
        }
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
    Plain(std::process::Child),
    Traced(trace::Traced),
    /// Meant to be observed, but this machine does not allow it.
    Unobserved(std::process::Child, String),
}

impl Child {
    fn pid(&self) -> i32 {
        match self {
            Child::Plain(c) | Child::Unobserved(c, _) => c.id() as i32,
            Child::Traced(t) => t.pid,
        }
    }
}

/// A started gate: its process, what it printed so far, and word when its output ended.
type Started = (Child, Arc<Mutex<Captured>>, std::sync::mpsc::Receiver<()>);

/// Starts `/bin/sh -c script` in a process group of its own, stdout and stderr into one pipe
/// read on a thread of its own; traced when the spec asks and the machine allows.
fn start(spec: &Spec) -> Result<Started, String> {
    let (reader, writer) = std::io::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let spawned = {
        let mut groups = signals::lock();
        let result = spawn(spec, &writer);
        if let Ok(child) = &result {
            groups.push(child.pid());
        }
        result
    };
    // The parent's copies of the pipe's write end must go, or the reader never sees
    // end-of-file.
    drop(writer);
    let child =
        spawned.map_err(|e| format!("cannot start /bin/sh in {}: {e}", spec.cwd.display()))?;
    let captured = Arc::new(Mutex::new(Captured::new()));
    let drained = drain(reader, Arc::clone(&captured));
    Ok((child, captured, drained))
}

fn spawn(spec: &Spec, writer: &std::io::PipeWriter) -> std::io::Result<Child> {
    let unobserved = if spec.observe {
        match trace::spawn(command(spec, writer)?) {
            Ok(t) => return Ok(Child::Traced(t)),
            Err(trace::StartError::Spawn(e)) => return Err(e),
            Err(trace::StartError::Unavailable(why)) => Some(why),
        }
    } else {
        None
    };
    let mut command = command(spec, writer)?;
    let child = command.spawn()?;
    Ok(match unobserved {
        Some(why) => Child::Unobserved(child, why),
        None => Child::Plain(child),
    })
}

fn command(spec: &Spec, writer: &std::io::PipeWriter) -> std::io::Result<Command> {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(&spec.script)
        .arg("ralph-gate")
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer.try_clone()?)
        .process_group(0);
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

/// Waits up to `timeout`; past it, the whole group gets SIGTERM, then SIGKILL. Whatever the
/// gate left running in its group goes with it.
fn wait(child: &mut std::process::Child, pgid: i32, timeout: Duration) -> (Exit, Option<Duration>) {
    let exit = match reap_within(pgid, timeout) {
        Ok(Some((status, cpu))) => (raw_exit(status), Some(cpu)),
        Ok(None) => (stop_plain(child, pgid), None),
        // No process file descriptors here (an old kernel, a strict sandbox).
        Err(_) => (wait_plain(child, pgid, timeout), None),
    };
    signals::kill_group(pgid, libc::SIGKILL);
    signals::remove(pgid);
    exit
}

/// Waits up to `timeout` for `pid` (a child) to end through a process file descriptor, then
/// reaps it with its resource use: `(wait status, CPU time)`; `None` while it still runs.
fn reap_within(pid: i32, timeout: Duration) -> std::io::Result<Option<(i32, Duration)>> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just opened and is owned here alone.
    let fd = unsafe { OwnedFd::from_raw_fd(raw as i32) };
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        let mut ready = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut ready, 1, ms) } {
            n if n > 0 => break,
            0 if left.is_zero() => return Ok(None),
            0 => continue,
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 writes one int and one rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: see above.
        if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } == pid {
            return Ok(Some((status, cpu_time(&usage))));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// User plus system time of a resource record.
pub fn cpu_time(usage: &libc::rusage) -> Duration {
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// A timed-out child's group: SIGTERM, then SIGKILL after the grace period.
fn stop_plain(child: &mut std::process::Child, pgid: i32) -> Exit {
    signals::kill_group(pgid, libc::SIGTERM);
    if !matches!(child.wait_timeout(TERM_GRACE), Ok(Some(_))) {
        signals::kill_group(pgid, libc::SIGKILL);
        let _ = child.wait();
    }
    Exit::TimedOut
}

fn wait_plain(child: &mut std::process::Child, pgid: i32, timeout: Duration) -> Exit {
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => status_exit(status),
        Ok(None) => stop_plain(child, pgid),
        Err(e) => {
            signals::kill_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            Exit::SpawnFailed(format!("cannot wait for the gate: {e}"))
        }
    }
}

/// Waits for a traced gate as [`wait`] does, then for the tracer's record of its tree.
fn wait_traced(
    traced: &trace::Traced,
    timeout: Duration,
) -> (
    Exit,
    Option<Duration>,
    Option<Result<trace::Record, String>>,
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
        Some(Err(())) => Exit::SpawnFailed("the tracer lost the gate".into()),
        None => {
            signals::kill_group(pgid, libc::SIGTERM);
            if exited(TERM_GRACE).is_none() {
                signals::kill_group(pgid, libc::SIGKILL);
                let _ = exited(Duration::from_secs(5));
            }
            Exit::TimedOut
        }
    };
    signals::kill_group(pgid, libc::SIGKILL);
    signals::remove(pgid);
    let record = match traced.reports.recv_timeout(Duration::from_secs(5)) {
        Ok(trace::Report::Done(r)) => Ok(r),
        _ => Err("the run's processes did not all end".to_string()),
    };
    (exit, cpu.get(), Some(record))
}

/// A wait status as an exit.
fn raw_exit(status: i32) -> Exit {
    if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(-1)
    }
}

fn status_exit(status: std::process::ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}
