//! Which executable a gate really runs, and what it is.
//!
//! A gate's result depends on the tool as much as on the files, so the result cache must know
//! the tool by what it is, not by where PATH says it is: replacing `/usr/bin/shellcheck` or
//! retargeting `node_modules/.bin/tsc` must change the key. A tool's identity is the digest of
//! the file it resolves to (symlinks followed) together with
//! - the interpreter its `#!` line names (a node or python script is only as fixed as its
//!   interpreter),
//! - for a file inside a node package, that package's `package.json` (its version), and
//! - for a version manager's shim (rustup, pyenv, rbenv, nodenv, asdf, mise), the executable
//!   the manager says the shim runs here, with the settings that choose it.
//!
//! Digests are remembered by stamp (see [`ralph_base::digest`]) and a shim's answer by the inputs
//! that decide it, so all this costs a few `stat`s per run once warm.

mod guesses;
mod pending;
mod shims;
mod words;

pub use guesses::Guess;
pub use words::command_words;

use pending::Pending;
use ralph_base::digest::{Content, Digests, Unreadable};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long `TOOL --version` and a version manager's `which` may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Interpreters of interpreters are followed this deep (`#!/usr/bin/env node` -> node).
const MAX_DEPTH: usize = 3;

/// Why what a tool is cannot be known: then nothing it decides is cached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unknown {
    #[error(transparent)]
    Unreadable(#[from] Unreadable),
    /// A version manager's shim whose target cannot be told.
    #[error(transparent)]
    Shim(#[from] guesses::Unanswered),
}

/// A tool as resolved for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    /// Where the search path found it.
    pub found: PathBuf,
    /// What runs: symlinks followed, a shim resolved to its target.
    pub real: PathBuf,
    /// A digest of everything above, or why it cannot be known (then nothing it decides is
    /// cached).
    pub identity: Result<String, Unknown>,
    /// `typescript 5.9.3` for a tool inside a node package.
    pub package: Option<String>,
    /// For a script shim (pyenv, rbenv, nodenv): the folder of what it runs. Put in front of
    /// the gate's PATH, the same executable runs without the shim's start-up (about 70 ms
    /// a process for pyenv), and it is the one the key names.
    pub bypass: Option<PathBuf>,
    /// Remembered shim answers this identity rests on that the manager has yet to confirm
    /// (see [`Toolbox::confirm`]); empty unless nothing remembered may be trusted.
    pub guesses: Vec<Guess>,
    /// The interpreter its `#!` line names (or the one of a script that runs), when none is
    /// there: the run cannot start, which is a missing tool, not the project failing (tsc's
    /// `#!/usr/bin/env node` on a machine with neither node nor Bun).
    pub needs: Option<String>,
}

/// What identifying a tool finds besides its digest.
#[derive(Default)]
struct Findings {
    package: Option<String>,
    bypass: Option<PathBuf>,
    guesses: Vec<Guess>,
    needs: Option<String>,
    /// Bun, standing in for a `node` that is not there (see [`Toolbox::node_stand_in`]).
    node_is: Option<PathBuf>,
}

/// What a [`Toolbox`] may take from the shim answers and versions an earlier run remembered.
pub enum Remembered {
    /// Nothing: every shim is asked.
    Nothing,
    /// Everything, kept up to date in this file: the everyday run.
    Trusted(PathBuf),
    /// The shim answers in this file, as guesses the managers must confirm: a run that may
    /// trust nothing an earlier run left (see [`guesses`]).
    Guesses(PathBuf),
}

/// Tools resolved in this run, by (name, search path, working folder). Each is resolved
/// once: a job that asks while another resolves it waits for that answer instead of
/// starting a second shim query (`pyenv which` costs tens of milliseconds).
type Memo = HashMap<(String, Vec<PathBuf>, PathBuf), Arc<std::sync::OnceLock<Option<Arc<Tool>>>>>;

/// Resolves and identifies tools for one run; shared by every job of the run.
pub struct Toolbox<'a> {
    digests: &'a Digests,
    vars: BTreeMap<String, OsString>,
    memo: Mutex<Memo>,
    store: Mutex<Store>,
    store_path: Option<PathBuf>,
    guesses: Option<guesses::Guesses>,
    /// `--version` questions under way or answered, by tool identity.
    versions: Mutex<HashMap<String, Arc<Pending<String>>>>,
    /// A private folder whose `node` is Bun, made when a tool needs node and only Bun is
    /// there; removed with the toolbox.
    node_stand_in: std::sync::OnceLock<Option<tempfile::TempDir>>,
}

