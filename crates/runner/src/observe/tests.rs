use super::*;
#[cfg(observer)]
use std::process::{Command, Stdio};

#[cfg(observer)]
fn traced(script: &str, cwd: &Path) -> (i32, trace::Record) {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let t = match trace::spawn(cmd) {
        Ok(t) => t,
        Err(e) => panic!("this machine must allow observing runs: {e:?}"),
    };
    let mut status = None;
    loop {
        match t.reports.recv().expect("the tracer reports") {
            trace::Report::Exited(s, _) => status = Some(s),
            trace::Report::Done(r) => {
                let code = match ralph_base::child::raw_status(status.expect("exit first")) {
                    ralph_base::child::Status::Code(c) => c,
                    other => panic!("the script ended by {other:?}"),
                };
                return (code, *r);
            }
        }
    }
}

#[test]
#[cfg(observer)]
fn a_run_records_what_its_whole_tree_read_probed_and_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/read.txt"), "x").unwrap();
    std::fs::write(root.join("sub/rw.txt"), "x").unwrap();
    std::fs::write(root.join("sub/rw-traced.txt"), "x").unwrap();
    // A child shell, a relative path from a changed folder, a probe of something absent, a
    // write, a folder listed; files opened read-write (`<>`) that were there and that were
    // not, in process and (with the C library's calls not taken) by the tracer.
    let (code, rec) = traced(
        "cd sub && sh -c 'cat read.txt >/dev/null; test -e ../absent; test -e gone/../x; echo hi > out.txt; ls .. >/dev/null; exec 3<>rw.txt 4<>made.txt' \
         && env -u LD_PRELOAD sh -c 'exec 3<>rw-traced.txt 4<>made-traced.txt'; exit 3",
        &root,
    );
    assert_eq!(code, 3, "the command's own exit status");
    assert_eq!(rec.incomplete, None);
    let at = |p: &str| rec.paths.get(&root.join(p)).copied();
    assert_eq!(at("sub/read.txt"), Some(Access::Read));
    // Through `..`, as the kernel walked it (from the real folder before it).
    assert!(
        at("absent").is_some() && at("sub/../absent").is_none(),
        "{:?}",
        rec.paths.keys().collect::<Vec<_>>()
    );
    // Through a folder that is not there: the kernel's walk stops at it, and so does the
    // record (the run stays whole).
    assert_eq!(at("sub/gone"), Some(Access::Probe));
    assert_eq!(at("sub/out.txt"), Some(Access::Write));
    // Every process the run started has its parent noted.
    assert!(!rec.parent.is_empty());
    for (read, made) in [("rw", "made"), ("rw-traced", "made-traced")] {
        assert!(
            rec.updated.contains(&root.join(format!("sub/{read}.txt"))),
            "{read}: opened read-write"
        );
        assert_eq!(at(&format!("sub/{read}.txt")), Some(Access::Read), "{read}");
        assert_eq!(
            at(&format!("sub/{made}.txt")),
            Some(Access::Write),
            "{made}"
        );
    }
    // The shells and cat link the C library: they recorded their calls in process.
    assert!(
        rec.in_process > 0 && rec.stops > 0,
        "{} {}",
        rec.in_process,
        rec.stops
    );
    assert!(
        rec.paths
            .keys()
            .any(|p| p.ends_with("cat") || p.ends_with("coreutils")),
        "the programs run are inputs too"
    );
}

#[test]
#[cfg(observer)]
fn a_gate_that_leaves_a_process_behind_still_ends() {
    let dir = tempfile::tempdir().unwrap();
    let (code, rec) = traced("(sleep 30 &) ; exit 0", dir.path());
    assert_eq!(code, 0);
    assert_eq!(rec.incomplete, None);
}

fn places(root: &Path) -> Places {
    Places::new(
        root.to_path_buf(),
        Some(PathBuf::from("/home/someone")),
        vec![root.join(".ralph")],
    )
}

#[test]
fn paths_are_stored_relative_to_the_project_and_home_and_read_back() {
    let p = places(Path::new("/w/proj"));
    for (path, stored) in [
        ("/w/proj/src/a.ts", "./src/a.ts"),
        ("/w/proj", "."),
        ("/home/someone/.cargo/config.toml", "~/.cargo/config.toml"),
        ("/usr/lib/x.d.ts", "/usr/lib/x.d.ts"),
    ] {
        assert_eq!(stored_form(Path::new(path), &p).as_deref(), Some(stored));
        assert_eq!(real_path(stored, &p), PathBuf::from(path));
    }
}

