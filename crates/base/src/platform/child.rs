//! Every process ralph-gate starts and waits on: a gate's shell, an agent's iteration, a
//! `loop run` worker, a tool's `--version` probe. Each is the leader of a process group of
//! its own, registered with [`signals`] before a signal can arrive in between, so a Ctrl-C
//! to ralph-gate kills it; waited for at most a given time, after which its whole group gets
//! SIGTERM and, after a grace period, SIGKILL; and whatever it left running in its group is
//! killed when it ends.

use crate::signals;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, ExitStatus};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// A started process group whose leader is `child`.
#[derive(Debug)]
pub struct Group {
    child: Child,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Code(i32),
    Signal(i32),
}

/// What waiting for a group gave: the leader's status (`None` when it could not be had),
/// whether it was past its time and stopped, and its CPU time when the kernel told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waited {
    pub status: Option<Status>,
    pub timed_out: bool,
    /// User plus system time of the leader and the descendants it waited for.
    pub cpu: Option<Duration>,
}

/// A command for `program`: the one place a process is made (clippy's `disallowed-methods`
/// sends every other `Command::new` here). Start it with [`start`], unless it is a short
/// call whose output is read at once and which no timeout needs to stop (git's plumbing).
#[allow(clippy::disallowed_methods)]
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

/// Starts `command` in a process group of its own, at a lower priority, its input and output
/// closed, and leaves it: work that outlives the command that asked for it (the tests a
/// loop's start tree runs, taken while the agent works). It is never waited on; when its
/// parent has ended, init reaps it.
pub fn detach(command: &mut Command) -> std::io::Result<()> {
    use std::process::Stdio;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    super::own_group(command);
    // SAFETY: `nice` is async-signal-safe and touches no memory of the parent's.
    unsafe {
        command.pre_exec(|| {
            // Behind the agent's own work and its edit hooks, which it must not slow.
            libc::nice(10);
            Ok(())
        });
    }
    command.spawn().map(drop)
}

/// Starts `command` as the leader of a new process group.
pub fn start(command: &mut Command) -> std::io::Result<Group> {
    super::own_group(command);
    let child = start_with(|| command.spawn(), |c| Some(c.id() as i32))?;
    Ok(Group { child })
}

/// Registers a group that `spawn` starts (the tracer starts its own) with [`signals`] while
/// it starts: `spawn` starts a group leader, whose pid `pid` reads (`None`: nothing started).
pub fn start_with<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    pid: impl Fn(&T) -> Option<i32>,
) -> std::io::Result<T> {
    let mut groups = signals::lock();
    let started = spawn()?;
    groups.extend(pid(&started));
    Ok(started)
}

impl Group {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The leader's stdout, when the command was started with a pipe there.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The leader's status if it has ended; the group is then ended too.
    pub fn try_wait(&mut self) -> std::io::Result<Option<Status>> {
        let status = self.child.try_wait()?.map(status_of);
        if status.is_some() {
            end(self.pid());
        }
        Ok(status)
    }

    /// Waits up to `timeout` for the leader; past it the group is stopped (see [`stop`]).
    /// Either way, whatever is left in the group is killed and the group forgotten.
    pub fn wait(mut self, timeout: Duration, grace: Duration) -> Waited {
        let pid = self.pid();
        let waited = match reap_within(pid, timeout) {
            Ok(Some((raw, cpu))) => Waited {
                status: Some(raw_status(raw)),
                timed_out: false,
                cpu: Some(cpu),
            },
            Ok(None) => self.stopped(grace),
            // No process file descriptors here (an old kernel, a strict sandbox).
            Err(_) => match self.child.wait_timeout(timeout) {
                Ok(Some(status)) => Waited {
                    status: Some(status_of(status)),
                    timed_out: false,
                    cpu: None,
                },
                Ok(None) => self.stopped(grace),
                Err(_) => {
                    signals::kill_group(pid, libc::SIGKILL);
                    Waited {
                        status: self.child.wait().ok().map(status_of),
                        timed_out: false,
                        cpu: None,
                    }
                }
            },
        };
        end(pid);
        waited
    }

    fn stopped(&mut self, grace: Duration) -> Waited {
        let child = &mut self.child;
        let status = stop(child.id() as i32, grace, |within| {
            child.wait_timeout(within).ok().flatten().map(status_of)
        })
        .or_else(|| child.wait().ok().map(status_of));
        Waited {
            status,
            timed_out: true,
            cpu: None,
        }
    }
}

/// Stops a group past its time: SIGTERM, then SIGKILL if `exited` (asked to wait up to a
/// duration for the leader) does not see it end within `grace`. A zero grace kills at once.
/// Returns what `exited` saw.
pub fn stop<T>(
    pgid: i32,
    grace: Duration,
    mut exited: impl FnMut(Duration) -> Option<T>,
) -> Option<T> {
    if !grace.is_zero() {
        signals::kill_group(pgid, libc::SIGTERM);
        if let Some(seen) = exited(grace) {
            return Some(seen);
        }
    }
    signals::kill_group(pgid, libc::SIGKILL);
    exited(Duration::from_secs(5))
}

