//! A stored verdict is reused only while everything that decided it is as it was: the files
//! the run's processes actually read (observed), the environment it inherited. Each case
//! compares ralph-gate's verdict, uncached and then cached after a change, with the bare
//! tool's on the same tree.

use crate::common::{require_tool, typescript7_repo, typescript_repo, write_exe, Repo, Run};
use serde_json::json;
use std::path::Path;
use std::process::Command;

fn check(repo: &Repo, env: &[(&str, &str)]) -> Run {
    repo.run_env(["check", "--all", "--format", "json"], env)
}

/// The bare tool's verdict: does `cmd` exit 0 in `dir`?
fn bare(dir: &Path, cmd: &str, env: &[(&str, &str)]) -> bool {
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("sh runs");
    out.status.success()
}

/// The gate's status and whether it was served from the cache.
fn verdict(run: &Run, gate: &str) -> (String, bool) {
    let g = run.gate(gate);
    (
        g["status"].as_str().unwrap_or("?").to_string(),
        g["cached"].as_bool().unwrap_or(false),
    )
}

fn status(pass: bool) -> String {
    if pass { "pass" } else { "fail" }.to_string()
}

/// Runs check twice after each change: the first must not be served the old verdict and must
/// equal the bare tool's; the second may be cached and must say the same.
fn agrees(repo: &Repo, gate: &str, bare_cmd: &str, env: &[(&str, &str)], when: &str) -> bool {
    agrees_as(repo, gate, bare_cmd, env, when, Some(false))
}

/// [`agrees`] for a state seen before, whose stored verdict may serve (`cached`: `None`).
fn agrees_as(
    repo: &Repo,
    gate: &str,
    bare_cmd: &str,
    env: &[(&str, &str)],
    when: &str,
    cached: Option<bool>,
) -> bool {
    let want = bare(repo.path(), bare_cmd, env);
    let first = check(repo, env);
    let (got, was_cached) = verdict(&first, gate);
    assert_eq!(
        (got, cached.unwrap_or(was_cached)),
        (status(want), was_cached),
        "{when}: the first run after the change equals `{bare_cmd}`, fresh unless the state was seen before: {first:?}"
    );
    let second = check(repo, env);
    assert_eq!(
        verdict(&second, gate).0,
        status(want),
        "{when}: cached, the same verdict: {second:?}"
    );
    want
}

#[test]
fn a_file_the_command_reads_but_no_config_names_is_an_input() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n").write("flag.cfg", "ok\n");
    repo.config(
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -q BAD {files} flag.cfg'\n",
    );
    let cmd = "! grep -q BAD a.txt flag.cfg";
    assert!(agrees(&repo, "g", cmd, &[], "before"));
    repo.write("flag.cfg", "BAD\n");
    assert!(!agrees(&repo, "g", cmd, &[], "flag.cfg changed"));
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": repo.path().join("a.txt"), "old_string": "x", "new_string": "x"}),
    );
    assert!(
        hook.stdout.contains("[g]"),
        "the edit hook says so: {hook:?}"
    );
    repo.write("flag.cfg", "ok\n");
    assert!(agrees(&repo, "g", cmd, &[], "flag.cfg put back"));
}

/// A file outside the project that a run read (an interpreter's library) is remembered for
/// the user's other projects, so a new clone does not read it again; once it changes, every
/// project reads it again and the verdict follows it.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_file_outside_the_project_is_remembered_for_other_clones_until_it_changes() {
    // Not under a temporary folder: what a run reads there is never an input.
    let home = std::env::var_os("HOME").expect("HOME");
    let outside = tempfile::tempdir_in(home).unwrap();
    let flag = outside.path().join("flag.cfg");
    std::fs::write(&flag, "ok\n").unwrap();
    // A stamp is remembered only for a file older than the racy window.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let cache_home = outside.path().join("cache");
    let env = [("XDG_CACHE_HOME", cache_home.to_str().unwrap())];
    let clone = || {
        let repo = Repo::git();
        repo.write("a.txt", "x\n");
        repo.config(&format!(
            "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -q BAD {{files}} {}'\n",
            flag.display()
        ));
        repo
    };
    let cmd = format!("! grep -q BAD a.txt {}", flag.display());
    let first = clone();
    assert!(agrees(&first, "g", &cmd, &env, "the first project"));
    let shared = std::fs::read_to_string(cache_home.join("ralph-gate/files.tsv"))
        .expect("the stamps of files outside the project are shared");
    let hex: String = flag
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(shared.contains(&hex), "{shared}");
    let second = clone();
    assert!(agrees(
        &second,
        "g",
        &cmd,
        &env,
        "a new clone, the file unchanged"
    ));
    std::fs::write(&flag, "BAD\n").unwrap();
    for (repo, when) in [(clone(), "a new clone"), (first, "the first project")] {
        assert!(!agrees(
            &repo,
            "g",
            &cmd,
            &env,
            &format!("{when}, the file changed")
        ));
    }
}

