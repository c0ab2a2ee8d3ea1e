//! Projects installed by a package manager other than npm, run as that package manager runs
//! them (issue 38, item 2): Yarn Plug'n'Play (no `node_modules`; packages resolved through
//! `.pnp.cjs` from Yarn's cache) and a machine with Bun and no node. Verdicts are compared
//! with the package manager's own command on the same tree.

use crate::common::{require_tool, Repo};
use std::path::{Path, PathBuf};

/// The folder `scripts/test` fetched the Plug'n'Play packages into, and its project.
fn yarn_tools() -> Option<(PathBuf, PathBuf)> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tools");
    let (global, template) = (tools.join("yarn-global"), tools.join("yarn-pnp"));
    // `.pnp.cjs` is written last, by an install that succeeded.
    if template.join(".pnp.cjs").is_file() {
        return Some((global, template));
    }
    crate::common::missing(
        "yarn-pnp",
        "no Yarn Plug'n'Play packages in target/test-tools/yarn-pnp",
    );
    None
}

/// A Yarn Plug'n'Play workspace whose member `packages/a` declares TypeScript and a
/// types-only dependency, installed offline from the packages `scripts/test` fetched.
fn yarn_workspace() -> Option<(Repo, String)> {
    if !require_tool("yarn") {
        return None;
    }
    let (global, template) = yarn_tools()?;
    let repo = Repo::git();
    repo.write(
        "package.json",
        "{\"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\"]}\n",
    )
    .write(
        "packages/a/package.json",
        "{\"name\": \"a\", \"devDependencies\": {\"typescript\": \"5.9.3\", \"type-fest\": \"4.41.0\"}}\n",
    )
    .write(
        "packages/a/tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"module\": \"nodenext\"}, \"include\": [\"src\"]}\n",
    )
    .write(
        "packages/a/src/index.ts",
        "import type { Simplify } from \"type-fest\";\nexport const n: Simplify<{ a: number }> = { a: 1 };\n",
    )
    .write(".gitignore", ".yarn/install-state.gz\n");
    std::fs::copy(template.join("yarn.lock"), repo.path().join("yarn.lock")).unwrap();
    let env = format!(
        "YARN_GLOBAL_FOLDER='{}' YARN_ENABLE_NETWORK=0 YARN_ENABLE_TELEMETRY=0",
        global.display()
    );
    // Under CI Yarn refuses to change the lockfile; this project's is the template's.
    let install = format!("{env} YARN_ENABLE_IMMUTABLE_INSTALLS=0 yarn install");
    let (code, out) = repo.shell(&install, &[]);
    assert_eq!(code, 0, "yarn install (offline): {out}");
    assert!(
        !repo.path().join("node_modules").exists(),
        "Plug'n'Play: no node_modules"
    );
    repo.commit_all();
    Some((
        repo,
        format!("cd packages/a && {env} yarn tsc -p tsconfig.json"),
    ))
}

/// Before: TypeScript was "not installed" (nothing in `node_modules`), the gate skipped, so a
/// broken tree passed, and a clean one failed under `--strict`. Now tsc is the one Yarn
/// resolves for the package that declares it, with its dependencies' types, and the verdict
/// equals `yarn tsc`'s there: uncached, cached, in the edit hook and for the commit.
#[test]
fn yarn_plug_n_play_runs_the_typescript_yarn_resolves() {
    let Some((repo, yarn_tsc)) = yarn_workspace() else {
        return;
    };
    let strict = repo.run(["check", "--strict", "--format", "json"]);
    assert_eq!(strict.gate("tsc")["status"], "pass", "{strict:?}");
    assert_eq!(strict.code, 0, "{strict:?}");
    crate::readers::heard_everywhere(
        &repo,
        ("tsc", &yarn_tsc),
        "packages/a/src/index.ts",
        "import type { Simplify } from \"type-fest\";\nexport const n: Simplify<{ a: number }> = { a: \"1\" };\n",
        "TS2322",
    );
}

