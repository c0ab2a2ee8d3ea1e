//! Runs chosen by what they read (issue 38, item 1): an edit to a file no gate's glob names,
//! but that a gate's last run read (a sourced shell library, a test's data file, a `.js` file
//! a tsconfig checks through `checkJs`), re-runs that run in the edit hook and in `check
//! --staged`. Each verdict is compared with the bare tool's on the same tree: after the
//! edit, in the edit hook, cached, and for the commit.

use crate::common::{require_tool, Repo, Run};
use crate::hooks::post_tool_use;
use serde_json::{json, Value};

/// The bare tool's exit on the work tree.
fn bare(repo: &Repo, cmd: &str) -> i32 {
    repo.shell(cmd, &[]).0
}

/// What the edit hook tells the agent after it edits `rel` ("" when nothing).
fn told_after_edit(repo: &Repo, rel: &str) -> String {
    let run = post_tool_use(
        repo,
        "Edit",
        json!({"file_path": repo.path().join(rel), "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.trim().is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn status(run: &Run, gate: &str) -> String {
    run.gate(gate)["status"].as_str().unwrap_or("?").to_string()
}

/// `rel` edited to `broken` (which the bare tool fails): the edit hook names `says`, `check`
/// fails uncached and cached, and `check --staged` with only `rel` staged fails; the honest
/// twin (put back) passes everywhere.
pub fn heard_everywhere(
    repo: &Repo,
    (gate, cmd): (&str, &str),
    rel: &str,
    broken: &str,
    says: &str,
) {
    let good = std::fs::read_to_string(repo.path().join(rel)).unwrap();
    assert_eq!(bare(repo, cmd), 0, "the bare tool passes first");
    let first = repo.run(["check", "--format", "json"]);
    assert_eq!(status(&first, gate), "pass", "{first:?}");
    repo.write(rel, broken);
    assert_ne!(bare(repo, cmd), 0, "the bare tool fails after the edit");
    let told = told_after_edit(repo, rel);
    assert!(told.contains(says), "the edit hook tells the agent: {told}");
    for round in ["after the edit", "cached"] {
        let run = repo.run(["check", "--format", "json"]);
        assert_eq!(status(&run, gate), "fail", "{round}: {run:?}");
    }
    repo.git_cmd(&["add", rel]);
    let staged = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(status(&staged, gate), "fail", "the commit: {staged:?}");
    repo.write(rel, &good);
    repo.git_cmd(&["add", rel]);
    assert_eq!(told_after_edit(repo, rel), "", "the twin: nothing to tell");
    let staged = repo.run(["check", "--staged", "--format", "json"]);
    assert_ne!(
        status(&staged, gate),
        "fail",
        "the twin's commit: {staged:?}"
    );
    // The index is HEAD again, so the commit has nothing to run: the work tree must pass.
    let whole = repo.run(["check", "--format", "json"]);
    assert_eq!(status(&whole, gate), "pass", "the twin's tree: {whole:?}");
}

/// The pytest command the Python tests here run, bare and as the gate.
const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider";

/// A package whose tests run with [`PYTEST`] as the project gate `tests`.
fn calc_project() -> Repo {
    let repo = Repo::git();
    repo.config(&crate::common::tests_gate(PYTEST));
    repo.write("pkg/__init__.py", "")
        .write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
    repo
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_sourced_library_with_no_extension_re_runs_the_scripts_that_source_it() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"sh\"\nglobs = [\"*.sh\"]\nrun = \"shellcheck -x {files}\"\n");
    repo.write("main.sh", "#!/bin/sh\n. ./lib/env\necho \"$name\"\n");
    repo.write("other.sh", "#!/bin/sh\necho other\n");
    repo.write("lib/env", "name=x\n");
    repo.commit_all();
    heard_everywhere(
        &repo,
        ("sh", "shellcheck -x main.sh other.sh"),
        "lib/env",
        "other=x\n",
        "SC2154",
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_data_file_a_test_reads_re_runs_the_tests() {
    if !require_tool("pytest") {
        return;
    }
    let repo = calc_project();
    repo
        .write("tests/expected.txt", "3\n")
        .write(
            "tests/test_calc.py",
            "import pathlib\nfrom pkg.calc import add\n\n\ndef test_add():\n    want = pathlib.Path(__file__).with_name('expected.txt').read_text()\n    assert add(1, 2) == int(want)\n",
        );
    repo.commit_all();
    heard_everywhere(
        &repo,
        ("tests", PYTEST),
        "tests/expected.txt",
        "4\n",
        "test_add",
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_js_file_checked_through_check_js_re_runs_tsc() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "allowJs": true, "checkJs": true, "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write(
        "src/index.ts",
        "import { twice } from './util.js';\nexport const n: number = twice(2);\n",
    );
    repo.write(
        "src/util.js",
        "/** @param {number} x @returns {number} */\nexport function twice(x) {\n  return x * 2;\n}\n",
    );
    repo.commit_all();
    heard_everywhere(
        &repo,
        ("tsc", "node_modules/.bin/tsc -p tsconfig.json"),
        "src/util.js",
        "/** @param {number} x @returns {number} */\nexport function twice(x) {\n  return String(x * 2);\n}\n",
        "util.js",
    );
}

/// A shared tsconfig package (Turborepo's layout) consumed through `extends` by package
/// name: `@repo/tsconfig/base.json`, a workspace package linked into `node_modules`. No
/// glob names `base.json`; the run read it through the link.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_shared_tsconfig_extended_by_package_name_re_runs_tsc() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    repo.write(
        "package.json",
        "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n",
    )
    .write(
        "packages/tsconfig/package.json",
        "{\"name\": \"@repo/tsconfig\", \"version\": \"0.0.0\"}\n",
    )
    .write(
        "packages/tsconfig/base.json",
        "{\"compilerOptions\": {\"strict\": false, \"noEmit\": true}}\n",
    )
    .write(
        "packages/app/package.json",
        "{\"name\": \"app\", \"dependencies\": {\"@repo/tsconfig\": \"*\"}}\n",
    )
    .write(
        "packages/app/tsconfig.json",
        "{\"extends\": \"@repo/tsconfig/base.json\", \"include\": [\"src\"]}\n",
    )
    .write(
        "packages/app/src/index.ts",
        "export function f(x) {\n  return x;\n}\n",
    );
    repo.link("node_modules/@repo/tsconfig", "../../packages/tsconfig");
    repo.commit_all();
    heard_everywhere(
        &repo,
        (
            "tsc",
            "cd packages/app && ../../node_modules/.bin/tsc -p tsconfig.json",
        ),
        "packages/tsconfig/base.json",
        "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n",
        "TS7006",
    );
}

/// A file a Go test embeds (`//go:embed`): no gate's glob names it, `go test` reads it.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn an_embedded_file_re_runs_the_go_tests_that_embed_it() {
    if !require_tool("go") {
        return;
    }
    let repo = Repo::git();
    let run = "go test ./...";
    repo.config(&format!(
        "[[gate]]\nname = \"tests\"\nglobs = [\"**/*.go\", \"**/go.mod\"]\nscope = \"project\"\nrun = \"{run}\"\n"
    ));
    repo.write("go.mod", "module example.com/m\n\ngo 1.21\n")
        .write("calc.go", "package m\n\nfunc Add(a, b int) int { return a + b }\n")
        .write("testdata/want.txt", "3\n")
        .write(
            "calc_test.go",
            "package m\n\nimport (\n\t_ \"embed\"\n\t\"strings\"\n\t\"testing\"\n)\n\n//go:embed testdata/want.txt\nvar want string\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); strings.TrimSpace(want) != \"3\" || got != 3 {\n\t\tt.Fatalf(\"Add(1, 2) = %d, want %s\", got, want)\n\t}\n}\n",
        );
    repo.commit_all();
    heard_everywhere(&repo, ("tests", run), "testdata/want.txt", "4\n", "TestAdd");
}

/// A data file a Cargo build script turns into code (`cargo:rerun-if-changed`): the edit hook
/// hears `cargo check` fail, and `check` and the commit fail `cargo test`.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_build_scripts_data_file_re_runs_cargo() {
    if !require_tool("cargo") {
        return;
    }
    let repo = Repo::git();
    repo.write(".gitignore", "target/\n")
        .write(
            "Cargo.toml",
            "[package]\nname = \"gen\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .write(
            "build.rs",
            "fn main() {\n    println!(\"cargo:rerun-if-changed=data/value.txt\");\n    let v = std::fs::read_to_string(\"data/value.txt\").unwrap();\n    let out = std::path::Path::new(&std::env::var(\"OUT_DIR\").unwrap()).join(\"value.rs\");\n    std::fs::write(out, format!(\"pub const VALUE: u32 = {};\\n\", v.trim())).unwrap();\n}\n",
        )
        .write("data/value.txt", "3\n")
        .write(
            "src/lib.rs",
            "include!(concat!(env!(\"OUT_DIR\"), \"/value.rs\"));\n\n#[cfg(test)]\nmod t {\n    #[test]\n    fn value() {\n        assert_eq!(super::VALUE, 3);\n    }\n}\n",
        );
    repo.commit_all();
    heard_everywhere(
        &repo,
        ("cargo-test", "cargo test --quiet"),
        "data/value.txt",
        "\"3\"\n",
        "E0308",
    );
}

