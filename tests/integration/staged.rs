//! `check --staged` checks what is committed (the index), and never loses unstaged work: not
//! on success, not on failure, not when stopped with Ctrl-C or SIGTERM, not when SIGKILLed.

use crate::common::{require_tool, signal, Repo, Run};
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const PY_GATE: &str = "[[gate]]\nname = \"py\"\nglobs = [\"*.py\"]\nrun = 'PYTHONPYCACHEPREFIX=\"${TMPDIR:-/tmp}/ralph-gate-pycache\" python3 -m py_compile {files}'\n";

/// Every file of the working tree outside .git and .ralph, with content and mode.
fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            if dir == root && (name == ".git" || name == ".ralph") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                let content = if meta.file_type().is_symlink() {
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&p).unwrap()
                };
                out.insert(rel, (content, meta.permissions().mode()));
            }
        }
    }
    out
}

/// A broken file staged, then fixed in the working tree without staging; a partially staged
/// file whose unstaged half is broken; a staged file deleted from the working tree; an
/// executable script with an unstaged change.
fn repo(gate_extra: &str) -> Repo {
    let repo = Repo::git();
    repo.config(&format!("{PY_GATE}{gate_extra}"));
    repo.write("ok.py", "x = 1\n").write("gone.py", "y = 2\n");
    repo.write("run.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(
        repo.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.write("part.py", "a = 1\n\n\nb = 2\n");
    repo.commit_all();
    repo.write("broken.py", "def f(:\n");
    repo.git_cmd(&["add", "broken.py"]);
    repo.write("broken.py", "def f():\n    return 1\n");
    repo.write("part.py", "a = 10\n\n\nb = 2\n");
    repo.git_cmd(&["add", "part.py"]);
    repo.write("part.py", "a = 10\n\n\nb = (\n");
    repo.write("run.sh", "#!/bin/sh\necho two\n");
    std::fs::remove_file(repo.path().join("gone.py")).unwrap();
    repo
}

fn staged(repo: &Repo) -> Run {
    repo.run(["check", "--staged", "--format", "json"])
}

#[test]
fn the_staged_content_is_checked_and_the_working_tree_is_left_as_it_was() {
    if !require_tool("python3") {
        return;
    }
    let repo = repo("");
    let before = snapshot(repo.path());
    let run = staged(&repo);
    assert_eq!(run.code, 1, "the broken staged version fails: {run:?}");
    let out = run.gate("py")["output"].as_str().unwrap().to_string();
    assert!(out.contains("broken.py"), "{out}");
    assert!(
        !out.contains("part.py"),
        "the unstaged half of part.py is not committed: {out}"
    );
    assert_eq!(
        snapshot(repo.path()),
        before,
        "the working tree, byte for byte"
    );
    assert!(!repo
        .path()
        .join(".ralph/staged")
        .read_dir()
        .unwrap()
        .any(|_| true));

    // Stage the fix: the commit is fine, though the working tree's part.py is not.
    repo.git_cmd(&["add", "broken.py"]);
    let run = staged(&repo);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        repo.run(["check", "--format", "json"]).code,
        1,
        "a plain check sees part.py"
    );
}