/// A machine with Bun and no node (tsc's `#!/usr/bin/env node` has nothing to run it): the
/// run starts with Bun as node, as `bun run`/`bunx` do, and its verdicts equal `bunx tsc`'s
/// on the same tree, uncached and cached. Before: a skipped gate ("`node` is not on PATH"),
/// so a broken tree passed.
#[test]
fn on_a_bun_only_machine_tsc_runs_on_bun() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    let Some(bun) = crate::common::which("bun") else {
        crate::common::missing("bun", "`bun` is not on PATH");
        return;
    };
    let bin = tempfile::tempdir().unwrap();
    let which = |tool: &str| crate::common::which(tool).expect(tool);
    for (name, target) in [("git", which("git")), ("sh", which("sh")), ("bun", bun)] {
        std::os::unix::fs::symlink(target, bin.path().join(name)).unwrap();
    }
    let path = bin.path().to_str().unwrap();
    let bun_only = [("PATH", path)];
    repo.write(
        "tsconfig.json",
        r#"{ "compilerOptions": { "strict": true, "noEmit": true }, "include": ["src"] }"#,
    );
    repo.write("src/index.ts", "export const n: number = 1;\n");
    repo.commit_all();
    let bare = |repo: &Repo| repo.shell("bun x tsc -p tsconfig.json", &bun_only).0;
    let verdict = |repo: &Repo| {
        let run = repo.run_env(["check", "--format", "json"], &bun_only);
        run.gate("tsc")["status"]
            .as_str()
            .unwrap_or("?")
            .to_string()
    };
    assert_eq!(bare(&repo), 0, "bunx tsc passes the clean tree");
    assert_eq!(verdict(&repo), "pass");
    repo.write("src/index.ts", "export const n: number = \"1\";\n");
    assert_ne!(bare(&repo), 0, "bunx tsc fails the broken tree");
    assert_eq!(verdict(&repo), "fail", "uncached");
    assert_eq!(verdict(&repo), "fail", "cached");
    repo.write("src/index.ts", "export const n: number = 2;\n");
    assert_eq!(bare(&repo), 0);
    assert_eq!(verdict(&repo), "pass", "after the fix");
}

/// A library whose example app is a package of its own (its own package.json and tsconfig,
/// no workspace of the root, its dependencies not installed), as upstream keeps it: only
/// the library is built and checked. Before, the app was compiled with the library's
/// TypeScript against modules it lacks: the clean tree failed, every edit told the agent
/// to fix the example, every commit was refused. Now the app is said to be not installed
/// (a skip, which `--strict` still fails) and the verdict is the library's own tsc's; once
/// the app's dependencies are installed it is checked, and its verdict is its own tsc's.
#[test]
fn an_example_app_of_its_own_is_not_compiled_against_modules_it_lacks() {
    let Some(repo) = crate::common::typescript_repo() else {
        return;
    };
    let strict = r#"{"compilerOptions": {"strict": true, "noEmit": true, "module": "nodenext"}}"#;
    repo.write(
        "package.json",
        r#"{"name": "lib", "devDependencies": {"typescript": "5.9.3"}}"#,
    )
    .write(
        "tsconfig.json",
        r#"{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}"#,
    )
    .write("src/index.ts", "export const n: number = 1;\n")
    .write(
        "examples/app/package.json",
        r#"{"name": "app", "dependencies": {"pad-types": "1.0.0"}}"#,
    )
    .write("examples/app/tsconfig.json", strict)
    .write(
        "examples/app/main.ts",
        "import { pad } from \"pad-types\";\nexport const s: string = pad(\"a\");\n",
    );
    repo.commit_all();
    let tsc = |dir: &str| {
        let cmd = format!("cd '{dir}' && \"$OLDPWD\"/node_modules/.bin/tsc -p tsconfig.json");
        repo.shell(&cmd, &[]).0
    };
    assert_eq!(tsc("."), 0, "the library's own check passes");
    assert_ne!(
        tsc("examples/app"),
        0,
        "the app cannot be checked uninstalled"
    );
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "the clean tree passes: {run:?}");
    let said = run.gate("tsc").to_string();
    assert!(
        said.contains("dependencies of examples/app/package.json"),
        "the app is said to be not installed: {said}"
    );
    assert!(
        run.gate("tsc")["install"].is_null(),
        "no other install hint beside the note's folder: {said}"
    );
    // doctor names the run that cannot start, not the library's, which can.
    let doctor = repo.run(["doctor"]);
    assert!(
        doctor.stdout.contains("1 of 2 runs cannot start")
            && doctor.stdout.contains("in examples/app"),
        "{doctor:?}"
    );
    let strict_run = repo.run(["check", "--strict", "--format", "json"]);
    assert_ne!(strict_run.code, 0, "--strict: the app is unverified");

    repo.write(
        "examples/app/node_modules/pad-types/package.json",
        r#"{"name": "pad-types", "version": "1.0.0", "types": "index.d.ts"}"#,
    )
    .write(
        "examples/app/node_modules/pad-types/index.d.ts",
        "export declare function pad(s: string): string;\n",
    );
    assert_eq!(
        tsc("examples/app"),
        0,
        "installed, the app's own check passes"
    );
    let run = repo.run(["check", "--strict", "--format", "json"]);
    assert_eq!(run.code, 0, "installed: {run:?}");
    repo.write(
        "examples/app/main.ts",
        "import { pad } from \"pad-types\";\nexport const s: number = pad(\"a\");\n",
    );
    assert_ne!(tsc("examples/app"), 0);
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
}
