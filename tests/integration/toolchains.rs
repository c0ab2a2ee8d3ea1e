//! Toolchains as real projects lay them out: a TypeScript workspace with tsc installed at its
//! root, project references, files under no tsconfig, a Cargo workspace whose members depend
//! on each other.

use crate::common::{require_tool, typescript_repo, write_exe, Repo, Run};
use serde_json::json;

const COMPOSITE: &str = r#"{ "compilerOptions": { "strict": true, "composite": true, "target": "es2022", "module": "commonjs", "moduleResolution": "node", "rootDir": "src", "outDir": "dist" }, "include": ["src"] }"#;

fn json_check(repo: &Repo, args: &[&str]) -> Run {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    repo.run(all)
}

/// A workspace whose only TypeScript is installed at the root, and a different, broken `tsc`
/// first on PATH: every package must run the root's.
#[test]
fn packages_use_the_workspace_roots_tsc_not_the_one_on_path() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write(
        "package.json",
        r#"{"private": true, "workspaces": ["packages/*"]}"#,
    );
    for p in ["a", "b"] {
        repo.write(
            format!("packages/{p}/tsconfig.json"),
            r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
        );
        repo.write(
            format!("packages/{p}/src/index.ts"),
            "export const n: number = 1;\n",
        );
    }
    let bin = tempfile::tempdir().unwrap();
    write_exe(
        &bin.path().join("tsc"),
        "#!/bin/sh\necho 'Version 7.0.0 (the wrong tsc)'; exit 1\n",
    );
    let path = Repo::path_with(bin.path());
    let run = repo.run_env(
        ["check", "--format", "json"],
        &[("PATH", path.to_str().unwrap())],
    );
    let tsc = run.gate("tsc");
    assert_eq!(tsc["status"], "pass", "{run:?}");
    assert_eq!(tsc["runs"], 2);
    for r in tsc["run_details"].as_array().unwrap() {
        let tool = &r["tools"][0];
        assert_eq!(tool["path"], "node_modules/typescript/bin/tsc", "{r}");
        assert!(
            tool["version"]
                .as_str()
                .unwrap()
                .starts_with("typescript 5."),
            "{r}"
        );
    }
    let explain = repo.run_env(
        ["gates", "--explain", "packages/b/src/index.ts"],
        &[("PATH", path.to_str().unwrap())],
    );
    assert!(
        explain
            .stdout
            .contains("tool:   tsc = node_modules/typescript/bin/tsc")
            && explain.stdout.contains("(typescript 5."),
        "{explain:?}"
    );
}

fn references_repo() -> Option<Repo> {
    let repo = typescript_repo()?;
    // What a project using `tsc -b` ignores: its outputs and build-info files.
    repo.write(".gitignore", "node_modules/\ndist/\n*.tsbuildinfo\n");
    repo.write("packages/x/tsconfig.json", COMPOSITE);
    repo.write(
        "packages/x/src/index.ts",
        "export function greet(name: string): string { return \"hi \" + name; }\n",
    );
    repo.write(
        "packages/y/tsconfig.json",
        &COMPOSITE.replace(
            "\"include\": [\"src\"] }",
            "\"include\": [\"src\"], \"references\": [{ \"path\": \"../x\" }] }",
        ),
    );
    repo.write(
        "packages/y/src/main.ts",
        "import { greet } from \"../../x/src/index\";\nexport const s: string = greet(\"a\");\n",
    );
    repo.commit_all();
    Some(repo)
}

