//! File names are data, never code: whatever a name holds, it reaches the gate as exactly one
//! argument and nothing in it runs.

use crate::common::Repo;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

const NAMES: &[&[u8]] = &[
    b"$(touch pwned).py",
    b"a'b;touch semi.py",
    b"back`touch tick`.py",
    b"-rf.py",
    b"sp ace.py",
    b"new\nline.py",
    b"quote\"d.py",
    b"non-utf8-\xff\xfe.py",
    b"*.py",
];

fn recording_config(scope: &str, placeholder: &str, out: &str) -> String {
    format!(
        "[[gate]]\nname = \"record\"\nglobs = [\"*.py\"]\nscope = \"{scope}\"\nrun = \"printf '%s\\\\0' {placeholder} >> \\\"$OUT\\\"\"\nenv = {{ OUT = \"{out}\" }}\n"
    )
}

fn hostile_repo() -> Repo {
    let repo = Repo::git();
    for name in NAMES {
        std::fs::write(repo.path().join(OsStr::from_bytes(name)), "x = 1\n").unwrap();
    }
    repo
}

/// A repo full of hostile names, with a gate that records its arguments into the returned file.
fn recording_repo(scope: &str, placeholder: &str) -> (Repo, tempfile::NamedTempFile) {
    let repo = hostile_repo();
    let out = tempfile::NamedTempFile::new().unwrap();
    repo.config(&recording_config(
        scope,
        placeholder,
        out.path().to_str().unwrap(),
    ));
    (repo, out)
}

fn recorded(out: &std::path::Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(out).unwrap();
    let mut args: Vec<Vec<u8>> = bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    args.sort();
    args
}

fn expected() -> Vec<Vec<u8>> {
    let mut want: Vec<Vec<u8>> = NAMES
        .iter()
        .map(|n| {
            if n.starts_with(b"-") {
                [b"./".as_slice(), n].concat()
            } else {
                n.to_vec()
            }
        })
        .collect();
    want.sort();
    want
}

fn assert_nothing_ran(repo: &Repo) {
    for trap in ["pwned", "semi.py", "tick", "pwned).py"] {
        assert!(!repo.exists(trap), "a file name ran code: {trap} exists");
    }
}

#[test]
fn hostile_names_reach_a_batch_gate_as_exact_single_arguments() {
    let (repo, out) = recording_repo("batch", "{files}");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_nothing_ran(&repo);
    assert_eq!(recorded(out.path()), expected());
}

#[test]
fn hostile_names_reach_a_file_gate_one_run_each() {
    let (repo, out) = recording_repo("file", "{file}");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.gate("record")["runs"], NAMES.len());
    assert_nothing_ran(&repo);
    assert_eq!(recorded(out.path()), expected());
}

#[test]
fn hostile_names_named_on_the_command_line_run_nothing() {
    let (repo, out) = recording_repo("batch", "{files}");
    let mut cmd = repo.cmd();
    cmd.arg("check")
        .arg("--")
        .arg(OsStr::from_bytes(b"$(touch pwned).py"))
        .arg(OsStr::from_bytes(b"-rf.py"));
    let run = crate::common::finish(cmd.output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    assert_nothing_ran(&repo);
    assert_eq!(
        recorded(out.path()),
        vec![b"$(touch pwned).py".to_vec(), b"./-rf.py".to_vec()]
    );
}

#[test]
fn displayed_commands_quote_hostile_names() {
    let repo = Repo::git();
    repo.write("it's $(x).py", "x = 1\n");
    repo.config("[[gate]]\nname = \"show\"\nglobs = [\"*.py\"]\nrun = \"false {files}\"\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("$ false 'it'\\''s $(x).py'"), "{run:?}");
}
