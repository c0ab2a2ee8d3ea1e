//! `ralph.toml`: find it, parse and validate it, merge in presets, and compile every glob once.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod duration;
mod error;
pub mod presets;
pub mod raw;
pub mod template;

pub use error::ConfigError;
pub use raw::{Phase, Scope};

use globset::{GlobSet, GlobSetBuilder};
pub use raw::{Driver, Severity};
use raw::{FailOn, GlobPattern, RawConfig, RawGate};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use template::{CommandTemplate, Placeholder};

pub const FILE_NAME: &str = "ralph.toml";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_OUTPUT_LIMIT: usize = 4000;

/// Where a gate was defined, for `ralph-gate gates` and for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Preset(&'static str),
    File { path: PathBuf, line: usize },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Preset(name) => write!(f, "preset {name} (gates/{name}.toml)"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Gate {
    pub name: String,
    pub origin: Origin,
    pub globs: Vec<String>,
    pub exclude: Vec<String>,
    matcher: GlobSet,
    excluder: GlobSet,
    /// Extra files whose content decides the result (part of the cache key).
    pub inputs: Vec<String>,
    input_matcher: GlobSet,
    /// `None` only for a driver that builds its own command.
    pub run: Option<CommandTemplate>,
    pub driver: Option<Driver>,
    pub scope: Scope,
    pub root_markers: Vec<String>,
    /// Files under no root marker are left out (else their root is the project root).
    pub roots_only: bool,
    pub requires: Vec<String>,
    pub path: Vec<String>,
    pub timeout: Duration,
    pub phases: Vec<Phase>,
    pub env: BTreeMap<String, String>,
    pub optional: bool,
    pub cache: bool,
    /// Output patterns that fail the gate even when it exits 0 (matched with `^`/`$` per line).
    pub fail_on: Vec<regex::Regex>,
    /// The lowest severity that fails, for a driver that reports severities.
    pub severity: Option<Severity>,
    pub require_files: bool,
    /// Interpreters whose `#!` line makes an extensionless file match.
    pub shebangs: Vec<String>,
    /// Keep a batch in one process instead of spreading it over the cores.
    pub serial: bool,
    /// How to install the tool, for the message when it is missing.
    pub install: Option<String>,
    /// Named in the config's `baseline`: at a loop's end it fails only for what it did not
    /// say on the loop's start tree (ralph_surface::baseline).
    pub baseline: bool,
}

impl Gate {
    /// `rel` is relative to the project root. Globs only: see [`Gate::matches_file`].
    pub fn matches(&self, rel: &Path) -> bool {
        self.matcher.is_match(rel) && !self.excluder.is_match(rel)
    }

    /// True when the gate's `exclude` names `rel`.
    pub fn excludes(&self, rel: &Path) -> bool {
        self.excluder.is_match(rel)
    }

    /// Globs, or for an extensionless file a `#!` line naming one of `shebangs`; `head`
    /// gives a file's first bytes.
    pub fn matches_file(&self, rel: &Path, head: &dyn Fn(&Path) -> Option<Vec<u8>>) -> bool {
        self.classify(rel, head) == FileMatch::Matched
    }

    /// Whether the gate checks `rel`: by its globs, or for an extensionless file by its `#!`
    /// line, which is read once; a `#!` line that names no interpreter that can be told
    /// (see [`ralph_base::shebang::undeterminable_shebang`]) is `CannotTell`, for a gate that reads
    /// `#!` lines.
    pub fn classify(&self, rel: &Path, head: &dyn Fn(&Path) -> Option<Vec<u8>>) -> FileMatch {
        if self.matches(rel) {
            return FileMatch::Matched;
        }
        if self.shebangs.is_empty() || self.excluder.is_match(rel) || rel.extension().is_some() {
            return FileMatch::No;
        }
        let Some(h) = head(rel) else {
            return FileMatch::No;
        };
        if ralph_base::shebang::undeterminable_shebang(&h) {
            return FileMatch::CannotTell;
        }
        match ralph_base::shebang::parse_shebang(&h) {
            Some(i) if self.speaks(&i) => FileMatch::Matched,
            _ => FileMatch::No,
        }
    }

    /// True when an interpreter named in a `#!` line (`/bin/bash`, `python3.11`) is one of
    /// this gate's `shebangs`.
    pub fn speaks(&self, interpreter: &str) -> bool {
        shebang_matches(&self.shebangs, interpreter)
    }

    /// True when planning this gate needs every project file, not only the selected ones: a
    /// project gate's key, a driver's layout, declared inputs.
    pub fn needs_listing(&self) -> bool {
        self.scope == Scope::Project || self.driver.is_some() || !self.inputs.is_empty()
    }

    /// A file whose content decides the result besides the matched ones.
    pub fn is_input(&self, rel: &Path) -> bool {
        !self.inputs.is_empty() && self.input_matcher.is_match(rel)
    }

    /// Everything about the gate that can turn a failure into a pass, by name, as text: what
    /// a loop pins and compares. Every field is named here, so a new one does not compile
    /// until it is described or said to decide nothing (a weakening in an option no
    /// comparison reads is exactly what a loop must not miss).
    pub fn pinned_fields(&self) -> BTreeMap<String, String> {
        let Gate {
            // The gate's identity, where it was defined, and compiled forms of the globs.
            name: _,
            origin: _,
            matcher: _,
            excluder: _,
            input_matcher: _,
            // Which phases it runs in: a stop gate moved out of the stop is a removed one.
            phases: _,
            // Not caching, one process for a batch, the install hint: the verdict is the same.
            cache: _,
            serial: _,
            install: _,
            globs,
            exclude,
            inputs,
            run: _,
            driver,
            scope,
            root_markers,
            roots_only,
            requires,
            path,
            timeout,
            env,
            optional,
            fail_on,
            severity,
            require_files,
            shebangs,
            baseline,
        } = self;
        let list = |v: &[String]| v.join(" | ");
        let mut fields = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            fields.insert(k.to_string(), v);
        };
        put("command", self.command_text());
        put("driver", format!("{driver:?}"));
        put("globs", list(globs));
        put("exclude", list(exclude));
        put("shebangs", list(shebangs));
        put("inputs", list(inputs));
        put("scope", format!("{scope:?}"));
        put("root_markers", list(root_markers));
        // Only when set, so a loop pinned before the option existed compares equal.
        if *roots_only {
            put("roots_only", "true".into());
        }
        put("requires", list(requires));
        put("path", list(path));
        put("timeout", format!("{timeout:?}"));
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        put("env", env.join(" "));
        put("optional", optional.to_string());
        let fail_on: Vec<&str> = fail_on.iter().map(regex::Regex::as_str).collect();
        put("fail_on", fail_on.join(" | "));
        put("severity", format!("{severity:?}"));
        put("require_files", require_files.to_string());
        // Only when set, as roots_only: a baseline lets old failures end a loop.
        if *baseline {
            put("baseline", "true".into());
        }
        fields
    }

    /// The command as configured, for listings: the `run` text, or what the driver runs.
    pub fn command_text(&self) -> String {
        match (&self.run, self.driver) {
            (Some(run), _) => run.source().to_string(),
            (None, Some(Driver::Typescript)) => {
                "tsc (driver: -b for project references, -p otherwise, loose files on their own)"
                    .to_string()
            }
            (None, Some(Driver::Shellcheck)) => {
                "shellcheck (driver: per file, dialect and severity chosen)".to_string()
            }
            (None, _) => String::new(),
        }
    }

    pub fn runs_in(&self, phase: Phase) -> bool {
        self.phases.contains(&phase)
    }
}