#[test]
fn project_references_are_built_as_the_project_builds_itself() {
    let Some(repo) = references_repo() else {
        return;
    };
    let run = json_check(&repo, &[]);
    let tsc = run.gate("tsc");
    assert_eq!(tsc["status"], "pass", "{run:?}");
    assert_eq!(
        tsc["command"].as_str().unwrap(),
        "node_modules/typescript/bin/tsc -b packages/y/tsconfig.json --pretty false --force",
        "{run:?}"
    );
    let status = std::process::Command::new("git")
        .current_dir(repo.path())
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.trim().is_empty(),
        "only what the project's own build writes, which it ignores: {status}"
    );

    repo.write(
        "packages/x/src/index.ts",
        "export function greet(name: number): number { return name; }\n",
    );
    let run = json_check(&repo, &[]);
    let out = run.gate("tsc")["output"].as_str().unwrap().to_string();
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
    assert!(out.contains("packages/y/src/main.ts(2,"), "{out}");
    assert!(!out.contains("TS6305") && !out.contains("TS6310"), "{out}");
    // The edit hook on x reaches y too.
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("packages/x/src/index.ts"), "content": ""}),
    );
    assert!(
        hook.stdout.contains("packages/y/src/main.ts(2,"),
        "{hook:?}"
    );
}

#[test]
fn a_file_under_no_tsconfig_is_checked_on_its_own() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write("package.json", r#"{"name": "tools"}"#);
    repo.write(
        "scripts/build.ts",
        "const n: number = \"not a number\";\nexport {};\n",
    );
    let run = json_check(&repo, &[]);
    let out = run.gate("tsc")["output"].as_str().unwrap().to_string();
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
    assert!(out.contains("scripts/build.ts(1,7): error TS2322"), "{out}");
    assert!(
        !out.contains("TS6054"),
        "package.json is never handed to tsc: {out}"
    );
    repo.write("scripts/build.ts", "const n: number = 1;\nexport { n };\n");
    assert_eq!(json_check(&repo, &[]).gate("tsc")["status"], "pass");
}

/// A file under a tsconfig that does not include it is in no program: tsc never sees it. It
/// is checked on its own with that tsconfig's options; one the config's own `exclude` names
/// (a fixture that must not compile) is left out on purpose; one an included file imports
/// is checked by the project already.
fn files_a_tsconfig_does_not_include(repo: &Repo) {
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write(
        "src/a.ts",
        "import { b } from \"../shared/b\";\nexport const a = b;\n",
    );
    repo.write("shared/b.ts", "export const b: number = 1;\n");
    repo.write("lib/bad.ts", "export function id(x) {\n  return x;\n}\n");
    let run = json_check(repo, &[]);
    let tsc = run.gate("tsc");
    let out = tsc["output"].as_str().unwrap_or_default().to_string();
    assert_eq!(tsc["status"], "fail", "{run:?}");
    assert!(out.contains("lib/bad.ts(1,20): error TS7006"), "{out}");
    assert!(!out.contains("shared/b.ts"), "{out}");
    // The bare tool agrees once the file is a root file of the project.
    let local = repo.path().join("node_modules/.bin/tsc");
    let program = if local.exists() { local } else { "tsc".into() };
    let bare = std::process::Command::new(program)
        .args(["-p", ".", "--noEmit", "--pretty", "false"])
        .current_dir(repo.path())
        .output()
        .expect("run tsc");
    assert!(
        bare.status.success(),
        "lib/ is in no program of the bare tsc"
    );
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src", "lib"] }"#,
    );
    let run = json_check(repo, &[]);
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"], "exclude": ["lib"] }"#,
    );
    let run = json_check(repo, &[]);
    assert_eq!(
        run.gate("tsc")["status"],
        "pass",
        "excluded on purpose: {run:?}"
    );
    // Cached, such a file's verdict still follows what it reads through the project's
    // `paths`: the run's key holds the project's inputs.
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true, "paths": { "@s/*": ["./shared/*"] } }, "include": ["src"] }"#,
    );
    repo.write(
        "lib/bad.ts",
        "import { b } from \"@s/b\";\nexport const n: number = b;\n",
    );
    let run = json_check(repo, &[]);
    assert_eq!(run.gate("tsc")["status"], "pass", "{run:?}");
    repo.write("shared/b.ts", "export const b: string = \"x\";\n");
    let run = json_check(repo, &[]);
    let out = run.gate("tsc")["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
    assert!(out.contains("lib/bad.ts(2,14): error TS2322"), "{out}");
}

#[test]
fn a_file_a_tsconfig_does_not_include_is_checked_on_its_own_typescript_5() {
    if let Some(repo) = typescript_repo() {
        files_a_tsconfig_does_not_include(&repo);
    }
}

