//! `ralph-gate dash` end to end: the real binary in a real terminal (tmux), driven by keys,
//! read back with capture-pane.

use crate::common::{require_tool, Repo};
use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "dash"]).stdout)
            .into_owned()
    }

    /// Waits (10 s at most) until the screen shows `needle`.
    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "never saw {needle:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        assert!(self
            .cmd(&["send-keys", "-t", "dash", keys])
            .status
            .success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

#[test]
fn dash_shows_the_project_moves_reruns_cancels_and_quits() {
    if !require_tool("tmux") {
        return;
    }
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"red\"\nglobs = [\"*.txt\"]\nrun = 'echo red-failure-text; exit 1'\n\
         [[gate]]\nname = \"green\"\nglobs = [\"*.txt\"]\nrun = 'echo all-good'\n",
    );
    assert_eq!(repo.run(["check"]).code, 1);
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--max-iterations",
            "5",
            "--promise",
            "DONE",
            "Fix the red gate"
        ])
        .code,
        0
    );

    let tmux = Tmux {
        socket: format!("ralph-gate-test-{}", std::process::id()),
    };
    let bin = env!("CARGO_BIN_EXE_ralph-gate");
    // The shell writes the dashboard's exit code to a file: tmux's own pane status is not
    // always reported for a pane that closes its terminal as it exits.
    let exit_file = tempfile::NamedTempFile::new().unwrap();
    let command = format!(
        "cd '{}' && env -u CI NO_COLOR=1 PATH='{}' '{bin}' dash; echo $? > '{}'",
        repo.path().display(),
        std::env::var("PATH").unwrap_or_default(),
        exit_file.path().display()
    );
    assert!(tmux
        .cmd(&[
            "new-session",
            "-d",
            "-s",
            "dash",
            "-x",
            "80",
            "-y",
            "24",
            &command
        ])
        .status
        .success());
    tmux.cmd(&["set-option", "-t", "dash", "remain-on-exit", "on"]);

    let s = tmux.wait_for("Gates");
    assert!(
        s.contains("iteration 1/5") && s.contains("Fix the red gate"),
        "{s}"
    );
    assert!(s.contains("> FAIL red") && s.contains("PASS green"), "{s}");
    assert!(
        s.contains("red-failure-text"),
        "the selected gate's output: {s}"
    );

    tmux.keys("j");
    let s = tmux.wait_for("Output: green");
    assert!(s.contains("all-good") && s.contains("> PASS green"), "{s}");

    tmux.keys("r");
    tmux.wait_for("re-run finished: 2/2 done, 1 failing");

    tmux.keys("c");
    tmux.wait_for("Cancel the loop in");
    tmux.keys("y");
    tmux.wait_for("no loop: start one");
    assert!(
        !repo.exists(".claude/ralph-loop.local.md"),
        "the loop file is gone"
    );

    tmux.keys("q");
    let start = Instant::now();
    let code = loop {
        let text = std::fs::read_to_string(exit_file.path()).unwrap_or_default();
        if !text.trim().is_empty() {
            break text.trim().to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "dash did not exit after q:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, "0", "dash exit code");
    // Back on the normal screen: the dashboard's frame is gone.
    assert!(
        !tmux.screen().contains("┌ Gates"),
        "the alternate screen was left: {}",
        tmux.screen()
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    if !require_tool("tmux") {
        return;
    }
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*\"]\nrun = 'true'\n");
    let tmux = Tmux {
        socket: format!("ralph-gate-term-{}", std::process::id()),
    };
    let exit_file = tempfile::NamedTempFile::new().unwrap();
    let command = format!(
        "cd '{}' && env NO_COLOR=1 '{}' dash; echo $? > '{}'; sleep 30",
        repo.path().display(),
        env!("CARGO_BIN_EXE_ralph-gate"),
        exit_file.path().display()
    );
    assert!(tmux
        .cmd(&[
            "new-session",
            "-d",
            "-s",
            "dash",
            "-x",
            "80",
            "-y",
            "24",
            &command
        ])
        .status
        .success());
    tmux.wait_for("Gates");
    // Only this pane's dashboard: the shell tmux started is its parent. (Other tests run
    // dashboards of their own at the same time.)
    let shell = tmux.cmd(&["display-message", "-p", "-t", "dash", "#{pane_pid}"]);
    let shell = String::from_utf8_lossy(&shell.stdout).trim().to_string();
    let pids = Command::new("pgrep")
        .args(["-P", &shell, "-f", "ralph-gate"])
        .output()
        .unwrap();
    assert!(
        !pids.stdout.is_empty(),
        "no dashboard under the pane's shell {shell}"
    );
    for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
        let _ = Command::new("kill").args(["-TERM", pid]).status();
    }
    let start = Instant::now();
    while std::fs::read_to_string(exit_file.path())
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "dash ignored SIGTERM:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(exit_file.path()).unwrap().trim(),
        "143",
        "128 + SIGTERM"
    );
    // The shell is still running in the pane: the normal screen must be back.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !tmux.screen().contains("┌ Gates"),
        "the alternate screen was left:\n{}",
        tmux.screen()
    );
}