/// A new clone has observed no run yet, so no reading names the runs an edit of a sourced
/// library concerns: its first commit must not be chosen by globs alone. Before: `check
/// --staged` of a library edit that breaks the script sourcing it ran nothing and passed.
/// Now a gate never observed here whose globs miss a file of the commit runs whole (and
/// once observed, its readings choose). The twin: an honest edit's commit passes.
#[test]
fn a_new_clones_first_commit_runs_the_gates_no_run_has_told_about() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.config("[[gate]]\nname = \"sh\"\nglobs = [\"*.sh\"]\nrun = \"shellcheck -x {files}\"\n");
    repo.write("main.sh", "#!/bin/sh\n. ./lib/env\necho \"$name\"\n");
    repo.write("lib/env", "name=x\n");
    repo.commit_all();
    let clone = || {
        let c = Repo::plain();
        let from = repo.path().display();
        let (code, out) = c.shell(&format!("git clone -q '{from}' ."), &[]);
        assert_eq!(code, 0, "{out}");
        c
    };
    let fresh = clone();
    fresh.write("lib/env", "other=x\n");
    fresh.git_cmd(&["add", "lib/env"]);
    assert_ne!(
        bare(&fresh, "shellcheck -x main.sh"),
        0,
        "the bare tool fails"
    );
    let staged = fresh.run(["check", "--staged", "--format", "json"]);
    assert_eq!(
        status(&staged, "sh"),
        "fail",
        "the first commit: {staged:?}"
    );
    let twin = clone();
    twin.write("lib/env", "name=y\n");
    twin.git_cmd(&["add", "lib/env"]);
    assert_eq!(bare(&twin, "shellcheck -x main.sh"), 0);
    let staged = twin.run(["check", "--staged", "--format", "json"]);
    assert_eq!(
        status(&staged, "sh"),
        "pass",
        "the twin's commit: {staged:?}"
    );
}