/// What is remembered between runs: shims' answers and tools' versions.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// Digest of (manager, tool, the settings that choose) -> the executable it runs.
    shims: BTreeMap<String, PathBuf>,
    /// Tool identity -> the first line of `TOOL --version`.
    versions: BTreeMap<String, String>,
    #[serde(skip)]
    changed: bool,
}

impl<'a> Toolbox<'a> {
    /// `vars` are the environment variables that decide what a shim runs (see
    /// [`ralph_base::env::Environment::tool_vars`]); `remembered` says what earlier answers may
    /// be used, and how.
    pub fn new(
        digests: &'a Digests,
        vars: BTreeMap<String, OsString>,
        remembered: Remembered,
    ) -> Self {
        let read = |p: &Path| -> Store {
            std::fs::read(p)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default()
        };
        let (store, store_path, guesses) = match remembered {
            Remembered::Nothing => (Store::default(), None, None),
            // An everyday run trusts the stored answers; where none is stored (a new clone),
            // it guesses from the manager's files rather than wait for the manager.
            Remembered::Trusted(p) => (
                read(&p),
                Some(p),
                Some(guesses::Guesses::new(BTreeMap::new())),
            ),
            Remembered::Guesses(p) => (
                Store::default(),
                None,
                Some(guesses::Guesses::new(read(&p).shims)),
            ),
        };
        Self {
            digests,
            vars,
            memo: Mutex::new(HashMap::new()),
            store: Mutex::new(store),
            store_path,
            guesses,
            versions: Mutex::new(HashMap::new()),
            node_stand_in: std::sync::OnceLock::new(),
        }
    }

    /// True when every remembered shim answer `tools` were built on is the one the manager
    /// gives (waiting for it if need be). When one is not, the tools are forgotten, so the
    /// job can be run again on the manager's answers, which no longer guess.
    pub fn confirm(&self, tools: &[Arc<Tool>]) -> bool {
        let Some(g) = &self.guesses else {
            return true;
        };
        // Every guess is settled, not just up to the first wrong one: the next attempt must
        // find every answer known.
        let settled: Vec<bool> = tools
            .iter()
            .flat_map(|t| &t.guesses)
            .map(|x| g.confirm(x))
            .collect();
        let confirmed = settled.iter().all(|&ok| ok);
        if !confirmed {
            self.lock_memo().clear();
        } else if self.store_path.is_some() {
            for guess in tools.iter().flat_map(|t| &t.guesses) {
                self.remember_shim(guess.memo(), guess.target());
            }
        }
        confirmed
    }

    pub fn root(&self) -> &Path {
        self.digests.root()
    }

    /// The tool `name` as found on `dirs` (a name with a `/` is a path from `cwd`), or `None`
    /// when it is not there.
    pub fn resolve(&self, name: &str, dirs: &[PathBuf], cwd: &Path) -> Option<Arc<Tool>> {
        let memo_key = (name.to_string(), dirs.to_vec(), cwd.to_path_buf());
        let cell = Arc::clone(self.lock_memo().entry(memo_key).or_default());
        cell.get_or_init(|| {
            find(name, dirs, cwd).map(|found| Arc::new(self.identify(name, found, dirs, cwd)))
        })
        .clone()
    }

    /// A private folder whose `node` is `bun`, to put first on the PATH of a run whose tools
    /// need node on a machine that has only Bun (Bun started as `node` runs as node: what
    /// `bun run` does). `None` when it cannot be made.
    fn node_stand_in(&self, bun: &Path) -> Option<PathBuf> {
        let made = self.node_stand_in.get_or_init(|| {
            let dir = tempfile::Builder::new()
                .prefix("ralph-gate-node-")
                .tempdir()
                .ok()?;
            let real = bun.canonicalize().ok()?;
            ralph_base::platform::symlink(real, dir.path().join("node")).ok()?;
            Some(dir)
        });
        made.as_ref().map(|d| d.path().to_path_buf())
    }