/// A file read through a folder the run made and removed (git-open's bats suite runs
/// `../git-open` from a sandbox repository it deletes after each test): the file, not the
/// name through the folder that is gone, decides whether the stored verdict serves.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_file_read_through_a_folder_the_run_removed_is_an_input() {
    let repo = Repo::git();
    repo.write("a.sh", "x\n").write("input.txt", "ok\n");
    let cmd = "mkdir -p sb && (cd sb && grep -q ok ../input.txt); s=$?; rm -rf sb; exit $s";
    repo.config(&format!(
        "[[gate]]\nname = \"g\"\nglobs = [\"*.sh\"]\nrun = '{cmd}'\nscope = \"project\"\n"
    ));
    assert!(agrees(&repo, "g", cmd, &[], "before"));
    repo.write("input.txt", "bad\n");
    assert!(!agrees(&repo, "g", cmd, &[], "input.txt broken"));
    repo.write("input.txt", "ok\n");
    assert!(agrees_as(&repo, "g", cmd, &[], "input.txt put back", None));
    // No glob gives the gate input.txt; what its run read does, and explain says so.
    let explain = repo.run(["gates", "--explain", "input.txt"]);
    assert!(
        explain
            .stdout
            .contains("  g  [edit, stop, check]\n    read: its last run read this file (observed)"),
        "{explain:?}"
    );
    // The edit hook and a commit reach the gate through what its run read.
    repo.commit_all();
    repo.write("input.txt", "bad\n");
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("input.txt"), "content": "bad\n"}),
    );
    assert!(
        hook.stdout.contains("[g]"),
        "the edit hook runs g: {hook:?}"
    );
    repo.git_cmd(&["add", "input.txt"]);
    let staged = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(verdict(&staged, "g").0, "fail", "{staged:?}");
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn the_environment_a_run_inherits_is_in_its_key_but_the_session_is_not() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = 'test \"${STRICT:-}\" != 1'\n");
    let cmd = "test \"${STRICT:-}\" != 1";
    assert!(agrees(&repo, "g", cmd, &[], "no STRICT"));
    assert!(!agrees(&repo, "g", cmd, &[("STRICT", "1")], "STRICT=1"));
    // What names a terminal or an agent's session decides nothing: a hit.
    let run = check(
        &repo,
        &[("TERM", "dumb"), ("CLAUDE_CODE_SESSION_ID", "other")],
    );
    assert_eq!(verdict(&run, "g"), ("pass".into(), true), "{run:?}");
}

/// A TypeScript project that imports a gitignored, generated file.
fn generated_ts(repo: &Repo) {
    repo.write(".gitignore", "node_modules/\nsrc/generated/\n");
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write("src/generated/api.ts", "export const limit: number = 3;\n");
    repo.write(
        "src/index.ts",
        "import { limit } from './generated/api';\nexport const twice: number = limit * 2;\n",
    );
    repo.commit_all();
    let tsc = "node_modules/.bin/tsc -p . --noEmit";
    assert!(agrees(repo, "tsc", tsc, &[], "generated file as it was"));
    repo.write(
        "src/generated/api.ts",
        "export const limit: string = 'three';\n",
    );
    assert!(!agrees(repo, "tsc", tsc, &[], "generated file regenerated"));
    let hook = crate::hooks::post_tool_use(
        repo,
        "Write",
        json!({"file_path": repo.path().join("src/generated/api.ts"), "content": "x"}),
    );
    assert!(
        hook.stdout.contains("[tsc]") && hook.stdout.contains("index.ts"),
        "the edit hook on the generated file reports what it broke: {hook:?}"
    );
}

