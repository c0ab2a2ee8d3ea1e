//! Faults: ralph-gate killed in the middle of a stop, and gates that misbehave.

use crate::common::{finish, Repo};
use crate::hooks::{stop, PLUGIN_STATE};
use serde_json::json;
use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Starts `hook stop` for sess-A and waits (10 s at most) until its gate wrote its pid.
// The child is returned still running: the caller signals it and waits for it.
#[allow(clippy::zombie_processes)]
fn stop_in_flight(repo: &Repo, pid_file: &std::path::Path) -> (Child, i32) {
    let mut cmd = repo.cmd();
    cmd.args(["hook", "stop"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let input = json!({"session_id": "sess-A", "cwd": repo.path(), "last_assistant_message": "<promise>DONE</promise>"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return (child, pid);
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the stop gate never started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn hanging_stop_repo() -> (Repo, tempfile::NamedTempFile) {
    let repo = Repo::git();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    repo.config(&format!(
        "[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\nscope = \"project\"\nphases = [\"stop\"]\ncache = false\n\
         env = {{ PIDS = \"{}\" }}\nrun = 'if [ -f hang ]; then sleep 300 & echo $! > \"$PIDS\"; wait; fi'\n",
        pid_file.path().display()
    ));
    repo.write("hang", "");
    (repo, pid_file)
}

#[test]
fn sigterm_mid_stop_kills_the_gates_and_keeps_the_old_state() {
    let (repo, pid_file) = hanging_stop_repo();
    let (child, gate_pid) = stop_in_flight(&repo, pid_file.path());
    crate::common::signal(child.id() as i32, 15);
    let run = finish(child.wait_with_output().unwrap());
    assert_eq!(run.code, 128 + 15, "{run:?}");
    let start = Instant::now();
    while !crate::common::is_gone(gate_pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the gate outlived ralph-gate"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let state = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    assert_eq!(
        state, PLUGIN_STATE,
        "the state file is the old version, whole"
    );

    // The next stop works: the gate passes now, the promise ends the loop.
    std::fs::remove_file(repo.path().join("hang")).unwrap();
    let run = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    assert!(!repo.exists(".claude/ralph-loop.local.md"));
}

#[test]
fn sigkill_mid_stop_leaves_a_whole_state_file_and_the_next_stop_works() {
    let (repo, pid_file) = hanging_stop_repo();
    let (mut child, gate_pid) = stop_in_flight(&repo, pid_file.path());
    child.kill().unwrap();
    child.wait().unwrap();
    // SIGKILL cannot be handled: the orphaned gate is cleaned up here, by the test.
    crate::common::signal(-gate_pid, 9);
    crate::common::signal(gate_pid, 9);
    let state = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    assert!(
        crate_parses(&state),
        "old or new version, never a mix: {state}"
    );
    std::fs::remove_file(repo.path().join("hang")).unwrap();
    let run = stop(&repo, "sess-A", Some("not done"));
    assert!(run.stdout.contains("\"block\""), "{run:?}");
    let leftovers: Vec<_> = std::fs::read_dir(repo.path().join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

fn crate_parses(state: &str) -> bool {
    state == PLUGIN_STATE || state == PLUGIN_STATE.replace("iteration: 1", "iteration: 2")
}

#[test]
fn a_daemon_that_keeps_the_output_pipe_does_not_hang_ralph_gate() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    // setsid takes the daemon out of the gate's process group, and it keeps stdout open.
    repo.config("[[gate]]\nname = \"daemon\"\nglobs = [\"*.txt\"]\nrun = 'setsid sleep 60 & echo started'\n");
    let mut cmd = repo.cmd();
    cmd.args(["check", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("ralph-gate hung on the daemon's open pipe");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = finish(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.gate("daemon")["output"], "started\n");
    let _ = std::process::Command::new("pkill")
        .args(["-f", "^sleep 60$"])
        .status();
}
