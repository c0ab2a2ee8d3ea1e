//! One iteration's agent process: started in a process group of its own (so a terminal's
//! Ctrl-C reaches ralph-gate, which then kills the whole group: [`ralph_base::child`]),
//! its output into files (no pipe to fill), killed with its group on the iteration timeout.

use super::cli::Invocation;
use ralph_base::child;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

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
    let mut command = child::command(&inv.program);
    command
        .args(&inv.args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let started = Instant::now();
    let group = child::start(&mut command).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => StartError::Missing {
            program: inv.program.clone(),
        },
        _ => StartError::Spawn {
            program: inv.program.clone(),
            source,
        },
    })?;
    // Whatever the agent left running in its group goes with it.
    let waited = group.wait(timeout, GRACE);
    let read = |name: &str| {
        String::from_utf8_lossy(&std::fs::read(dir.join(name)).unwrap_or_default()).into_owned()
    };
    Ok(Ended {
        code: match waited.status {
            Some(child::Status::Code(code)) => Some(code),
            _ => None,
        },
        timed_out: waited.timed_out,
        stdout: read("stdout"),
        stderr: read("stderr"),
        took: started.elapsed(),
    })
}