#[test]
fn a_gitignored_generated_file_typescript_5() {
    if let Some(repo) = typescript_repo() {
        generated_ts(&repo);
    }
}

#[test]
fn a_gitignored_generated_file_typescript_7() {
    if let Some(repo) = typescript7_repo() {
        generated_ts(&repo);
    }
}

#[test]
fn a_dependency_in_node_modules_without_a_lockfile_and_one_installed_later() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write(
        "package.json",
        r#"{ "name": "app", "dependencies": { "dep": "*" } }"#,
    );
    repo.write(
        "src/index.ts",
        "import { size } from 'dep';\nexport const twice: number = size() * 2;\n",
    );
    repo.commit_all();
    let tsc = "node_modules/.bin/tsc -p . --noEmit";
    // Before the install: "Cannot find module 'dep'". After it, that failure is not served.
    assert!(!agrees(&repo, "tsc", tsc, &[], "dep not installed"));
    repo.write(
        "node_modules/dep/package.json",
        r#"{ "name": "dep", "types": "index.d.ts" }"#,
    );
    repo.write(
        "node_modules/dep/index.d.ts",
        "export declare function size(): number;\n",
    );
    assert!(agrees(&repo, "tsc", tsc, &[], "dep installed"));
    repo.write(
        "node_modules/dep/index.d.ts",
        "export declare function size(): string;\n",
    );
    assert!(!agrees(&repo, "tsc", tsc, &[], "dep's types changed"));
}

const CRATE: &str =
    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

fn cargo_repo(parent: Option<&Path>) -> Repo {
    let repo = match parent {
        Some(p) => Repo::git_in(p),
        None => Repo::git(),
    };
    repo.write(".gitignore", "target/\ngen/\n");
    repo.write("Cargo.toml", CRATE);
    repo.config(
        "[[gate]]\nname = \"cargo-check\"\nglobs = [\"**/*.rs\", \"Cargo.toml\"]\nrun = \"cargo check --quiet\"\nscope = \"project\"\nroot_markers = [\"Cargo.toml\"]\ntimeout = \"5m\"\n",
    );
    repo
}

#[test]
fn cargo_a_generated_include_rustflags_and_a_config_above_the_project() {
    if !require_tool("cargo") {
        return;
    }
    // Outside the temporary folder, whose content is never an input outside a project.
    let parent = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let repo = cargo_repo(Some(parent.path()));
    repo.write("gen/consts.rs", "pub const N: u32 = 2;\n");
    repo.write(
        "src/lib.rs",
        "include!(\"../gen/consts.rs\");\npub fn f() -> u32 { let unused = 1; N * 2 }\n",
    );
    repo.commit_all();
    let cargo = "cargo check --quiet";
    assert!(agrees(&repo, "cargo-check", cargo, &[], "as written"));
    repo.write("gen/consts.rs", "pub const N: &str = \"two\";\n");
    assert!(!agrees(
        &repo,
        "cargo-check",
        cargo,
        &[],
        "the included file regenerated"
    ));
    repo.write("gen/consts.rs", "pub const N: u32 = 2;\n");
    assert!(agrees(&repo, "cargo-check", cargo, &[], "put back"));
    // A warning is an error under RUSTFLAGS="-D warnings"...
    let deny = [("RUSTFLAGS", "-D warnings")];
    assert!(!agrees(&repo, "cargo-check", cargo, &deny, "RUSTFLAGS"));
    assert!(agrees_as(
        &repo,
        "cargo-check",
        cargo,
        &[],
        "RUSTFLAGS gone",
        None
    ));
    // ...and under a Cargo config in a folder above the project.
    std::fs::create_dir_all(parent.path().join(".cargo")).unwrap();
    std::fs::write(
        parent.path().join(".cargo/config.toml"),
        // `target` flags, not `build`: this repository's own .cargo/config.toml has some,
        // and Cargo joins them; `build.rustflags` would be ignored beside them.
        "[target.'cfg(all())']\nrustflags = [\"-D\", \"warnings\"]\n",
    )
    .unwrap();
    assert!(!agrees(
        &repo,
        "cargo-check",
        cargo,
        &[],
        "a config above the project"
    ));
}