    fn lock_memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        self.memo.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn identify(&self, name: &str, found: PathBuf, dirs: &[PathBuf], cwd: &Path) -> Tool {
        let mut h = Fields::new();
        let mut f = Findings::default();
        let real = found.canonicalize().unwrap_or_else(|_| found.clone());
        let identity = self
            .fold_identity(name, &real, (dirs, cwd), 0, &mut h, &mut f)
            .map(|target| (target, h.finish()));
        if let Some(bun) = f.node_is.take() {
            match self.node_stand_in(&bun) {
                Some(folder) => f.bypass = Some(folder),
                None => f.needs = Some("node".into()),
            }
        }
        match identity {
            Ok((target, digest)) => Tool {
                name: name.to_string(),
                found,
                real: target,
                identity: Ok(digest),
                package: f.package,
                bypass: f.bypass,
                guesses: f.guesses,
                needs: f.needs,
            },
            Err(why) => Tool {
                name: name.to_string(),
                found,
                real,
                identity: Err(why),
                package: f.package,
                bypass: None,
                guesses: f.guesses,
                needs: f.needs,
            },
        }
    }

    /// Adds what `real` is to `h`; returns the executable that finally runs. `f` collects the
    /// package version, a shim's bypass folder and the guesses made on the way.
    fn fold_identity(
        &self,
        name: &str,
        real: &Path,
        (dirs, cwd): (&[PathBuf], &Path),
        depth: usize,
        h: &mut Fields,
        f: &mut Findings,
    ) -> Result<PathBuf, Unknown> {
        let content = self
            .digests
            .of(real)
            .map_err(|e| Unreadable::read(real, &e))?;
        h.add(
            relative_or_absolute(self.root(), real)
                .as_os_str()
                .as_encoded_bytes(),
        );
        h.add(content.as_str().as_bytes());
        if content == Content::Absent {
            return Err(Unreadable::Vanished {
                path: real.to_path_buf(),
            }
            .into());
        }
        let interpreter = shebang_interpreter(real);
        self.fold_package(real, interpreter.as_deref(), h, f);
        if depth >= MAX_DEPTH {
            return Ok(real.to_path_buf());
        }
        if let Some(shim) = shims::detect(name, real) {
            let target = self
                .shim_target(&shim, name, cwd, &mut f.guesses)
                .map_err(Unknown::Shim)?;
            h.add(b"shim");
            if shim.bypassable() {
                f.bypass = target.parent().map(Path::to_path_buf);
            }
            let target_real = target.canonicalize().unwrap_or(target);
            return self.fold_identity(name, &target_real, (dirs, cwd), depth + 1, h, f);
        }
        if let Some(interpreter) = interpreter {
            let mut resolved = if interpreter.contains('/') {
                Some(PathBuf::from(&interpreter)).filter(|p| p.exists())
            } else {
                find(&interpreter, dirs, cwd)
            };
            // No node, but Bun: Bun runs the script as node, as `bun run` does.
            if resolved.is_none() && interpreter == "node" {
                resolved = find("bun", dirs, cwd);
                if resolved.is_some() {
                    h.add(b"node is bun");
                    f.node_is.clone_from(&resolved);
                }
            }
            if resolved.is_none() {
                f.needs.get_or_insert_with(|| interpreter.clone());
            }
            if let Some(path) = resolved {
                h.add(b"interpreter");
                let path = path.canonicalize().unwrap_or(path);
                // An interpreter's shim is not bypassed: the script's own `#!` line runs it.
                let bypass = f.bypass.take();
                let folded = self.fold_identity(&interpreter, &path, (dirs, cwd), depth + 1, h, f);
                f.bypass = bypass;
                folded?;
            }
        }
        Ok(real.to_path_buf())
    }

    /// Adds the package `real` belongs to (a node package's manifest, a Python console
    /// script's distribution metadata: what changes when it is upgraded in place).
    fn fold_package(
        &self,
        real: &Path,
        interpreter: Option<&str>,
        h: &mut Fields,
        f: &mut Findings,
    ) {
        if let Some(pkg) = node_package(real) {
            let manifest = pkg.join("package.json");
            if let Ok(c) = self.digests.of(&manifest) {
                h.add(c.as_str().as_bytes());
            }
            if f.package.is_none() {
                f.package = package_version(&manifest);
            }
        } else if let Some((metadata, shown)) = interpreter
            .filter(|i| i.contains("python"))
            .and_then(|_| python_distribution(real))
        {
            // A console script of a Python environment stays the same bytes when its package
            // is upgraded: the distribution's metadata is what changes.
            if let Ok(c) = self.digests.of(&metadata) {
                h.add(b"distribution");
                h.add(c.as_str().as_bytes());
            }
            if f.package.is_none() {
                f.package = Some(shown);
            }
        }
    }

