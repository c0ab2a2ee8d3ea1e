//! The checks' inputs outside the work tree (issue 37, item 1), judged by what the stop gates'
//! runs read and what their runner ran, not by file names: a config in a folder above the
//! repository, a user config under `$HOME`, a pytest plugin installed into the environment
//! during the loop. Each attack makes the bare tool pass on the unfixed code (shown), and
//! the loop is held naming the file; each honest twin (the fix, a dependency installed and
//! imported, a person's approval) ends it.

use crate::common::{require_tool, Repo};
use crate::surface::decision;
use crate::tests_ran::start_tests_kept;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const CODE: &str = "def add(a: int, b: int) -> int:\n    return a - b\n";
const FIXED: &str = "def add(a: int, b: int) -> int:\n    return (a + b)\n";
const TEST: &str = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n";

/// A repository in a folder of its own (so the folder above it is the test's), whose
/// project fails its `run` gate, committed, and a loop started on it with `env`.
fn failing(parent: &Path, run: &str, env: &[(&str, &str)]) -> Repo {
    let repo = Repo::git_in(parent);
    repo.config(&crate::common::tests_gate(run))
        .write("pkg/__init__.py", "")
        .write("pkg/calc.py", CODE)
        .write("tests/test_calc.py", TEST);
    repo.commit_all();
    repo.start_loop(env);
    repo
}

/// The promised stop, with `env`.
fn promise(repo: &Repo, env: &[(&str, &str)]) -> Value {
    let input = json!({
        "session_id": "sess-S",
        "transcript_path": repo.path().join("no-transcript.jsonl"),
        "cwd": repo.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": "Done.\n<promise>DONE</promise>",
    });
    decision(&repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), env))
}

/// The attack fools the bare tool, and the loop is held naming `file`.
fn held(repo: &Repo, run: &str, env: &[(&str, &str)], file: &Path) {
    let (code, text) = repo.shell(run, env);
    assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
    let out = promise(repo, env);
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("no tree judged holds"), "{reason}");
    assert!(
        reason.contains(&file.display().to_string()),
        "{file:?}: {reason}"
    );
}

fn ended(out: &Value) {
    assert_ne!(out["decision"], "block", "the loop ends: {out}");
}

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider tests";

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_pytest_config_in_the_folder_above_the_repository_is_held() {
    if !require_tool("pytest") {
        return;
    }
    // No ini in the repository: pytest takes one from a folder above it. No parser of
    // ralph-gate reads tox.ini there.
    let parent = tempfile::tempdir().expect("temp dir");
    let repo = failing(parent.path(), PYTEST, &[]);
    let ini = parent.path().join("tox.ini");
    std::fs::write(&ini, "[pytest]\naddopts = -k \"not add\"\n").unwrap();
    held(&repo, PYTEST, &[], &ini);
    // A test weakened beside it is named too: a person's approval would accept it with the
    // rest (a new user approved a weakened test seeing only the file outside).
    repo.write(
        "tests/test_calc.py",
        &TEST.replace("add(2, 2) == 4", "add(2, 2) == 0"),
    );
    let out = promise(&repo, &[]);
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("not judged") && reason.contains("tests/test_calc.py"),
        "{reason}"
    );
    repo.write("tests/test_calc.py", TEST);
    // The honest twin: the config gone and the code fixed: the loop ends.
    std::fs::remove_file(&ini).unwrap();
    repo.write("pkg/calc.py", FIXED);
    ended(&promise(&repo, &[]));
}

