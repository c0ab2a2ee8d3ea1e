//! Load: many hooks at once from two sessions on one project. Nothing may be lost, corrupted
//! or counted twice.

use crate::common::Repo;
use crate::hooks::{post_tool_use, stop, PLUGIN_STATE};
use serde_json::{json, Value};

#[test]
fn thirty_two_concurrent_hooks_from_two_sessions_lose_nothing() {
    let repo = Repo::git();
    repo.write("src/ok.txt", "fine\n");
    // A quick edit gate and a quick stop gate; stuck detection off, since nothing changes.
    repo.config(
        "[[gate]]\nname = \"edit\"\nglobs = [\"*.txt\"]\nrun = '! grep -n BROKEN {files}'\nphases = [\"edit\"]\n\
         [[gate]]\nname = \"stop\"\nglobs = [\"*.txt\"]\nrun = '! grep -rn BROKEN src'\nphases = [\"stop\"]\nscope = \"project\"\n\
         [hooks]\nstuck_after = 0\n",
    );
    // Session A owns the main loop; session B has a loop of its own.
    repo.write(".claude/ralph-loop.local.md", PLUGIN_STATE);
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--session",
            "sess-B",
            "--promise",
            "B",
            "Task B"
        ])
        .code,
        0
    );

    const ROUNDS: usize = 3;
    const STOPS_PER_SESSION: usize = 8;
    for _ in 0..ROUNDS {
        std::thread::scope(|s| {
            let mut handles = Vec::new();
            for i in 0..32 {
                let repo = &repo;
                handles.push(s.spawn(move || {
                    if i % 2 == 0 && i / 2 < STOPS_PER_SESSION * 2 {
                        let session = if (i / 2) % 2 == 0 { "sess-A" } else { "sess-B" };
                        stop(repo, session, Some("still working"))
                    } else {
                        post_tool_use(
                            repo,
                            "Edit",
                            json!({"file_path": repo.path().join("src/ok.txt")}),
                        )
                    }
                }));
            }
            for h in handles {
                let run = h.join().unwrap();
                assert_eq!(run.code, 0, "{run:?}");
                assert!(run.stderr.is_empty(), "{run:?}");
            }
        });
    }

    let journal: Vec<Value> = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every journal line is whole JSON"))
        .collect();
    let per = |s: &str| journal.iter().filter(|e| e["session"] == s).count();
    assert_eq!(
        per("sess-A"),
        ROUNDS * STOPS_PER_SESSION,
        "no lost journal line for A"
    );
    assert_eq!(
        per("sess-B"),
        ROUNDS * STOPS_PER_SESSION,
        "no lost journal line for B"
    );

    let main = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    let expected = 1 + ROUNDS * STOPS_PER_SESSION;
    assert_eq!(
        main,
        PLUGIN_STATE.replace("iteration: 1", &format!("iteration: {expected}")),
        "A counted every stop once"
    );
    let other = std::fs::read_dir(repo.path().join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap() != "ralph-loop.local.md")
        .expect("B's loop file");
    let b = std::fs::read_to_string(other).unwrap();
    assert!(
        b.contains(&format!("iteration: {expected}\n")) && b.contains("session_id: sess-B\n"),
        "{b}"
    );
}
