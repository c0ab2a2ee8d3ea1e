//! One cache for every git worktree of a repository (issue 16): a verdict computed in one
//! worktree is a hit in another on the same content, identical runs in two worktrees at once
//! run once, `cache stats` says where hits came from, and `[cache] share = false` keeps each
//! checkout's own.

use crate::common::{require_tool, Repo, Run};
use serde_json::Value;
use std::path::{Path, PathBuf};

const GATE: &str =
    "[[gate]]\nname = \"py\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n";

/// A repository and a second worktree of it, on the same commit.
fn two_worktrees(config: &str) -> (Repo, PathBuf) {
    let repo = Repo::git();
    repo.config(config);
    for i in 0..3 {
        repo.write(format!("pkg/m{i}.py"), &format!("x = {i}\n"));
    }
    repo.commit_all();
    let wt = repo.path().parent().unwrap().join(format!(
        "{}-wt2",
        repo.path().file_name().unwrap().to_string_lossy()
    ));
    repo.git_cmd(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    (repo, wt)
}

fn check_in(repo: &Repo, dir: &Path, extra: &[&str]) -> Run {
    let mut cmd = repo.cmd();
    cmd.current_dir(dir)
        .args(["check", "--format", "json"])
        .args(extra);
    crate::common::finish(cmd.output().unwrap())
}

fn cached(run: &Run) -> Vec<bool> {
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    v["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["cached"] == true)
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_verdict_from_one_worktree_is_a_hit_in_another_and_stats_say_so() {
    if !require_tool("python3") {
        return;
    }
    let (repo, wt) = two_worktrees(GATE);
    let first = check_in(&repo, repo.path(), &[]);
    assert_eq!(cached(&first), [false], "{first:?}");
    let second = check_in(&repo, &wt, &[]);
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(
        cached(&second),
        [true],
        "the other worktree's verdict is reused: {second:?}"
    );
    let mut cmd = repo.cmd();
    cmd.current_dir(&wt)
        .args(["cache", "stats", "--format", "json"]);
    let stats: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(stats["shared"], true, "{stats}");
    assert!(
        stats["dir"]
            .as_str()
            .unwrap()
            .ends_with(".git/ralph-gate/cache"),
        "{stats}"
    );
    let from = format!(
        "another worktree ({})",
        repo.path().canonicalize().unwrap().display()
    );
    let hits = &stats["hits"];
    assert!(
        hits.as_object().unwrap().iter().any(|(k, v)| (k == &from
            || k.contains(repo.path().to_str().unwrap()))
            && v.as_u64() == Some(1)),
        "{stats}"
    );
    // A change in this worktree misses, and the other is not served the new verdict wrongly.
    std::fs::write(wt.join("pkg/m0.py"), "def f(:\n").unwrap();
    let broken = check_in(&repo, &wt, &[]);
    assert_eq!(
        (broken.code, cached(&broken)),
        (1, vec![false]),
        "{broken:?}"
    );
    let main_again = check_in(&repo, repo.path(), &[]);
    assert_eq!(
        (main_again.code, cached(&main_again)),
        (0, vec![true]),
        "{main_again:?}"
    );

    let mut clear = repo.cmd();
    clear.current_dir(&wt).args(["cache", "clear"]);
    assert!(clear.output().unwrap().status.success());
    assert_eq!(
        cached(&check_in(&repo, repo.path(), &[])),
        [false],
        "clear empties the shared store"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn the_same_run_in_two_worktrees_at_once_runs_once() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    let gate = "[[gate]]\nname = \"slow\"\nglobs = [\"**/*.py\"]\nrun = 'echo run >> \"$RUNS_FILE\"; sleep 1'\n";
    let (repo, wt) = two_worktrees(gate);
    let runs = counter.path().to_str().unwrap().to_string();
    let results: Vec<Run> = std::thread::scope(|s| {
        [repo.path().to_path_buf(), wt.clone()]
            .into_iter()
            .map(|dir| {
                let (repo, runs) = (&repo, &runs);
                s.spawn(move || {
                    let mut cmd = repo.cmd();
                    cmd.current_dir(&dir)
                        .env("RUNS_FILE", runs)
                        .args(["check", "--format", "json"]);
                    crate::common::finish(cmd.output().unwrap())
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    for r in &results {
        assert_eq!(r.code, 0, "{r:?}");
    }
    let ran = std::fs::read_to_string(counter.path()).unwrap();
    assert_eq!(
        ran.lines().count(),
        1,
        "one run for both worktrees: {ran:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn sharing_can_be_turned_off() {
    if !require_tool("python3") {
        return;
    }
    let (repo, wt) = two_worktrees(&format!("{GATE}\n[cache]\nshare = false\n"));
    check_in(&repo, repo.path(), &[]);
    let second = check_in(&repo, &wt, &[]);
    assert_eq!(
        cached(&second),
        [false],
        "each checkout keeps its own: {second:?}"
    );
    assert!(repo.exists(".ralph/cache/entries"));
}

#[test]
fn the_guard_protects_the_shared_results_from_a_worktrees_loop() {
    let (repo, wt) = two_worktrees(GATE);
    let mut start = repo.cmd();
    start.current_dir(&wt).args([
        "loop",
        "start",
        "--session",
        "S",
        "--promise",
        "DONE",
        "Go.",
    ]);
    assert!(start.output().unwrap().status.success());
    let shared = repo.path().join(".git/ralph-gate/cache");
    let payload = serde_json::json!({"session_id": "S", "cwd": wt, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": format!("rm -rf {}", shared.display())}});
    let mut cmd = repo.cmd();
    cmd.current_dir(&wt)
        .args(["hook", "pre-tool-use"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"permissionDecision\":\"deny\""), "{text}");
}