/// How a gate stands to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMatch {
    Matched,
    No,
    /// An extensionless file whose `#!` line names no interpreter that can be told: the gate
    /// may be meant for it, and must say it could not check it.
    CannotTell,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub timeout: Duration,
    /// Gates run at once; never 0 after resolution.
    pub jobs: usize,
    pub output_limit: usize,
    pub hooks: HookSettings,
    pub cache_limit_bytes: u64,
    /// Stored results are shared by every worktree of the repository.
    pub share_cache: bool,
    /// `[cache] observe`: runs are traced and keyed on what they read (see `observe`).
    pub observe_inputs: bool,
    /// `[cache.remote] url` (the environment's `RALPH_GATE_REMOTE_CACHE` wins).
    pub remote_cache: Option<String>,
    pub remote_write: bool,
    /// `[integrity] on_weakening = "warn"`: `check --base` reports a weakening without failing.
    pub integrity_warn: bool,
}

/// The result cache's size limit unless `cache_limit_mb` says otherwise.
pub const DEFAULT_CACHE_LIMIT_BYTES: u64 = 256 * 1024 * 1024;
pub const DEFAULT_EDIT_BUDGET: Duration = Duration::from_secs(90);
pub const DEFAULT_STOP_BUDGET: Duration = Duration::from_secs(600);
pub const DEFAULT_STUCK_AFTER: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    pub edit_budget: Duration,
    pub stop_budget: Duration,
    pub gate_every_stop: bool,
    pub stuck_after: u32,
    /// `[hooks] goals`: a session's own goal is held to the stop gates like a loop.
    pub goals: bool,
}

