//! Projects installed by a package manager other than npm, run as that package manager runs
//! them (issue 38, item 2): Yarn Plug'n'Play (no `node_modules`; packages resolved through
//! `.pnp.cjs` from Yarn's cache). Verdicts are compared with the package manager's own
//! command on the same tree.

use crate::common::{require_tool, Repo};
use std::path::{Path, PathBuf};

/// The folder `scripts/test` fetched the Plug'n'Play packages into, and its project.
fn yarn_tools() -> Option<(PathBuf, PathBuf)> {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tools");
    let (global, template) = (tools.join("yarn-global"), tools.join("yarn-pnp"));
    if template.join("yarn.lock").is_file() {
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
    let (code, out) = repo.shell(&format!("{env} yarn install"), &[]);
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
