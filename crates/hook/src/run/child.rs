//! One iteration's agent process: started in a process group of its own (so a terminal's
//! Ctrl-C reaches ralph-gate, which then kills the whole group through [`ralph_base::signals`]),
//! its output into files (no pipe to fill), killed with its group on the iteration timeout.

use super::agent::Invocation;
use ralph_base::signals;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// How an iteration's process ended.
#[derive(Debug)]
pub struct Ended {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// Why an iteration's process could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("`{program}` is not installed (not on PATH)")]
    Missing { program: String },
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot keep the output of `{program}` in {}: {source}", dir.display())]
    Output {
        program: String,
        dir: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Grace between SIGTERM and SIGKILL for a group past its time.
const GRACE: Duration = Duration::from_secs(3);

/// Runs `inv` in `cwd` with `env` added, for at most `timeout`; its output is kept in `dir`.
pub fn run(
    inv: &Invocation,
    cwd: &Path,
    env: &[(&str, String)],
    timeout: Duration,
    dir: &Path,
) -> Result<Ended, StartError> {
    let output = |name: &str| {
        std::fs::File::create(dir.join(name)).map_err(|source| StartError::Output {
            program: inv.program.clone(),
            dir: dir.to_path_buf(),
            source,
        })
    };
    let (out, err) = (output("stdout")?, output("stderr")?);
    let mut command = Command::new(&inv.program);
    command
        .args(&inv.args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let started = Instant::now();
    let mut child = {
        let mut groups = signals::lock();
        let child = command.spawn().map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => StartError::Missing {
                program: inv.program.clone(),
            },
            _ => StartError::Spawn {
                program: inv.program.clone(),
                source,
            },
        })?;
        groups.push(child.id() as i32);
        child
    };
    let pgid = child.id() as i32;
    let (status, timed_out) = match child.wait_timeout(timeout) {
        Ok(Some(s)) => (Some(s), false),
        _ => {
            signals::kill_group(pgid, libc::SIGTERM);
            match child.wait_timeout(GRACE) {
                Ok(Some(s)) => (Some(s), true),
                _ => {
                    signals::kill_group(pgid, libc::SIGKILL);
                    (child.wait().ok(), true)
                }
            }
        }
    };
    // Whatever the agent left running in its group goes with it.
    signals::kill_group(pgid, libc::SIGKILL);
    signals::remove(pgid);
    let read = |name: &str| {
        String::from_utf8_lossy(&std::fs::read(dir.join(name)).unwrap_or_default()).into_owned()
    };
    Ok(Ended {
        code: status.and_then(|s| s.code()),
        timed_out,
        stdout: read("stdout"),
        stderr: read("stderr"),
        took: started.elapsed(),
    })
}