/// A commit that removes a file its tests read (a `conftest.py` with their fixture, a data
/// file, or one renamed away) must run those tests without it: before, `check --staged`
/// planned nothing for a removed path and passed (found by a red team). The twin: removing
/// a file nothing reads passes.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_commit_removing_a_file_runs_what_read_it() {
    if !require_tool("pytest") {
        return;
    }
    let repo = calc_project();
    repo
        .write(
            "tests/conftest.py",
            "import pytest\n\n\n@pytest.fixture\ndef three():\n    return 3\n",
        )
        .write("tests/data.txt", "3\n")
        .write("notes/old.txt", "unused\n")
        .write(
            "tests/test_calc.py",
            "import pathlib\nfrom pkg.calc import add\n\n\ndef test_add(three):\n    assert add(1, 2) == three\n\n\ndef test_data():\n    assert pathlib.Path(__file__).with_name('data.txt').read_text() == '3\\n'\n",
        );
    repo.commit_all();
    assert_eq!(
        status(&repo.run(["check", "--format", "json"]), "tests"),
        "pass"
    );
    let staged = |repo: &Repo| {
        let run = repo.run(["check", "--staged", "--format", "json"]);
        status(&run, "tests")
    };
    for (what, args) in [
        (
            "a removed conftest.py",
            vec!["rm", "-q", "tests/conftest.py"],
        ),
        ("a removed data file", vec!["rm", "-q", "tests/data.txt"]),
        (
            "a renamed data file",
            vec!["mv", "tests/data.txt", "tests/data-v2.txt"],
        ),
    ] {
        repo.git_cmd(&args);
        assert_ne!(bare(&repo, PYTEST), 0, "{what}: the bare tests fail");
        assert_eq!(staged(&repo), "fail", "{what}");
        repo.git_cmd(&["reset", "-q", "--hard"]);
    }
    repo.git_cmd(&["rm", "-q", "notes/old.txt"]);
    assert_eq!(bare(&repo, PYTEST), 0);
    assert_ne!(staged(&repo), "fail", "the twin: nothing read it");
}