fn spawn_staged(repo: &Repo) -> std::process::Child {
    repo.cmd()
        .args(["check", "--staged"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ralph-gate starts")
}

/// Waits until the run has given broken.py its staged content.
fn wait_hidden(repo: &Repo) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read(repo.path().join("broken.py")).unwrap_or_default() != b"def f(:\n" {
        assert!(
            Instant::now() < deadline,
            "the run never set the staged content"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // And the gate has started.
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn ctrl_c_or_sigterm_mid_run_puts_every_unstaged_change_back() {
    if !require_tool("python3") {
        return;
    }
    for sig in [libc_sigterm(), libc_sigint()] {
        let repo = repo("[[gate]]\nname = \"slow\"\nglobs = [\"*.py\"]\nrun = 'sleep 30'\n");
        let before = snapshot(repo.path());
        let mut child = spawn_staged(&repo);
        wait_hidden(&repo);
        signal(child.id() as i32, sig);
        let status = child.wait().unwrap();
        assert!(!status.success(), "stopped by signal {sig}");
        assert_eq!(snapshot(repo.path()), before, "signal {sig}: byte for byte");
    }
}

#[test]
fn after_a_sigkill_the_next_run_puts_the_unstaged_work_back() {
    if !require_tool("python3") {
        return;
    }
    let repo = repo("[[gate]]\nname = \"slow\"\nglobs = [\"*.py\"]\nrun = 'sleep 30'\n");
    let before = snapshot(repo.path());
    let mut child = spawn_staged(&repo);
    wait_hidden(&repo);
    signal(child.id() as i32, 9);
    child.wait().unwrap();
    assert_ne!(
        snapshot(repo.path()),
        before,
        "killed outright, it could not put anything back"
    );
    // Its gate may still sleep in its own group; that does not stop the recovery.
    let run = repo.run(["check", "--gate", "py", "--format", "json"]);
    assert!(
        run.stderr
            .contains("put back 4 files with unstaged changes"),
        "{run:?}"
    );
    assert_eq!(snapshot(repo.path()), before, "byte for byte");
}

#[test]
fn a_file_changed_while_hidden_keeps_both_versions() {
    if !require_tool("python3") {
        return;
    }
    let repo = repo("[[gate]]\nname = \"slow\"\nglobs = [\"*.py\"]\nrun = 'sleep 2'\n");
    let child = repo
        .cmd()
        .args(["check", "--staged"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_hidden(&repo);
    repo.write("broken.py", "# written during the run\n");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.py changed while its unstaged version was hidden; both are kept"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("broken.py")).unwrap(),
        "# written during the run\n"
    );
    let kept = std::fs::read_dir(repo.path().join(".ralph/staged"))
        .unwrap()
        .count();
    assert_eq!(kept, 1, "the backup stays for the person to pick from");
    // The other files were put back.
    assert_eq!(
        std::fs::read_to_string(repo.path().join("part.py")).unwrap(),
        "a = 10\n\n\nb = (\n"
    );
}

#[test]
fn the_git_pre_commit_hook_refuses_what_is_staged_broken() {
    if !require_tool("python3") {
        return;
    }
    let repo = repo("");
    let hook = repo.path().join(".git/hooks/pre-commit");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/pre-commit"),
        &hook,
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_ralph-gate"))
        .parent()
        .unwrap();
    let path = Repo::path_with(bin);
    let before = snapshot(repo.path());
    let (ok, said) = repo.git_with_path(&path, &["commit", "-q", "-m", "broken"]);
    assert!(!ok, "the commit is refused: {said}");
    assert_eq!(snapshot(repo.path()), before);
    repo.git_cmd(&["add", "broken.py"]);
    let (ok, said) = repo.git_with_path(&path, &["commit", "-q", "-m", "fixed"]);
    assert!(ok, "{said}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("part.py")).unwrap(),
        "a = 10\n\n\nb = (\n",
        "the unstaged half is still in the working tree"
    );
}

fn libc_sigterm() -> i32 {
    15
}

fn libc_sigint() -> i32 {
    2
}

/// A staged file that reads a file never added: the commit will not contain it, so the check
/// of the commit fails and names it (the bare tool on the index fails too), uncached and
/// cached; the untracked file itself is left where it was.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_staged_file_that_reads_an_untracked_one_fails_and_names_it() {
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"inc\"\nglobs = [\"*.txt\"]\nrun = 'for f in {files}; do for i in $(sed -n \"s/^include //p\" \"$f\"); do cat \"$i\" >/dev/null || exit 1; done; done'\n",
    );
    repo.write("a.txt", "x\n");
    repo.commit_all();
    repo.write("a.txt", "include b.txt\n");
    repo.write("b.txt", "helper\n");
    repo.git_cmd(&["add", "a.txt"]);
    for round in ["uncached", "cached"] {
        let run = repo.run(["check", "--staged", "--format", "json"]);
        let gate = run.gate("inc");
        assert_eq!(gate["status"], "fail", "{round}: {run:?}");
        let output = gate["output"].as_str().unwrap();
        assert!(
            output.contains("read b.txt, which git does not track"),
            "{round}: {output}"
        );
    }
    assert!(repo.exists("b.txt"), "the untracked file is left in place");
    repo.git_cmd(&["add", "b.txt"]);
    let run = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(run.gate("inc")["status"], "pass", "once added: {run:?}");
}

/// A run that only asks about an untracked file (pytest stats every entry of the root in its
/// walk, and looks for `pyvenv.cfg` in each folder) decides nothing by its content: the
/// commit's check passes, as the bare tool does on a clone of the commit. A test that opens
/// an untracked data file still fails the check and names it (the clone fails too).
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_run_that_only_asked_about_an_untracked_file_passes_and_one_that_opened_it_fails() {
    if !require_tool("pytest") {
        return;
    }
    let repo = Repo::git();
    let run = "python3 -m pytest -q -p no:cacheprovider";
    repo.config(&crate::common::tests_gate(run))
        .write("pkg/__init__.py", "")
        .write("pkg/calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_calc.py",
            "from pkg.calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        );
    repo.commit_all();
    repo.write("notes.txt", "my notes\n");
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    repo.write("pkg/calc.py", "def add(a, b):\n    return b + a\n");
    repo.git_cmd(&["add", "pkg/calc.py"]);
    for round in ["uncached", "cached"] {
        let checked = repo.run(["check", "--staged", "--format", "json"]);
        let gate = checked.gate("tests");
        assert_eq!(gate["status"], "pass", "{round}: {checked:?}");
    }
    repo.git_cmd(&["commit", "-q", "-m", "commutes"]);
    let clone = tempfile::tempdir().unwrap();
    let (code, said) = repo.shell(
        &format!(
            "git clone -q . {0} && cd {0} && {run}",
            clone.path().display()
        ),
        &[],
    );
    assert_eq!(code, 0, "the bare tool passes on the commit: {said}");

    repo.write("tests/data.txt", "3\n");
    repo.write(
        "tests/test_data.py",
        "from pkg.calc import add\n\n\ndef test_data():\n    assert add(1, 2) == int(open('tests/data.txt').read())\n",
    );
    repo.git_cmd(&["add", "tests/test_data.py"]);
    let checked = repo.run(["check", "--staged", "--format", "json"]);
    let gate = checked.gate("tests");
    assert_eq!(gate["status"], "fail", "{checked:?}");
    let output = gate["output"].as_str().unwrap();
    assert!(
        output.contains("read tests/data.txt, which git does not track"),
        "{output}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_staged_typescript_import_of_an_untracked_file_fails() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "files": ["src/index.ts"] }"#,
    );
    repo.write("src/index.ts", "export const a = 1;\n");
    repo.commit_all();
    repo.write(
        "src/index.ts",
        "import { b } from './util';\nexport const a: number = b;\n",
    );
    repo.write("src/util.ts", "export const b = 2;\n");
    repo.git_cmd(&["add", "src/index.ts"]);
    let run = repo.run(["check", "--staged", "--format", "json"]);
    let tsc = run.gate("tsc");
    assert_eq!(tsc["status"], "fail", "{run:?}");
    assert!(
        tsc["output"]
            .as_str()
            .unwrap()
            .contains("src/util.ts, which git does not track"),
        "{run:?}"
    );
}

/// A link staged (to nothing, or to a folder) while the working tree holds a file of that
/// name: the file was told "changed while hidden", left in `.ralph/staged/`, the link left in
/// its place, and every later check refused until a person put it back by hand. The link is
/// what is committed, so it is reported unverified; the file comes back whole.
#[test]
fn a_staged_link_over_a_working_file_is_put_back_and_reported() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.config(PY_GATE);
    repo.write("ok.py", "x = 1\n").write("d/k.txt", "k\n");
    repo.commit_all();
    for (name, target) in [("s.py", "nowhere.py"), ("t.py", "d")] {
        std::os::unix::fs::symlink(target, repo.path().join(name)).unwrap();
        repo.git_cmd(&["add", name]);
        std::fs::remove_file(repo.path().join(name)).unwrap();
        repo.write(name, "y = 2\n");
    }
    let before = snapshot(repo.path());
    let run = repo.run(["check", "--staged", "--strict"]);
    assert_eq!(run.code, 1, "the staged links are not verified: {run:?}");
    assert!(
        run.stdout.contains("s.py") && run.stdout.contains("t.py"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("changed while"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before, "the working files are back");
    let again = repo.run(["check"]);
    assert_eq!(
        again.code, 0,
        "nothing left behind blocks the next run: {again:?}"
    );
}

/// `check --staged` in a project below the top of its repository (`svc/ralph.toml`). git
/// names changed paths from the top; before, they were taken from the project's root, so a
/// file with unstaged changes kept its working copy (or git refused the run) and the
/// verdict was the working tree's, not the commit's. And a commit of a file beside the
/// project that a run read (`shared/limits.txt`) re-runs it: before, nothing was checked.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_project_below_the_top_checks_its_commit_and_the_files_beside_it() {
    let repo = Repo::git();
    repo.write(
        "svc/ralph.toml",
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -q BAD {files} ../shared/limits.txt'\n",
    );
    repo.write("svc/a.txt", "ok\n")
        .write("shared/limits.txt", "ok\n");
    repo.commit_all();
    let in_svc = |args: &[&str]| repo.run_in("svc", args);
    let status = |run: &Run| run.gate("g")["status"].as_str().unwrap_or("?").to_string();
    let first = in_svc(&["check", "--format", "json"]);
    assert_eq!(status(&first), "pass", "{first:?}");

    // Staged broken, fixed in the work tree: the commit fails, the tree is left as it was.
    repo.write("svc/a.txt", "BAD\n");
    repo.git_cmd(&["add", "svc/a.txt"]);
    repo.write("svc/a.txt", "fixed\n");
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(status(&run), "fail", "the commit's a.txt: {run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("svc/a.txt")).unwrap(),
        "fixed\n",
        "the work tree kept"
    );
    // The twin: staged fixed, broken in the work tree.
    repo.git_cmd(&["add", "svc/a.txt"]);
    repo.write("svc/a.txt", "BAD\n");
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(status(&run), "pass", "the twin's commit: {run:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("svc/a.txt")).unwrap(),
        "BAD\n",
        "the work tree kept"
    );
    repo.write("svc/a.txt", "fixed\n");
    repo.commit_all();

    // A file beside the project, read by the run, edited broken by an agent working in
    // the project: the edit hook tells it.
    repo.write("shared/limits.txt", "BAD\n");
    let hook = json!({
        "session_id": "s", "transcript_path": "/nonexistent", "cwd": repo.path().join("svc"),
        "hook_event_name": "PostToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": "../shared/limits.txt", "old_string": "ok", "new_string": "BAD"},
        "tool_response": {"success": true}
    });
    let told = repo.run_stdin_in(
        "svc",
        &["hook", "post-tool-use"],
        hook.to_string().as_bytes(),
    );
    assert!(
        told.stdout.contains("limits.txt") && told.stdout.contains("[g]"),
        "the edit hook tells the agent: {told:?}"
    );
    repo.git_cmd(&["add", "shared/limits.txt"]);
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(
        status(&run),
        "fail",
        "the commit of a file it reads: {run:?}"
    );
    repo.write("shared/limits.txt", "fine\n");
    repo.git_cmd(&["add", "shared/limits.txt"]);
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(status(&run), "pass", "the twin: {run:?}");
}

/// Found by a red team, each compared with the bare tool on the index (`git checkout-index`
/// into a folder of its own):
/// - a commit that stops tracking a file beside the project (`git rm --cached
///   ../shared/data.cfg`, left on disk) that the run reads: the stored pass was served; the
///   commit will not hold the file, so the run fails, naming it;
/// - a project gate's `{files}` under `--staged` named a file `git rm --cached` left on disk
///   (a false failure: the commit does not hold it);
/// - a tsconfig beside the project (`../tsconfig.base.json`, which no key can hold, so tsc's
///   runs are not cached) staged stricter: "no files", a false pass.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_commit_of_files_beside_or_out_of_the_project_is_judged_as_the_bare_tool_on_the_index() {
    let repo = Repo::git();
    repo.write(
        "svc/ralph.toml",
        "[[gate]]\nname = \"cfg\"\nglobs = [\"*.txt\"]\nrun = 'grep -q limit ../shared/data.cfg && cat {files} >/dev/null'\n\n[[gate]]\nname = \"proj\"\nglobs = [\"*.md\"]\nscope = \"project\"\nrun = 'for f in {files}; do grep -q OK \"$f\" || { echo \"bad: $f\"; exit 1; }; done'\n",
    );
    repo.write("shared/data.cfg", "limit\n")
        .write("svc/a.txt", "x\n");
    repo.write("svc/ok.md", "OK\n").write("svc/gen.md", "BAD\n");
    repo.commit_all();
    let in_svc = |args: &[&str]| repo.run_in("svc", args);
    // The bare command on what the index holds.
    let bare = |cmd: &str| {
        let out = tempfile::tempdir().unwrap();
        let prefix = format!("{}/", out.path().display());
        repo.git_cmd(&["checkout-index", "-a", &format!("--prefix={prefix}")]);
        let (code, _) = repo.shell(&format!("cd '{prefix}svc' && {cmd}"), &[]);
        code
    };
    let status =
        |run: &Run, gate: &str| run.gate(gate)["status"].as_str().unwrap_or("?").to_string();
    let first = in_svc(&["check", "--format", "json"]);
    assert_eq!(status(&first, "cfg"), "pass", "{first:?}");
    assert_eq!(status(&first, "proj"), "fail", "gen.md is BAD: {first:?}");

    repo.git_cmd(&["rm", "-q", "--cached", "svc/gen.md"]);
    assert_eq!(
        bare("for f in *.md; do grep -q OK \"$f\" || exit 1; done"),
        0
    );
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_ne!(
        status(&run, "proj"),
        "fail",
        "gen.md is not in the commit: {run:?}"
    );
    repo.git_cmd(&["add", "svc/gen.md"]);

    repo.git_cmd(&["rm", "-q", "--cached", "shared/data.cfg"]);
    assert_ne!(bare("grep -q limit ../shared/data.cfg"), 0);
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(
        status(&run, "cfg"),
        "fail",
        "the commit drops what it reads: {run:?}"
    );
    let said = run.gate("cfg")["output"].to_string();
    assert!(said.contains("../shared/data.cfg"), "{said}");
}

#[test]
fn a_stricter_tsconfig_beside_the_project_staged_is_checked() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.base.json",
        r#"{"compilerOptions":{"strict":false,"noEmit":true}}"#,
    )
    .write(
        "svc/tsconfig.json",
        r#"{"extends":"../tsconfig.base.json","include":["src"]}"#,
    )
    .write("svc/src/a.ts", "export function f(x) { return x; }\n")
    .write("svc/ralph.toml", "presets = [\"typescript\"]\n");
    repo.commit_all();
    let in_svc = |args: &[&str]| repo.run_in("svc", args);
    let first = in_svc(&["check", "--format", "json"]);
    assert_eq!(first.gate("tsc")["status"], "pass", "{first:?}");
    repo.write(
        "tsconfig.base.json",
        r#"{"compilerOptions":{"strict":true,"noEmit":true}}"#,
    );
    repo.git_cmd(&["add", "tsconfig.base.json"]);
    let (bare, out) = repo.shell("cd svc && ../node_modules/.bin/tsc -p .", &[]);
    assert_ne!(bare, 0, "the bare tool fails: {out}");
    let run = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
}