/// Why a preset is in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetUse {
    pub name: &'static str,
    /// `Some(file)` when chosen by detection: the file that showed the stack is there.
    pub detected_by: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// Paths in gates and globs are relative to this folder.
    pub root: PathBuf,
    /// The `ralph.toml` read, or `None` when running on embedded presets alone.
    pub file: Option<PathBuf>,
    pub presets: Vec<PresetUse>,
    pub settings: Settings,
    pub gates: Vec<Gate>,
    /// Changes whenever the config text or the presets in use change; part of every cache key.
    pub digest: String,
}

/// A parsed and validated config file, before presets are merged in.
#[derive(Debug)]
pub struct ConfigFile {
    pub path: PathBuf,
    source: String,
    raw: RawConfig,
}

impl ConfigFile {
    /// True when the presets to use depend on what the project contains.
    pub fn needs_detection(&self) -> bool {
        self.raw
            .presets
            .as_ref()
            .is_some_and(|p| p.iter().any(|s| s.get_ref() == presets::AUTO))
    }
}

/// Searches `start` and its ancestors for `ralph.toml`, as Cargo does for `Cargo.toml`.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|candidate| candidate.is_file())
}

pub fn read(path: &Path) -> Result<ConfigFile, ConfigError> {
    let source = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, source)
}

/// Pure: parse and validate config text as if read from `path`.
pub fn parse(path: &Path, source: String) -> Result<ConfigFile, ConfigError> {
    let mut raw: RawConfig =
        toml::from_str(&source).map_err(|e| ConfigError::from_toml(path, &source, &e))?;
    fill_from_presets(&source, &mut raw.gate);
    if let Some(list) = &raw.presets {
        for name in list {
            let n = name.get_ref();
            if n != presets::AUTO && presets::by_name(n).is_none() {
                return Err(ConfigError::at(
                    path,
                    &source,
                    name.span().start,
                    format!(
                        "unknown preset `{n}`; known presets: {}, or \"{}\" to pick by project contents",
                        presets::names().join(", "),
                        presets::AUTO
                    ),
                ));
            }
        }
    }
    if let Some(limit) = &raw.defaults.output_limit {
        if *limit.get_ref() < 200 {
            return Err(ConfigError::at(
                path,
                &source,
                limit.span().start,
                "output_limit must be at least 200 characters, or failures would be unreadable",
            ));
        }
    }
    let file = ConfigFile {
        path: path.to_path_buf(),
        source,
        raw,
    };
    // Compile the file's own gates now so that every error surfaces at load time.
    compile_gates(&file.raw.gate, &Source::File(&file), DEFAULT_TIMEOUT)?;
    Ok(file)
}