#[test]
fn outputs_caches_and_system_folders_are_not_inputs() {
    let p = places(Path::new("/w/proj"));
    for path in [
        "/proc/self/maps",
        "/run/user/0/x",
        "/tmp/go-build1234/b001/",
        "/w/proj/.ralph/cache/x",
        "/w/proj/src/__pycache__/a.pyc",
        "/w/proj/node_modules/.cache/x",
        "/w/proj/.git/index",
        "/w/proj/tsconfig.tsbuildinfo",
        "/tmp/ralph-gate-pycache/usr/lib/python3.11/os.cpython-311.pyc",
    ] {
        assert!(skipped(Path::new(path), &p), "{path}");
    }
    for path in [
        "/w/proj/src/gen/api.ts",
        "/w/proj/node_modules/x/index.d.ts",
        "/w/proj/.tox/py311/lib/python3.11/site-packages/mypy/main.py",
        "/w/proj/.hypothesis/examples/a1/b2",
        "/usr/lib/python3/a.py",
    ] {
        assert!(!skipped(Path::new(path), &p), "{path}");
    }
    let in_tmp = places(Path::new("/tmp/proj"));
    assert!(
        !skipped(Path::new("/tmp/proj/src/a.py"), &in_tmp),
        "a project in /tmp keeps its files"
    );
    assert!(skipped(Path::new("/tmp/other"), &in_tmp));
    let deeper = places(Path::new("/tmp/work/app"));
    assert!(
        !skipped(Path::new("/tmp/work/.cargo/config.toml"), &deeper),
        "a project's neighbours in the temporary folder that holds it are inputs"
    );
    assert!(skipped(Path::new("/tmp/go-build1234/b001/x"), &deeper));
}