    fn shim_target(
        &self,
        shim: &shims::Shim,
        name: &str,
        cwd: &Path,
        guessed: &mut Vec<Guess>,
    ) -> guesses::Answer {
        let memo = shims::memo_key(shim, name, cwd, &self.vars);
        let question = || {
            let mut argv = vec![shim.command.clone().into_os_string()];
            argv.extend(shim.args(name).into_iter().map(OsString::from));
            guesses::Question {
                argv,
                cwd: cwd.to_path_buf(),
                env: shim.env.clone(),
                name: name.to_string(),
                manager: shim.manager,
            }
        };
        // The remembered answer lives in `.ralph/`, which the agent can write: it is used
        // only where the manager itself keeps its tools, so it can never point a gate at a
        // program of the agent's choosing (which would then run, and pass).
        let plausible = |p: &Path| p.is_file() && shim.keeps(p);
        if let Some(hit) = self.lock_store().shims.get(&memo).filter(|p| plausible(p)) {
            return Ok(hit.clone());
        }
        let Some(g) = &self.guesses else {
            return ask(&question());
        };
        let computed = || shims::guess(shim, name, cwd, &self.vars);
        let (answer, guess) = g.target(&memo, question, ask, plausible, computed);
        match (guess, &answer) {
            (Some(guess), _) => guessed.push(guess),
            (None, Ok(target)) => self.remember_shim(&memo, target),
            (None, Err(_)) => {}
        }
        answer
    }

    /// Keeps the manager's answer for the next everyday run (a run that trusts nothing
    /// remembered keeps nothing: its store is never written).
    fn remember_shim(&self, memo: &str, target: &Path) {
        if self.store_path.is_none() {
            return;
        }
        let mut store = self.lock_store();
        if store.shims.get(memo).map(PathBuf::as_path) != Some(target) {
            store.shims.insert(memo.to_string(), target.to_path_buf());
            store.changed = true;
        }
    }

    fn lock_store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tool's version, for reports: its package's version, else the first line of
    /// `TOOL --version` that has a digit, asked once per identity and only of a tool found on
    /// the search path by name and installed outside the project: a script of the project,
    /// or a path the config names, is never run just to ask (`gates --explain` runs nothing
    /// the project controls). Waits for an answer [`Toolbox::ask_version`] started.
    pub fn version(&self, tool: &Tool) -> Option<String> {
        if let Some(p) = &tool.package {
            return Some(p.clone());
        }
        let identity = tool.identity.as_ref().ok()?;
        if let Some(v) = self.lock_store().versions.get(identity) {
            return Some(v.clone()).filter(|v| !v.is_empty());
        }
        let line = self.version_query(tool)?.get().cloned().unwrap_or_default();
        let mut store = self.lock_store();
        store.versions.insert(identity.clone(), line.clone());
        store.changed = true;
        Some(line).filter(|l| !l.is_empty())
    }

    /// Starts asking the tool's version on a thread of its own when it has to be asked, so
    /// the run that reports it need not wait for it to start.
    pub fn ask_version(&self, tool: &Tool) {
        let _ = self.version_query(tool);
    }

    /// The question for the tool's version, under way or answered; `None` when it is known
    /// without asking or must not be asked.
    fn version_query(&self, tool: &Tool) -> Option<Arc<Pending<String>>> {
        let identity = tool.identity.as_ref().ok()?;
        if tool.package.is_some()
            || tool.name.contains('/')
            || tool.real.starts_with(self.root())
            || tool.found.starts_with(self.root())
            || self.lock_store().versions.contains_key(identity)
        {
            return None;
        }
        // Through a script shim's target, as the gate runs it: the shim's own start-up
        // (bash for pyenv) would cost more than the question.
        let program = tool
            .bypass
            .as_ref()
            .map(|dir| dir.join(&tool.name))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| tool.found.clone());
        let mut asked = self.versions.lock().unwrap_or_else(|e| e.into_inner());
        let query = asked
            .entry(identity.clone())
            .or_insert_with(|| Arc::new(Pending::start(move || version_line(&program))));
        Some(Arc::clone(query))
    }

    /// Persists what was learned (shims' answers, versions); best effort.
    pub fn save(&self) {
        let store = self.lock_store();
        if let (Some(path), true) = (&self.store_path, store.changed) {
            if let Ok(bytes) = serde_json::to_vec(&*store) {
                let _ = ralph_base::atomic::write(path, &bytes);
            }
        }
    }
}