/// Merges presets and the file's gates into the config the runner uses. `project_files` is
/// asked for only when presets must be detected.
pub fn resolve(
    root: PathBuf,
    file: Option<ConfigFile>,
    project_files: &mut dyn FnMut() -> Vec<PathBuf>,
) -> Result<Config, ConfigError> {
    let settings = settings(file.as_ref());
    let chosen = choose_presets(&root, file.as_ref(), project_files);
    let mut gates = merge_gates(&chosen, file.as_ref(), settings.timeout)?;
    if let Some(f) = &file {
        mark_baseline(f, &mut gates)?;
    }
    let mut digest = blake3::Hasher::new();
    digest.update(file.as_ref().map_or("", |f| f.source.as_str()).as_bytes());
    for p in &chosen {
        digest.update(p.name.as_bytes());
        digest.update(presets::by_name(p.name).map_or("", |p| p.source).as_bytes());
    }
    Ok(Config {
        root,
        digest: digest.finalize().to_hex().to_string(),
        file: file.map(|f| f.path),
        presets: chosen,
        settings,
        gates,
    })
}

/// A file's gate without `globs` that is named like a preset's gate changes only the
/// fields it gives: the rest are filled from the preset's gate (`exclude = ["examples/**"]`
/// on the `tsc` gate). Which fields it gives is read from the file's text: a field the
/// typed form defaults (an empty list) may have been given as such.
fn fill_from_presets(source: &str, gates: &mut [raw::RawGate]) {
    let table: Option<toml::Table> = toml::from_str(source).ok();
    let written = table
        .as_ref()
        .and_then(|t| t.get("gate")?.as_array().cloned());
    for (i, gate) in gates.iter_mut().enumerate() {
        if gate.globs.is_some() {
            continue;
        }
        let Some((_, base)) = preset_raw_gate(gate.name.get_ref().trim()) else {
            continue;
        };
        let given = written
            .as_ref()
            .and_then(|w| w.get(i)?.as_table().cloned())
            .unwrap_or_default();
        *gate = overlay(base, gate, &given);
    }
}

/// The raw gate of that name in the embedded presets, with its preset: the first preset
/// listing it.
fn preset_raw_gate(name: &str) -> Option<(&'static presets::Preset, raw::RawGate)> {
    presets::PRESETS.iter().find_map(|p| {
        let raw = presets::parse(p).ok()?;
        let gate = raw.gate.into_iter().find(|g| g.name.get_ref() == name)?;
        Some((p, gate))
    })
}

/// `base` with each field `given` names taken from `mine`.
fn overlay(base: raw::RawGate, mine: &raw::RawGate, given: &toml::Table) -> raw::RawGate {
    let mut out = base;
    out.name = mine.name.clone();
    for key in given.keys() {
        match key.as_str() {
            "exclude" => out.exclude = mine.exclude.clone(),
            "run" => out.run = mine.run.clone(),
            "driver" => out.driver = mine.driver.clone(),
            "scope" => out.scope = mine.scope.clone(),
            "root_markers" => out.root_markers = mine.root_markers.clone(),
            "roots_only" => out.roots_only = mine.roots_only,
            "requires" => out.requires = mine.requires.clone(),
            "path" => out.path = mine.path.clone(),
            "timeout" => out.timeout = mine.timeout,
            "phases" => out.phases = mine.phases.clone(),
            "env" => out.env = mine.env.clone(),
            "optional" => out.optional = mine.optional,
            "cache" => out.cache = mine.cache,
            "fail_on" => out.fail_on = mine.fail_on.clone(),
            "require_files" => out.require_files = mine.require_files,
            "inputs" => out.inputs = mine.inputs.clone(),
            "shebangs" => out.shebangs = mine.shebangs.clone(),
            "serial" => out.serial = mine.serial,
            "install" => out.install = mine.install.clone(),
            // `name` finds the preset's gate and `globs` is absent (else no overlay); the
            // typed form refused any other key.
            _ => {}
        }
    }
    out
}