/// Found by a third red team:
/// - a change of mode alone (`git update-index --chmod=-x run.sh`, the working copy still
///   755) was left at the index's 644 after the run: restoring compared content only;
/// - a tracked link (`words.cfg -> real/bad.cfg`) whose target the commit stops tracking
///   (`git rm --cached`): the commit holds a link to nothing, and the run that read through
///   it passed (cached and `--no-cache`). It now fails, naming the target.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_mode_alone_is_put_back_and_a_link_to_an_untracked_file_fails_the_commit() {
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = 'test -s words.cfg && ! grep -n -f words.cfg {files}'\n",
    );
    repo.write("real/bad.cfg", "XX\n").write("a.txt", "hello\n");
    repo.link("words.cfg", "real/bad.cfg");
    crate::common::write_exe(&repo.path().join("run.sh"), "#!/bin/sh\necho hi\n");
    repo.commit_all();
    assert_eq!(staged(&repo).code, 0);
    repo.git_cmd(&["update-index", "--chmod=-x", "run.sh"]);
    let before = snapshot(repo.path());
    let _ = staged(&repo);
    assert_eq!(
        snapshot(repo.path()),
        before,
        "the working copy's mode put back"
    );
    repo.git_cmd(&["update-index", "--chmod=+x", "run.sh"]);

    repo.git_cmd(&["rm", "-q", "--cached", "real/bad.cfg"]);
    let out = tempfile::tempdir().unwrap();
    let prefix = format!("{}/", out.path().display());
    repo.git_cmd(&["checkout-index", "-a", &format!("--prefix={prefix}")]);
    let (bare, _) = repo.shell(&format!("cd '{prefix}' && test -s words.cfg"), &[]);
    assert_ne!(bare, 0, "the commit holds a link to nothing");
    for args in [
        &["check", "--staged", "--format", "json"][..],
        &["check", "--staged", "--no-cache", "--format", "json"],
    ] {
        let run = repo.run(args);
        assert_eq!(run.gate("g")["status"], "fail", "{args:?}: {run:?}");
        assert!(
            run.gate("g")["output"].to_string().contains("real/bad.cfg"),
            "{run:?}"
        );
    }
}
