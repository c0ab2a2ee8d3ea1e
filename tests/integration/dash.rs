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
        self.wait_for_all(&[needle])
    }

    /// The screen once every one of `needles` is on it: a frame is drawn over several
    /// writes, and a capture can land between them.
    fn wait_for_all(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if needles.iter().all(|n| s.contains(n)) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "never saw all of {needles:?}; screen:\n{s}"
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

impl Tmux {
    /// Starts `ralph-gate dash` in an 80x24 pane of a private tmux server. The pane's shell
    /// writes the dashboard's exit code to the returned file (tmux 3.3a does not always
    /// report it for a pane that closes its terminal as it exits), and the pane stays
    /// visible after the dashboard exits, so the restored screen can be read.
    fn start_dash(socket: &str, repo: &Repo) -> (Tmux, tempfile::NamedTempFile) {
        let tmux = Tmux {
            socket: format!("{socket}-{}", std::process::id()),
        };
        let exit_file = tempfile::NamedTempFile::new().unwrap();
        let command = format!(
            "cd '{}' && env -u CI NO_COLOR=1 PATH='{}' '{}' dash; echo $? > '{}'",
            repo.path().display(),
            std::env::var("PATH").unwrap_or_default(),
            env!("CARGO_BIN_EXE_ralph-gate"),
            exit_file.path().display()
        );
        let started = tmux.cmd(&[
            "new-session",
            "-d",
            "-s",
            "dash",
            "-x",
            "80",
            "-y",
            "24",
            &command,
        ]);
        assert!(
            started.status.success(),
            "{}",
            String::from_utf8_lossy(&started.stderr)
        );
        tmux.cmd(&["set-option", "-t", "dash", "remain-on-exit", "on"]);
        (tmux, exit_file)
    }

    /// The dashboard's exit code, once it has exited (10 s at most).
    fn exit_code(&self, exit_file: &std::path::Path) -> String {
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(exit_file).unwrap_or_default();
            if !text.trim().is_empty() {
                return text.trim().to_string();
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "dash did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
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

    let (tmux, exit_file) = Tmux::start_dash("ralph-gate-test", &repo);

    let s = tmux.wait_for_all(&[
        "Gates",
        "PASS green",
        "red-failure-text",
        "Fix the red gate",
    ]);
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
    let s = tmux.wait_for_all(&["Output: green", "all-good", "> PASS green"]);
    assert!(s.contains("all-good") && s.contains("> PASS green"), "{s}");

    tmux.keys("r");
    tmux.wait_for("re-run finished: 2/2 done, 1 failing");

    tmux.keys("c");
    tmux.wait_for("Cancel the loop ralph-loop.local.md? y = yes, any other key = no");
    tmux.keys("y");
    tmux.wait_for("no loop: start one");
    assert!(
        !repo.exists(".claude/ralph-loop.local.md"),
        "the loop file is gone"
    );

    tmux.keys("q");
    assert_eq!(tmux.exit_code(exit_file.path()), "0", "dash exit code");
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
    let (tmux, exit_file) = Tmux::start_dash("ralph-gate-term", &repo);
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
    assert_eq!(tmux.exit_code(exit_file.path()), "143", "128 + SIGTERM");
    // The pane stays (remain-on-exit): the normal screen must be back.
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !tmux.screen().contains("┌ Gates"),
        "the alternate screen was left:\n{}",
        tmux.screen()
    );
}