/// Marks the gates the file's `baseline` names. A name that is no gate of the file and of
/// no preset is a mistake (a typo would leave a gate without the baseline meant for it);
/// one of a preset this project does not use names nothing here.
fn mark_baseline(file: &ConfigFile, gates: &mut [Gate]) -> Result<(), ConfigError> {
    for name in &file.raw.baseline {
        let wanted = name.get_ref();
        let known = file.raw.gate.iter().any(|g| g.name.get_ref() == wanted)
            || preset_raw_gate(wanted).is_some();
        if !known {
            return Err(ConfigError::at(
                &file.path,
                &file.source,
                name.span().start,
                format!("baseline names `{wanted}`, which is no gate of this file or of a preset"),
            ));
        }
        for g in gates.iter_mut().filter(|g| &g.name == wanted) {
            g.baseline = true;
        }
    }
    Ok(())
}

/// The settings, each from the file or its default.
fn settings(file: Option<&ConfigFile>) -> Settings {
    let raw_defaults = file.map(|f| &f.raw.defaults);
    let remote = file.and_then(|f| f.raw.cache.remote.as_ref());
    let h = file.map(|f| &f.raw.hooks);
    Settings {
        timeout: raw_defaults
            .and_then(|d| d.timeout)
            .map_or(DEFAULT_TIMEOUT, |d| d.0),
        jobs: match raw_defaults.and_then(|d| d.jobs) {
            Some(n) if n > 0 => n,
            _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        output_limit: raw_defaults
            .and_then(|d| d.output_limit.as_ref())
            .map_or(DEFAULT_OUTPUT_LIMIT, |l| *l.get_ref()),
        share_cache: file.and_then(|f| f.raw.cache.share).unwrap_or(true),
        observe_inputs: file.and_then(|f| f.raw.cache.observe).unwrap_or(true),
        integrity_warn: file.and_then(|f| f.raw.integrity.on_weakening)
            == Some(raw::OnWeakening::Warn),
        remote_cache: remote.and_then(|r| r.url.clone()),
        remote_write: remote.and_then(|r| r.write).unwrap_or(true),
        cache_limit_bytes: raw_defaults
            .and_then(|d| d.cache_limit_mb)
            .map_or(DEFAULT_CACHE_LIMIT_BYTES, |mb| {
                mb.saturating_mul(1024 * 1024)
            }),
        hooks: HookSettings {
            edit_budget: h
                .and_then(|h| h.edit_budget)
                .map_or(DEFAULT_EDIT_BUDGET, |d| d.0),
            stop_budget: h
                .and_then(|h| h.stop_budget)
                .map_or(DEFAULT_STOP_BUDGET, |d| d.0),
            gate_every_stop: h.and_then(|h| h.gate_every_stop).unwrap_or(false),
            stuck_after: h.and_then(|h| h.stuck_after).unwrap_or(DEFAULT_STUCK_AFTER),
            goals: h.and_then(|h| h.goals).unwrap_or(true),
        },
    }
}

/// The presets in use: the file's list (`auto` detects them from the project's files), or
/// `auto` without a file.
fn choose_presets(
    root: &Path,
    file: Option<&ConfigFile>,
    project_files: &mut dyn FnMut() -> Vec<PathBuf>,
) -> Vec<PresetUse> {
    let mut chosen: Vec<PresetUse> = Vec::new();
    let wanted: Vec<String> = match file.map(|f| &f.raw.presets) {
        None => vec![presets::AUTO.to_string()],
        Some(None) => Vec::new(),
        Some(Some(list)) => list.iter().map(|s| s.get_ref().clone()).collect(),
    };
    for name in &wanted {
        if name == presets::AUTO {
            let files = project_files();
            for d in presets::detect_in(root, &files) {
                if !chosen.iter().any(|c| c.name == d.name) {
                    chosen.push(PresetUse {
                        name: d.name,
                        detected_by: Some(d.because),
                    });
                }
            }
        } else if let Some(p) = presets::by_name(name) {
            if !chosen.iter().any(|c| c.name == p.name) {
                chosen.push(PresetUse {
                    name: p.name,
                    detected_by: None,
                });
            }
        }
    }
    chosen
}

/// The presets' gates, then the file's: a gate in ralph.toml replaces a preset gate of the
/// same name, in the preset's place.
fn merge_gates(
    chosen: &[PresetUse],
    file: Option<&ConfigFile>,
    timeout: Duration,
) -> Result<Vec<Gate>, ConfigError> {
    let mut gates: Vec<Gate> = Vec::new();
    for used in chosen {
        let preset = presets::by_name(used.name).expect("chosen from the embedded list");
        let raw = presets::parse(preset).map_err(|e| {
            ConfigError::Other(format!("embedded preset {} is invalid: {e}", preset.name))
        })?;
        for gate in compile_gates(&raw.gate, &Source::Preset(preset), timeout)? {
            if !gates.iter().any(|g| g.name == gate.name) {
                gates.push(gate);
            }
        }
    }
    if let Some(f) = file {
        for gate in compile_gates(&f.raw.gate, &Source::File(f), timeout)? {
            match gates.iter_mut().find(|g| g.name == gate.name) {
                Some(slot) => *slot = gate,
                None => gates.push(gate),
            }
        }
    }
    Ok(gates)
}

enum Source<'a> {
    File(&'a ConfigFile),
    Preset(&'static presets::Preset),
}

impl Source<'_> {
    fn path(&self) -> PathBuf {
        match self {
            Source::File(f) => f.path.clone(),
            Source::Preset(p) => PathBuf::from(format!("<embedded>/gates/{}.toml", p.name)),
        }
    }

    fn text(&self) -> &str {
        match self {
            Source::File(f) => &f.source,
            Source::Preset(p) => p.source,
        }
    }

    fn error(&self, offset: usize, message: impl Into<String>) -> ConfigError {
        ConfigError::at(&self.path(), self.text(), offset, message)
    }

    fn origin(&self, offset: usize) -> Origin {
        match self {
            Source::Preset(p) => Origin::Preset(p.name),
            Source::File(f) => Origin::File {
                path: f.path.clone(),
                line: f.source[..offset.min(f.source.len())].matches('\n').count() + 1,
            },
        }
    }
}

/// The gate `name` of the embedded presets as a project picking its preset would have it
/// (with `timeout` where the preset sets none), or `None` when no preset has it.
pub fn preset_gate(name: &str, timeout: Duration) -> Option<Gate> {
    let (preset, raw) = preset_raw_gate(name)?;
    compile_gate(&raw, &Source::Preset(preset), timeout).ok()
}

fn compile_gates(
    raws: &[RawGate],
    source: &Source<'_>,
    default_timeout: Duration,
) -> Result<Vec<Gate>, ConfigError> {
    let mut out: Vec<Gate> = Vec::with_capacity(raws.len());
    for raw in raws {
        let gate = compile_gate(raw, source, default_timeout)?;
        if out.iter().any(|g| g.name == gate.name) {
            return Err(source.error(
                raw.name.span().start,
                format!(
                    "gate name `{}` is used twice; names must be unique",
                    gate.name
                ),
            ));
        }
        out.push(gate);
    }
    Ok(out)
}

fn compile_gate(
    raw: &RawGate,
    source: &Source<'_>,
    default_timeout: Duration,
) -> Result<Gate, ConfigError> {
    let name = raw.name.get_ref().trim().to_string();
    let name_at = raw.name.span().start;
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(source.error(name_at, "gate name must be non-empty printable text"));
    }
    let Some(globs) = raw.globs.as_ref() else {
        return Err(source.error(
            name_at,
            format!("gate `{name}` has no `globs`: every gate needs them (one named like a preset's gate may leave them out to change only the fields it gives)"),
        ));
    };
    if globs.get_ref().is_empty() {
        return Err(source.error(
            globs.span().start,
            format!("gate `{name}` has no globs; use [\"**/*\"] to match every file"),
        ));
    }
    let driver = raw.driver.as_ref().map(|d| *d.get_ref());
    let scope = check_scope(raw, &name, driver, source)?;
    let run = command(raw, &name, driver, scope, source)?;
    check_fields(raw, &name, driver, scope, source)?;
    let phases = match &raw.phases {
        Some(p) if p.is_empty() => {
            return Err(source.error(name_at, format!("gate `{name}` has an empty phases list")))
        }
        Some(p) => p.clone(),
        None => Phase::ALL.to_vec(),
    };
    let (fail_on, severity) = fail_on(raw, &name, driver, source)?;
    Ok(Gate {
        origin: source.origin(name_at),
        globs: globs.get_ref().iter().map(|g| g.written.clone()).collect(),
        exclude: raw.exclude.iter().map(|g| g.written.clone()).collect(),
        matcher: glob_set(globs.get_ref()),
        excluder: glob_set(&raw.exclude),
        inputs: raw.inputs.iter().map(|g| g.written.clone()).collect(),
        input_matcher: glob_set(&raw.inputs),
        run,
        driver,
        scope,
        root_markers: raw.root_markers.clone(),
        roots_only: raw.roots_only,
        requires: raw.requires.clone(),
        path: raw.path.clone(),
        timeout: raw.timeout.map_or(default_timeout, |t| t.0),
        phases,
        env: raw.env.clone(),
        optional: raw.optional,
        cache: raw.cache.unwrap_or(true),
        fail_on,
        severity,
        require_files: raw.require_files,
        shebangs: raw.shebangs.clone(),
        serial: raw.serial,
        install: raw.install.clone(),
        baseline: false,
        name,
    })
}

