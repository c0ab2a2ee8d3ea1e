//! Which compiler a TypeScript run starts: the one the project's package manager installed
//! for it, found as that package manager resolves it.

use super::read_json;
use crate::plan::drivers::join_inside;
use crate::plan::{as_argument, ProjectFs};
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;

/// The program and arguments that start tsc, and what to say when its program is missing.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Compiler {
    pub argv: Vec<OsString>,
    pub missing_note: Option<String>,
}

/// Node's start under Yarn Plug'n'Play (`node --require ./.pnp.cjs -e LAUNCH DIR ARGS...`):
/// resolves `typescript/bin/tsc` from the package folder DIR, as the package manager's own
/// `yarn tsc` does there, and runs it with DIR taken out of `process.argv`, so tsc sees only
/// its own arguments and runs at the project root like every other run.
const PNP_LAUNCH: &str = "const p=require(\"path\");\
const r=require(\"module\").createRequire(p.resolve(process.argv[1],\"package.json\"));\
process.argv.splice(1,1,r.resolve(\"typescript/bin/tsc\"));require(process.argv[1])";

/// The compiler a project's own build runs: the `typescript` package installed for it (the
/// nearest `node_modules/typescript` at or above its folder), never whatever else owns
/// `node_modules/.bin/tsc` (tsd's bundled compiler does, in packages that test their types
/// with tsd). Under Yarn Plug'n'Play (a `.pnp.cjs` and no `node_modules`), the package that
/// declares `typescript` resolves it through the PnP runtime. A project whose package.json
/// declares `typescript` without it installed gets a note saying so instead of the `tsc` on
/// PATH, which may be another major version. With neither, the `tsc` on PATH.
///
/// A package of its own below the one whose install is found (an example app with its own
/// package.json, no workspace of the root's) whose dependencies are not installed is not
/// compiled with another package's TypeScript against modules it lacks: it gets a note too.
pub(super) fn compiler(fs: &dyn ProjectFs, dir: &Path) -> Compiler {
    let mut declared: Option<(String, &Path)> = None;
    let mut own: Option<&Path> = None;
    for d in dir.ancestors() {
        if own.is_none() && has_dependencies(fs, d) {
            own = Some(d);
        }
        if let Some(tsc) = installed(fs, d) {
            if let Some(package) = own.filter(|o| !installed_for(fs, o, d)) {
                return not_installed(package, declared.filter(|(_, at)| *at == package));
            }
            return Compiler {
                argv: vec![tsc],
                missing_note: None,
            };
        }
        if declared.is_none() {
            declared = declares(fs, d).map(|version| (version, d));
        }
        if let (Some((_, package)), true) = (&declared, fs.is_file(&d.join(".pnp.cjs"))) {
            return plug_n_play(d, package);
        }
    }
    match declared {
        Some((version, at)) => not_installed(at, Some((version, at))),
        None => Compiler {
            argv: vec!["tsc".into()],
            missing_note: None,
        },
    }
}

/// The note for `package`, whose install is missing (`declared`: the TypeScript it names).
fn not_installed(package: &Path, declared: Option<(String, &Path)>) -> Compiler {
    let manifest = package.join("package.json");
    let what = match declared {
        Some((version, _)) => format!(
            "the project's TypeScript (typescript {version} in {}) is",
            manifest.display()
        ),
        None => format!(
            "the dependencies of {} (a package of its own, no workspace of a package above it) are",
            manifest.display()
        ),
    };
    Compiler {
        argv: vec![as_argument(&package.join("node_modules/typescript/bin/tsc"))],
        missing_note: Some(format!(
            "{what} not installed: run the package manager's install (npm install, pnpm install, yarn){}",
            match package.as_os_str().is_empty() {
                true => String::new(),
                false => format!(" in {}", package.display()),
            }
        )),
    }
}

