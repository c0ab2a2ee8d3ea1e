//! Each preset against the real tool: a broken file fails with the tool's own error, and the
//! fixed file passes. No config is written: these run on the embedded presets.

use crate::common::{require_tool, which, Repo};

#[test]
fn python_syntax_error_fails_then_passes_when_fixed() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("pkg/mod.py", "def f(:\n    return 1\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("python-compile");
    assert_eq!(gate["status"], "fail");
    let output = gate["output"].as_str().unwrap();
    assert!(output.contains("SyntaxError"), "{output}");
    assert!(output.contains("pkg/mod.py"), "{output}");

    repo.write("pkg/mod.py", "def f():\n    return 1\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("PASS  python-compile"), "{run:?}");
    assert!(
        !repo.exists("pkg/__pycache__"),
        "the check must not litter the tree"
    );
}

/// One batch, several broken files (a script without `.py` among them): every one is named,
/// where `python3 -m py_compile` stops at the first.
#[test]
fn every_broken_python_file_of_a_batch_is_named() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("a.py", "def f(:\n");
    repo.write("b.py", "x = 1\n");
    repo.write("c.py", "if x\n    y\n");
    repo.write("bin/tool", "#!/usr/bin/env python3\nprint('x'\n");
    let run = repo.run(["check", "--all", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let output = run.gate("python-compile")["output"]
        .as_str()
        .unwrap()
        .to_string();
    for broken in ["a.py", "c.py", "bin/tool"] {
        assert!(
            output.contains(&format!("\"{broken}\"")),
            "{broken} named: {output}"
        );
    }
    assert!(!output.contains("b.py"), "{output}");
    repo.write("a.py", "def f():\n    pass\n");
    repo.write("c.py", "x = 1\n");
    repo.write("bin/tool", "#!/usr/bin/env python3\nprint('x')\n");
    assert_eq!(repo.run(["check", "--all"]).code, 0);
}

/// A module named like the checker in the project root (`py_compile.py`, issue 21) must not
/// replace it: the check runs isolated from the project's folder, as `python3 -I` does, and
/// still writes no byte code into the tree. Uncached, then cached after the shadow appears.
#[test]
fn a_module_in_the_project_cannot_replace_the_python_checker() {
    if !require_tool("python3") {
        return;
    }
    let repo = Repo::git();
    repo.write("pkg/mod.py", "def f(:\n    return 1\n");
    assert_eq!(repo.run(["check"]).code, 1, "the broken file fails");
    // The shadow: `python3 -m py_compile` from the root would import this and pass.
    repo.write("py_compile.py", "import sys\nsys.exit(0)\n");
    let bare = std::process::Command::new("python3")
        .args(["-I", "-m", "py_compile", "pkg/mod.py"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(!bare.status.success(), "the isolated bare tool fails");
    for run in [repo.run(["check"]), repo.run(["check", "--no-cache"])] {
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stdout.contains("SyntaxError"), "{run:?}");
    }
    assert!(!repo.exists("pkg/__pycache__") && !repo.exists("__pycache__"));
}

/// A script whose `#!` line passes options to env (`-S -u BASH_ENV bash`) is still a bash
/// script and still checked (issue 21: it was silently left unchecked).
#[test]
fn a_script_run_through_env_with_options_is_still_checked() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write(
        "bin/deploy",
        "#!/usr/bin/env -S -u BASH_ENV bash\nrm -rf $1/*\n",
    );
    repo.write("README", "a project with one script\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("SC2115"), "{run:?}");
    let bare = std::process::Command::new("shellcheck")
        .arg("bin/deploy")
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        !bare.status.success(),
        "the bare tool fails the same script"
    );
}

#[test]
fn shellcheck_rejects_a_script_then_passes_when_fixed() {
    if !require_tool("shellcheck") {
        return;
    }
    let repo = Repo::git();
    repo.write("bin/deploy.sh", "#!/bin/sh\nrm -rf $1/*\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("FAIL  shellcheck"), "{run:?}");
    assert!(run.stdout.contains("SC2115"), "{run:?}");

    repo.write("bin/deploy.sh", "#!/bin/sh\nrm -rf \"${1:?}\"/*\n");
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
}

const TSCONFIG: &str = r#"{ "compilerOptions": { "strict": true, "noEmit": true, "target": "es2020" }, "include": ["src"] }"#;

#[test]
fn tsc_type_error_fails_then_passes_when_fixed() {
    if !require_tool("tsc") {
        return;
    }
    let repo = Repo::git();
    repo.write("web/tsconfig.json", TSCONFIG);
    repo.write(
        "web/src/math.ts",
        "export function add(a: number, b: number): number { return a + b; }\n",
    );
    repo.write(
        "web/src/main.ts",
        "import { add } from './math';\nconst total: number = add(1, '2');\nconsole.log(total);\n",
    );
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("tsc");
    let output = gate["output"].as_str().unwrap();
    assert!(output.contains("TS2345"), "{output}");
    assert!(output.contains("src/main.ts"), "{output}");

    repo.write(
        "web/src/main.ts",
        "import { add } from './math';\nconst total: number = add(1, 2);\nconsole.log(total);\n",
    );
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn tsc_from_the_projects_node_modules_is_used_when_not_on_path() {
    if !require_tool("tsc") {
        return;
    }
    let real_tsc = which("tsc").unwrap().canonicalize().unwrap();
    let node = which("node").expect("node comes with tsc");
    let repo = Repo::git();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("tsconfig.json", TSCONFIG);
    repo.write("src/a.ts", "const n: number = 'x';\nexport { n };\n");
    std::fs::create_dir_all(repo.path().join("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink(&real_tsc, repo.path().join("node_modules/.bin/tsc")).unwrap();
    // PATH holds node and nothing else: only the project's own tsc can run.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&node, bin.path().join("node")).unwrap();
    let path = bin.path().display().to_string();
    let run = repo.run_env(["check", "--format", "json"], &[("PATH", &path)]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.gate("tsc")["output"]
            .as_str()
            .unwrap()
            .contains("TS2322"),
        "{run:?}"
    );

    std::fs::remove_file(repo.path().join("node_modules/.bin/tsc")).unwrap();
    let run = repo.run_env(["check", "--format", "json"], &[("PATH", &path)]);
    assert_eq!(run.gate("tsc")["status"], "skipped", "{run:?}");
    assert!(
        run.gate("tsc")["reason"]
            .as_str()
            .unwrap()
            .contains("`tsc`"),
        "{run:?}"
    );
}

const CARGO_TOML: &str =
    "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

#[test]
fn cargo_check_catches_a_compile_error_in_the_edit_phase() {
    if !require_tool("cargo") {
        return;
    }
    let repo = Repo::git();
    let target = tempfile::tempdir().unwrap();
    let target_dir = target.path().to_str().unwrap();
    repo.write("Cargo.toml", CARGO_TOML);
    repo.write("src/lib.rs", "pub fn double(x: u32) -> u32 { x * \"2\" }\n");
    let env = [("CARGO_TARGET_DIR", target_dir)];
    let run = repo.run_env(["check", "--phase", "edit", "--format", "json"], &env);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("cargo-check");
    let output = gate["output"].as_str().unwrap();
    assert!(
        output.contains("E0277") || output.contains("cannot multiply"),
        "{output}"
    );
    assert!(output.contains("src/lib.rs"), "{output}");

    repo.write("src/lib.rs", "pub fn double(x: u32) -> u32 { x * 2 }\n\n#[test]\nfn doubles() { assert_eq!(double(2), 4); }\n");
    let run = repo.run_env(["check", "--phase", "edit"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    // The check phase runs the tests, and a failing test fails it.
    let run = repo.run_env(["check"], &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("PASS  cargo-test"), "{run:?}");
    repo.write("src/lib.rs", "pub fn double(x: u32) -> u32 { x * 3 }\n\n#[test]\nfn doubles() { assert_eq!(double(2), 4); }\n");
    let run = repo.run_env(["check"], &env);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("FAIL  cargo-test"), "{run:?}");
}

#[test]
fn node_check_reports_a_javascript_syntax_error() {
    if !require_tool("node") {
        return;
    }
    let repo = Repo::git();
    repo.write("app.js", "function (\n");
    repo.write("ok.mjs", "export const a = 1;\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("node-check");
    assert_eq!(gate["files"], 2);
    assert_eq!(gate["runs"], 2, "scope = file: one run per file");
    let output = gate["output"].as_str().unwrap();
    assert!(output.contains("SyntaxError"), "{gate:#}");
    // node prints the absolute path: shown from the root, like every other tool's.
    assert!(output.contains("app.js:1"), "{output}");
    assert!(
        !output.contains(&repo.path().display().to_string()),
        "{output}"
    );
}

/// go vet in a module's folder prints `./main.go` and, for type errors, `vet: ./main.go`:
/// both come out from the root (`app/main.go`), and the annotation parser reads them.
#[test]
fn go_vet_in_a_module_folder_reports_paths_from_the_root() {
    if !require_tool("go") {
        return;
    }
    let repo = Repo::git();
    repo.write("app/go.mod", "module example.com/app\n\ngo 1.19\n");
    repo.write(
        "app/main.go",
        "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%d\\n\", \"x\")\n\tvar n int = \"s\"\n\t_ = n\n}\n",
    );
    let run = repo.run_env(["check", "--format", "json"], &[("GOPROXY", "off")]);
    let output = run.gate("go-vet")["output"].as_str().unwrap().to_string();
    assert_eq!(run.gate("go-vet")["status"], "fail", "{run:?}");
    assert!(output.contains("app/main.go:"), "{output}");
    assert!(
        !output.contains("./main.go") && !output.contains("app/./"),
        "{output}"
    );
}