fn go_workspace(repo: &Repo, replace: bool) {
    repo.write("lib/go.mod", "module example.com/lib\n\ngo 1.19\n");
    repo.write(
        "lib/lib.go",
        "package lib\n\nfunc Double(x int) int { return x * 2 }\n",
    );
    let mut app_mod =
        "module example.com/app\n\ngo 1.19\n\nrequire example.com/lib v0.0.0\n".to_string();
    if replace {
        app_mod.push_str("\nreplace example.com/lib => ../lib\n");
    } else {
        repo.write("go.work", "go 1.19\n\nuse (\n\t./app\n\t./lib\n)\n");
    }
    repo.write("app/go.mod", &app_mod);
    repo.write(
        "app/main.go",
        "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/lib\"\n)\n\nfunc main() { fmt.Println(lib.Double(2)) }\n",
    );
    repo.commit_all();
    let vet = "cd app && go vet ./...";
    let env = [("GOPROXY", "off")];
    assert!(agrees(repo, "go-vet", vet, &env, "as written"));
    repo.write(
        "lib/lib.go",
        "package lib\n\nfunc Double(x string) string { return x + x }\n",
    );
    // The edit hook on lib's file runs app's vet too: app's last run read lib/lib.go.
    let hook = crate::hooks::post_tool_use(
        repo,
        "Edit",
        json!({"file_path": repo.path().join("lib/lib.go"), "old_string": "x", "new_string": "x"}),
    );
    assert!(
        hook.stdout.contains("[go-vet]") && hook.stdout.contains("main.go"),
        "the edit hook on lib/lib.go reports what it broke in app: {hook:?}"
    );
    assert!(!agrees(repo, "go-vet", vet, &env, "lib changed under app"));
    repo.write(
        "lib/lib.go",
        "package lib\n\nfunc Double(x int) int { return x * 2 }\n",
    );
    assert!(agrees_as(repo, "go-vet", vet, &env, "lib put back", None));
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn go_multi_module_repositories_go_work_and_replace() {
    if !require_tool("go") {
        return;
    }
    go_workspace(&Repo::git(), false);
    go_workspace(&Repo::git(), true);
}

#[test]
fn a_run_that_cannot_be_observed_falls_back_to_the_key_and_says_why() {
    let repo = Repo::git();
    let bin = tempfile::tempdir().unwrap();
    repo.write("a.txt", "x\n");
    // A gate that is traced already cannot be traced again: strace is not on every machine,
    // so the same is done by asking for a run under `[cache] observe = false`.
    repo.config("[cache]\nobserve = false\n\n[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = \"lint {files}\"\n");
    write_exe(&bin.path().join("lint"), "#!/bin/sh\nexit 0\n");
    let path = Repo::path_with(bin.path());
    let env = [("PATH", path.to_str().unwrap())];
    assert_eq!(verdict(&check(&repo, &env), "g"), ("pass".into(), false));
    assert_eq!(verdict(&check(&repo, &env), "g"), ("pass".into(), true));
    let explain = repo.run_env(["gates", "--explain", "a.txt"], &env);
    assert!(
        explain
            .stdout
            .contains("inputs: the drivers' model alone ([cache] observe = false)"),
        "gates --explain says runs are not observed: {explain:?}"
    );
}

/// The mypy wheels `scripts/test` downloads, or `None`, said loudly.
pub(crate) fn mypy_wheels() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/wheels");
    let has = |v: &str| {
        std::fs::read_dir(&dir).is_ok_and(|rd| {
            rd.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("mypy-{v}-"))
            })
        })
    };
    if has("1.10.0") && has("1.11.2") {
        Some(dir)
    } else {
        crate::common::missing(
            "mypy-wheels",
            "no mypy 1.10.0 and 1.11.2 wheels in target/test-tools/wheels",
        );
        None
    }
}