/// A test reads its data through a tracked symbolic link (`tests/expected.txt` ->
/// `../fixtures/expected.txt`): an edit of the link's target is an edit of what the run
/// read (found by a red team: the hook and `--staged` heard nothing).
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn the_target_of_a_linked_data_file_re_runs_the_tests() {
    if !require_tool("pytest") {
        return;
    }
    let repo = calc_project();
    repo.write("fixtures/expected.txt", "3\n")
        // Collection stays in tests/: pytest never looks at fixtures/ itself.
        .write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    repo.link("tests/expected.txt", "../fixtures/expected.txt");
    repo.write(
        "tests/test_calc.py",
        "import pathlib\nfrom pkg.calc import add\n\n\ndef test_add():\n    want = pathlib.Path(__file__).with_name('expected.txt').read_text()\n    assert add(1, 2) == int(want)\n",
    );
    repo.commit_all();
    heard_everywhere(
        &repo,
        ("tests", PYTEST),
        "fixtures/expected.txt",
        "4\n",
        "test_add",
    );
}

/// Where no run can be observed (`[cache] observe = false`, a kernel that refuses tracing),
/// runs are chosen by the gates' globs, as the static model does. Before, such a gate stayed
/// one "no run has told about" for ever: every edit no glob names ran it whole and told the
/// agent its failure again.
#[test]
fn a_gate_no_run_can_teach_is_chosen_by_its_globs_after_its_first_run() {
    let repo = Repo::git();
    repo.config(
        "[cache]\nobserve = false\n\n[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -q BAD {files}'\n",
    );
    repo.write("a.txt", "BAD\n").write("notes.md", "x\n");
    repo.commit_all();
    let first = repo.run(["check", "--format", "json"]);
    assert_eq!(status(&first, "g"), "fail", "{first:?}");
    repo.write("notes.md", "y\n");
    assert_eq!(
        told_after_edit(&repo, "notes.md"),
        "",
        "an edit no gate checks: nothing to tell"
    );
    repo.write("a.txt", "BAD!\n");
    let told = told_after_edit(&repo, "a.txt");
    assert!(told.contains("a.txt"), "an edit the gate checks: {told}");
}

/// A project below the top of its repository (`svc/ralph.toml`) whose runs read files
/// beside it (found by a red team): a file there whose name the gate's glob matches
/// (`../shared/flag.txt` under `*.txt`) was taken for one the glob plans and recorded
/// nowhere; one read through a link (`svc/lib -> ../shared`) was recorded under the link's
/// name only. A commit, a change and the agent's edit of either now re-run what read it.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn files_beside_a_project_below_the_top_re_run_what_read_them() {
    let repo = Repo::git();
    repo.write(
        "svc/ralph.toml",
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nscope = \"project\"\nrun = 'grep -q ok ../shared/flag.txt && grep -q ok lib/data.txt'\n",
    );
    repo.write("svc/a.txt", "x\n")
        .write("shared/flag.txt", "ok\n")
        .write("shared/data.txt", "ok\n");
    repo.link("svc/lib", "../shared");
    repo.commit_all();
    let svc = repo.path().join("svc");
    let in_svc = |args: &[&str]| repo.run_in("svc", args);
    let hook = |file: &str| {
        let ask = json!({"session_id": "s", "transcript_path": "/x", "cwd": svc,
            "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": file, "old_string": "ok", "new_string": "no"},
            "tool_response": {"success": true}});
        repo.run_stdin_in(
            "svc",
            &["hook", "post-tool-use"],
            ask.to_string().as_bytes(),
        )
        .stdout
    };
    assert_eq!(status(&in_svc(&["check", "--format", "json"]), "g"), "pass");
    for (rel, edited) in [
        ("shared/flag.txt", "../shared/flag.txt"),
        ("shared/data.txt", "lib/data.txt"),
    ] {
        repo.write(rel, "no\n");
        assert!(hook(edited).contains("[g]"), "the edit hook after {edited}");
        repo.git_cmd(&["add", rel]);
        let staged = in_svc(&["check", "--staged", "--format", "json"]);
        assert_eq!(
            status(&staged, "g"),
            "fail",
            "the commit of {rel}: {staged:?}"
        );
        repo.git_cmd(&["commit", "-qm", "break"]);
        let changed = in_svc(&["check", "--changed", "HEAD~1", "--format", "json"]);
        assert_eq!(
            status(&changed, "g"),
            "fail",
            "the change of {rel}: {changed:?}"
        );
        repo.write(rel, "ok\n");
        repo.git_cmd(&["add", rel]);
        let twin = in_svc(&["check", "--staged", "--format", "json"]);
        assert_eq!(status(&twin, "g"), "pass", "the twin of {rel}: {twin:?}");
        repo.git_cmd(&["commit", "-qm", "mend"]);
    }
}