#[test]
fn a_project_inside_a_tagged_cache_folder_keeps_its_files() {
    // Cargo's target/ carries CACHEDIR.TAG; tests make their projects in target/tmp.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().canonicalize().unwrap();
    std::fs::write(
        target.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    let root = target.join("tmp/proj");
    std::fs::create_dir_all(root.join("gen")).unwrap();
    std::fs::create_dir_all(target.join("tmp/.cargo")).unwrap();
    std::fs::write(root.join("gen/a.rs"), "one").unwrap();
    let seen = HashMap::from([
        (root.join("gen/a.rs"), Access::Read),
        (target.join("tmp/.cargo/config.toml"), Access::Probe),
        (target.join("debug/x.rmeta"), Access::Read),
    ]);
    let after = coarse_now() + 1_000_000_000_000;
    let got = inputs(&seen, &places(&root), &Digests::load(&root, None), after).unwrap();
    let names: Vec<&str> = got.iter().map(|i| i.path.as_str()).collect();
    let above = format!("{}/tmp/.cargo/config.toml", target.display());
    assert!(names.contains(&"./gen/a.rs"), "{names:?}");
    assert!(names.contains(&above.as_str()), "{names:?}");
}

#[test]
fn a_tagged_environment_is_read_and_a_probe_is_marked() {
    // `uv venv` tags `.venv` with CACHEDIR.TAG; a `.mypy_cache` beside it is a cache.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let tag = "Signature: 8a477f597d28d172789f06886806bc55\n";
    for folder in [".venv/lib", ".mypy_cache/3.11"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join(".venv/CACHEDIR.TAG"), tag).unwrap();
    std::fs::write(root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(root.join(".venv/lib/lib.py"), "x = 1\n").unwrap();
    std::fs::write(root.join(".mypy_cache/CACHEDIR.TAG"), tag).unwrap();
    std::fs::write(root.join(".mypy_cache/3.11/a.json"), "{}").unwrap();
    std::fs::write(root.join("notes.txt"), "mine\n").unwrap();
    let seen = HashMap::from([
        (root.join(".venv/lib/lib.py"), Access::Read),
        (root.join(".mypy_cache/3.11/a.json"), Access::Read),
        (root.join("notes.txt"), Access::Probe),
    ]);
    let after = coarse_now() + 1_000_000_000_000;
    let got = inputs(&seen, &places(&root), &Digests::load(&root, None), after).unwrap();
    let names: Vec<(&str, bool)> = got.iter().map(|i| (i.path.as_str(), i.probed)).collect();
    assert_eq!(
        names,
        [("./.venv/lib/lib.py", false), ("./notes.txt", true)],
        "the environment is read, the cache is not; a stat is marked"
    );
}

#[test]
fn an_input_is_stored_with_what_it_was_and_any_change_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("gen")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(
        root.join("target/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    std::fs::write(root.join("gen/a.rs"), "one").unwrap();
    let digests = Digests::load(&root, None);
    let p = places(&root);
    let mut seen = HashMap::new();
    seen.insert(root.join("gen/a.rs"), Access::Read);
    seen.insert(root.join("gen"), Access::Read);
    seen.insert(root.join("absent.toml"), Access::Probe);
    seen.insert(root.join("target/debug/x.rmeta"), Access::Read);
    seen.insert(root.join("gen/out"), Access::Write);
    let after = coarse_now() + 1_000_000_000_000;
    let got = inputs(&seen, &p, &digests, after).unwrap();
    let names: Vec<&str> = got.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        names,
        ["./absent.toml", "./gen", "./gen/a.rs"],
        "no cache, no output"
    );
    assert_eq!(changed(&got, &p, &digests), None);
    // The run's own output, there when it is checked, is not a new name it read.
    std::fs::write(root.join("gen/out"), "made by the run").unwrap();
    assert_eq!(changed(&got, &p, &digests), None, "its own output");
    std::fs::remove_file(root.join("gen/out")).unwrap();
    std::fs::write(root.join("absent.toml"), "").unwrap();
    assert_eq!(
        changed(&got, &p, &digests).as_deref(),
        Some("./absent.toml changed")
    );
    std::fs::remove_file(root.join("absent.toml")).unwrap();
    std::fs::write(root.join("gen/b.rs"), "new").unwrap();
    assert_eq!(
        changed(&got, &p, &digests).as_deref(),
        Some("./gen changed"),
        "a new name in a listed folder"
    );
    std::fs::remove_file(root.join("gen/b.rs")).unwrap();
    std::fs::write(root.join("gen/a.rs"), "two").unwrap();
    assert_eq!(
        changed(&got, &p, &digests).as_deref(),
        Some("./gen/a.rs changed")
    );
}

#[test]
fn a_file_changed_while_the_run_went_on_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let started = coarse_now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(root.join("a.py"), "x").unwrap();
    let seen = HashMap::from([(root.join("a.py"), Access::Read)]);
    let err = inputs(&seen, &places(&root), &Digests::load(&root, None), started).unwrap_err();
    assert_eq!(err, NotStored::ChangedDuring(root.join("a.py")));
    assert!(
        err.to_string().contains("changed while the gate ran"),
        "{err}"
    );
}

#[test]
fn a_server_the_run_did_not_start_is_named_and_its_own_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("daemon.sock");
    let _outside = std::os::unix::net::UnixListener::bind(&before).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let started = coarse_now() + 1;
    std::thread::sleep(std::time::Duration::from_millis(20));
    let own = dir.path().join("own.sock");
    let _mine = std::os::unix::net::UnixListener::bind(&own).unwrap();
    let gone = dir.path().join("gone.sock");
    let system = std::path::PathBuf::from("/run/systemd/journal/socket");
    let only = |paths: &[&std::path::Path]| {
        let set: std::collections::HashSet<std::path::PathBuf> =
            paths.iter().map(|p| p.to_path_buf()).collect();
        foreign_server(&set, started)
    };
    assert_eq!(
        only(&[&before, &own]),
        Some(NotStored::Server(before.clone()))
    );
    assert_eq!(
        only(&[&own, &gone, &system]),
        None,
        "its own, gone, the system's"
    );
}

#[test]
#[cfg(observer)]
fn an_open_reads_what_the_file_held_unless_it_writes_only_truncates_or_makes_it() {
    use libc::{O_APPEND, O_CREAT, O_EXCL, O_PATH, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY};
    let cases = [
        (O_RDONLY, false, Access::Read),
        (O_RDWR, true, Access::Read),
        (O_RDWR | O_CREAT, true, Access::Read),
        (O_RDWR | O_CREAT, false, Access::Write),
        (O_RDWR | O_TRUNC, true, Access::Write),
        (O_RDWR | O_CREAT | O_EXCL, true, Access::Write),
        (O_WRONLY | O_APPEND, true, Access::Write),
        (O_PATH | O_RDWR, true, Access::Probe),
    ];
    for (flags, there, access) in cases {
        assert_eq!(
            trace::open_access(flags as u64, || there),
            access,
            "{flags:#o} with the file there: {there}"
        );
    }
}
