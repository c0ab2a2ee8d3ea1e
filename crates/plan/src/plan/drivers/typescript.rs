//! TypeScript: tsc per tsconfig project, as real projects lay them out.
//!
//! - Every `tsconfig.json` in the project is a project. One with `references` is built as the
//!   project builds itself, `tsc -b CONFIG` in place: its configs as written (`${configDir}`
//!   resolves where it should), its outputs and build-info files where its own build writes
//!   them, so a package whose `types` point at `dist/` is checked against what this build
//!   wrote. Others run `tsc -p CONFIG --noEmit --incremental` with their build-info file
//!   under `.ralph/tsc/`, so the second run after an edit is fast and nothing is written to
//!   the tree. Build state is read only for edit feedback: a forged build-info file makes tsc
//!   report a broken file clean, so stop and check runs of `-p` start from an emptied build
//!   folder, and of `-b` remove the projects' build-info files and pass `--force`.
//! - A project's inputs are an over-approximation of what tsc can read: its tsconfig chain
//!   (`extends`), every TypeScript file under its folder and under the folders its `include`,
//!   `paths`, `typeRoots` and `rootDirs` point at, its referenced projects' inputs, the local
//!   packages its package.json depends on (workspaces), and whatever relative imports reach
//!   outside all of those. An edit re-checks every project whose inputs hold the file: the
//!   package's own and each one that depends on it.
//! - A file under no tsconfig is checked on its own with strict defaults, unless a
//!   `deno.json` above it makes it Deno's (`deno check`, the Deno preset).
//! - Runs happen at the project root, so every path tsc prints is relative to it.

mod compiler;

use super::{join_inside, normalize, under};
use crate::plan::{as_argument, Context, Job, ProjectFs};
use compiler::{compiler, Compiler};
use ralph_config::Gate;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CONFIG: &str = "tsconfig.json";
const TS_EXTENSIONS: [&str; 4] = ["ts", "tsx", "mts", "cts"];
const JS_EXTENSIONS: [&str; 4] = ["js", "jsx", "mjs", "cjs"];

pub fn plan(_gate: &Gate, matched: &[PathBuf], universe: &[PathBuf], cx: &Context<'_>) -> Vec<Job> {
    let mut ts = Workspace::new(cx.fs, universe);
    let projects: Vec<PathBuf> = universe
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == CONFIG) && !in_node_modules(f))
        .cloned()
        .collect();
    let affected = affected(&mut ts, &projects, matched);
    let loose = loose(&mut ts, &projects, universe, matched, cx);
    let mut uncovered: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for (config, files) in ts.uncovered(&projects) {
        for l in files {
            if matched.contains(&l) || matched.iter().any(|f| ts.loose_closure(&l).contains(f)) {
                uncovered.entry(config.clone()).or_default().push(l);
            }
        }
    }
    // A project built with -b builds its references too: they need no run of their own.
    let mut built_by_others: BTreeSet<PathBuf> = BTreeSet::new();
    for p in &affected {
        if ts.load(p).is_some_and(|l| !l.references.is_empty()) {
            built_by_others.extend(ts.reference_closure(p).into_iter().skip(1));
        }
    }
    let mut jobs: Vec<Job> = affected
        .iter()
        .filter(|p| !built_by_others.contains(*p))
        .map(|p| ts.job(p, cx.reuse_build_state))
        .collect();
    let mut groups: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for f in loose {
        let package = f
            .ancestors()
            .skip(1)
            .find(|d| cx.fs.is_file(&d.join("package.json")))
            .unwrap_or(Path::new(""))
            .to_path_buf();
        groups.entry(package).or_default().push(f);
    }
    for (package, files) in groups {
        jobs.push(ts.loose_job(&package, &files, cx.reuse_build_state));
    }
    for (config, files) in uncovered {
        jobs.push(ts.uncovered_job(&config, &files));
    }
    jobs
}

/// The projects a change to `matched` reaches: those that include a matched file, and every
/// project below a matched manifest or lock file.
fn affected(
    ts: &mut Workspace<'_>,
    projects: &[PathBuf],
    matched: &[PathBuf],
) -> BTreeSet<PathBuf> {
    let mut affected = BTreeSet::new();
    for f in matched {
        for p in projects {
            let dir = p.parent().unwrap_or(Path::new(""));
            let manifest_above = f
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(crate::manifests::is_context_name)
                && dir.starts_with(f.parent().unwrap_or(Path::new("")));
            if manifest_above || ts.inputs(p).files.contains(f) {
                affected.insert(p.clone());
            }
        }
    }
    affected
}

