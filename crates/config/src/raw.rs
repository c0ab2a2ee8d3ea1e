//! The config file as written: serde shapes, with values validated while they are parsed so
//! that toml can point at the exact line of a bad one.

use super::duration::HumanDuration;
use super::template::CommandTemplate;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// `None`: the key is absent, so only the gates written here are used.
    pub presets: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub defaults: RawDefaults,
    #[serde(default)]
    pub hooks: RawHooks,
    #[serde(default)]
    pub cache: RawCache,
    #[serde(default)]
    pub integrity: RawIntegrity,
    /// Gates (presets' or the file's) that hold a loop only for what they did not say at its
    /// start: old findings in files the loop did not change do not hold it.
    #[serde(default)]
    pub baseline: Vec<Spanned<String>>,
    #[serde(default)]
    pub gate: Vec<RawGate>,
}

/// What a weakening of the verification surface does to `check --base`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawIntegrity {
    /// "fail" (the default): a weakening since the base fails the run. "warn": it is
    /// reported and annotated, and the run's verdict is the gates' alone.
    pub on_weakening: Option<OnWeakening>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnWeakening {
    Fail,
    Warn,
}

/// Where stored results live.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawCache {
    /// Share stored results between every git worktree of the repository (under the common
    /// git folder). false: each checkout keeps its own in `.ralph/cache`.
    pub share: Option<bool>,
    /// Record the files each run's processes read and key its stored result on them too
    /// (Linux); false: the drivers' model of a tool's inputs alone.
    pub observe: Option<bool>,
    /// A store shared by many machines.
    pub remote: Option<RawRemote>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawRemote {
    /// `redis://…`, `s3://bucket/prefix`, `http(s)://…` (WebDAV), `gha://…`;
    /// `RALPH_GATE_REMOTE_CACHE` overrides it.
    pub url: Option<String>,
    /// false: read only (agents' machines), while CI writes.
    pub write: Option<bool>,
}

/// How the Claude Code hooks behave.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    /// Time `hook post-tool-use` may take in all; keep it below the hook's own timeout.
    pub edit_budget: Option<HumanDuration>,
    /// Time `hook stop` may take in all; keep it below the hook's own timeout.
    pub stop_budget: Option<HumanDuration>,
    /// Run the stop gates on every stop, not only while a loop is active.
    pub gate_every_stop: Option<bool>,
    /// End a loop after this many stops in a row with no change to the working tree and
    /// the same gate failures. 0 = never.
    pub stuck_after: Option<u32>,
    /// Hold the agents' own goals (Claude Code's and Codex's `/goal`) to the stop gates.
    pub goals: Option<bool>,
}

/// A file in `gates/`: a stack's gates plus what says a project uses that stack.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPreset {
    pub description: String,
    /// Files that show the stack: manifests and lock files first (they are evidence wherever
    /// they are), then source files (evidence only outside fixture and vendored folders).
    #[serde(default)]
    pub detect: Vec<GlobPattern>,
    /// Interpreters whose `#!` line on an extensionless file shows the stack too.
    #[serde(default)]
    pub detect_shebangs: Vec<String>,
    /// Root config files whose text shows the stack (`pyproject.toml` naming pytest).
    #[serde(default)]
    pub detect_text: Vec<RawDetectText>,
    /// Scripts of the root `package.json` that show the stack (`test`; npm's placeholder,
    /// which only fails, is none).
    #[serde(default)]
    pub detect_scripts: Vec<String>,
    pub gate: Vec<RawGate>,
}

/// A root file, by name, and a text in it that shows a preset's stack.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDetectText {
    pub file: String,
    pub contains: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    pub timeout: Option<HumanDuration>,
    pub jobs: Option<usize>,
    pub output_limit: Option<Spanned<usize>>,
    /// Size limit of `.ralph/cache`, in MiB.
    pub cache_limit_mb: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGate {
    pub name: Spanned<String>,
    /// Absent only in a file's gate that changes some fields of a preset's gate of the same
    /// name (filled from it when the file is read).
    pub globs: Option<Spanned<Vec<GlobPattern>>>,
    #[serde(default)]
    pub exclude: Vec<GlobPattern>,
    /// Absent only for a gate whose driver builds its own command.
    pub run: Option<Spanned<CommandTemplate>>,
    /// Built-in knowledge of a tool: how its projects are laid out, the command for each, and
    /// what its result depends on.
    pub driver: Option<Spanned<Driver>>,
    pub scope: Option<Spanned<Scope>>,
    #[serde(default)]
    pub root_markers: Vec<String>,
    /// A file under no folder holding a root marker is not this gate's (a Deno check runs
    /// where a `deno.json` is, never at a Node project's root).
    #[serde(default)]
    pub roots_only: bool,
    #[serde(default)]
    pub requires: Vec<String>,
    /// Folders, relative to the gate's working directory, put in front of PATH
    /// (`node_modules/.bin`), so a project's own tools win over global ones.
    #[serde(default)]
    pub path: Vec<String>,
    pub timeout: Option<HumanDuration>,
    pub phases: Option<Vec<Phase>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub optional: bool,
    /// false: never reuse a stored result (for gates whose result depends on more than their
    /// inputs: the network, the clock, files outside the project).
    pub cache: Option<bool>,
    /// Regular expressions that fail the gate when its output matches, even on exit 0
    /// (a test runner that ran no test and says so).
    /// Or, for a driver that reports severities (shellcheck), the lowest severity that fails.
    #[serde(default)]
    pub fail_on: Option<Spanned<FailOn>>,
    /// true: a gate that matched no file fails instead of passing with nothing checked.
    #[serde(default)]
    pub require_files: bool,
    /// Files besides the matched ones whose content decides the result (a schema, fixtures,
    /// a linter's config): part of the cache key.
    #[serde(default)]
    pub inputs: Vec<GlobPattern>,
    /// Extensionless files whose `#!` line names one of these interpreters match too.
    #[serde(default)]
    pub shebangs: Vec<String>,
    /// true: run all matched files in one process (split only at the OS argument limit);
    /// by default a batch is spread over the cores.
    #[serde(default)]
    pub serial: bool,
    /// How to install the gate's tool, shown when it is missing.
    pub install: Option<String>,
}