/// The gate's `run` command, checked against its driver and scope: `None` for a driver that
/// builds its own.
fn command(
    raw: &RawGate,
    name: &str,
    driver: Option<Driver>,
    scope: Scope,
    source: &Source<'_>,
) -> Result<Option<CommandTemplate>, ConfigError> {
    let name_at = raw.name.span().start;
    let run = match (&raw.run, driver) {
        (Some(run), Some(d @ (Driver::Typescript | Driver::Shellcheck))) => {
            return Err(source.error(
                run.span().start,
                format!(
                    "gate `{name}` has driver = \"{}\", which builds its own command; remove `run` (or the driver, to run your own command)",
                    d.as_str()
                ),
            ));
        }
        (Some(run), _) => Some(run.get_ref().clone()),
        (None, Some(Driver::Typescript | Driver::Shellcheck)) => None,
        (None, _) => {
            return Err(source.error(name_at, format!("gate `{name}` has no `run` command")))
        }
    };
    if let (Some(run), Some(span)) = (&run, raw.run.as_ref().map(|r| r.span().start)) {
        match scope {
            Scope::File if !run.uses(Placeholder::File) && !run.uses(Placeholder::Files) => {
                return Err(source.error(
                    span,
                    format!(
                        "gate `{name}` has scope = \"file\" but its command never uses {{file}}"
                    ),
                ));
            }
            Scope::Batch if run.uses(Placeholder::File) => {
                return Err(source.error(
                    span,
                    format!(
                        "gate `{name}` uses {{file}} with scope = \"batch\"; use {{files}}, or scope = \"file\""
                    ),
                ));
            }
            Scope::Project if run.uses(Placeholder::File) => {
                return Err(source.error(
                    span,
                    format!("gate `{name}` uses {{file}} with scope = \"project\"; use {{root}} or {{files}}"),
                ));
            }
            _ => {}
        }
    }
    Ok(run)
}