/// The folders searched for a gate's tools: each of its `path` entries in `from` and every
/// folder above it up to `root` (nearest first: a package's own `node_modules/.bin`, then the
/// workspace root's), then PATH.
pub fn search_path(
    root: &Path,
    from: &Path,
    extra: &[String],
    path_var: Option<&std::ffi::OsStr>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in extra {
        let entry = Path::new(entry);
        if entry.is_absolute() {
            dirs.push(entry.to_path_buf());
            continue;
        }
        for dir in from.ancestors() {
            let candidate = root.join(dir).join(entry);
            if candidate.is_dir() && !dirs.contains(&candidate) {
                dirs.push(candidate);
            }
        }
    }
    if let Some(p) = path_var {
        dirs.extend(std::env::split_paths(p));
    }
    dirs
}

/// How to install a language runtime that a tool's `#!` line or a driver starts (a gate's own
/// `install` says how to install the gate's tool, not what runs it: tsc's hint is no help
/// when node is missing).
pub fn runtime_install(name: &str) -> Option<&'static str> {
    Some(match name {
        "node" | "nodejs" => "https://nodejs.org, or apt-get install nodejs (or Bun, https://bun.sh, which runs node scripts)",
        "python3" | "python" => "https://www.python.org, or apt-get install python3",
        "bun" => "https://bun.sh, or npm install -g bun",
        "deno" => "https://deno.com, or npm install -g deno",
        "ruby" => "apt-get install ruby",
        "perl" => "apt-get install perl",
        "bash" => "apt-get install bash",
        _ => return None,
    })
}

/// The first executable file called `name` in `dirs` (or at `cwd/name` for a path).
pub fn find(name: &str, dirs: &[PathBuf], cwd: &Path) -> Option<PathBuf> {
    let ok = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| ralph_base::platform::is_executable(&m))
    };
    if name.contains('/') {
        let p = cwd.join(name);
        return ok(&p).then_some(p);
    }
    if name.is_empty() {
        return None;
    }
    dirs.iter().map(|d| d.join(name)).find(|p| ok(p))
}

/// Inside the project a tool is named by its relative path, so the same checkout in another
/// place has the same identity.
fn relative_or_absolute(root: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(root)
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
}

/// The package folder holding `real` when it lies in a `node_modules` tree
/// (`.../node_modules/typescript` or `.../node_modules/@scope/name`).
/// The installed distribution whose console script `real` (a Python script) is
/// (`<env>/bin/mypy` of a venv or any Python prefix): its `METADATA` file and `name version`,
/// from the `.dist-info` whose `entry_points.txt` lists the script among its scripts.
fn python_distribution(real: &Path) -> Option<(PathBuf, String)> {
    let script = real.file_name()?.to_str()?;
    let prefix = real.parent().filter(|b| b.ends_with("bin"))?.parent()?;
    let lib = prefix.join("lib");
    for py in std::fs::read_dir(&lib).ok()?.flatten() {
        if !py.file_name().to_string_lossy().starts_with("python") {
            continue;
        }
        let Ok(dists) = std::fs::read_dir(py.path().join("site-packages")) else {
            continue;
        };
        for d in dists.flatten() {
            if !d.file_name().to_string_lossy().ends_with(".dist-info") {
                continue;
            }
            let Ok(entries) = std::fs::read_to_string(d.path().join("entry_points.txt")) else {
                continue;
            };
            let names_it = entry_point_scripts(&entries).any(|name| name == script);
            if !names_it {
                continue;
            }
            let metadata = d.path().join("METADATA");
            let text = std::fs::read_to_string(&metadata).ok()?;
            let field = |k: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.trim().to_string())
            };
            return Some((
                metadata.clone(),
                format!("{} {}", field("Name:")?, field("Version:")?),
            ));
        }
    }
    None
}

