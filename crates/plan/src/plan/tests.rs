use super::*;
use ralph_config::{self as config, Config};

fn config(text: &str) -> Config {
    let file = config::parse(Path::new("ralph.toml"), text.to_string()).unwrap();
    config::resolve(PathBuf::from("/p"), Some(file), &mut Vec::new).unwrap()
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

/// A check of every file in `files`, all gates, nothing unopenable.
fn every(files: &[PathBuf]) -> Request<'_> {
    Request {
        files,
        universe: files,
        phase: Phase::Check,
        only: &[],
        unopenable: &[],
    }
}

fn plan_with(
    c: &Config,
    files: &[PathBuf],
    universe: &[PathBuf],
    phase: Phase,
    only: &[String],
    markers: &[&str],
    budget: usize,
) -> Plan {
    let fs = MemFs::new(&markers.iter().map(|m| (*m, "")).collect::<Vec<_>>());
    plan(
        c,
        &Request {
            files,
            universe,
            phase,
            only,
            unopenable: &[],
        },
        &Context {
            fs: &fs,
            arg_budget: budget,
            spread: 1,
            costs: None,
            reuse_build_state: true,
        },
    )
}

fn plan_for(c: &Config, files: &[&str], phase: Phase, markers: &[&str], budget: usize) -> Plan {
    plan_with(c, &paths(files), &paths(files), phase, &[], markers, budget)
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
    let p = plan_with(
        &c,
        &paths(&["a.py"]),
        &paths(&["a.py"]),
        Phase::Check,
        &only,
        &[],
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
    let p = plan_with(
        &c,
        &paths(&["crates/a/src/lib.rs"]),
        &universe,
        Phase::Check,
        &[],
        &["crates/a/Cargo.toml"],
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
    assert_eq!(p.gates[0].jobs[0].inputs, paths(&["-x.py", "a.py"]));
    assert_eq!(
        p.gates[0].jobs[0].args,
        vec![OsString::from("./-x.py"), OsString::from("a.py")]
    );
}

#[test]
fn batches_spread_over_the_cores_in_equal_stable_shares() {
    let c = config(CONFIG);
    let names: Vec<PathBuf> = (0..40).map(|i| PathBuf::from(format!("m{i}.py"))).collect();
    let body = "x".repeat(8000);
    let fs = MemFs::new(
        &names
            .iter()
            .map(|n| (n.to_str().unwrap(), body.as_str()))
            .collect::<Vec<_>>(),
    );
    let plan_n = |files: &[PathBuf], spread: usize| {
        plan(
            &c,
            &every(files),
            &Context {
                fs: &fs,
                arg_budget: ARG_BUDGET,
                spread,
                costs: None,
                reuse_build_state: true,
            },
        )
    };
    let four = plan_n(&names, 4);
    assert_eq!(four.gates[0].jobs.len(), 4, "one run per core");
    let sizes: Vec<usize> = four.gates[0].jobs.iter().map(|j| j.args.len()).collect();
    assert_eq!(
        sizes,
        [10, 10, 10, 10],
        "equal shares, no file lost or repeated"
    );
    // Shares are by size: the big file is a run of its own.
    let mut files: Vec<(String, String)> = (0..8)
        .map(|i| (format!("s{i}.py"), "x".repeat(100)))
        .collect();
    files.push(("big.py".into(), "x".repeat(64 * 1024)));
    let big = MemFs::new(
        &files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect::<Vec<_>>(),
    );
    let parts = spread(&big.paths(), 2, &|p| big.size(p));
    assert!(parts.contains(&vec![PathBuf::from("big.py")]), "{parts:?}");
    // Small batches stay in one process: another would cost more than it saves.
    let small = MemFs::new(&[("a.py", "x = 1"), ("b.py", "y = 2"), ("c.py", "z = 3")]);
    assert_eq!(spread(&small.paths(), 2, &|p| small.size(p)).len(), 1);
    let mut shuffled = names.clone();
    shuffled.reverse();
    assert_eq!(
        plan_n(&shuffled, 4).gates[0].jobs,
        four.gates[0].jobs,
        "groups depend on the set of paths only (never on order or contents)"
    );
    let serial = config(&CONFIG.replace(
        "run = \"check {files}\"",
        "run = \"check {files}\"\nserial = true",
    ));
    let one = plan(
        &serial,
        &every(&names),
        &Context {
            fs: &fs,
            arg_budget: ARG_BUDGET,
            spread: 4,
            costs: None,
            reuse_build_state: true,
        },
    );
    assert_eq!(one.gates[0].jobs.len(), 1, "serial = true keeps one run");
}

#[test]
fn shebangs_match_extensionless_scripts_and_declared_inputs_join_every_run() {
    let c = config(
        "[[gate]]\nname = \"sh\"\nglobs = [\"*.sh\"]\nshebangs = [\"bash\"]\ninputs = [\"conf/*.rc\"]\nrun = \"lint {files}\"\n",
    );
    let fs = MemFs::new(&[
        ("bin/tool", "#!/usr/bin/env bash\necho\n"),
        ("bin/py", "#!/usr/bin/python3\n"),
        ("bin/data.txt", "#!/bin/bash\n"),
        ("a.sh", ""),
        ("conf/x.rc", ""),
    ]);
    let files = fs.paths();
    let p = plan(
        &c,
        &every(&files),
        &Context {
            fs: &fs,
            arg_budget: ARG_BUDGET,
            spread: 1,
            costs: None,
            reuse_build_state: true,
        },
    );
    assert_eq!(p.gates[0].files, paths(&["a.sh", "bin/tool"]));
    assert_eq!(
        p.gates[0].jobs[0].inputs,
        paths(&["a.sh", "bin/tool", "conf/x.rc"])
    );
}

#[test]
fn with_costs_each_batch_is_split_as_the_scheduler_decides() {
    let files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("m{i}.py"), "x = 1\n".repeat(40)))
        .chain((0..40).map(|i| (format!("s{i}.sh"), "echo hi\n".repeat(40))))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let fs = MemFs::new(&refs);
    let c = config(
        "[[gate]]\nname = \"py\"\nglobs = [\"*.py\"]\nrun = \"py {files}\"\n\
         [[gate]]\nname = \"sh\"\nglobs = [\"*.sh\"]\nrun = \"sc {files}\"\n",
    );
    // A slow interpreter start-up (60 ms) and a fast one, each with 150 ms of files: one
    // run each fills both cores. (Each size seen twice: a size seen once may be noise.)
    let mut costs = crate::costs::Costs::default();
    for (gate, start) in [("py", 60.0), ("sh", 1.0)] {
        for kib in [20.0, 40.0, 20.0, 40.0] {
            costs.learn(&crate::costs::Ran {
                gate,
                whole: None,
                kib,
                wall_ms: start + 150.0 * kib / 40.0,
                cpu_ms: None,
            });
        }
    }
    let plan_of = |names: &[PathBuf]| {
        plan(
            &c,
            &every(names),
            &Context {
                fs: &fs,
                arg_budget: ARG_BUDGET,
                spread: 2,
                costs: Some(&costs),
                reuse_build_state: false,
            },
        )
    };
    let names = fs.paths();
    let p = plan_of(&names);
    let runs: Vec<usize> = p.gates.iter().map(|g| g.jobs.len()).collect();
    assert_eq!(runs, [1, 1]);
    assert_eq!(p.gates[0].split, Some(1));
    // Every job has an estimate; the files are all still checked, once.
    for g in &p.gates {
        assert_eq!(g.costs.len(), g.jobs.len());
        let args: usize = g.jobs.iter().map(|j| j.args.len()).sum();
        assert_eq!(args, 40);
    }
    // Only one gate with files: it takes both cores.
    let py_only: Vec<PathBuf> = names
        .iter()
        .filter(|n| n.extension().unwrap() == "py")
        .cloned()
        .collect();
    assert_eq!(plan_of(&py_only).gates[0].jobs.len(), 2);
}