/// `d/package.json` depends on some package (not a folder marker like `{"type": "module"}`).
fn has_dependencies(fs: &dyn ProjectFs, d: &Path) -> bool {
    read_json(fs, &d.join("package.json")).is_some_and(|m| {
        ["dependencies", "devDependencies"].iter().any(|k| {
            m.get(*k)
                .and_then(Value::as_object)
                .is_some_and(|o| !o.is_empty())
        })
    })
}

/// Whether the install found at `at` serves the package at `package`: it is that package,
/// the package has installed dependencies of its own (node resolves the rest upwards), or
/// it is one of `at`'s workspaces (npm, Yarn and Bun hoist their dependencies to `at`).
fn installed_for(fs: &dyn ProjectFs, package: &Path, at: &Path) -> bool {
    if package == at || fs.is_dir(&package.join("node_modules")) {
        return true;
    }
    let Ok(member) = package.strip_prefix(at) else {
        return true;
    };
    let Some(manifest) = read_json(fs, &at.join("package.json")) else {
        return false;
    };
    let globs = match manifest.get("workspaces") {
        Some(Value::Object(o)) => o.get("packages").cloned(),
        other => other.cloned(),
    };
    let patterns = globs
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    patterns.filter_map(Value::as_str).any(|p| {
        globset::GlobBuilder::new(p.trim_start_matches("./").trim_end_matches('/'))
            .literal_separator(true)
            .build()
            .is_ok_and(|g| g.compile_matcher().is_match(member))
    })
}

/// The `tsc` of a `typescript` package installed in `d/node_modules`.
fn installed(fs: &dyn ProjectFs, d: &Path) -> Option<OsString> {
    let pkg = d.join("node_modules/typescript");
    if let Some(manifest) = read_json(fs, &pkg.join("package.json")) {
        let bin = match manifest.get("bin") {
            Some(Value::String(b)) => b.clone(),
            Some(Value::Object(m)) => m
                .get("tsc")
                .and_then(Value::as_str)
                .unwrap_or("bin/tsc")
                .to_string(),
            _ => "bin/tsc".to_string(),
        };
        if let Some(path) = join_inside(&pkg, bin.trim_start_matches("./")) {
            return Some(as_argument(&path));
        }
    }
    // A `.bin/tsc` linked into a `typescript` package installed elsewhere (a global one).
    let bin = d.join("node_modules/.bin/tsc");
    fs.real_path(&bin)
        .is_some_and(|real| is_typescript_bin(&real))
        .then(|| as_argument(&bin))
}

/// The `typescript` version `d/package.json` declares, in any dependency field.
fn declares(fs: &dyn ProjectFs, d: &Path) -> Option<String> {
    let manifest = read_json(fs, &d.join("package.json"))?;
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .find_map(|k| {
        manifest
            .get(*k)?
            .get("typescript")?
            .as_str()
            .map(str::to_string)
    })
}

/// tsc through the Plug'n'Play runtime at `root` (its `.pnp.cjs`), resolved from `package`.
fn plug_n_play(root: &Path, package: &Path) -> Compiler {
    let folder = |p: &Path| {
        if p.as_os_str().is_empty() {
            OsString::from(".")
        } else {
            as_argument(p)
        }
    };
    let mut runtime = OsString::from("./");
    runtime.push(root.join(".pnp.cjs"));
    Compiler {
        argv: vec![
            "node".into(),
            "--require".into(),
            runtime,
            "-e".into(),
            PNP_LAUNCH.into(),
            folder(package),
        ],
        missing_note: Some(format!(
            "the project installs with Yarn Plug'n'Play ({}): its TypeScript runs on node with that runtime, and node is not on PATH",
            root.join(".pnp.cjs").display()
        )),
    }
}

/// True when `real` is the `tsc` of a package named `typescript` (`.../typescript/bin/tsc`).
fn is_typescript_bin(real: &Path) -> bool {
    let Some(pkg) = real.parent().and_then(Path::parent) else {
        return false;
    };
    real.parent().is_some_and(|b| b.ends_with("bin"))
        && std::fs::read(pkg.join("package.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|m| m.get("name").and_then(Value::as_str) == Some("typescript"))
}
