//! The result cache: hits skip the command, any change to what decides a result misses, and
//! identical runs in flight are coalesced. Each gate appends to a counter file outside the
//! repository, so the tests count real executions.

use crate::common::{Repo, Run};
use serde_json::json;
use std::path::Path;

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn counting_repo(extra: &str) -> (Repo, tempfile::NamedTempFile) {
    let repo = Repo::git();
    let counter = tempfile::NamedTempFile::new().unwrap();
    repo.write("src/a.txt", "alpha\n")
        .write("src/b.txt", "beta\n");
    repo.config(&format!(
        "[[gate]]\nname = \"count\"\nglobs = [\"*.txt\"]\nenv = {{ COUNTER = \"{}\" }}\nrun = 'echo ran >> \"$COUNTER\"; ! grep -n FAIL {{files}}'\n{extra}",
        counter.path().display()
    ));
    (repo, counter)
}

fn check(repo: &Repo) -> Run {
    repo.run(["check", "--format", "json"])
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_second_run_on_unchanged_inputs_is_a_cached_hit() {
    let (repo, counter) = counting_repo("");
    let first = check(&repo);
    assert_eq!(
        (first.code, first.gate("count")["cached"].clone()),
        (0, json!(false)),
        "{first:?}"
    );
    let second = check(&repo);
    assert_eq!(second.code, 0);
    assert_eq!(second.gate("count")["cached"], true, "{second:?}");
    assert_eq!(runs(counter.path()), 1, "the command ran once");
    let human = repo.run(["check"]);
    assert!(
        human.stdout.contains("PASS  count") && human.stdout.contains("(cached)"),
        "{human:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn touch_without_a_content_change_still_hits() {
    let (repo, counter) = counting_repo("");
    check(&repo);
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(repo.path().join("src/a.txt"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(check(&repo).gate("count")["cached"], true);
    assert_eq!(runs(counter.path()), 1);
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn one_changed_byte_misses_and_failures_are_cached_too() {
    let (repo, counter) = counting_repo("");
    check(&repo);
    repo.write("src/b.txt", "FAIL\n");
    let run = check(&repo);
    assert_eq!(
        (run.code, run.gate("count")["cached"].clone()),
        (1, json!(false)),
        "{run:?}"
    );
    let again = check(&repo);
    assert_eq!(
        (again.code, again.gate("count")["cached"].clone()),
        (1, json!(true)),
        "{again:?}"
    );
    assert_eq!(
        again.gate("count")["output"],
        run.gate("count")["output"],
        "the stored failure is shown again"
    );
    assert_eq!(runs(counter.path()), 2);
}

#[test]
fn a_changed_command_or_env_misses() {
    let (repo, counter) = counting_repo("");
    check(&repo);
    let text = std::fs::read_to_string(repo.path().join("ralph.toml")).unwrap();
    repo.config(&text.replace("grep -n FAIL", "grep -n -i FAIL"));
    assert_eq!(check(&repo).gate("count")["cached"], false);
    repo.config(&text.replace("env = {", "env = { EXTRA = \"1\", "));
    assert_eq!(check(&repo).gate("count")["cached"], false);
    assert_eq!(runs(counter.path()), 3);
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_corrupted_entry_is_a_miss_never_a_wrong_pass() {
    let (repo, counter) = counting_repo("");
    repo.write("src/b.txt", "FAIL\n");
    assert_eq!(check(&repo).code, 1);
    for shard in std::fs::read_dir(repo.results_dir().join("entries")).unwrap() {
        for entry in std::fs::read_dir(shard.unwrap().path()).unwrap() {
            std::fs::write(entry.unwrap().path(), "{\"key\": \"trunc").unwrap();
        }
    }
    let run = check(&repo);
    assert_eq!(
        (run.code, run.gate("count")["cached"].clone()),
        (1, json!(false)),
        "{run:?}"
    );
    assert_eq!(runs(counter.path()), 2);
}

#[test]
fn no_cache_flag_env_clear_and_per_gate_opt_out_all_run_the_command() {
    let (repo, counter) = counting_repo("");
    check(&repo);
    assert_eq!(
        repo.run(["check", "--no-cache", "--format", "json"])
            .gate("count")["cached"],
        false
    );
    assert_eq!(
        repo.run_env(
            ["check", "--format", "json"],
            &[("RALPH_GATE_NO_CACHE", "1")]
        )
        .gate("count")["cached"],
        false
    );
    let cleared = repo.run(["cache", "clear"]);
    assert!(
        cleared.stdout.starts_with("ralph-gate: cache cleared"),
        "{cleared:?}"
    );
    assert!(!repo.exists(".ralph/cache"));
    assert_eq!(check(&repo).gate("count")["cached"], false);
    assert_eq!(runs(counter.path()), 4);

    let (repo, counter) = counting_repo("cache = false\n");
    check(&repo);
    assert_eq!(check(&repo).gate("count")["cached"], false);
    assert_eq!(runs(counter.path()), 2);
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn no_cache_leaves_no_stored_result_a_later_run_could_serve() {
    let (repo, counter) = counting_repo("");
    assert_eq!(check(&repo).gate("count")["cached"], false);
    assert_eq!(check(&repo).gate("count")["cached"], true);
    assert_eq!(runs(counter.path()), 1);
    // A fresh run decides afresh: what was stored before it is gone, not served later.
    repo.run(["check", "--no-cache"]);
    assert_eq!(runs(counter.path()), 2);
    let after = check(&repo);
    assert_eq!(after.gate("count")["cached"], false, "{after:?}");
    assert_eq!(runs(counter.path()), 3);
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_timeout_on_unchanged_inputs_is_reported_from_the_cache_not_rerun() {
    let repo = Repo::git();
    let counter = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    let config = |timeout: &str| {
        format!(
            "[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\ntimeout = \"{timeout}\"\nenv = {{ COUNTER = \"{}\" }}\nrun = 'echo ran >> \"$COUNTER\"; sleep 30'\n",
            counter.path().display()
        )
    };
    repo.config(&config("1s"));
    let first = check(&repo);
    assert_eq!(first.gate("slow")["status"], "timeout");
    assert_eq!(first.gate("slow")["cached"], false);
    let again = check(&repo);
    assert_eq!(
        (
            again.code,
            again.gate("slow")["status"].clone(),
            again.gate("slow")["cached"].clone()
        ),
        (1, json!("timeout"), json!(true)),
        "{again:?}"
    );
    let reason = again.gate("slow")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("timed out after 1s on these same inputs before"),
        "{reason}"
    );
    assert_eq!(runs(counter.path()), 1, "not re-run for another timeout");
    repo.write("a.txt", "y\n");
    assert_eq!(
        check(&repo).gate("slow")["cached"],
        false,
        "a changed input runs again"
    );
    repo.config(&config("2s"));
    assert_eq!(
        check(&repo).gate("slow")["cached"],
        false,
        "a longer timeout runs again"
    );
    assert_eq!(runs(counter.path()), 3);
}

#[test]
fn a_run_cut_short_by_a_hooks_budget_is_not_cached() {
    let repo = Repo::git();
    let counter = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    repo.config(&format!(
        "[hooks]\nedit_budget = \"1s\"\n[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\ntimeout = \"1m\"\nenv = {{ COUNTER = \"{}\" }}\nrun = 'echo ran >> \"$COUNTER\"; sleep 30'\n",
        counter.path().display()
    ));
    for _ in 0..2 {
        let out = crate::hooks::post_tool_use(
            &repo,
            "Edit",
            json!({"file_path": repo.path().join("a.txt"), "old_string": "x", "new_string": "x"}),
        );
        assert!(out.stdout.contains("time budget ran out"), "{out:?}");
    }
    assert_eq!(
        runs(counter.path()),
        2,
        "the budget says nothing about the inputs"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn eight_simultaneous_edits_run_a_project_gate_once() {
    let repo = Repo::git();
    let counter = tempfile::NamedTempFile::new().unwrap();
    for i in 0..8 {
        repo.write(format!("src/m{i}.txt"), "ok\n");
    }
    repo.config(&format!(
        "[[gate]]\nname = \"whole-project\"\nglobs = [\"*.txt\"]\nscope = \"project\"\nenv = {{ COUNTER = \"{}\" }}\nrun = 'echo ran >> \"$COUNTER\"; sleep 1; ! grep -rn FAIL src'\n",
        counter.path().display()
    ));
    let outputs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let repo = &repo;
                s.spawn(move || {
                    crate::hooks::post_tool_use(
                        repo,
                        "Write",
                        json!({"file_path": repo.path().join(format!("src/m{i}.txt"))}),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &outputs {
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    }
    assert_eq!(
        runs(counter.path()),
        1,
        "8 hooks, one run of the project gate"
    );

    // And the waiters get the real result, failures included.
    repo.write("src/m3.txt", "FAIL\n");
    let outputs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let repo = &repo;
                s.spawn(move || {
                    crate::hooks::post_tool_use(
                        repo,
                        "Edit",
                        json!({"file_path": repo.path().join("src/m3.txt")}),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &outputs {
        assert!(run.stdout.contains("src/m3.txt:1:FAIL"), "{run:?}");
    }
    assert_eq!(runs(counter.path()), 2);
}

/// A file's `x` bit is part of it as an input: a test that runs `tools/ping` fails once the
/// bit is gone, though no byte and no mtime changed (found by a red team: a cached pass was
/// served). And back: a failure while the bit was off (the shell's 126) was served after
/// `chmod +x`, because an exec that fails is not observed; such a run is not stored. So is
/// a command that was not there (127) and is made later. Each verdict equals the bare run's.
#[test]
fn losing_the_executable_bit_is_a_change() {
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"t\"\nglobs = [\"check.sh\"]\nscope = \"project\"\nrun = \"sh check.sh\"\n");
    repo.write("check.sh", "./tools/ping\n");
    crate::common::write_exe(&repo.path().join("tools/ping"), "#!/bin/sh\nexit 0\n");
    repo.commit_all();
    let chmod = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        let p = repo.path().join("tools/ping");
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let verdict = || repo.run(["check", "--format", "json"]).gate("t")["status"].clone();
    for (mode, want) in [(0o755, "pass"), (0o644, "fail"), (0o755, "pass")] {
        chmod(mode);
        let bare = repo.shell("sh check.sh", &[]).0;
        assert_eq!(bare == 0, want == "pass", "the bare run at {mode:o}");
        assert_eq!(verdict(), want, "at {mode:o}");
        assert_eq!(verdict(), want, "at {mode:o}, cached");
    }
    std::fs::remove_file(repo.path().join("tools/ping")).unwrap();
    assert_ne!(repo.shell("sh check.sh", &[]).0, 0);
    assert_eq!(verdict(), "fail", "the command gone");
    crate::common::write_exe(&repo.path().join("tools/ping"), "#!/bin/sh\nexit 0\n");
    assert_eq!(verdict(), "pass", "the command made again");
}