/// The fields whose values must make sense together: root markers, env names, shebangs.
fn check_fields(
    raw: &RawGate,
    name: &str,
    driver: Option<Driver>,
    scope: Scope,
    source: &Source<'_>,
) -> Result<(), ConfigError> {
    let name_at = raw.name.span().start;
    // A file beside the project is in no listing of it: only a path named whole can be read
    // into the key (`../shared/limits.cfg`), never a pattern.
    if let Some(p) = raw
        .inputs
        .iter()
        .map(|g| g.written.trim())
        .find(|w| w.starts_with("../") && w.contains(['*', '?', '[', '{']))
    {
        return Err(source.error(
            name_at,
            format!("gate `{name}`: input `{p}` is a pattern outside the project; name each file beside it whole (`../shared/limits.cfg`)"),
        ));
    }
    if raw.roots_only && raw.root_markers.is_empty() {
        return Err(source.error(
            name_at,
            format!("gate `{name}` sets roots_only without root_markers to find roots by"),
        ));
    }
    if !raw.root_markers.is_empty() && (scope != Scope::Project || driver.is_some()) {
        return Err(source.error(
            name_at,
            format!(
                "gate `{name}` sets root_markers, which only apply with scope = \"project\" and no driver"
            ),
        ));
    }
    if let Some(bad) = raw
        .env
        .keys()
        .find(|k| k.is_empty() || k.contains(['=', '\0']))
    {
        return Err(source.error(
            name_at,
            format!("gate `{name}` has an invalid env name `{bad}`"),
        ));
    }
    if let Some(bad) = raw
        .shebangs
        .iter()
        .find(|s| s.is_empty() || s.contains(['/', ' ', '\0']))
    {
        return Err(source.error(
            name_at,
            format!("gate `{name}` has an invalid shebangs entry `{bad}`: give an interpreter's name, such as \"bash\""),
        ));
    }
    Ok(())
}