/// Files under no tsconfig and in no project that a change to `matched` reaches: checked on
/// their own, and again when a file they import changes.
fn loose(
    ts: &mut Workspace<'_>,
    projects: &[PathBuf],
    universe: &[PathBuf],
    matched: &[PathBuf],
    cx: &Context<'_>,
) -> Vec<PathBuf> {
    // A file under a `deno.json` is Deno's (its imports are URLs, `jsr:` and `.ts` paths
    // tsc does not resolve): the Deno preset's `deno check` checks it, tsc stands down.
    let under_config = |f: &Path| {
        f.ancestors().skip(1).any(|d| {
            [CONFIG, "deno.json", "deno.jsonc"]
                .iter()
                .any(|c| cx.fs.is_file(&d.join(c)))
        })
    };
    let loose_all: Vec<PathBuf> = universe
        .iter()
        .filter(|f| is_source(f) && !is_type_test(f) && !in_node_modules(f) && !under_config(f))
        .filter(|f| !projects.iter().any(|p| ts.inputs(p).files.contains(*f)))
        .cloned()
        .collect();
    loose_all
        .into_iter()
        .filter(|l| matched.contains(l) || matched.iter().any(|f| ts.loose_closure(l).contains(f)))
        .collect()
}

fn is_declaration(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|e| name.ends_with(e))
}

fn in_node_modules(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == "node_modules")
}

/// A TypeScript source or declaration file (`.d.ts` included).
fn is_source(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TS_EXTENSIONS.contains(&e))
}

/// A tsconfig as resolved through its `extends` chain.
#[derive(Debug, Clone, Default)]
struct Loaded {
    /// The config and every config it extends, nearest first.
    chain: Vec<PathBuf>,
    options: Map<String, Value>,
    /// Folders (root-relative) whose files the program may read: its own, `include` and
    /// `files` prefixes, `paths` targets, `typeRoots`, `rootDirs`, `baseUrl`.
    dirs: Vec<PathBuf>,
    /// Files named by `files`.
    files: Vec<PathBuf>,
    has_include: bool,
    has_files: bool,
    has_exclude: bool,
    has_root_dir: bool,
    /// Root-relative `outDir` and `declarationDir` where set.
    out_dirs: Vec<PathBuf>,
    /// Root-relative `outDir` and `tsBuildInfoFile`, as the nearest layer sets them.
    out_dir: Option<PathBuf>,
    build_info: Option<PathBuf>,
    references: Vec<PathBuf>,
    no_cache: Option<String>,
    /// `files`, `include` and `exclude` as tsc applies them (the nearest layer's, whole).
    patterns: roots::Patterns,
}

/// What a project's result depends on.
#[derive(Debug, Default)]
struct Inputs {
    files: BTreeSet<PathBuf>,
    no_cache: Option<String>,
}

struct Workspace<'a> {
    fs: &'a dyn ProjectFs,
    universe: &'a [PathBuf],
    loaded: BTreeMap<PathBuf, Option<Arc<Loaded>>>,
    inputs: BTreeMap<PathBuf, Arc<Inputs>>,
    loose: BTreeMap<PathBuf, Arc<BTreeSet<PathBuf>>>,
    roots: BTreeMap<PathBuf, Option<Arc<roots::Roots>>>,
    /// Local packages by name (every package.json of the project outside node_modules).
    packages: BTreeMap<String, PathBuf>,
    imports: regex::Regex,
}

