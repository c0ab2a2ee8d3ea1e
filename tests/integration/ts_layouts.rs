//! The TypeScript gate's verdict is the project's own build's (`tsc -b` / `tsc -p`) on real
//! layouts, with TypeScript 5 and 7, and nothing is written where that build would not write:
//! `git status` is clean after every run.

use crate::common::{typescript7, typescript7_repo, typescript_repo, Repo, Run};
use serde_json::json;
use std::process::Command;

fn check(repo: &Repo) -> Run {
    repo.run(["check", "--all", "--format", "json"])
}

/// The bare build's verdict, run on a copy of the tree so its outputs cannot help ours.
fn bare(repo: &Repo, cmd: &str) -> bool {
    let copy = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", repo.path().display()))
        .arg(copy.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "copy the tree");
    Command::new("sh")
        .args(["-c", cmd])
        .current_dir(copy.path())
        .status()
        .unwrap()
        .success()
}

fn clean(repo: &Repo, when: &str) {
    let out = Command::new("git")
        .current_dir(repo.path())
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    // The test's own edits show as modified; anything new is what a run wrote.
    let status = String::from_utf8_lossy(&out.stdout);
    let new: Vec<&str> = status.lines().filter(|l| !l.starts_with(" M ")).collect();
    assert!(
        new.is_empty(),
        "{when}: nothing written into the tree: {new:?}"
    );
}