/// Under `observe = false` the key is the drivers' model and the declared inputs: a declared
/// input beside the project (`../shared/limits.cfg`) was in no listing of it and silently
/// left out, and a library a script sources from beside it was not in ShellCheck's key: the
/// stored pass was served after either broke (found by a red team).
#[test]
fn under_the_static_model_files_beside_the_project_are_in_the_key() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write(
        "svc/ralph.toml",
        "presets = [\"shell\"]\n\n[cache]\nobserve = false\n\n[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\ninputs = [\"../shared/limits.cfg\"]\nrun = 'grep -q ok ../shared/limits.cfg'\n",
    );
    repo.write("svc/a.txt", "x\n")
        .write("shared/limits.cfg", "ok\n");
    repo.write(
        "svc/run.sh",
        "#!/bin/sh\n. ../shared/lib.sh\necho \"$name\"\n",
    );
    repo.write("shared/lib.sh", "name=x\n");
    repo.commit_all();
    let in_svc = |args: &[&str]| repo.run_in("svc", args);
    let first = in_svc(&["check", "--format", "json"]);
    assert_eq!(status(&first, "g"), "pass", "{first:?}");
    assert_eq!(status(&first, "shellcheck"), "pass", "{first:?}");
    repo.write("shared/limits.cfg", "no\n")
        .write("shared/lib.sh", "other=x\n");
    assert_ne!(repo.shell("cd svc && shellcheck -x run.sh", &[]).0, 0);
    let after = in_svc(&["check", "--format", "json"]);
    assert_eq!(status(&after, "g"), "fail", "{after:?}");
    assert_eq!(status(&after, "shellcheck"), "fail", "{after:?}");
    // A commit of the declared input runs its gate.
    repo.git_cmd(&["add", "shared/limits.cfg"]);
    let staged = in_svc(&["check", "--staged", "--format", "json"]);
    assert_eq!(status(&staged, "g"), "fail", "{staged:?}");
    repo.write("svc/ralph.toml", "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\ninputs = [\"../shared/*.cfg\"]\nrun = 'true'\n");
    let refused = in_svc(&["check"]);
    assert_eq!(
        refused.code, 2,
        "a pattern beside the project is refused: {refused:?}"
    );
    assert!(refused.stderr.contains("../shared/*.cfg"), "{refused:?}");
}

/// Under `observe = false`, a library sourced as `"$(dirname "$0")/lib/common"` was in no
/// key (the driver skipped any path with a `$`), though ShellCheck with
/// `--source-path=SCRIPTDIR` follows it: the stored pass was served after the library
/// broke (found by a red team). A leading folder named by a variable or a command is the
/// script's, as for the library's own dialect.
#[test]
fn under_the_static_model_a_library_sourced_from_the_scripts_folder_is_in_the_key() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.config("presets = [\"shell\"]\n\n[cache]\nobserve = false\n");
    repo.write(
        "run.sh",
        "#!/bin/bash\nsource \"$(dirname \"$0\")/lib/common\"\necho \"$greeting\"\n",
    );
    repo.write("lib/common", "greeting=hi\n");
    repo.commit_all();
    let first = repo.run(["check", "--format", "json"]);
    assert_eq!(status(&first, "shellcheck"), "pass", "{first:?}");
    repo.write("lib/common", "other=hi\n");
    assert_ne!(bare(&repo, "shellcheck -x -P SCRIPTDIR run.sh"), 0);
    let after = repo.run(["check", "--format", "json"]);
    assert_eq!(status(&after, "shellcheck"), "fail", "{after:?}");
}

/// Two configs in one repository (`ralph.toml` at the top, `svc/ralph.toml` below), the agent
/// working at the top: an edit to `svc/b.txt` ran only the top's gates, so a failure of
/// svc's own gate went untold (found by a red team). A file of a project with its own
/// config below is that project's too.
#[test]
fn an_edit_in_a_nested_project_runs_its_own_gates() {
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"top\"\nglobs = [\"**/*.txt\"]\nrun = '! grep -n TOPBAD {files}'\n",
    );
    repo.write(
        "svc/ralph.toml",
        "[[gate]]\nname = \"svc\"\nglobs = [\"*.txt\"]\nrun = '! grep -n SVCBAD {files}'\n",
    );
    repo.write("svc/b.txt", "fine\n");
    repo.commit_all();
    repo.write("svc/b.txt", "SVCBAD\n");
    assert_ne!(bare(&repo, "cd svc && ! grep -n SVCBAD b.txt"), 0);
    let told = told_after_edit(&repo, "svc/b.txt");
    assert!(told.contains("[svc]"), "svc's gate told: {told}");
    assert!(!told.contains("[top]"), "the top's gate passes: {told}");
}