impl<'a> Workspace<'a> {
    fn new(fs: &'a dyn ProjectFs, universe: &'a [PathBuf]) -> Self {
        let mut packages = BTreeMap::new();
        for manifest in universe
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n == "package.json") && !in_node_modules(f))
        {
            if let Some(name) = read_json(fs, manifest)
                .and_then(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
            {
                packages.insert(
                    name,
                    manifest.parent().unwrap_or(Path::new("")).to_path_buf(),
                );
            }
        }
        Self {
            fs,
            universe,
            loaded: BTreeMap::new(),
            inputs: BTreeMap::new(),
            loose: BTreeMap::new(),
            roots: BTreeMap::new(),
            packages,
            imports: regex::Regex::new(
                r#"(?:\bfrom|\bimport|\brequire\s*\(|\bimport\s*\()\s*["']([^"'\n]+)["']|<reference\s+path\s*=\s*["']([^"'\n]+)["']"#,
            )
            .expect("valid regex"),
        }
    }

    fn load(&mut self, config: &Path) -> Option<Arc<Loaded>> {
        if let Some(hit) = self.loaded.get(config) {
            return hit.clone();
        }
        let loaded = load_chain(self.fs, config).map(Arc::new);
        self.loaded.insert(config.to_path_buf(), loaded.clone());
        loaded
    }

    /// The project and every project it references, transitively (the project first).
    fn reference_closure(&mut self, config: &Path) -> Vec<PathBuf> {
        let mut out = vec![config.to_path_buf()];
        let mut i = 0;
        while i < out.len() {
            let refs = self
                .load(&out[i].clone())
                .map(|l| l.references.clone())
                .unwrap_or_default();
            for r in refs {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
            i += 1;
        }
        out
    }

    /// A loose file and what it imports, transitively.
    fn loose_closure(&mut self, file: &Path) -> Arc<BTreeSet<PathBuf>> {
        if let Some(hit) = self.loose.get(file) {
            return hit.clone();
        }
        let mut set: BTreeSet<PathBuf> = BTreeSet::from([file.to_path_buf()]);
        self.follow_imports(&mut set, &mut Vec::new());
        let set = Arc::new(set);
        self.loose.insert(file.to_path_buf(), set.clone());
        set
    }

    fn inputs(&mut self, config: &Path) -> Arc<Inputs> {
        if let Some(hit) = self.inputs.get(config) {
            return hit.clone();
        }
        // A placeholder breaks reference cycles (tsc reports those itself).
        self.inputs
            .insert(config.to_path_buf(), Arc::new(Inputs::default()));
        let computed = Arc::new(self.compute_inputs(config));
        self.inputs.insert(config.to_path_buf(), computed.clone());
        computed
    }

    fn compute_inputs(&mut self, config: &Path) -> Inputs {
        let mut out = Inputs::default();
        let Some(loaded) = self.load(config) else {
            // tsc will say what is wrong with it; until then, whatever it could read under
            // its folder counts, and no key is made on a guess.
            let dir = config.parent().unwrap_or(Path::new(""));
            out.files.insert(config.to_path_buf());
            out.files.extend(
                under(self.universe, dir)
                    .filter(|f| !in_node_modules(f) && is_scannable(f))
                    .cloned(),
            );
            out.no_cache = Some(format!(
                "ralph-gate cannot read {} as a tsconfig, so it cannot tell what tsc reads",
                config.display()
            ));
            return out;
        };
        out.no_cache = loaded.no_cache.clone();
        out.files.extend(loaded.chain.iter().cloned());
        let allow_js = flag(&loaded.options, "allowJs") || flag(&loaded.options, "checkJs");
        let json = flag(&loaded.options, "resolveJsonModule");
        let wanted = |f: &Path| {
            let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
            TS_EXTENSIONS.contains(&ext)
                || (allow_js && JS_EXTENSIONS.contains(&ext))
                || (json && ext == "json")
        };
        let mut dirs: Vec<PathBuf> = loaded.dirs.clone();
        // Local packages the project depends on, transitively (workspaces, file: links).
        let dir = config.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut manifests: Vec<PathBuf> = dir
            .ancestors()
            .map(|d| d.join("package.json"))
            .filter(|m| self.fs.is_file(m))
            .take(1)
            .collect();
        let mut i = 0;
        while i < manifests.len() {
            let manifest = manifests[i].clone();
            i += 1;
            out.files.insert(manifest.clone());
            for name in dependency_names(self.fs, &manifest) {
                if let Some(pkg) = self.packages.get(&name).cloned() {
                    let m = pkg.join("package.json");
                    if !manifests.contains(&m) {
                        manifests.push(m);
                    }
                    if !dirs.contains(&pkg) {
                        dirs.push(pkg.clone());
                    }
                    let nested = pkg.join(CONFIG);
                    if nested != config && self.fs.is_file(&nested) {
                        let theirs = self.inputs(&nested);
                        out.files.extend(theirs.files.iter().cloned());
                    }
                }
            }
        }
        for r in loaded.references.clone() {
            let theirs = self.inputs(&r);
            out.files.extend(theirs.files.iter().cloned());
            if out.no_cache.is_none() {
                out.no_cache = theirs.no_cache.clone();
            }
        }
        for d in &dirs {
            out.files.extend(
                under(self.universe, d)
                    .filter(|f| !in_node_modules(f) && wanted(f))
                    .cloned(),
            );
        }
        out.files.extend(loaded.files.iter().cloned());
        self.follow_imports(&mut out.files, &mut dirs);
        out
    }

    /// Adds what the files' imports reach outside `dirs`, transitively: relative imports
    /// (a target that does not exist is added too, so its creation changes the key), and
    /// local packages imported by name, declared in package.json or not (hoisted
    /// node_modules make an undeclared one work), whose folders join `dirs`.
    fn follow_imports(&self, files: &mut BTreeSet<PathBuf>, dirs: &mut Vec<PathBuf>) {
        let mut queue: Vec<PathBuf> = files.iter().filter(|f| is_scannable(f)).cloned().collect();
        let mut scanned: BTreeSet<PathBuf> = BTreeSet::new();
        while let Some(file) = queue.pop() {
            if !scanned.insert(file.clone()) {
                continue;
            }
            let Some(text) = self.fs.read(&file) else {
                continue;
            };
            let text = String::from_utf8_lossy(&text);
            let base = file.parent().unwrap_or(Path::new(""));
            for cap in self.imports.captures_iter(&text) {
                let relative = match (cap.get(1), cap.get(2)) {
                    (Some(s), _) if s.as_str().starts_with('.') => s.as_str(),
                    (_, Some(reference)) => reference.as_str(),
                    (Some(bare), _) => {
                        if let Some(pkg) = self.local_package(bare.as_str()) {
                            if !dirs.iter().any(|d| pkg.starts_with(d)) {
                                for f in under(self.universe, &pkg)
                                    .filter(|f| !in_node_modules(f) && is_scannable(f))
                                {
                                    if files.insert(f.clone()) {
                                        queue.push(f.clone());
                                    }
                                }
                                dirs.push(pkg);
                            }
                        }
                        continue;
                    }
                    (None, None) => continue,
                };
                let Some(target) = join_inside(base, relative) else {
                    continue;
                };
                if dirs.iter().any(|d| target.starts_with(d)) {
                    continue; // every file there is an input already
                }
                for candidate in candidates(&target) {
                    let exists = self.fs.is_file(&candidate);
                    if files.insert(candidate.clone()) && exists && is_scannable(&candidate) {
                        queue.push(candidate);
                    }
                }
            }
        }
    }

    /// The folder of the project's own package a bare specifier (`@m/x/src/index`, `lib`)
    /// names, if it names one.
    fn local_package(&self, spec: &str) -> Option<PathBuf> {
        let mut parts = spec.split('/');
        let first = parts.next()?;
        let name = if first.starts_with('@') {
            format!("{first}/{}", parts.next()?)
        } else {
            first.to_string()
        };
        self.packages.get(&name).cloned()
    }

    /// `reuse`: the build state of earlier runs may be read (see [`Context::reuse_build_state`]).
    fn job(&mut self, config: &Path, reuse: bool) -> Job {
        let loaded = self.load(config).unwrap_or_default();
        let closure = self.reference_closure(config);
        let mut inputs: BTreeSet<PathBuf> = BTreeSet::new();
        let mut no_cache = None;
        for c in &closure {
            let theirs = self.inputs(c);
            inputs.extend(theirs.files.iter().cloned());
            if no_cache.is_none() {
                no_cache = theirs.no_cache.clone();
            }
        }
        let dir = config.parent().unwrap_or(Path::new("")).to_path_buf();
        let id = short_hash(config);
        let Compiler {
            argv: tsc,
            missing_note,
        } = compiler(self.fs, &dir);
        let (argv, clear, private, exclusive) = if loaded.references.is_empty() {
            let (info, private) = build_info(&format!("p-{id}"), reuse);
            let mut argv = tsc;
            argv.extend([
                "-p".into(),
                as_argument(config),
                "--noEmit".into(),
                "--pretty".into(),
                "false".into(),
                "--incremental".into(),
                "--tsBuildInfoFile".into(),
                info.clone().into_os_string(),
            ]);
            if flag(&loaded.options, "emitDeclarationOnly") {
                argv.extend(["--emitDeclarationOnly".into(), "false".into()]);
            }
            (argv, Vec::new(), private, format!("tsc-p-{id}"))
        } else {
            // The project's own build, in place: the configs as written (`${configDir}`,
            // `rootDir`, `noEmit` projects), outputs and build-info files where the project's
            // `tsc -b` puts them, so a package whose `types` point at its `dist/` is checked
            // against the declarations this build just wrote. Outside edit feedback nothing
            // of an earlier build is trusted: its build-info files go first, and `--force`
            // rebuilds every project.
            let mut argv = tsc;
            argv.extend([
                "-b".into(),
                as_argument(config),
                "--pretty".into(),
                "false".into(),
            ]);
            let mut clear = Vec::new();
            if !reuse {
                argv.push("--force".into());
                for c in &closure {
                    let l = self.load(c).unwrap_or_default();
                    clear.push(own_build_info(c, &l));
                }
            }
            (argv, clear, None, format!("tsc-b-{id}"))
        };
        Job {
            dir: PathBuf::new(),
            argv: Some(argv),
            args: Vec::new(),
            inputs: inputs.into_iter().collect(),
            tools_from: dir,
            label: Some(config.display().to_string()),
            no_cache,
            setup: Vec::new(),
            clear,
            exclusive: Some(exclusive),
            missing_note,
            private,
        }
    }

    /// The root-file rules of `config`; `None` when it cannot be read (tsc says why).
    fn roots_of(&mut self, config: &Path) -> Option<Arc<roots::Roots>> {
        if let Some(hit) = self.roots.get(config) {
            return hit.clone();
        }
        let made = self.load(config).map(|l| {
            let dir = config.parent().unwrap_or(Path::new(""));
            Arc::new(roots::Roots::new(&l.patterns, dir, &l.out_dirs))
        });
        self.roots.insert(config.to_path_buf(), made.clone());
        made
    }

    /// TypeScript files under a tsconfig that no project makes a root file of or reaches by
    /// an import, so that tsc never checks them, by the nearest tsconfig above them. A file
    /// a config's own `exclude` names is left out on purpose (fixtures that must not
    /// compile), and so is one under a config that cannot be read.
    fn uncovered(&mut self, projects: &[PathBuf]) -> BTreeMap<PathBuf, Vec<PathBuf>> {
        let mut configs: Vec<PathBuf> = Vec::new();
        for p in projects {
            for c in self.reference_closure(p) {
                if !configs.contains(&c) {
                    configs.push(c);
                }
            }
        }
        let rules: Vec<(PathBuf, Option<Arc<roots::Roots>>)> = configs
            .iter()
            .map(|c| (c.clone(), self.roots_of(c)))
            .collect();
        let universe = self.universe;
        let fs = self.fs;
        let nearest = |f: &Path| {
            f.ancestors()
                .skip(1)
                .map(|d| d.join(CONFIG))
                .find(|c| fs.is_file(c))
        };
        let mut rooted: BTreeSet<PathBuf> = BTreeSet::new();
        let mut candidates: Vec<(PathBuf, PathBuf)> = Vec::new();
        for f in universe
            .iter()
            .filter(|f| is_scannable(f) && !in_node_modules(f))
        {
            if rules
                .iter()
                .any(|(_, r)| r.as_ref().is_some_and(|r| r.includes(f)))
            {
                rooted.insert(f.clone());
                continue;
            }
            let Some(config) = nearest(f) else { continue };
            let on_purpose = rules.iter().any(|(c, r)| match r {
                Some(r) => r.explicit_exclude && r.excludes(f),
                None => f.starts_with(c.parent().unwrap_or(Path::new(""))),
            });
            if is_source(f) && !is_declaration(f) && !is_type_test(f) && !on_purpose {
                candidates.push((config, f.clone()));
            }
        }
        if candidates.is_empty() {
            return BTreeMap::new();
        }
        self.follow_imports(&mut rooted, &mut Vec::new());
        let mut out: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for (config, f) in candidates.into_iter().filter(|(_, f)| !rooted.contains(f)) {
            out.entry(config).or_default().push(f);
        }
        out
    }

    /// Files under `config` that it does not include: checked with its options, through a
    /// config under `.ralph/tsc/` that extends it and names them as its only files.
    fn uncovered_job(&mut self, config: &Path, files: &[PathBuf]) -> Job {
        // Everything the project's own run reads (its chain, `paths` and `typeRoots`
        // folders, local packages), and what these files import besides.
        let project = self.inputs(config);
        let mut inputs: BTreeSet<PathBuf> = files.iter().cloned().collect();
        self.follow_imports(&mut inputs, &mut Vec::new());
        inputs.extend(project.files.iter().cloned());
        let id = short_hash(config);
        let at = ralph_base::state::tsc_work()
            .join(format!("u-{id}"))
            .join(CONFIG);
        let up = "../".repeat(at.parent().map_or(0, |p| p.components().count()));
        let text = json!({
            "extends": format!("{up}{}", config.display()),
            "compilerOptions": {
                "noEmit": true,
                "composite": false,
                "incremental": false,
                "emitDeclarationOnly": false,
                "rootDir": if up.is_empty() { ".".to_string() } else { up.trim_end_matches('/').to_string() },
            },
            "files": files.iter().map(|f| format!("{up}{}", f.display())).collect::<Vec<_>>(),
            "include": [],
            "references": [],
        });
        let dir = config.parent().unwrap_or(Path::new("")).to_path_buf();
        let private = at.parent().map(Path::to_path_buf);
        let Compiler {
            argv: mut tsc,
            missing_note,
        } = compiler(self.fs, &dir);
        tsc.extend([
            "-p".into(),
            at.clone().into_os_string(),
            "--pretty".into(),
            "false".into(),
        ]);
        Job {
            dir: PathBuf::new(),
            argv: Some(tsc),
            args: Vec::new(),
            inputs: inputs.into_iter().collect(),
            tools_from: dir,
            label: Some(format!("files {} does not include", config.display())),
            no_cache: project.no_cache.clone(),
            setup: vec![(
                at,
                serde_json::to_string_pretty(&text).expect("serialises") + "\n",
            )],
            clear: Vec::new(),
            exclusive: Some(format!("tsc-u-{id}")),
            missing_note,
            // The config naming the files is written for each run, where no process can
            // replace it between the write and tsc's read.
            private,
        }
    }

    /// Files under no tsconfig: checked together, strictly, with modern defaults.
    fn loose_job(&self, package: &Path, files: &[PathBuf], reuse: bool) -> Job {
        let mut inputs: BTreeSet<PathBuf> = files.iter().cloned().collect();
        self.follow_imports(&mut inputs, &mut Vec::new());
        let id = short_hash(package);
        let (info, private) = build_info(&format!("loose-{id}"), reuse);
        let Compiler {
            mut argv,
            missing_note,
        } = compiler(self.fs, package);
        argv.extend(
            [
                "--noEmit",
                "--pretty",
                "false",
                "--strict",
                "--skipDefaultLibCheck",
                "--target",
                "es2022",
                "--module",
                "esnext",
                "--moduleResolution",
                "bundler",
                "--incremental",
                "--tsBuildInfoFile",
            ]
            .iter()
            .map(OsString::from),
        );
        argv.push(info.clone().into_os_string());
        Job {
            dir: PathBuf::new(),
            argv: Some(argv),
            args: files.iter().map(|f| as_argument(f)).collect(),
            inputs: inputs.into_iter().collect(),
            tools_from: package.to_path_buf(),
            label: Some("files under no tsconfig.json".into()),
            no_cache: None,
            setup: Vec::new(),
            clear: Vec::new(),
            exclusive: Some(format!("tsc-loose-{id}")),
            missing_note,
            private,
        }
    }
}