#[test]
fn a_file_a_tsconfig_does_not_include_is_checked_on_its_own_typescript_7() {
    if let Some(repo) = crate::common::typescript7_repo() {
        files_a_tsconfig_does_not_include(&repo);
    }
}

#[test]
fn the_second_run_after_an_edit_is_incremental_and_writes_only_under_ralph() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true }, "include": ["src"] }"#,
    );
    repo.write("src/a.ts", "export const a = 1;\n");
    assert_eq!(json_check(&repo, &[]).gate("tsc")["status"], "pass");
    // A check keeps its build state in a folder of its own, removed after the run.
    let left: Vec<_> = std::fs::read_dir(repo.path().join(".ralph/tsc"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(left.iter().all(|n| !n.contains("fresh")), "{left:?}");
    assert!(!repo.exists("tsconfig.tsbuildinfo"));

    // Edit feedback keeps its build-info file under .ralph/, for the next edit.
    let payload = serde_json::json!({"session_id": "s", "cwd": repo.path(),
        "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": repo.path().join("src/a.ts"), "content": ""}});
    repo.write("src/a.ts", "export const a = 2;\n");
    let run = repo.run_stdin(
        &["hook", "post-tool-use"],
        payload.to_string().as_bytes(),
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let infos: Vec<_> = std::fs::read_dir(repo.path().join(".ralph/tsc"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        infos
            .iter()
            .any(|n| n.starts_with("p-") && n.ends_with(".tsbuildinfo")),
        "{infos:?}"
    );
    assert!(!repo.exists("tsconfig.tsbuildinfo"));
}

fn cargo_workspace() -> Repo {
    let repo = Repo::git();
    repo.write(".gitignore", "target/\n");
    repo.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\nresolver = \"2\"\n",
    );
    repo.write(
        "crates/a/Cargo.toml",
        "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "crates/a/src/lib.rs",
        "pub fn double(x: u32) -> u32 { x * 2 }\n",
    );
    repo.write(
        "crates/b/Cargo.toml",
        "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\na = { path = \"../a\" }\n",
    );
    repo.write(
        "crates/b/src/lib.rs",
        "pub fn quad(x: u32) -> u32 { a::double(a::double(x)) }\n#[cfg(test)]\nmod t { #[test] fn q() { assert_eq!(super::quad(1), 4); } }\n",
    );
    repo.commit_all();
    repo
}

#[test]
fn a_cargo_workspace_is_one_project_and_an_edit_reaches_its_dependents() {
    if !require_tool("cargo") {
        return;
    }
    let repo = cargo_workspace();
    let run = json_check(&repo, &[]);
    let test = run.gate("cargo-test");
    assert_eq!(test["status"], "pass", "{run:?}");
    assert_eq!(
        test["runs"], 1,
        "once for the workspace, not once per Cargo.toml"
    );
    assert_eq!(test["run_details"][0]["dir"], ".");

    // a's signature changes; only a's file is named, but b is what breaks.
    repo.write(
        "crates/a/src/lib.rs",
        "pub fn double(x: u64) -> u64 { x * 2 }\n",
    );
    let run = json_check(&repo, &["crates/a/src/lib.rs"]);
    assert_eq!(run.gate("cargo-test")["status"], "fail", "{run:?}");
    assert!(
        run.gate("cargo-test")["output"]
            .as_str()
            .unwrap()
            .contains("crates/b/src/lib.rs"),
        "{run:?}"
    );
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": repo.path().join("crates/a/src/lib.rs"), "old_string": "u32", "new_string": "u64"}),
    );
    assert!(
        hook.stdout.contains("[cargo-check]") && hook.stdout.contains("crates/b/src/lib.rs"),
        "the edit hook on a member checks the workspace: {hook:?}"
    );
}

