//! Every config error names the file, the line and the key, and exits 2.

use crate::common::Repo;

fn rejected(config: &str) -> String {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(config);
    let run = repo.run(["check"]);
    assert_eq!(run.code, 2, "config errors exit 2: {run:?}");
    assert!(
        run.stdout.is_empty(),
        "no gate may run on a bad config: {run:?}"
    );
    let path = repo.path().canonicalize().unwrap().join("ralph.toml");
    let stderr = run
        .stderr
        .replace(&path.display().to_string(), "ralph.toml");
    let stderr = stderr.replace(
        &repo.path().join("ralph.toml").display().to_string(),
        "ralph.toml",
    );
    assert!(stderr.starts_with("error: ralph.toml:"), "{stderr}");
    stderr
}

const OK_GATE: &str = "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = \"cat {files}\"\n";

#[test]
fn invalid_toml() {
    let e = rejected("[[gate]\nname = 1\n");
    assert!(e.starts_with("error: ralph.toml:1:"), "{e}");
}

#[test]
fn unknown_key() {
    let e = rejected(&format!("{OK_GATE}timout = \"3s\"\n"));
    assert!(
        e.starts_with("error: ralph.toml:5:1: `gate[0].timout`"),
        "{e}"
    );
    assert!(e.contains("unknown field `timout`"), "{e}");
}

#[test]
fn unknown_top_level_key() {
    let e = rejected("preset = [\"rust\"]\n");
    assert!(
        e.contains("ralph.toml:1:") && e.contains("unknown field `preset`"),
        "{e}"
    );
}

#[test]
fn bad_glob() {
    let e = rejected(
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\", \"src/{a,b\"]\nrun = \"cat {files}\"\n",
    );
    assert!(e.starts_with("error: ralph.toml:3:"), "{e}");
    assert!(
        e.contains("`gate[0].globs`") && e.contains("src/{a,b"),
        "{e}"
    );
}

#[test]
fn bad_duration() {
    let e = rejected(&format!("[defaults]\ntimeout = \"soon\"\n{OK_GATE}"));
    assert!(
        e.starts_with("error: ralph.toml:2:11: `defaults.timeout`"),
        "{e}"
    );
    assert!(e.contains("invalid duration `soon`"), "{e}");
}

#[test]
fn unknown_preset() {
    let e = rejected("presets = [\"python\", \"fortran\"]\n");
    assert!(e.starts_with("error: ralph.toml:1:"), "{e}");
    assert!(e.contains("unknown preset `fortran`"), "{e}");
}

#[test]
fn unknown_placeholder() {
    let e = rejected("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = \"cat {all_files}\"\n");
    assert!(e.starts_with("error: ralph.toml:4:"), "{e}");
    assert!(
        e.contains("`gate[0].run`") && e.contains("{all_files}"),
        "{e}"
    );
}

#[test]
fn wrong_type() {
    let e = rejected(&format!("{OK_GATE}optional = \"yes\"\n"));
    assert!(
        e.starts_with("error: ralph.toml:5:") && e.contains("gate[0].optional"),
        "{e}"
    );
}

#[test]
fn explicit_config_that_does_not_exist() {
    let repo = Repo::git();
    let run = repo.run(["--config", "nope.toml", "check"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot use --config nope.toml"),
        "{run:?}"
    );
}

#[test]
fn explicit_config_elsewhere_is_used() {
    let repo = Repo::git();
    repo.write("ci/gates.toml", OK_GATE)
        .write("ci/a.txt", "x\n")
        .write("b.txt", "y\n");
    let run = repo.run(["--config", "ci/gates.toml", "check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.gate("g")["command"],
        "cat a.txt",
        "root is the config's folder"
    );
}