/// A tsd type-test file (`*.test-d.ts`): its `expectError` lines are meant to fail, and tsd,
/// not tsc, checks it.
fn is_type_test(f: &Path) -> bool {
    f.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        [".test-d.ts", ".test-d.tsx", ".test-d.mts", ".test-d.cts"]
            .iter()
            .any(|e| n.ends_with(e))
    })
}

fn is_scannable(f: &Path) -> bool {
    f.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TS_EXTENSIONS.contains(&e) || JS_EXTENSIONS.contains(&e))
}

/// The files an import of `target` (extension or not) may resolve to.
fn candidates(target: &Path) -> Vec<PathBuf> {
    let text = target.to_string_lossy();
    let mut out = Vec::new();
    let stem: String = match target.extension().and_then(|e| e.to_str()) {
        Some("js" | "jsx") => {
            let s = text
                .rsplit_once('.')
                .map_or(text.to_string(), |(a, _)| a.to_string());
            out.extend([format!("{s}.ts"), format!("{s}.tsx"), format!("{s}.d.ts")]);
            out.push(text.to_string());
            return out.into_iter().map(PathBuf::from).collect();
        }
        Some("mjs") => {
            let s = text.trim_end_matches(".mjs");
            return [format!("{s}.mts"), format!("{s}.d.mts"), text.to_string()]
                .into_iter()
                .map(PathBuf::from)
                .collect();
        }
        Some("cjs") => {
            let s = text.trim_end_matches(".cjs");
            return [format!("{s}.cts"), format!("{s}.d.cts"), text.to_string()]
                .into_iter()
                .map(PathBuf::from)
                .collect();
        }
        Some(e) if TS_EXTENSIONS.contains(&e) || e == "json" => {
            return vec![target.to_path_buf()];
        }
        _ => text.to_string(),
    };
    for ext in ["ts", "tsx", "d.ts", "mts", "cts", "js", "jsx"] {
        out.push(format!("{stem}.{ext}"));
    }
    for ext in ["ts", "tsx", "d.ts", "js"] {
        out.push(format!("{stem}/index.{ext}"));
    }
    out.into_iter().map(PathBuf::from).collect()
}