/// A `.venv` in `repo` with mypy 1.10.0 from `wheels`.
pub(crate) fn venv_with_mypy(repo: &Repo, wheels: &Path) {
    let made = Command::new("python3")
        .args(["-m", "venv", ".venv"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(made.success());
    pip_install(repo, wheels, "mypy==1.10.0");
}

fn pip_install(repo: &Repo, wheels: &Path, what: &str) {
    let ok = Command::new(repo.path().join(".venv/bin/pip"))
        .args(["install", "-q", "--no-index", "--find-links"])
        .arg(wheels)
        .arg(what)
        .status()
        .expect("pip runs")
        .success();
    assert!(ok, "pip install {what}");
}

/// A test suite that traces a process itself (a debugger's tests; a leak checker does it at
/// exit) fails under ralph-gate's tracer, since a process has one tracer; the bare tool
/// passes. The run is made again unobserved: the verdict equals the bare tool's, uncached,
/// cached, and for the commit; a suite whose own test fails still fails.
#[test]
fn a_test_suite_that_traces_its_own_child_gets_the_bare_verdict() {
    if !require_tool("pytest") {
        return;
    }
    let repo = Repo::git();
    let run = "python3 -m pytest -q -p no:cacheprovider";
    repo.config(&crate::common::tests_gate(run));
    let test = |want: i32| {
        format!(
            "import ctypes, os\n\n\ndef test_a_child_can_be_traced():\n    libc = ctypes.CDLL(None, use_errno=True)\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0 if libc.ptrace(0, 0, None, None) == 0 else 1)\n    _, status = os.waitpid(pid, 0)\n    assert os.waitstatus_to_exitcode(status) == {want}\n"
        )
    };
    repo.write("tests/test_tracing.py", &test(0));
    repo.commit_all();
    assert!(agrees(&repo, "tests", run, &[], "a child traced"));
    repo.write("tests/test_tracing.py", &test(3));
    assert!(!agrees(&repo, "tests", run, &[], "the suite's own failure"));
    repo.write("tests/test_tracing.py", &format!("{}# staged\n", test(0)));
    repo.git_cmd(&["add", "tests/test_tracing.py"]);
    let staged = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(staged.gate("tests")["status"], "pass", "{staged:?}");
}

/// A gate run through `uv run` hits the cache: uv rewrites `.venv/.lock` on every run, the
/// run's own output, which was left out of the folder's listing when stored and counted
/// when checked, so it never served. Verdicts still equal the bare tool's.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_gate_run_through_uv_run_is_served_from_the_cache() {
    if !require_tool("uv") {
        return;
    }
    let repo = Repo::git();
    repo.write(".gitignore", ".venv/\n");
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"x\"\nversion = \"0.1\"\nrequires-python = \">=3.8\"\ndependencies = []\n",
    );
    repo.write("a.py", "x = 1\n");
    let run = "uv run -q --offline python -m py_compile a.py";
    repo.config("[[gate]]\nname = \"py\"\nglobs = [\"*.py\"]\nrun = \"uv run -q --offline python -m py_compile {files}\"\n");
    repo.commit_all();
    assert!(agrees(&repo, "py", run, &[], "a first uv run"));
    for round in 0..2 {
        let again = check(&repo, &[]);
        assert_eq!(
            verdict(&again, "py"),
            ("pass".into(), true),
            "{round}: {again:?}"
        );
    }
    repo.write("a.py", "def f(:\n");
    assert!(!agrees(&repo, "py", run, &[], "a syntax error"));
}

/// `uv venv` tags the environment it makes with `CACHEDIR.TAG` (so backup tools skip it); it
/// is still what the checker reads: a typed library upgraded there changes mypy's verdict,
/// and the stored pass is not served (uncached and cached equal the bare tool's).
#[test]
fn a_typed_library_upgraded_in_a_uv_venv_is_an_input() {
    if !require_tool("uv") {
        return;
    }
    let Some(wheels) = mypy_wheels() else {
        return;
    };
    let repo = Repo::git();
    repo.write(".gitignore", ".venv/\n.mypy_cache/\n");
    repo.write(
        "app.py",
        "from typedlib import scale\n\ny: int = scale(2)\n",
    );
    repo.config("[[gate]]\nname = \"mypy\"\nglobs = [\"*.py\"]\nrun = \"mypy {files}\"\npath = [\".venv/bin\"]\nrequires = [\"mypy\"]\nscope = \"batch\"\ntimeout = \"5m\"\n");
    let (code, said) = repo.shell(
        &format!(
            "uv venv -q .venv && uv pip install -q --python .venv/bin/python --offline --no-index --find-links {} mypy==1.10.0",
            wheels.display()
        ),
        &[],
    );
    assert_eq!(code, 0, "{said}");
    assert!(repo.exists(".venv/CACHEDIR.TAG"), "uv tags the venv");
    let site = std::fs::read_dir(repo.path().join(".venv/lib"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages/typedlib"))
        .next()
        .unwrap();
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("py.typed"), "").unwrap();
    let lib = site.join("__init__.py");
    std::fs::write(&lib, "def scale(x: int) -> int:\n    return x * 2\n").unwrap();
    repo.commit_all();
    let mypy = ".venv/bin/mypy app.py";
    assert!(agrees(&repo, "mypy", mypy, &[], "typedlib 1"));
    std::fs::write(&lib, "def scale(x: int) -> str:\n    return str(x * 2)\n").unwrap();
    assert!(!agrees(&repo, "mypy", mypy, &[], "typedlib 2 returns str"));
}

/// Stops a dmypy daemon when the test ends, however it ends.
struct Daemon<'a>(&'a Repo);