/// ralph-gate's tsc verdict, uncached and then cached, equals `cmd`'s on the same tree.
fn agrees(repo: &Repo, cmd: &str, when: &str) -> bool {
    let want = bare(repo, cmd);
    for (i, run) in [check(repo), check(repo)].iter().enumerate() {
        let status = run.gate("tsc")["status"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        assert_eq!(
            status,
            if want { "pass" } else { "fail" },
            "{when} (run {}): `{cmd}` says {want}: {run:?}",
            i + 1
        );
        clean(repo, when);
    }
    want
}

fn both(layout: fn(&Repo)) {
    if let Some(repo) = typescript_repo() {
        layout(&repo);
    }
    if let Some(repo) = typescript7_repo() {
        layout(&repo);
    }
}

/// A shared base config that places everything with `${configDir}` (TypeScript 5.5).
fn config_dir(repo: &Repo) {
    repo.write(".gitignore", "node_modules/\ndist/\n*.tsbuildinfo\n");
    repo.write(
        "tsconfig.base.json",
        r#"{ "compilerOptions": { "strict": true, "composite": true, "outDir": "${configDir}/dist", "rootDir": "${configDir}/src", "module": "nodenext" }, "include": ["${configDir}/src"] }"#,
    );
    repo.write(
        "packages/a/tsconfig.json",
        r#"{ "extends": "../../tsconfig.base.json" }"#,
    );
    repo.write("packages/a/src/index.ts", "export const a: number = 1;\n");
    repo.write(
        "tsconfig.json",
        r#"{ "files": [], "references": [{ "path": "packages/a" }] }"#,
    );
    repo.commit_all();
    assert!(agrees(repo, "node_modules/.bin/tsc -b", "as written"));
    // The project includes its src: no run of its own for files it "does not include" (a
    // `${configDir}` read as the base config's folder found none, and that run, not the
    // build, was what failed).
    let run = check(repo);
    let tsc = run.gate("tsc");
    let labels: Vec<&str> = tsc["run_details"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["label"].as_str())
        .collect();
    assert_eq!(labels, ["tsconfig.json"], "{run:?}");
    repo.write(
        "packages/a/src/index.ts",
        "export const a: number = 'one';\n",
    );
    assert!(!agrees(repo, "node_modules/.bin/tsc -b", "a type error"));
}

#[test]
fn config_dir_in_a_shared_base_config() {
    both(config_dir);
}

/// Two packages whose `types` point at their `dist/`, `app` depending on `core` by the
/// version spec `dep` and referencing it, and a solution config over both.
fn core_and_app(repo: &Repo, dep: &str) {
    repo.write(".gitignore", "node_modules/\ndist/\n*.tsbuildinfo\n");
    let composite = r#"{ "compilerOptions": { "strict": true, "composite": true, "rootDir": "src", "outDir": "dist", "module": "nodenext" }, "include": ["src"] REFS }"#;
    repo.write(
        "packages/core/package.json",
        r#"{ "name": "@ws/core", "version": "1.0.0", "types": "dist/index.d.ts", "main": "dist/index.js" }"#,
    );
    repo.write(
        "packages/core/tsconfig.json",
        &composite.replace(" REFS", ""),
    );
    repo.write(
        "packages/core/src/index.ts",
        "export function double(x: number): number { return x * 2; }\n",
    );
    repo.write(
        "packages/app/package.json",
        &format!(
            r#"{{ "name": "@ws/app", "version": "1.0.0", "dependencies": {{ "@ws/core": "{dep}" }} }}"#
        ),
    );
    repo.write(
        "packages/app/tsconfig.json",
        &composite.replace(" REFS", r#", "references": [{ "path": "../core" }]"#),
    );
    repo.write(
        "packages/app/src/main.ts",
        "import { double } from '@ws/core';\nexport const four: number = double(2);\n",
    );
    repo.write(
        "tsconfig.json",
        r#"{ "files": [], "references": [{ "path": "packages/core" }, { "path": "packages/app" }] }"#,
    );
}

/// `core_and_app`, installed, committed: `tsc -b`'s verdict on it, then on a breaking change
/// in core.
fn core_breaks_app(repo: &Repo, when: &str) {
    repo.commit_all();
    assert!(agrees(repo, "node_modules/.bin/tsc -b", when));
    repo.write(
        "packages/core/src/index.ts",
        "export function double(x: string): string { return x + x; }\n",
    );
    assert!(!agrees(
        repo,
        "node_modules/.bin/tsc -b",
        "a breaking change in core"
    ));
}

/// A workspace whose packages' `types` point at their `dist/`, built with references.
fn dist_types(repo: &Repo) {
    core_and_app(repo, "*");
    std::fs::create_dir_all(repo.path().join("node_modules/@ws")).unwrap();
    std::os::unix::fs::symlink(
        "../../packages/core",
        repo.path().join("node_modules/@ws/core"),
    )
    .unwrap();
    // A clean checkout: no dist/ yet.
    core_breaks_app(repo, "a clean checkout");
}

#[test]
fn a_workspace_whose_types_point_at_dist() {
    both(dist_types);
}

/// The official Vite react-ts template's layout (without React): a solution config over two
/// `noEmit` projects that import with `.ts` extensions.
fn vite_template(repo: &Repo) {
    let app = r#"{ "compilerOptions": { "tsBuildInfoFile": "./node_modules/.tmp/tsconfig.app.tsbuildinfo", "target": "ES2022", "lib": ["ES2022", "DOM"], "module": "ESNext", "skipLibCheck": true, "moduleResolution": "bundler", "allowImportingTsExtensions": true, "verbatimModuleSyntax": true, "moduleDetection": "force", "noEmit": true, "strict": true, "noUnusedLocals": true }, "include": ["src"] }"#;
    let node = r#"{ "compilerOptions": { "tsBuildInfoFile": "./node_modules/.tmp/tsconfig.node.tsbuildinfo", "target": "ES2023", "lib": ["ES2023"], "module": "ESNext", "skipLibCheck": true, "moduleResolution": "bundler", "allowImportingTsExtensions": true, "verbatimModuleSyntax": true, "moduleDetection": "force", "noEmit": true, "strict": true }, "include": ["vite.config.ts"] }"#;
    repo.write("tsconfig.app.json", app);
    repo.write("tsconfig.node.json", node);
    repo.write(
        "tsconfig.json",
        r#"{ "files": [], "references": [{ "path": "./tsconfig.app.json" }, { "path": "./tsconfig.node.json" }] }"#,
    );
    repo.write(
        "src/App.ts",
        "export function App(): string { return 'app'; }\n",
    );
    repo.write(
        "src/main.ts",
        "import { App } from './App.ts';\nexport const page: string = App();\n",
    );
    repo.write("vite.config.ts", "export default { plugins: [] };\n");
    repo.commit_all();
    assert!(agrees(repo, "node_modules/.bin/tsc -b", "the template"));
    for js in ["src/App.js", "src/main.js", "vite.config.js"] {
        assert!(!repo.exists(js), "{js} written into the project");
    }
    repo.write(
        "src/main.ts",
        "import { App } from './App.ts';\nexport const page: number = App();\n",
    );
    assert!(!agrees(repo, "node_modules/.bin/tsc -b", "a type error"));
}

#[test]
fn the_vite_react_ts_template_layout() {
    both(vite_template);
}

#[test]
fn the_compiler_is_the_project_s_own_typescript() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    // tsd's bundled compiler owns node_modules/.bin/tsc in packages like chalk.
    let Some(other) = typescript7() else {
        return;
    };
    std::fs::remove_file(repo.path().join("node_modules/.bin/tsc")).unwrap();
    std::fs::create_dir_all(repo.path().join("node_modules/@tsd")).unwrap();
    std::os::unix::fs::symlink(&other, repo.path().join("node_modules/@tsd/typescript")).unwrap();
    std::os::unix::fs::symlink(
        "../@tsd/typescript/bin/tsc",
        repo.path().join("node_modules/.bin/tsc"),
    )
    .unwrap();
    // es5 is gone in TypeScript 7: the project's TypeScript 5 accepts it.
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "target": "es5", "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write("src/a.ts", "export const a: number = 1;\n");
    // tsd's type tests are meant to fail where they say expectError: tsd checks them.
    repo.write(
        "index.test-d.ts",
        "import {expectError} from 'tsd';\nexpectError(1 + '');\n",
    );
    repo.commit_all();
    assert!(agrees(
        &repo,
        "node_modules/typescript/bin/tsc -p . --noEmit",
        "tsd's tsc on .bin"
    ));
    let explain = repo.run(["gates", "--explain", "src/a.ts"]);
    assert!(explain.stdout.contains("typescript 5."), "{explain:?}");
}

#[test]
fn a_pinned_typescript_that_is_not_installed_is_said_so() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    std::fs::remove_dir_all(repo.path().join("node_modules")).unwrap();
    repo.write(
        "package.json",
        r#"{ "name": "p", "devDependencies": { "typescript": "5.9.3" } }"#,
    );
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write("src/a.ts", "export const a: number = 1;\n");
    repo.commit_all();
    let run = check(&repo);
    let tsc = run.gate("tsc");
    assert_ne!(
        tsc["status"], "pass",
        "not run with another TypeScript: {run:?}"
    );
    let said = format!("{}{}", tsc["reason"], run.stdout);
    assert!(
        said.contains("typescript 5.9.3") && said.contains("not installed"),
        "{run:?}"
    );
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Write",
        json!({"file_path": repo.path().join("src/a.ts"), "content": ""}),
    );
    assert!(hook.stdout.contains("not installed"), "{hook:?}");
}

