//! The scheduler, seen from outside: runs never outnumber `--jobs` and fill them, whole-project
//! runs start first and then the longest expected, and learned costs survive damage. Gates record what they
//! see in files outside the repository; nothing here asserts a duration.

use crate::common::Repo;
use std::path::Path;

/// A gate body that records how many runs of any gate are under way when it starts (a file
/// per run in `dir`), then holds its slot for a moment.
fn tracked(name: &str, glob: &str, dir: &Path, extra: &str, names: &str) -> String {
    format!(
        "[[gate]]\nname = \"{name}\"\nglobs = [\"{glob}\"]\n{extra}env = {{ TRACK = \"{}\" }}\n\
         run = 'touch \"$TRACK/run.$$\"; ls \"$TRACK\" | grep -c \"^run\\.\" >> \"$TRACK/seen\"; sleep 0.4; rm \"$TRACK/run.$$\"; : {names}'\n",
        dir.display()
    )
}

fn seen(dir: &Path) -> Vec<usize> {
    std::fs::read_to_string(dir.join("seen"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn runs_never_outnumber_the_jobs_and_fill_them() {
    let repo = Repo::git();
    let track = tempfile::tempdir().unwrap();
    for i in 0..6 {
        repo.write(format!("a{i}.txt"), "a\n")
            .write(format!("b{i}.md"), "b\n")
            .write(format!("c{i}.cfg"), "c\n");
    }
    repo.config(&format!(
        "{}{}{}",
        tracked("a", "*.txt", track.path(), "scope = \"file\"\n", "{file}"),
        tracked("b", "*.md", track.path(), "", "{files}"),
        tracked("c", "*.cfg", track.path(), "scope = \"project\"\n", ""),
    ));
    let run = repo.run(["check", "--no-cache", "--jobs", "2"]);
    assert_eq!(run.code, 0, "{run:?}");
    let counts = seen(track.path());
    // 6 file runs, at least one batch run, one project run.
    assert!(counts.len() >= 8, "{counts:?}");
    assert!(
        counts.iter().all(|&n| n <= 2),
        "more runs than jobs: {counts:?}"
    );
    assert!(
        counts.contains(&2),
        "the second slot was never used: {counts:?}"
    );
}

#[test]
fn whole_project_runs_start_first_then_the_longest_learned() {
    let repo = Repo::git();
    let log = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "a\n")
        .write("b.md", "b\n")
        .write("c.cfg", "c\n");
    let gate = |name: &str, glob: &str, body: &str, extra: &str| {
        format!(
            "[[gate]]\nname = \"{name}\"\nglobs = [\"{glob}\"]\n{extra}env = {{ LOG = \"{}\" }}\nrun = 'echo {name} >> \"$LOG\"; {body}'\n",
            log.path().display()
        )
    };
    repo.config(&format!(
        "{}{}{}",
        gate("quick", "*.txt", "true", ""),
        gate("slow", "*.md", "sleep 0.5", ""),
        gate("project", "*.cfg", "true", "scope = \"project\"\n"),
    ));
    let order = || std::fs::read_to_string(log.path()).unwrap();
    // First run, nothing known yet: the project run first, then config order.
    let run = repo.run(["check", "--no-cache", "--jobs", "1"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(order(), "project\nquick\nslow\n");
    std::fs::write(log.path(), "").unwrap();
    // Now the slow gate is known to be slow: it starts before the quick one.
    repo.run(["check", "--no-cache", "--jobs", "1"]);
    assert_eq!(order(), "project\nslow\nquick\n");
}

#[test]
fn a_damaged_or_forged_costs_file_changes_no_verdict() {
    let repo = Repo::git();
    repo.write("a.txt", "FAIL\n").write("b.txt", "ok\n");
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -n FAIL {files}'\n");
    for forged in [
        "{not json".to_string(),
        r#"{"gates":{"g":{"samples":[[1,1e308],[-5,-5]],"cores":1e9,"split":99999}},"runs":{}}"#
            .to_string(),
    ] {
        repo.write(".ralph/costs.json", &forged);
        let run = repo.run(["check", "--no-cache", "--format", "json"]);
        assert_eq!(
            (run.code, &run.gate("g")["status"]),
            (1, &"fail".into()),
            "{run:?}"
        );
        assert_eq!(run.gate("g")["files"], 2);
        // What was learned replaces the damage, whole.
        let text = std::fs::read_to_string(repo.path().join(".ralph/costs.json")).unwrap();
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
    }
}