fn flag(options: &Map<String, Value>, key: &str) -> bool {
    options.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn short_hash(p: &Path) -> String {
    blake3::hash(p.as_os_str().as_encoded_bytes()).to_hex()[..12].to_string()
}

/// A build-info file: kept between runs, or (`-fresh`) in a private folder made for each
/// run (returned second).
fn build_info(name: &str, reuse: bool) -> (PathBuf, Option<PathBuf>) {
    let work = ralph_base::state::tsc_work();
    if reuse {
        return (work.join(format!("{name}.tsbuildinfo")), None);
    }
    let private = work.join(format!("{name}-fresh"));
    (private.join("tsconfig.tsbuildinfo"), Some(private))
}

/// Where a project's own `tsc -b` keeps its build-info file: `tsBuildInfoFile`, else beside
/// its outputs (`outDir`), else beside the config, named after it.
fn own_build_info(config: &Path, loaded: &Loaded) -> PathBuf {
    if let Some(p) = &loaded.build_info {
        return p.clone();
    }
    let stem = config
        .file_stem()
        .map_or("tsconfig".into(), |s| s.to_string_lossy().into_owned());
    let dir = config.parent().unwrap_or(Path::new(""));
    loaded
        .out_dir
        .as_deref()
        .unwrap_or(dir)
        .join(format!("{stem}.tsbuildinfo"))
}

/// One layer's `compilerOptions`: options (later layers win), the folders module resolution
/// reads (`baseUrl`, `paths`, `typeRoots`, `rootDirs`) and the output folders.
fn compiler_options(out: &mut Loaded, opts: &Map<String, Value>, dir: &Path) {
    let dir = dir.to_path_buf();
    let at = |p: &str| join_inside(&dir, p);
    for (k, v) in opts {
        out.options.insert(k.clone(), v.clone());
    }
    let base_url = opts.get("baseUrl").and_then(Value::as_str).and_then(at);
    if let Some(b) = &base_url {
        out.dirs.push(b.clone());
    }
    if let Some(Value::Object(paths)) = opts.get("paths") {
        let from = base_url.clone().unwrap_or_else(|| dir.clone());
        for targets in paths.values().filter_map(Value::as_array) {
            for t in targets.iter().filter_map(Value::as_str) {
                if let Some(d) = join_inside(&from, fixed_prefix(t)) {
                    out.dirs.push(d);
                }
            }
        }
    }
    for key in ["typeRoots", "rootDirs"] {
        if let Some(Value::Array(list)) = opts.get(key) {
            out.dirs
                .extend(list.iter().filter_map(Value::as_str).filter_map(at));
        }
    }
    for key in ["outDir", "declarationDir"] {
        if let Some(d) = opts.get(key).and_then(Value::as_str).and_then(at) {
            if key == "outDir" {
                out.out_dir = Some(d.clone());
            }
            out.out_dirs.push(d);
        }
    }
    if let Some(p) = opts
        .get("tsBuildInfoFile")
        .and_then(Value::as_str)
        .and_then(at)
    {
        out.build_info = Some(p);
    }
    out.has_root_dir |= opts.contains_key("rootDir");
}

/// Reads a config and its `extends` chain. `None` when the config itself cannot be read or
/// parsed (tsc will say why when it runs).
fn load_chain(fs: &dyn ProjectFs, config: &Path) -> Option<Loaded> {
    let mut out = Loaded::default();
    // From the most basic config to the project's own: later layers win, and of an
    // `extends` array the later entries win, as in tsc.
    let mut layers: Vec<(PathBuf, Map<String, Value>)> = Vec::new();
    let own = read_json(fs, config)?
        .as_object()
        .cloned()
        .unwrap_or_default();
    collect_layers(fs, config, own, &mut layers, &mut out, 0);
    let config_dir = config.parent().unwrap_or(Path::new("")).to_path_buf();
    out.dirs.push(config_dir.clone());
    for (path, obj) in &layers {
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        read_layer(&mut out, &with_config_dir(obj, &dir, &config_dir), &dir);
    }
    // `references` are never inherited: only the project's own count.
    if let Some((_, own)) = layers.last() {
        read_references(&mut out, own, config, &config_dir);
    }
    out.dirs.sort();
    out.dirs.dedup();
    // Nested folders are covered by their parents.
    let all = out.dirs.clone();
    out.dirs
        .retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    Some(out)
}

/// One layer of a config's chain, of folder `dir`, over what the layers below it said.
fn read_layer(out: &mut Loaded, obj: &Map<String, Value>, dir: &Path) {
    let at = |p: &str| join_inside(dir, p);
    if let Some(Value::Object(opts)) = obj.get("compilerOptions") {
        compiler_options(out, opts, dir);
    }
    let patterns = |key: &str| -> Option<Vec<String>> {
        let list = obj.get(key)?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .filter_map(|p| roots::Patterns::at(dir, p))
                .collect(),
        )
    };
    if let Some(l) = patterns("include") {
        out.patterns.include = Some(l);
    }
    if let Some(l) = patterns("exclude") {
        out.patterns.exclude = Some(l);
    }
    if let Some(Value::Array(list)) = obj.get("files") {
        out.patterns.files = Some(
            list.iter()
                .filter_map(Value::as_str)
                .filter_map(at)
                .collect(),
        );
    }
    if let Some(Value::Array(list)) = obj.get("include") {
        out.has_include = true;
        out.dirs.extend(
            list.iter()
                .filter_map(Value::as_str)
                .filter_map(|p| join_inside(dir, fixed_prefix(p))),
        );
    }
    if let Some(Value::Array(list)) = obj.get("files") {
        out.has_files = true;
        out.files
            .extend(list.iter().filter_map(Value::as_str).filter_map(at));
    }
    out.has_exclude |= obj.contains_key("exclude");
}