/// Tools ralph-gate knows how to run well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    /// One run per Cargo workspace (found as Cargo does), with every member's files and
    /// path dependencies as inputs: `run` is the cargo command.
    Cargo,
    /// tsc per tsconfig project: `tsc -b` for project references, `tsc -p` otherwise,
    /// incremental, loose files checked on their own; tsc from the nearest node_modules.
    Typescript,
    /// shellcheck per file, with the dialect of the scripts that source a library, and the
    /// severity from `fail_on`.
    Shellcheck,
}

impl Driver {
    pub fn as_str(self) -> &'static str {
        match self {
            Driver::Cargo => "cargo",
            Driver::Typescript => "typescript",
            Driver::Shellcheck => "shellcheck",
        }
    }
}

/// `fail_on`: output patterns, or a severity name.
#[derive(Debug, Clone)]
pub enum FailOn {
    Patterns(Vec<OutputPattern>),
    Severity(Severity),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
    Style,
}

impl Severity {
    pub const NAMES: [&'static str; 4] = ["error", "warning", "info", "style"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

impl<'de> Deserialize<'de> for FailOn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = FailOn;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a list of output patterns, or a severity (error, warning, info, style)",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<FailOn, E> {
                let at = Severity::NAMES.iter().position(|n| *n == s).ok_or_else(|| {
                    E::custom(format!(
                        "unknown severity `{s}`: use error, warning, info or style, or a list of output patterns"
                    ))
                })?;
                Ok(FailOn::Severity(
                    [
                        Severity::Error,
                        Severity::Warning,
                        Severity::Info,
                        Severity::Style,
                    ][at],
                ))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<FailOn, A::Error> {
                let mut out = Vec::new();
                while let Some(p) = seq.next_element::<OutputPattern>()? {
                    out.push(p);
                }
                Ok(FailOn::Patterns(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A regular expression checked when parsed, so a bad one is reported at its line.
#[derive(Debug, Clone)]
pub struct OutputPattern(pub regex::Regex);

impl<'de> Deserialize<'de> for OutputPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        regex::RegexBuilder::new(&s)
            .multi_line(true)
            .size_limit(1 << 20)
            .build()
            .map(OutputPattern)
            .map_err(|e| de::Error::custom(format!("invalid fail_on pattern `{s}`: {e}")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Once per matched file: `{file}`.
    File,
    /// Once for all matched files (split under the OS argument limit): `{files}`.
    #[default]
    Batch,
    /// Once per project root (nearest ancestor holding a `root_markers` file): `{root}`.
    Project,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// After an agent edits a file (PostToolUse hook).
    Edit,
    /// When the agent tries to end the loop (Stop hook).
    Stop,
    /// `ralph-gate check`: the CLI, git pre-commit hook and CI.
    Check,
}

impl Phase {
    pub const ALL: [Phase; 3] = [Phase::Edit, Phase::Stop, Phase::Check];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Edit => "edit",
            Phase::Stop => "stop",
            Phase::Check => "check",
        }
    }
}

/// A glob as written, checked when parsed. A glob with no `/` matches at any depth, as in
/// `.gitignore` (`*.py` is `**/*.py`); one with a `/` is anchored at the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobPattern {
    pub written: String,
    pub glob: globset::Glob,
}

impl GlobPattern {
    pub fn parse(written: &str) -> Result<Self, String> {
        let trimmed = written.trim();
        if trimmed.is_empty() {
            return Err("empty glob".into());
        }
        let anchored = trimmed.trim_start_matches("./").trim_start_matches('/');
        let effective = if anchored.contains('/') {
            anchored.to_string()
        } else {
            format!("**/{anchored}")
        };
        let glob = globset::GlobBuilder::new(&effective)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid glob `{written}`: {}", e.kind()))?;
        Ok(Self {
            written: written.to_string(),
            glob,
        })
    }
}

impl<'de> Deserialize<'de> for GlobPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        GlobPattern::parse(&s).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(glob: &str, path: &str) -> bool {
        GlobPattern::parse(glob)
            .unwrap()
            .glob
            .compile_matcher()
            .is_match(path)
    }

    #[test]
    fn slashless_globs_match_at_any_depth() {
        assert!(matches("*.py", "a.py"));
        assert!(matches("*.py", "deep/down/a.py"));
        assert!(matches("**/*.py", "a.py"));
    }

    #[test]
    fn globs_with_a_slash_are_anchored() {
        assert!(matches("src/*.rs", "src/main.rs"));
        assert!(!matches("src/*.rs", "src/a/b.rs"));
        assert!(!matches("src/*.rs", "other/src/main.rs"));
        assert!(matches("./src/**/*.rs", "src/a/b.rs"));
    }

    #[test]
    fn bad_glob_is_named() {
        let err = GlobPattern::parse("src/[a.py").unwrap_err();
        assert!(err.contains("src/[a.py"), "{err}");
    }
}