/// The script names an `entry_points.txt` installs (its `console_scripts` and `gui_scripts`
/// sections; plugin sections name no program).
fn entry_point_scripts(text: &str) -> impl Iterator<Item = &str> {
    let mut scripts = false;
    text.lines().filter_map(move |l| {
        let l = l.trim();
        if l.starts_with('[') {
            scripts = l == "[console_scripts]" || l == "[gui_scripts]";
            return None;
        }
        let (name, _) = l.split_once('=')?;
        scripts.then(|| name.trim())
    })
}

fn node_package(real: &Path) -> Option<PathBuf> {
    let comps: Vec<Component<'_>> = real.components().collect();
    let at = comps
        .iter()
        .rposition(|c| c.as_os_str() == "node_modules")?;
    let first = comps.get(at + 1)?.as_os_str().to_str()?;
    let take = if first.starts_with('@') {
        at + 3
    } else {
        at + 2
    };
    if take > comps.len() - 1 {
        return None;
    }
    Some(comps[..take].iter().collect())
}

fn package_version(manifest: &Path) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(manifest).ok()?).ok()?;
    Some(format!(
        "{} {}",
        v.get("name")?.as_str()?,
        v.get("version")?.as_str()?
    ))
}

/// The interpreter a `#!` line names: the program itself, or for `/usr/bin/env ... NAME` the
/// name to look up, read past env's options as env reads them (`-S`, `-u NAME`, `-C DIR`,
/// assignments) and past wrappers it runs (`nice -n 5`).
pub fn shebang_interpreter(path: &Path) -> Option<String> {
    parse_shebang(&crate::files::head(path)?)
}

pub use ralph_base::shebang::{parse_shebang, undeterminable_shebang};

/// Asks a version manager which program its shim runs here (`pyenv which NAME`).
fn ask(q: &guesses::Question) -> guesses::Answer {
    let out = capture(&q.argv, &q.cwd, &q.env).ok_or_else(|| guesses::Unanswered::Failed {
        name: q.name.clone(),
        manager: q.manager,
        command: q
            .argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
    })?;
    let text = String::from_utf8_lossy(&out);
    let target = PathBuf::from(text.lines().next().unwrap_or("").trim());
    if !target.is_absolute() || !target.is_file() {
        return Err(guesses::Unanswered::NotAProgram {
            name: q.name.clone(),
            manager: q.manager,
            said: text.trim().to_string(),
        });
    }
    Ok(target)
}

/// The first line of `program --version` with a digit (`version: 0.9.0` under ShellCheck's
/// banner), at most 100 characters; empty when there is none.
/// The first line of `PROGRAM --version` that has a digit (at most 100 characters), or
/// empty when it cannot be asked.
pub fn version_line(program: &Path) -> String {
    let out = capture(
        &[program.as_os_str().to_owned(), "--version".into()],
        Path::new("/"),
        &[],
    );
    out.map(|o| String::from_utf8_lossy(&o).into_owned())
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| l.chars().any(|c| c.is_ascii_digit()))
                .map(|l| l.chars().take(100).collect::<String>())
        })
        .unwrap_or_default()
}

/// Runs a short probe (`--version`, a shim's `which`) and returns its stdout, or `None` when
/// it fails or takes longer than [`PROBE_TIMEOUT`]. It never waits on a pipe a stray child
/// keeps open: the child's whole process group is killed.
fn capture(argv: &[OsString], cwd: &Path, env: &[(OsString, OsString)]) -> Option<Vec<u8>> {
    use std::process::Stdio;
    let (program, args) = argv.split_first()?;
    let mut command = ralph_base::child::command(program);
    command
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut group = ralph_base::child::start(&mut command).ok()?;
    let mut stdout = group.take_stdout()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(64 * 1024).read_to_end(&mut buf);
        buf
    });
    // A probe past its time is killed at once, with its group.
    let waited = group.wait(PROBE_TIMEOUT, Duration::ZERO);
    let out = reader.join().ok()?;
    let ok = !waited.timed_out && waited.status == Some(ralph_base::child::Status::Code(0));
    ok.then_some(out)
}

/// Length-prefixed fields into one blake3 digest.
pub struct Fields(blake3::Hasher);

impl Fields {
    pub fn new() -> Self {
        Self(blake3::Hasher::new())
    }

    pub fn add(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    pub fn finish(&self) -> String {
        self.0.finalize().to_hex().to_string()
    }
}

impl Default for Fields {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