/// The workspace ralph-gate runs cargo in is the one Cargo itself finds, for a member, a
/// member by path dependency only, an excluded package and a nested workspace.
#[test]
fn the_workspace_root_is_the_one_cargo_locate_project_names() {
    if !require_tool("cargo") {
        return;
    }
    let repo = Repo::git();
    let package = |dir: &str, name: &str, deps: &str| {
        repo.write(
            format!("{dir}/Cargo.toml"),
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{deps}"
            ),
        );
        repo.write(format!("{dir}/src/lib.rs"), "");
    };
    repo.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/skip\", \"fuzz\"]\nresolver = \"2\"\n",
    );
    package(
        "crates/a",
        "a",
        "[dependencies]\nhelper = { path = \"../../helper\" }\n",
    );
    package("helper", "helper", "");
    package("crates/skip", "skip", "[workspace]\n");
    package(
        "fuzz",
        "fuzz",
        "[dependencies]\na = { path = \"../crates/a\" }\n[workspace]\nmembers = [\".\"]\n",
    );
    for dir in ["crates/a", "helper", "crates/skip", "fuzz"] {
        let out = std::process::Command::new("cargo")
            .current_dir(repo.path().join(dir))
            .args([
                "locate-project",
                "--workspace",
                "--message-format",
                "plain",
                "--offline",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let manifest = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let cargo_root = manifest.parent().unwrap().canonicalize().unwrap();
        let explain = repo.run([
            "gates",
            "--explain",
            &format!("{dir}/src/lib.rs"),
            "--phase",
            "check",
        ]);
        let ours = match cargo_root.strip_prefix(repo.path().canonicalize().unwrap()) {
            Ok(rel) if rel.as_os_str().is_empty() => {
                "checks: the workspace at the project root".to_string()
            }
            Ok(rel) => format!("checks: the workspace in {}", rel.display()),
            Err(_) => panic!("cargo found a workspace outside the repository"),
        };
        assert!(
            explain.stdout.contains(&ours),
            "{dir}: cargo says {ours}: {explain:?}"
        );
    }
}

/// A Python interpreter of `version` (from pyenv, as this machine has them), or `None`,
/// said loudly.
fn python_of(version: &str) -> Option<std::path::PathBuf> {
    let home = std::env::var("PYENV_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::Path::new(&std::env::var("HOME").unwrap()).join(".pyenv"));
    let found = std::fs::read_dir(home.join("versions"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{version}."))
        })
        .map(|e| e.path().join("bin/python3"))
        .find(|p| p.is_file());
    if found.is_none() {
        crate::common::missing(
            &format!("python{version}"),
            "no pyenv interpreter of that version (pyenv install it)",
        );
    }
    found
}

/// The Python preset checks syntax with the project's own interpreter (its `.venv`), not
/// PATH's: a 3.12 project's `type` statement passes where PATH's 3.11 fails it, and a 3.8
/// service's `match` fails where PATH's 3.11 passes it. Each verdict equals the project
/// interpreter's own `py_compile`.
#[test]
fn the_python_preset_checks_syntax_with_the_projects_own_interpreter() {
    let (Some(new), Some(old)) = (python_of("3.12"), python_of("3.8")) else {
        return;
    };
    let cases = [
        (new, "type Point = tuple[float, float]\n", "pass"),
        (old, "match 1:\n    case 1:\n        pass\n", "fail"),
    ];
    for (python, code, want) in cases {
        let repo = Repo::git();
        repo.write(".gitignore", ".venv/\n");
        repo.write("app.py", code);
        let made = std::process::Command::new(&python)
            .args(["-m", "venv", ".venv"])
            .current_dir(repo.path())
            .status()
            .unwrap();
        assert!(made.success());
        repo.commit_all();
        let (bare, said) = repo.shell(".venv/bin/python -m py_compile app.py", &[]);
        assert_eq!(
            bare == 0,
            want == "pass",
            "the project's interpreter: {said}"
        );
        let run = json_check(&repo, &["--no-cache"]);
        let gate = run.gate("python-compile");
        assert_eq!(gate["status"], want, "{python:?}: {run:?}");
    }
}

/// A project's tsc is a script whose `#!/usr/bin/env node` needs node; on a machine without
/// node (a Bun-only one) the run cannot start. That is a missing tool, named with what needs
/// it, not the project failing: skipped (never passed) and failing only under `--strict`.
#[test]
fn a_tool_whose_interpreter_is_missing_is_a_missing_tool_not_a_failure() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write("src/index.ts", "export const n: number = 1;\n");
    repo.commit_all();
    let bin = tempfile::tempdir().unwrap();
    // git lists the project; nothing else, so no node.
    let git = crate::common::which("git").expect("git");
    std::os::unix::fs::symlink(git, bin.path().join("git")).unwrap();
    let path = bin.path().to_str().unwrap();
    let bare = std::process::Command::new("/bin/sh")
        .args(["-c", "node_modules/.bin/tsc -p tsconfig.json"])
        .env("PATH", path)
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(
        bare.status.code(),
        Some(127),
        "the bare tool cannot start: {bare:?}"
    );
    let run = repo.run_env(["check", "--format", "json"], &[("PATH", path)]);
    let gate = run.gate("tsc");
    assert_eq!(gate["status"], "skipped", "{run:?}");
    let reason = gate["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("`node`"), "{reason}");
    // The hint installs what is missing (node), not the gate's own tool (typescript).
    let install = gate["install"].as_str().unwrap_or_default();
    assert!(install.contains("nodejs"), "{install}");
    let strict = repo.run_env(["check", "--strict", "--format", "json"], &[("PATH", path)]);
    assert_ne!(
        strict.code, 0,
        "strict: a gate that did not run fails: {strict:?}"
    );
}

/// A Deno project (a `deno.json` in `app/`, imports with `.ts` extensions tsc rejects) gets
/// `deno check` there, with verdicts equal to the bare `deno check`'s, and tsc stands down
/// for its files (before: tsc on them as loose files, a false failure on a clean tree, and
/// with no tsc a skipped gate advising `npm install typescript`). A TypeScript file outside
/// any deno.json is still tsc's, and never Deno's.
#[test]
fn a_deno_project_gets_deno_check_and_tsc_stands_down() {
    if !require_tool("deno") {
        return;
    }
    let repo = Repo::git();
    repo.write("app/deno.json", "{}\n");
    repo.write(
        "app/main.ts",
        "import { add } from \"./src/lib.ts\";\nconst n: number = add(1, 2);\nconsole.log(n);\n",
    );
    let good = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";
    repo.write("app/src/lib.ts", good);
    repo.write("tools/gen.ts", "export const version: string = \"1\";\n");
    repo.commit_all();
    let deno = |repo: &Repo| repo.shell("cd app && deno check", &[]).0;
    assert_eq!(deno(&repo), 0, "the bare deno check passes");
    let run = json_check(&repo, &[]);
    let gate = run.gate("deno-check");
    assert_eq!(gate["status"], "pass", "{run:?}");
    let dirs: Vec<&str> = gate["run_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["dir"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(dirs, ["app"], "once, where the deno.json is: {run:?}");
    let tsc = run.gate("tsc");
    let commands: Vec<&str> = tsc["run_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["command"].as_str().unwrap_or("?"))
        .collect();
    assert!(
        commands.len() == 1 && commands[0].ends_with(" tools/gen.ts"),
        "tsc checks only the file under no deno.json: {commands:?}"
    );

    repo.write(
        "app/src/lib.ts",
        "export function add(a: number, b: number): string {\n  return String(a + b);\n}\n",
    );
    assert_ne!(deno(&repo), 0, "the bare deno check fails");
    for round in ["uncached", "cached"] {
        let run = json_check(&repo, &[]);
        assert_eq!(run.gate("deno-check")["status"], "fail", "{round}: {run:?}");
    }
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": repo.path().join("app/src/lib.ts"), "old_string": "a", "new_string": "b"}),
    );
    assert!(
        hook.stdout.contains("TS2322"),
        "the edit hook tells the agent: {hook:?}"
    );
    repo.write("app/src/lib.ts", good);
    assert_eq!(json_check(&repo, &[]).gate("deno-check")["status"], "pass");
}
