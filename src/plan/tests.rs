use super::*;
use crate::config::{self, Config};
use std::collections::BTreeSet;

fn config(text: &str) -> Config {
    let file = config::parse(Path::new("ralph.toml"), text.to_string()).unwrap();
    config::resolve(PathBuf::from("/p"), Some(file), &mut Vec::new).unwrap()
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

fn plan_for(c: &Config, files: &[&str], phase: Phase, markers: &[&str], budget: usize) -> Plan {
    let markers: BTreeSet<PathBuf> = markers.iter().map(PathBuf::from).collect();
    plan(
        c,
        &paths(files),
        &paths(files),
        &Filter { phase, only: &[] },
        &|p| markers.contains(p),
        budget,
    )
}

const CONFIG: &str = r#"
[[gate]]
name = "py"
globs = ["*.py"]
exclude = ["vendor/**"]
run = "check {files}"

[[gate]]
name = "each-sh"
globs = ["*.sh"]
run = "shellcheck {file}"
scope = "file"
phases = ["edit"]

[[gate]]
name = "cargo"
globs = ["*.rs"]
run = "cargo check"
scope = "project"
root_markers = ["Cargo.toml"]
"#;

#[test]
fn gates_get_only_their_files_and_excludes_hold() {
    let c = config(CONFIG);
    let p = plan_for(
        &c,
        &["a.py", "vendor/v.py", "b/c.py", "x.sh"],
        Phase::Check,
        &[],
        ARG_BUDGET,
    );
    assert_eq!(p.gates.len(), 2, "each-sh is edit-only");
    assert_eq!(p.gates[0].files, paths(&["a.py", "b/c.py"]));
    assert_eq!(p.gates[0].jobs.len(), 1);
    assert!(p.gates[1].jobs.is_empty(), "cargo matched nothing");
}

#[test]
fn file_scope_makes_one_job_per_file() {
    let c = config(CONFIG);
    let p = plan_for(&c, &["x.sh", "y.sh"], Phase::Edit, &[], ARG_BUDGET);
    let sh = p
        .gates
        .iter()
        .find(|g| c.gates[g.gate].name == "each-sh")
        .unwrap();
    assert_eq!(sh.jobs.len(), 2);
    assert_eq!(sh.jobs[1].args, vec![OsString::from("y.sh")]);
}

#[test]
fn project_scope_groups_by_nearest_marker() {
    let c = config(CONFIG);
    let p = plan_for(
        &c,
        &[
            "crates/a/src/lib.rs",
            "crates/a/src/x/y.rs",
            "crates/b/src/lib.rs",
            "tools/t.rs",
        ],
        Phase::Check,
        &["crates/a/Cargo.toml", "crates/b/Cargo.toml"],
        ARG_BUDGET,
    );
    let cargo = &p.gates[1];
    let dirs: Vec<&Path> = cargo.jobs.iter().map(|j| j.dir.as_path()).collect();
    assert_eq!(
        dirs,
        [Path::new(""), Path::new("crates/a"), Path::new("crates/b")]
    );
    assert_eq!(
        cargo.jobs[1].args,
        vec![OsString::from("src/lib.rs"), OsString::from("src/x/y.rs")]
    );
}

#[test]
fn long_file_lists_are_split_under_the_budget() {
    let c = config(CONFIG);
    let names: Vec<String> = (0..1000).map(|i| format!("dir/file_{i:04}.py")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let budget = 2000;
    let p = plan_for(&c, &refs, Phase::Check, &[], budget);
    let jobs = &p.gates[0].jobs;
    assert!(jobs.len() > 10, "{} jobs", jobs.len());
    let all: Vec<&OsString> = jobs.iter().flat_map(|j| j.args.iter()).collect();
    assert_eq!(all.len(), 1000, "no file lost or repeated");
    for j in jobs {
        let size: usize = j
            .args
            .iter()
            .map(|a| a.len() + 1 + std::mem::size_of::<usize>())
            .sum();
        assert!(size <= budget, "a job of {size} bytes");
    }
}

#[test]
fn leading_dash_names_cannot_become_options() {
    let c = config(CONFIG);
    let p = plan_for(&c, &["-rf.py"], Phase::Check, &[], ARG_BUDGET);
    assert_eq!(p.gates[0].jobs[0].args, vec![OsString::from("./-rf.py")]);
}

#[test]
fn only_filter_keeps_named_gates() {
    let c = config(CONFIG);
    let only = vec!["cargo".to_string()];
    let p = plan(
        &c,
        &paths(&["a.py"]),
        &paths(&["a.py"]),
        &Filter {
            phase: Phase::Check,
            only: &only,
        },
        &|_| false,
        ARG_BUDGET,
    );
    assert_eq!(p.gates.len(), 1);
    assert_eq!(c.gates[p.gates[0].gate].name, "cargo");
}

#[test]
fn project_jobs_depend_on_every_matching_file_under_their_root() {
    let c = config(CONFIG);
    let universe = paths(&[
        "crates/a/src/lib.rs",
        "crates/a/src/other.rs",
        "crates/b/src/lib.rs",
        "crates/a/README.md",
    ]);
    let p = plan(
        &c,
        &paths(&["crates/a/src/lib.rs"]),
        &universe,
        &Filter {
            phase: Phase::Check,
            only: &[],
        },
        &|p| p == Path::new("crates/a/Cargo.toml"),
        ARG_BUDGET,
    );
    let job = &p.gates[1].jobs[0];
    assert_eq!(job.dir, Path::new("crates/a"));
    assert_eq!(job.args, vec![OsString::from("src/lib.rs")]);
    assert_eq!(
        job.inputs,
        paths(&["crates/a/src/lib.rs", "crates/a/src/other.rs"])
    );
}

#[test]
fn batch_and_file_jobs_depend_on_their_own_files() {
    let c = config(CONFIG);
    let p = plan_for(&c, &["a.py", "-x.py"], Phase::Check, &[], ARG_BUDGET);
    assert_eq!(p.gates[0].jobs[0].inputs, paths(&["a.py", "-x.py"]));
    assert_eq!(
        p.gates[0].jobs[0].args,
        vec![OsString::from("a.py"), OsString::from("./-x.py")]
    );
}