/// The project's own `references` (of `config`, in `config_dir`); one outside the project
/// keeps the project's runs out of the cache.
fn read_references(out: &mut Loaded, own: &Map<String, Value>, config: &Path, config_dir: &Path) {
    let Some(Value::Array(refs)) = own.get("references") else {
        return;
    };
    for r in refs
        .iter()
        .filter_map(|r| r.get("path").and_then(Value::as_str))
    {
        match join_inside(config_dir, r) {
            Some(p) if p.extension().is_some_and(|e| e == "json") => out.references.push(p),
            Some(p) => out.references.push(p.join(CONFIG)),
            None => {
                out.no_cache.get_or_insert_with(|| {
                    format!("{} references `{r}`, outside the project", config.display())
                });
            }
        }
    }
}

/// `layer` (a config of folder `dir`) with `${configDir}` (TypeScript 5.5), which names the
/// folder of the config being built whichever layer says it, written as a path from `dir`
/// to `config_dir`: a shared base config's `"include": ["${configDir}/src"]` is the project's
/// own `src`.
fn with_config_dir(
    layer: &Map<String, Value>,
    dir: &Path,
    config_dir: &Path,
) -> Map<String, Value> {
    const VAR: &str = "${configDir}";
    let mut to = "../".repeat(dir.components().count());
    to.push_str(&config_dir.to_string_lossy());
    if to.is_empty() {
        to.push('.');
    }
    let to = to.trim_end_matches('/').to_string();
    fn expand(v: &mut Value, to: &str) {
        match v {
            Value::String(s) if s.starts_with(VAR) => *s = format!("{to}{}", &s[VAR.len()..]),
            Value::Array(list) => list.iter_mut().for_each(|v| expand(v, to)),
            Value::Object(map) => map.values_mut().for_each(|v| expand(v, to)),
            _ => {}
        }
    }
    let mut out = layer.clone();
    for key in ["compilerOptions", "include", "exclude", "files"] {
        if let Some(v) = out.get_mut(key) {
            expand(v, &to);
        }
    }
    out
}