/// A pnpm workspace installed by pnpm itself (offline, from the store `scripts/test` fills):
/// `node_modules/.bin/tsc` is pnpm's shell wrapper, packages link each other through
/// `workspace:*`, and types point at `dist/`.
#[test]
fn a_pnpm_workspace() {
    if !crate::common::require_tool("pnpm") || !crate::common::require_tool("node") {
        return;
    }
    let repo = Repo::git();
    core_and_app(&repo, "workspace:*");
    repo.write(
        "package.json",
        r#"{ "name": "ws", "private": true, "devDependencies": { "typescript": "5.9.3" } }"#,
    );
    repo.write("pnpm-workspace.yaml", "packages:\n  - \"packages/*\"\n");
    let installed = Command::new("pnpm")
        .args(["install", "--offline", "--silent"])
        .current_dir(repo.path())
        .status()
        .unwrap();
    if !installed.success() {
        crate::common::missing(
            "pnpm-store",
            "pnpm cannot install typescript@5.9.3 offline (scripts/test runs `pnpm store add typescript@5.9.3`)",
        );
        return;
    }
    let run = check(&repo);
    assert_eq!(
        run.gate("tsc")["tools"][0]["version"],
        "typescript 5.9.3",
        "the version, not pnpm's wrapper script: {run:?}"
    );
    core_breaks_app(&repo, "installed by pnpm");
}

/// An example app with a TypeScript of its own that nobody installed (zustand's
/// `examples/starter`): the stop gate checks the root and cannot start the example's run.
/// A loop that never went there ends, saying so; one whose agent wrote there, or that
/// uninstalled a TypeScript that ran at the start, is held.
#[test]
fn an_example_app_not_installed_at_the_start_holds_only_a_loop_that_went_there() {
    let setup = |installed: bool| -> Option<Repo> {
        let repo = typescript_repo()?;
        repo.write(
            "tsconfig.json",
            r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
        )
        .write("src/a.ts", "export const a: number = 'x';\n")
        .write(
            "examples/app/package.json",
            r#"{ "name": "app", "private": true, "devDependencies": { "typescript": "^5.0.0" } }"#,
        )
        .write(
            "examples/app/tsconfig.json",
            r#"{ "compilerOptions": { "strict": true, "noEmit": true } }"#,
        )
        .write("examples/app/main.ts", "export const m: number = 1;\n");
        if installed {
            repo.install_typescript("examples/app");
        }
        repo.commit_all();
        repo.start_loop(&[]);
        Some(repo)
    };
    let decide = |repo: &Repo| crate::surface::decision(&crate::surface::promise(repo));
    let Some(repo) = setup(false) else {
        return;
    };
    repo.write("src/a.ts", "export const a: number = 1;\n");
    let out = decide(&repo);
    let journal = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
    assert!(
        out.get("decision").is_none(),
        "the loop ends: {out}\n{journal}"
    );
    assert!(
        journal.contains("could not start when the loop started either"),
        "{journal}"
    );
    // The agent wrote where no run could check.
    let Some(repo) = setup(false) else {
        return;
    };
    repo.write("src/a.ts", "export const a: number = 1;\n")
        .write("examples/app/main.ts", "export const m: number = 'x';\n");
    let out = decide(&repo);
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("checked only part") && reason.contains("examples/app"),
        "{reason}"
    );
    // The example ran at the start; its TypeScript is gone at the end.
    let Some(repo) = setup(true) else {
        return;
    };
    repo.write("src/a.ts", "export const a: number = 1;\n");
    std::fs::remove_dir_all(repo.path().join("examples/app/node_modules")).unwrap();
    let out = decide(&repo);
    assert_eq!(out["decision"], "block", "{out}");
    // Under CI, a gate that checked part fails as before.
    let ci = repo.run(["check", "--strict"]);
    assert_eq!(ci.code, 1, "{ci:?}");
}