#[test]
fn a_path_no_checker_can_open_that_a_gate_matches_is_unverified_not_dropped() {
    let c = config(CONFIG);
    let files = paths(&["a.py"]);
    let link = crate::files::Unopenable::DanglingLink;
    let folder = crate::files::Unopenable::NotAFile;
    let unopenable = vec![
        (PathBuf::from("b.py"), link),
        (PathBuf::from("d.py"), folder),
        (PathBuf::from("vendor/c.py"), link),
        (PathBuf::from("notes.txt"), link),
    ];
    let fs = MemFs::new(&[("a.py", "")]);
    let planned = plan(
        &c,
        &Request {
            unopenable: &unopenable,
            ..every(&files)
        },
        &Context {
            fs: &fs,
            arg_budget: ARG_BUDGET,
            spread: 1,
            costs: None,
            reuse_build_state: false,
        },
    );
    let py = planned
        .gates
        .iter()
        .find(|g| c.gates[g.gate].name == "py")
        .unwrap();
    // Matched by the gate's globs and not excluded: reported; never a file a run is given.
    assert_eq!(
        py.unverified,
        vec![
            Unverified {
                path: PathBuf::from("b.py"),
                why: Unchecked::Unopenable(link)
            },
            Unverified {
                path: PathBuf::from("d.py"),
                why: Unchecked::Unopenable(folder)
            }
        ]
    );
    assert!(py
        .jobs
        .iter()
        .all(|j| !j.args.iter().any(|a| a == "b.py" || a == "d.py")));
    for g in &planned.gates {
        assert!(
            g.unverified
                .iter()
                .all(|u| u.path != Path::new("notes.txt")),
            "a link no gate matches is no gate's"
        );
    }
}