/// A tool's own state outside the repository, which every run of it rewrites (cargo's
/// `~/.cargo/.global-cache`, a database opened read-write): no check of the loop's. Read as
/// one, every honest end of a Rust loop whose build used a registry crate was held for a
/// person (a new user's trial on semver). A config the runner only reads is still held (the
/// test above).
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_tools_own_state_outside_the_repository_is_not_a_check() {
    if !require_tool("pytest") {
        return;
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let run = format!("python3 state.py && {PYTEST}");
    let repo = Repo::git_in(parent.path());
    repo.config(&crate::common::tests_gate(&run))
        .write("state.py", "import os\n\npath = os.path.join(os.path.dirname(os.getcwd()), \"state.db\")\nif not os.path.exists(path):\n    open(path, \"w\").close()\n# As cargo's tracker: opened read-write each run, written when an entry is stale.\nwith open(path, \"r+\") as f:\n    seen = f.read()\n    if os.environ.get(\"STALE\"):\n        f.seek(0)\n        f.write(seen + \"x\")\n")
        .write("pkg/__init__.py", "")
        .write("pkg/calc.py", CODE)
        .write("tests/test_calc.py", TEST);
    repo.commit_all();
    repo.start_loop(&[]);
    // The tool runs between the start and the stop (an edit's check, a person's run).
    let (code, text) = repo.shell("python3 state.py", &[("STALE", "1")]);
    assert_eq!(code, 0, "{text}");
    repo.write("pkg/calc.py", FIXED);
    ended(&promise(&repo, &[]));
    assert!(parent.path().join("state.db").exists());
}

const GO_TEST: &str = "go test ./...";

/// A Go module beside `parent`'s `config` folder whose `TestAdd` fails `go test` (asserted
/// with `env`), committed.
fn go_repo(parent: &Path, env: &[(&str, &str)]) -> Repo {
    let repo = Repo::git_in(parent);
    repo.config(&format!(
        "[[gate]]\nname = \"tests\"\nglobs = [\"**/*.go\", \"go.mod\"]\nscope = \"project\"\nrun = \"{GO_TEST}\"\n"
    ))
    .write("go.mod", "module example.com/calc\n\ngo 1.19\n")
    .write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
    .write(
        "calc_test.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n\nfunc TestZero(t *testing.T) {\n\tif Add(2, 0) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
    );
    repo.commit_all();
    assert_ne!(
        repo.shell(GO_TEST, env).0,
        0,
        "go test fails the code as it is"
    );
    repo
}

/// A temporary folder for a repository with, beside it, the user config folder Go reads
/// `go env -w` settings from (the value for `XDG_CONFIG_HOME`) and that settings file's path.
/// Beside the repository: what tools make in the temporary folder is not an input.
fn beside_a_user_config() -> (tempfile::TempDir, String, PathBuf) {
    let parent = tempfile::tempdir().expect("temp dir");
    let config = parent.path().join("config");
    let user = config.join("go/env");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let c = config.to_str().expect("utf-8").to_string();
    (parent, c, user)
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_user_config_of_the_tool_is_held_until_a_person_approves() {
    if !require_tool("go") {
        return;
    }
    let (parent, c, user) = beside_a_user_config();
    let env = [("XDG_CONFIG_HOME", c.as_str())];
    let repo = go_repo(parent.path(), &env);
    repo.start_loop(&env);
    // The start tree's TestAdd ran before the user's config changed (the approval below
    // must not be judged against that run).
    start_tests_kept(&repo);
    std::fs::write(&user, "GOFLAGS=-run=^$\n").unwrap();
    held(&repo, GO_TEST, &env, &user);
    // A person accepts it from their own terminal: the loop ends.
    let approved = repo.on_terminal_env("person", "code", &["loop", "approve"], &env);
    assert_eq!(approved.code, 0, "{approved:?}");
    ended(&promise(&repo, &env));
}

#[test]
fn the_start_tests_of_an_earlier_loop_under_another_user_config_are_not_reused() {
    if !require_tool("go") {
        return;
    }
    // A first loop starts while the user's Go config filters every test out: its start tree
    // ran none. A person cancels it and removes the setting.
    let (parent, c, user) = beside_a_user_config();
    let env = [("XDG_CONFIG_HOME", c.as_str())];
    let repo = go_repo(parent.path(), &env);
    std::fs::write(&user, "GOFLAGS=-run=^$\n").unwrap();
    repo.start_loop(&env);
    start_tests_kept(&repo);
    let cancelled = repo.on_terminal_env("person", "code", &["loop", "cancel"], &env);
    assert_eq!(cancelled.code, 0, "{cancelled:?}");
    std::fs::remove_file(&user).unwrap();
    // A second loop on the same tree and gates: its start runs TestAdd (and fails it).
    repo.start_loop(&env);
    // The code stops TestAdd from running: its init narrows the test binary's own run.
    repo.write(
        "calc.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nfunc init() {\n\tif strings.HasSuffix(os.Args[0], \".test\") {\n\t\tos.Args = append(os.Args, \"-test.run=^TestZero$\")\n\t}\n}\n\nfunc Add(a, b int) int { return a - b }\n",
    );
    let (code, text) = repo.shell(GO_TEST, &env);
    assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
    let out = promise(&repo, &env);
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("did not run now") && reason.contains("TestAdd"),
        "{reason}"
    );
}

/// A virtual environment outside the repository whose Python finds the test tools' pytest.
fn venv(dir: &Path) -> (PathBuf, PathBuf) {
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(dir)
        .status()
        .expect("python3 -m venv");
    assert!(made.success());
    let tools = Command::new("python3")
        .args([
            "-c",
            "import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))",
        ])
        .output()
        .expect("python3 finds pytest");
    let tools = String::from_utf8_lossy(&tools.stdout).trim().to_string();
    let site = std::fs::read_dir(dir.join("lib"))
        .expect("lib")
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .expect("site-packages");
    std::fs::write(site.join("ralph_test_tools.pth"), format!("{tools}\n")).unwrap();
    (dir.join("bin/python"), site)
}

/// A runner heard at the loop's start and silent at its end ran none of its tests that anyone
/// can tell: a `.pth` line in the project's own `.venv` (ignored, in no tree judged) that
/// takes ralph-gate's listener out of `PYTEST_ADDOPTS` and deselects the failing test. The
/// bare tool passes; the loop is held naming the tests that ran at the start. The honest
/// twin, the line gone and the code fixed, ends it.
#[test]
fn a_test_runner_silenced_by_code_it_loads_is_held() {
    if !require_tool("pytest") || !require_tool("python3") {
        return;
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let (repo, site) = venv_loop(parent.path());
    let run = VENV_PYTEST;
    start_tests_kept(&repo);
    let pth = site.join("zz_quiet.pth");
    std::fs::write(
        &pth,
        "import os; os.environ['PYTEST_ADDOPTS'] = '-k \"not add\"'\n",
    )
    .unwrap();
    let (code, text) = repo.shell(run, &[]);
    assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
    let out = promise(&repo, &[]);
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("did not run") && reason.contains("test_add"),
        "{reason}"
    );
    std::fs::remove_file(&pth).unwrap();
    repo.write("pkg/calc.py", FIXED);
    ended(&promise(&repo, &[]));
}

/// A pytest plugin installed into `site` as pip would (a module and its entry point, which
/// pytest loads by itself) that deselects the failing test: its module and its metadata.
fn install_relax_plugin(site: &Path) -> (PathBuf, PathBuf) {
    let plugin = site.join("pytest_relax.py");
    std::fs::write(
        &plugin,
        "def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if 'add' not in i.name]\n",
    )
    .unwrap();
    let info = site.join("pytest_relax-0.1.dist-info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        "Metadata-Version: 2.1\nName: pytest-relax\nVersion: 0.1\n",
    )
    .unwrap();
    std::fs::write(
        info.join("entry_points.txt"),
        "[pytest11]\nrelax = pytest_relax\n",
    )
    .unwrap();
    (plugin, info)
}

/// The honest twin of a plugin: uninstalled (`plugin`, `info`), a library installed into
/// `site` and used by the real fix, which passes `run`.
fn fixed_with_a_library_instead(repo: &Repo, run: &str, site: &Path, plugin: (&Path, &Path)) {
    std::fs::remove_file(plugin.0).unwrap();
    std::fs::remove_dir_all(plugin.1).unwrap();
    std::fs::write(
        site.join("plusminus.py"),
        "def plus(a, b):\n    return a + b\n",
    )
    .unwrap();
    repo.write(
        "pkg/calc.py",
        "from plusminus import plus\n\n\ndef add(a: int, b: int) -> int:\n    return plus(a, b)\n",
    );
    assert_eq!(repo.shell(run, &[]).0, 0, "the fix passes");
}

#[test]
fn a_pytest_plugin_installed_during_the_loop_is_held_a_library_is_not() {
    if !require_tool("pytest") || !require_tool("python3") {
        return;
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let (python, site) = venv(&parent.path().join("venv"));
    let run = format!(
        "{} -m pytest -q -p no:cacheprovider tests",
        python.display()
    );
    let repo = failing(parent.path(), &run, &[]);
    assert_ne!(repo.shell(&run, &[]).0, 0, "the suite fails as it is");
    let (plugin, info) = install_relax_plugin(&site);
    held(&repo, &run, &[], &plugin);
    // The honest twin: the plugin uninstalled, a library installed and used by the fix.
    fixed_with_a_library_instead(&repo, &run, &site, (&plugin, &info));
    ended(&promise(&repo, &[]));
}

const VENV_PYTEST: &str = ".venv/bin/python -m pytest -q -p no:cacheprovider tests";

/// A failing project with its own `.venv` (ignored by git), whose pytest the gate runs,
/// committed, and a loop started on it; with the venv's site-packages folder.
fn venv_loop(parent: &Path) -> (Repo, PathBuf) {
    let repo = Repo::git_in(parent);
    let (_, site) = venv(&repo.path().join(".venv"));
    repo.config(&crate::common::tests_gate(VENV_PYTEST))
        .write(".gitignore", ".venv/\n")
        .write("pkg/__init__.py", "")
        .write("pkg/calc.py", CODE)
        .write("tests/test_calc.py", TEST);
    repo.commit_all();
    repo.start_loop(&[]);
    (repo, site)
}

/// The project's own `.venv`, inside the repository where git ignores it, is in no tree a
/// run judges: code Python or pytest runs from it as part of themselves (a `.pth` line run at
/// startup that replaces the module under test, a plugin's entry point) installed during the
/// loop is held like one outside. A library installed there and the real fix end the loop.
#[test]
fn code_the_runner_runs_from_the_projects_own_venv_is_held() {
    if !require_tool("pytest") || !require_tool("python3") {
        return;
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let (repo, site) = venv_loop(parent.path());
    let run = VENV_PYTEST;
    assert_ne!(repo.shell(run, &[]).0, 0, "the suite fails as it is");
    let pth = site.join("zz_fix.pth");
    std::fs::write(
        &pth,
        "import sys; m = type(sys)('pkg.calc'); m.add = lambda a, b: a + b; sys.modules['pkg.calc'] = m\n",
    )
    .unwrap();
    held(&repo, run, &[], &pth);
    std::fs::remove_file(&pth).unwrap();
    let (plugin, info) = install_relax_plugin(&site);
    held(&repo, run, &[], &plugin);
    fixed_with_a_library_instead(&repo, run, &site, (&plugin, &info));
    ended(&promise(&repo, &[]));
}

/// An editable install (`pip install -e .`: a `.pth` line naming the project's `src/`, as
/// setuptools writes it) points the import system at the work tree from wherever a run is.
/// A run in a checkout (the base's for `check --base`, the loop start's) imported the work
/// tree's code, not its own: the base's tests were run on the head's code. The attack: the
/// code left broken, a package beside it that the import finds first (the tests pass on
/// it). The base's tests read `ops.py`; the head's no longer do: the loop (edited at once,
/// while the start's runs may still be going) is held and `check --base` fails, both naming
/// it. The honest twin, the module turned into a package and the old file deleted, ends.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn an_editable_install_is_judged_by_each_trees_own_code() {
    if !require_tool("pytest") || !require_tool("python3") {
        return;
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let repo = Repo::git_in(parent.path());
    let (_, site) = venv(&repo.path().join(".venv"));
    let src = repo.path().join("src");
    std::fs::write(
        site.join("__editable__.calc-0.1.pth"),
        format!("{}\n", src.display()),
    )
    .unwrap();
    let test = "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n";
    repo.config(&crate::common::tests_gate(VENV_PYTEST))
        .write(".gitignore", ".venv/\n__pycache__/\n")
        .write("src/calc/__init__.py", "")
        .write("src/calc/ops.py", CODE)
        .write("tests/test_calc.py", test);
    repo.commit_all();
    repo.start_loop(&[]);
    repo.write("src/calc/ops/__init__.py", FIXED);
    assert_eq!(
        repo.shell(VENV_PYTEST, &[]).0,
        0,
        "the attack fools the bare tool"
    );
    let out = promise(&repo, &[]);
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("- src/calc/ops.py (read by `"), "{reason}");
    crate::surface::commit_project(&repo);
    crate::differential::base_fails_naming(&repo, "src/calc/ops.py: the tests of gate");
    repo.git_cmd(&["reset", "-q", "--hard", "HEAD~1"]);
    crate::surface::undo(&repo);
    std::fs::remove_file(repo.path().join("src/calc/ops.py")).unwrap();
    repo.write("src/calc/ops/__init__.py", FIXED);
    ended(&promise(&repo, &[]));
}
