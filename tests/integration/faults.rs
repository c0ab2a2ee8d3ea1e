//! Faults: ralph-gate killed in the middle of a stop, and gates that misbehave.

use crate::common::{finish, without_pin, Repo};
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
    let state = without_pin(state);
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

/// A small tmpfs mounted for one test and unmounted when dropped: a disk that can really be
/// filled, so writes fail with ENOSPC as they do on a full disk. Mounting needs root, or sudo
/// without a password; without either the test says so loudly (a failure under CI=true).
struct SmallDisk {
    dir: tempfile::TempDir,
    root: bool,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        let disk = Self {
            root: meta.uid() == 0,
            dir,
        };
        let options = format!(
            "size={size},mode=0755,uid={},gid={}",
            meta.uid(),
            meta.gid()
        );
        if let Err(why) = disk.privileged(&["mount", "-t", "tmpfs", "-o", &options, "tmpfs"]) {
            // Root alone is not always enough (a container without CAP_SYS_ADMIN), so say
            // what mount itself said.
            crate::common::missing(
                "mount",
                &format!("cannot mount a tmpfs (needs root or passwordless sudo): {why}"),
            );
            return None;
        }
        Some(disk)
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// `command ... DIR`, as root or through sudo; on failure, what the command said.
    fn privileged(&self, command: &[&str]) -> Result<(), String> {
        let mut cmd = if self.root {
            std::process::Command::new(command[0])
        } else {
            let mut sudo = std::process::Command::new("sudo");
            sudo.args(["-n", command[0]]);
            sudo
        };
        let output = cmd
            .args(&command[1..])
            .arg(self.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", cmd.get_program().display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} exited with {}: {}",
                cmd.get_program().display(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    /// Writes zeros until the file system refuses with ENOSPC.
    fn fill(&self) {
        let mut file = std::fs::File::create(self.path().join("filler")).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        loop {
            if let Err(e) = file.write_all(&chunk) {
                assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                break;
            }
        }
        // Whatever is left is smaller than a chunk: take it in single pages too.
        while file.write_all(&chunk[..4096]).is_ok() {}
    }

    fn free(&self) {
        std::fs::remove_file(self.path().join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy, so a process still holding a file there cannot keep the mount alive.
        let _ = self.privileged(&["umount", "-l"]);
    }
}

fn temp_files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temp_files_under(&path));
        } else if entry
            .file_name()
            .to_string_lossy()
            .starts_with(".ralph-gate-")
        {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_full_disk_blocks_the_stop_keeps_the_state_whole_and_the_next_stop_works() {
    if !crate::common::require_tool("python3") {
        return;
    }
    let Some(disk) = SmallDisk::mount("2m") else {
        return;
    };
    let repo = Repo::git_in(disk.path());
    repo.config("presets = [\"python\"]\n");
    repo.write("pkg/bad.py", "def f(:\n");
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    let state_path = repo.path().join(".claude/ralph-loop.local.md");
    let journal_path = repo.path().join(".ralph/journal.jsonl");
    // With room to spare: an ordinary stop, so `.ralph` has its locks, journal and cache.
    let first = stop(&repo, "sess-A", Some("working on it"));
    assert!(first.stdout.contains("\"block\""), "{first:?}");
    let state_before = std::fs::read_to_string(&state_path).unwrap();
    assert!(state_before.contains("iteration: 2"), "{state_before}");
    let journal_before = std::fs::read_to_string(&journal_path).unwrap();

    disk.fill();
    let run = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    // Refused by JSON (exit 0), which no shell between can turn into a non-blocking error.
    assert_eq!(run.code, 0, "{run:?}");
    let answer: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(answer["decision"], "block", "{run:?}");
    assert!(
        answer["reason"]
            .as_str()
            .is_some_and(|r| r.contains("No space left on device")),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("No space left on device")
            && run.stderr.contains("ralph-loop.local.md")
            && run.stderr.contains("the loop goes on"),
        "the error names the cause, the file and the outcome: {run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&state_path).unwrap(),
        state_before,
        "the state file is the old version, whole"
    );
    let journal = std::fs::read_to_string(&journal_path).unwrap();
    assert!(journal.starts_with(&journal_before), "{journal}");
    assert!(journal
        .lines()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    assert_eq!(
        temp_files_under(repo.path()),
        Vec::<std::path::PathBuf>::new()
    );

    // `check` on the full disk: the cache and the results cannot be written, and the answer
    // is still the gate's own. Same length, so the edit itself fits on the full disk.
    repo.write("pkg/bad.py", "def g(:\n");
    let check = repo.run(["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(check.stdout.contains("SyntaxError"), "{check:?}");

    disk.free();
    let next = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    assert!(next.stdout.contains("\"block\""), "{next:?}");
    let state = std::fs::read_to_string(&state_path).unwrap();
    assert!(state.contains("iteration: 3"), "{state}");
    repo.write("pkg/bad.py", "def f():\n    pass\n");
    let done = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    assert_eq!((done.code, done.stdout.as_str()), (0, ""), "{done:?}");
    assert!(!state_path.exists(), "the loop is complete");
}
