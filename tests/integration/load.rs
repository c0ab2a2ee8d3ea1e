//! Load: many hooks at once from two sessions on one project. Nothing may be lost, corrupted
//! or counted twice.

use crate::common::{without_pin, Repo};
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
    // A: no iteration limit, so every stop must be counted. B: a limit of 10 that
    // concurrent stops must not overrun.
    let unlimited = PLUGIN_STATE.replace("max_iterations: 20", "max_iterations: 0");
    repo.write(".claude/ralph-loop.local.md", &unlimited);
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--session",
            "sess-B",
            "--max-iterations",
            "10",
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
    let of = |session: &str| -> Vec<&Value> {
        journal.iter().filter(|e| e["session"] == session).collect()
    };
    assert_eq!(
        of("sess-A").len(),
        ROUNDS * STOPS_PER_SESSION,
        "no lost journal line for A"
    );
    let main = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    let expected = 1 + ROUNDS * STOPS_PER_SESSION;
    assert_eq!(
        without_pin(&main),
        unlimited.replace("iteration: 1", &format!("iteration: {expected}")),
        "A counted every stop once"
    );

    // B: iterations 1..=9 blocked, the 10th stop ended the loop at its limit, and later stops
    // found no loop of B's to hold: exactly 10 decisions, the limit neither missed nor overrun.
    let b = of("sess-B");
    let outcomes: Vec<&str> = b.iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(b.len(), 10, "{outcomes:?}");
    assert_eq!(
        outcomes.iter().filter(|o| **o == "continue").count(),
        9,
        "{outcomes:?}"
    );
    assert_eq!(outcomes.last(), Some(&"limit_reached"), "{outcomes:?}");
    let mut iterations: Vec<u64> = b.iter().map(|e| e["iteration"].as_u64().unwrap()).collect();
    iterations.sort();
    assert_eq!(
        iterations,
        (1..=10).collect::<Vec<u64>>(),
        "each iteration decided once"
    );
    let left: Vec<_> = std::fs::read_dir(repo.path().join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("ralph-loop.local.md")],
        "B's loop ended; no temporary file left"
    );
}