/// `fail_on`: output patterns, or a severity for a driver that reports severities.
fn fail_on(
    raw: &RawGate,
    name: &str,
    driver: Option<Driver>,
    source: &Source<'_>,
) -> Result<(Vec<regex::Regex>, Option<raw::Severity>), ConfigError> {
    Ok(match raw.fail_on.as_ref().map(|f| (f.get_ref(), f.span().start)) {
        None => (Vec::new(), None),
        Some((FailOn::Patterns(p), _)) => (p.iter().map(|p| p.0.clone()).collect(), None),
        Some((FailOn::Severity(s), _)) if driver == Some(Driver::Shellcheck) => (Vec::new(), Some(*s)),
        Some((FailOn::Severity(s), at)) => {
            return Err(source.error(
                at,
                format!(
                    "gate `{name}`: fail_on = \"{}\" is a severity, which only a driver that reports severities (shellcheck) understands; give a list of output patterns instead",
                    s.as_str()
                ),
            ))
        }
    })
}

/// A driver decides how its tool's runs are grouped, so it fixes the scope.
fn check_scope(
    raw: &RawGate,
    name: &str,
    driver: Option<Driver>,
    source: &Source<'_>,
) -> Result<Scope, ConfigError> {
    let written = raw.scope.as_ref().map(|s| (*s.get_ref(), s.span().start));
    let Some(driver) = driver else {
        return Ok(written.map_or(Scope::default(), |(s, _)| s));
    };
    let implied = match driver {
        Driver::Cargo | Driver::Typescript => Scope::Project,
        Driver::Shellcheck => Scope::File,
    };
    match written {
        Some((s, at)) if s != implied => Err(source.error(
            at,
            format!(
                "gate `{name}` has driver = \"{}\", which runs per {}; remove `scope`",
                driver.as_str(),
                match implied {
                    Scope::Project => "project",
                    _ => "file",
                }
            ),
        )),
        _ => Ok(implied),
    }
}

/// `bash` matches `/bin/bash`, `bash5` and `python3` matches `python3.11`: a version suffix
/// (digits and dots) after the name is allowed.
pub fn shebang_matches(names: &[String], interpreter: &str) -> bool {
    let base = interpreter.rsplit('/').next().unwrap_or(interpreter);
    names.iter().any(|n| {
        base.strip_prefix(n.as_str())
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

fn glob_set(globs: &[GlobPattern]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(g.glob.clone());
    }
    b.build()
        .expect("each glob compiled on its own when parsed")
}

#[cfg(test)]
mod tests;