/// Appends the layers `path` extends (most basic first), then `path`'s own.
fn collect_layers(
    fs: &dyn ProjectFs,
    path: &Path,
    obj: Map<String, Value>,
    layers: &mut Vec<(PathBuf, Map<String, Value>)>,
    out: &mut Loaded,
    depth: usize,
) {
    if depth > 16 || out.chain.iter().any(|c| c == path) {
        return;
    }
    out.chain.push(path.to_path_buf());
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let extends: Vec<String> = match obj.get("extends") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    for spec in &extends {
        match resolve_extends(fs, &dir, spec) {
            Some(base) => {
                let parsed = read_json(fs, &base)
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default();
                collect_layers(fs, &base, parsed, layers, out, depth + 1);
            }
            None => {
                out.no_cache.get_or_insert_with(|| {
                    format!(
                        "{} extends `{spec}`, which ralph-gate cannot find inside the project",
                        path.display()
                    )
                });
            }
        }
    }
    layers.push((path.to_path_buf(), obj));
}

/// The part of an include pattern before its first wildcard, as a folder.
fn fixed_prefix(pattern: &str) -> &str {
    let cut = pattern.find(['*', '?', '{', '[']).unwrap_or(pattern.len());
    let fixed = &pattern[..cut];
    match fixed.rfind('/') {
        Some(i) if cut < pattern.len() => &fixed[..i],
        _ if cut < pattern.len() => "",
        _ => fixed,
    }
}