/// The end of a group whose leader has ended: whatever it left running is killed, and the
/// group is no longer one a signal to ralph-gate must reach.
pub fn end(pgid: i32) {
    signals::kill_group(pgid, libc::SIGKILL);
    signals::remove(pgid);
}

/// Waits up to `timeout` for `pid` (a child) to end, then reaps it with its resource use:
/// `(wait status, CPU time)`; `None` while it still runs. Linux wakes on a process file
/// descriptor; other Unix systems, which have none, ask every few milliseconds.
#[cfg(not(target_os = "linux"))]
fn reap_within(pid: i32, timeout: Duration) -> std::io::Result<Option<(i32, Duration)>> {
    reap_polling(pid, timeout)
}

/// [`reap_within`] by asking: `wait4` with `WNOHANG` until the child has ended or the time is
/// up. Built and tested on Linux too, where the descriptor is used instead.
#[cfg_attr(target_os = "linux", allow(dead_code))]
fn reap_polling(pid: i32, timeout: Duration) -> std::io::Result<Option<(i32, Duration)>> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is valid; wait4 writes one int and one rusage.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: see above.
        match unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) } {
            n if n == pid => return Ok(Some((status, cpu_time(&usage)))),
            0 if Instant::now() >= deadline => return Ok(None),
            0 => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Waits up to `timeout` for `pid` (a child) to end through a process file descriptor, then
/// reaps it with its resource use: `(wait status, CPU time)`; `None` while it still runs.
#[cfg(target_os = "linux")]
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

/// A raw wait status (from `wait4` or a tracer) as a [`Status`].
pub fn raw_status(status: i32) -> Status {
    if libc::WIFEXITED(status) {
        Status::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        Status::Signal(libc::WTERMSIG(status))
    } else {
        Status::Code(-1)
    }
}

fn status_of(status: ExitStatus) -> Status {
    match (status.code(), super::signal_of(&status)) {
        (Some(code), _) => Status::Code(code),
        (None, Some(sig)) => Status::Signal(sig),
        (None, None) => Status::Code(-1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]).stdin(Stdio::null());
        c
    }

    #[test]
    // Both children are reaped by reap_polling itself, which is what is tested.
    #[allow(clippy::zombie_processes)]
    fn reaping_by_asking_gives_what_the_descriptor_gives() {
        // The wait other Unix systems use, run here where it is not the one in use.
        let child = sh("exit 7").spawn().unwrap();
        let pid = child.id() as i32;
        let mut slow = sh("sleep 5").spawn().unwrap();
        let none = reap_polling(slow.id() as i32, Duration::from_millis(30)).unwrap();
        assert!(none.is_none(), "still running");
        let (status, _) = reap_polling(pid, Duration::from_secs(10))
            .unwrap()
            .expect("ended");
        assert_eq!(raw_status(status), Status::Code(7));
        slow.kill().unwrap();
        let (status, _) = reap_polling(slow.id() as i32, Duration::from_secs(10))
            .unwrap()
            .expect("killed");
        assert_eq!(raw_status(status), Status::Signal(libc::SIGKILL));
    }

    #[test]
    fn an_exit_code_and_cpu_time_are_reported() {
        let waited = start(&mut sh("exit 3"))
            .unwrap()
            .wait(Duration::from_secs(10), Duration::from_millis(100));
        assert_eq!(waited.status, Some(Status::Code(3)));
        assert!(!waited.timed_out);
        assert!(waited.cpu.is_some());
    }

    /// Running, or ended but not yet reaped by whoever inherited it.
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    }

    #[test]
    fn a_group_past_its_time_is_stopped_with_what_it_left_running() {
        // The leader ignores SIGTERM and leaves a sleeping child in its group.
        let (group, sleeper) = started("trap '' TERM; sleep 30 & echo $!; wait");
        let pid = group.pid();
        assert!(alive(&sleeper));
        let waited = group.wait(Duration::from_millis(200), Duration::from_millis(100));
        assert!(waited.timed_out);
        assert_eq!(waited.status, Some(Status::Signal(libc::SIGKILL)));
        assert!(
            gone_soon(&sleeper),
            "the group's sleeping child outlived it"
        );
        assert!(!signals::lock().contains(&pid));
    }

    /// Starts `script`, which prints a background child's pid first; returns that pid.
    fn started(script: &str) -> (Group, String) {
        let mut command = sh(script);
        command.stdout(Stdio::piped());
        let mut group = start(&mut command).unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(group.take_stdout().unwrap()),
            &mut line,
        )
        .unwrap();
        (group, line.trim().to_string())
    }

    fn gone_soon(pid: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive(pid)
    }

    #[test]
    fn what_a_leader_leaves_running_in_its_group_is_killed_when_it_ends() {
        let (group, sleeper) = started("sleep 30 & echo $!; exit 0");
        let waited = group.wait(Duration::from_secs(10), Duration::from_millis(100));
        assert_eq!(waited.status, Some(Status::Code(0)));
        assert!(!waited.timed_out);
        assert!(
            gone_soon(&sleeper),
            "the leader's background child outlived it"
        );
    }

    #[test]
    fn a_missing_program_keeps_its_error_kind() {
        let err = start(&mut Command::new("/nonexistent/ralph-gate-test")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