impl Drop for Daemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.shell(".venv/bin/dmypy stop", &[]);
    }
}

/// A gate that asks a server started outside the run (dmypy's daemon, as a user starts it):
/// what the server read (`lib.py`, which no key names) is in no record of the run, so its
/// result is not stored, and after `lib.py` changes the verdict is the bare tool's (before:
/// the stored pass was served).
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_gate_that_asks_a_server_it_did_not_start_is_not_stored() {
    if !require_tool("python3") {
        return;
    }
    let Some(wheels) = mypy_wheels() else {
        return;
    };
    let repo = Repo::git();
    repo.write(".gitignore", ".venv/\n.dmypy.json\n.mypy_cache/\n");
    repo.write("app.py", "from lib import f\n\nx: int = f()\n");
    repo.write("lib.py", "def f() -> int:\n    return 1\n");
    repo.config("[[gate]]\nname = \"dmypy\"\nglobs = [\"app.py\"]\nrun = \"dmypy check app.py lib.py\"\npath = [\".venv/bin\"]\nscope = \"project\"\ntimeout = \"5m\"\n");
    venv_with_mypy(&repo, &wheels);
    repo.commit_all();
    let (code, said) = repo.shell(".venv/bin/dmypy start -- --follow-imports=normal", &[]);
    let _daemon = Daemon(&repo);
    assert_eq!(code, 0, "{said}");
    let dmypy = ".venv/bin/dmypy check app.py lib.py";
    assert!(bare(repo.path(), dmypy, &[]));
    let run = check(&repo, &[]);
    assert_eq!(verdict(&run, "dmypy"), ("pass".into(), false), "{run:?}");
    let why = run.gate("dmypy")["run_details"][0]["not_cached"].clone();
    assert!(
        why.as_str()
            .unwrap_or_default()
            .contains("a server it did not start"),
        "{run:?}"
    );
    repo.write("lib.py", "def f() -> str:\n    return 'x'\n");
    assert!(
        !bare(repo.path(), dmypy, &[]),
        "the daemon reads the new lib.py"
    );
    let run = check(&repo, &[]);
    assert_eq!(verdict(&run, "dmypy"), ("fail".into(), false), "{run:?}");
}

#[test]
fn a_checker_upgraded_in_place_in_the_venv_and_a_new_config_file() {
    if !require_tool("python3") {
        return;
    }
    let Some(wheels) = mypy_wheels() else {
        return;
    };
    let repo = Repo::git();
    repo.write(".gitignore", ".venv/\n.mypy_cache/\n");
    repo.write("app.py", "def double(x):\n    return x * 2\n");
    repo.config("[[gate]]\nname = \"mypy\"\nglobs = [\"*.py\"]\nrun = \"mypy {files}\"\npath = [\".venv/bin\"]\nrequires = [\"mypy\"]\nscope = \"batch\"\ntimeout = \"5m\"\n");
    venv_with_mypy(&repo, &wheels);
    let script = std::fs::read(repo.path().join(".venv/bin/mypy")).unwrap();
    repo.commit_all();
    let mypy = ".venv/bin/mypy app.py";
    assert!(agrees(&repo, "mypy", mypy, &[], "mypy 1.10.0"));
    pip_install(&repo, &wheels, "mypy==1.11.2");
    assert_eq!(
        std::fs::read(repo.path().join(".venv/bin/mypy")).unwrap(),
        script,
        "the console script is the same bytes after the upgrade"
    );
    assert!(agrees(&repo, "mypy", mypy, &[], "mypy upgraded in place"));
    let run = check(&repo, &[]);
    assert_eq!(
        run.gate("mypy")["tools"][0]["version"],
        "mypy 1.11.2",
        "the tools line names the venv's distribution: {run:?}"
    );
    // A config file the checker looks for, which no model of it listed.
    repo.write("mypy.ini", "[mypy]\ndisallow_untyped_defs = True\n");
    assert!(!agrees(&repo, "mypy", mypy, &[], "a new mypy.ini"));
}