/// `extends`: a path (relative to the config) or a package in a node_modules above it.
fn resolve_extends(fs: &dyn ProjectFs, dir: &Path, spec: &str) -> Option<PathBuf> {
    let try_file = |p: PathBuf| -> Option<PathBuf> {
        let p = normalize(&p)?;
        if fs.is_file(&p) {
            return Some(p);
        }
        let with_json = PathBuf::from(format!("{}.json", p.display()));
        if fs.is_file(&with_json) {
            return Some(with_json);
        }
        let inner = p.join(CONFIG);
        fs.is_file(&inner).then_some(inner)
    };
    if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
        return try_file(dir.join(spec));
    }
    if Path::new(spec).is_absolute() {
        return None;
    }
    dir.ancestors()
        .find_map(|d| try_file(d.join("node_modules").join(spec)))
}

fn read_json(fs: &dyn ProjectFs, path: &Path) -> Option<Value> {
    let bytes = fs.read(path)?;
    ralph_base::jsonc::parse(&String::from_utf8_lossy(&bytes))
}

/// Names a package.json depends on, in every dependency field.
fn dependency_names(fs: &dyn ProjectFs, manifest: &Path) -> Vec<String> {
    let Some(v) = read_json(fs, manifest) else {
        return Vec::new();
    };
    [
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ]
    .iter()
    .filter_map(|k| v.get(*k).and_then(Value::as_object))
    .flat_map(|m| m.keys().cloned())
    .collect()
}

mod roots;

#[cfg(test)]
mod tests;
