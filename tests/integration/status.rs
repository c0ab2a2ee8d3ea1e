//! `ralph-gate status`: what every run recorded, the loops and the recent stop decisions.

use crate::common::Repo;
use crate::hooks::stop;

#[test]
fn status_shows_loops_latest_gate_results_with_colour_and_recent_stops() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"red\"\nglobs = [\"*.txt\"]\nrun = 'printf \"\\033[31mbroken\\033[0m\\n\"; exit 1'\n\
         [[gate]]\nname = \"green\"\nglobs = [\"*.txt\"]\nrun = 'true'\n\
         [[gate]]\nname = \"idle\"\nglobs = [\"*.none\"]\nrun = 'true'\n\
         [hooks]\nstuck_after = 0\n",
    );
    assert_eq!(repo.run(["check"]).code, 1);
    assert_eq!(
        repo.run([
            "loop",
            "start",
            "--max-iterations",
            "9",
            "--promise",
            "DONE",
            "Fix red.\nDetails."
        ])
        .code,
        0
    );
    let run = stop(&repo, "sess-S", Some("not yet"));
    assert!(run.stdout.contains("\"block\""), "{run:?}");

    let text = repo.run(["status"]);
    assert_eq!(text.code, 0, "{text:?}");
    let out = &text.stdout;
    assert!(
        out.contains("(main)  iteration 2/9  promise DONE  session sess-S"),
        "{out}"
    );
    assert!(
        out.contains("agent claude (ends its turn after 8 refusals in a row)"),
        "{out}"
    );
    assert!(out.contains("    Fix red."), "{out}");
    assert!(
        out.contains("FAIL  red") && out.contains("by stop"),
        "{out}"
    );
    assert!(out.contains("PASS  green"), "{out}");
    assert!(
        out.contains("----  idle                 not run yet"),
        "{out}"
    );
    assert!(
        out.contains("iteration 1    block continue         1 failing"),
        "{out}"
    );

    let json = repo.run(["status", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["schema"], "ralph-gate.status.v1");
    assert_eq!(v["loops"][0]["iteration"], 2);
    assert_eq!(v["gates"][0]["gate"], "red");
    assert_eq!(v["gates"][0]["last"]["status"], "fail");
    assert_eq!(
        v["gates"][0]["last"]["output"], "\u{1b}[31mbroken\u{1b}[0m\n",
        "colour is kept for the dashboard"
    );
    assert_eq!(v["gates"][2]["last"], serde_json::Value::Null);
    assert_eq!(v["stops"][0]["event"], "start", "loop events are journaled");
    assert_eq!(v["stops"][1]["event"], "stop");
    assert_eq!(v["stops"][1]["failing"], 1);
}

#[test]
fn status_of_a_project_with_nothing_recorded() {
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*\"]\nrun = 'true'\n");
    let run = repo.run(["status"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("no loop")
            && run.stdout.contains("not run yet")
            && run.stdout.contains("Recent stops\n  none"),
        "{run:?}"
    );
}
