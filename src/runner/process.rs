//! Starting one gate process: `sh -c SCRIPT ralph-gate ARGS...` in a new process group, with
//! stdout and stderr merged into one bounded capture, and a timeout that kills the whole group.

use super::capture::Captured;
use crate::signals;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    SpawnFailed(String),
}

#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    pub output: Captured,
}

pub fn run(spec: &Spec) -> Finished {
    let started = Instant::now();
    let (mut child, captured, drained) = match start(spec) {
        Ok(started) => started,
        Err(message) => {
            return Finished {
                exit: Exit::SpawnFailed(message),
                duration: started.elapsed(),
                output: Captured::new(),
            }
        }
    };
    let pgid = child.id() as i32;
    let exit = wait(&mut child, pgid, spec.timeout);
    let duration = started.elapsed();
    // Whatever the gate left running in its group goes with it.
    signals::kill_group(pgid, libc::SIGKILL);
    signals::remove(pgid);
    let _ = drained.recv_timeout(DRAIN_GRACE);

    let output = captured.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Finished {
        exit,
        duration,
        output,
    }
}

/// A started gate: its process, what it printed so far, and word when its output ended.
type Started = (
    std::process::Child,
    Arc<Mutex<Captured>>,
    std::sync::mpsc::Receiver<()>,
);

/// Starts `/bin/sh -c script` in a process group of its own, stdout and stderr into one pipe
/// read on a thread of its own.
fn start(spec: &Spec) -> Result<Started, String> {
    let (reader, writer) = std::io::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| format!("cannot create a pipe: {e}"))?;
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(&spec.script)
        .arg("ralph-gate")
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_err)
        .process_group(0);

    let spawned = {
        let mut groups = signals::lock();
        let result = command.spawn();
        if let Ok(child) = &result {
            groups.push(child.id() as i32);
        }
        result
    };
    // The Command owns the parent's copies of the pipe's write end: drop it, or the reader
    // never sees end-of-file.
    drop(command);
    let child =
        spawned.map_err(|e| format!("cannot start /bin/sh in {}: {e}", spec.cwd.display()))?;
    let captured = Arc::new(Mutex::new(Captured::new()));
    let drained = drain(reader, Arc::clone(&captured));
    Ok((child, captured, drained))
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

/// Waits up to `timeout`; past it, the whole group gets SIGTERM, then SIGKILL.
fn wait(child: &mut std::process::Child, pgid: i32, timeout: Duration) -> Exit {
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => status_exit(status),
        Ok(None) => {
            signals::kill_group(pgid, libc::SIGTERM);
            if !matches!(child.wait_timeout(TERM_GRACE), Ok(Some(_))) {
                signals::kill_group(pgid, libc::SIGKILL);
                let _ = child.wait();
            }
            Exit::TimedOut
        }
        Err(e) => {
            signals::kill_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            Exit::SpawnFailed(format!("cannot wait for the gate: {e}"))
        }
    }
}

fn status_exit(status: std::process::ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}