/// A statically linked program (a Go binary: no C library, so no in-process observer can
/// stand in for its calls) reads a file no config names, and whatever it reads decides its
/// verdict: each of its reads stops for the tracer, so a change of that file is never served
/// the old verdict. The dynamically linked programs around it (the shell) record theirs in
/// process; both halves of the record are one.
#[test]
fn a_static_programs_reads_decide_like_any_others() {
    if !require_tool("go") {
        return;
    }
    let repo = Repo::git();
    repo.write(".gitignore", "bin/\n")
        .write("go.mod", "module example.com/checker\n\ngo 1.19\n")
        .write(
            "main.go",
            "package main\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nfunc main() {\n\tb, err := os.ReadFile(\"rules/level\")\n\tif err != nil || strings.TrimSpace(string(b)) != \"ok\" {\n\t\tos.Exit(1)\n\t}\n}\n",
        )
        .write("a.txt", "x\n")
        .write("rules/level", "ok\n");
    let built = Command::new("go")
        .args(["build", "-o", "bin/checker", "."])
        .current_dir(repo.path())
        .env("CGO_ENABLED", "0")
        .status()
        .expect("go build");
    assert!(built.success());
    let file = Command::new("file")
        .arg(repo.path().join("bin/checker"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    assert!(
        file.is_empty() || file.contains("statically linked"),
        "{file}"
    );
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = \"bin/checker\"\n");
    let cmd = "bin/checker";
    assert!(agrees(&repo, "g", cmd, &[], "before"));
    repo.write("rules/level", "strict\n");
    assert!(!agrees(
        &repo,
        "g",
        cmd,
        &[],
        "the rules the binary reads changed"
    ));
    repo.write("rules/level", "ok\n");
    assert!(agrees_as(&repo, "g", cmd, &[], "put back", None));
}

/// What a run's programs record in process lives in a memory ring they share. A process
/// killed between taking a place in it and writing there (the tracer kills what outlives
/// the command; a loaded machine can stop a process anywhere) once made the whole ring's
/// record unreadable, and the run was stored as having read only what the tracer saw: a
/// later change to a file only the ring named was served the stored pass (seen once in CI,
/// as a loop's tests "no longer reading" every file). Made here on purpose, by a process
/// that takes a place and writes nothing there (`gap`), or writes a torn record (`torn`).
#[test]
fn a_place_left_unwritten_in_the_in_process_record_loses_nothing() {
    if !require_tool("python3") {
        return;
    }
    const MARK: &str = "import mmap, os, struct, sys\n\nring = os.environ.get(\"RALPH_GATE_OBSERVE_RING\")\nif ring:\n    with open(ring, \"r+b\") as f:\n        m = mmap.mmap(f.fileno(), 0)\n        (at,) = struct.unpack_from(\"<Q\", m, 0)\n        if sys.argv[1] == \"torn\":\n            struct.pack_into(\"<I\", m, at, 4)\n        struct.pack_into(\"<Q\", m, 0, at + 8)\nwith open(\"rules/level\") as f:\n    sys.exit(f.read().strip() != \"ok\")\n";
    for how in ["gap", "torn"] {
        let repo = Repo::git();
        repo.write("a.txt", "x\n")
            .write("mark.py", MARK)
            .write("rules/level", "ok\n");
        repo.config(&format!(
            "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = \"python3 mark.py {how}\"\n"
        ));
        let cmd = format!("python3 mark.py {how}");
        assert!(agrees(&repo, "g", &cmd, &[], &format!("{how}: before")));
        repo.write("rules/level", "strict\n");
        assert!(!agrees(
            &repo,
            "g",
            &cmd,
            &[],
            &format!("{how}: the file the run read after the mark changed")
        ));
    }
}
