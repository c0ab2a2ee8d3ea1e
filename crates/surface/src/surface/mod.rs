//! The verification surface: everything besides the checked code's content that decides a
//! gate's verdict. An agent that cannot make a failing check pass can make it check less: an
//! option in a tool's config, a suppression comment, a deleted test, a file that drops out of
//! a gate. The surface describes those things as facts with a direction, so that two
//! surfaces (a loop's start and its end, a pull request's base and head) can be compared and
//! every weakening named with its file and line, while honest work (new code, new tests, a
//! stricter option) passes unremarked.
//!
//! `describe` is pure over a [`source::Source`] (a work tree or a git revision, both seen
//! through the planner's `ProjectFs`); `compare` is pure over two surfaces.

pub mod base;
pub mod configs;
pub mod markers;
pub mod roles;
pub mod source;
pub mod support;
pub mod tools;

use ralph_config::{Config, Driver, Phase};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// How a setting's value moves between weaker and stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A boolean option: `stricter` is the value that checks more, `default` applies when
    /// the option is absent.
    Flag { stricter: bool, default: bool },
    /// A level on a scale; the value is its rank (higher checks more), `default` when absent.
    Level { default: u8 },
    /// A list of what is checked (`include`, `testpaths`): an entry that goes is a weakening.
    /// An absent list means the tool's default, which is never narrower.
    Shrinks,
    /// A list of what is left out (`exclude`, `disable`): an entry that comes is a weakening.
    Grows,
    /// A value that can turn any failure into a pass (a test runner, a compiler wrapper, the
    /// script a gate runs): set or changed is a weakening, removed is not.
    Fixed,
    /// A shell command a gate runs (a package.json script, a Makefile recipe): a weakening
    /// when a program it ran is gone, or a failure is newly swallowed (`|| true`, `exit 0`),
    /// or an option that runs less is added (`--ignore`, `-k`, `--passWithNoTests`).
    Command,
    /// An interpreter version: a lower one is a weakening.
    Version,
    /// A Rust toolchain name: one that is not a release channel or version is a weakening.
    Toolchain,
    /// A dependency on a checker: one that points at a local path or a repository is a
    /// weakening, since the checker is then whatever that folder holds.
    Dependency,
}

/// One option of one config file, as it decides what is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub file: String,
    pub key: String,
    /// Lists: one entry per line.
    pub value: String,
    pub line: u32,
    pub rule: Rule,
}

/// A suppression or skip in checked code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    pub file: String,
    pub line: u32,
    /// What it suppresses, as written: `@ts-ignore`, `#[ignore]`, `# noqa`.
    pub kind: String,
    /// The test or function it applies to, else the line's text: what tells one marker from
    /// another when lines move.
    pub context: String,
    /// It skips a test (rather than silencing a checker): on a test that is new, it takes
    /// nothing away that ran before.
    #[serde(default)]
    pub skips_test: bool,
}

/// A test the project defines, as its runner finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test {
    pub file: String,
    pub line: u32,
    pub name: String,
    /// A digest of its code with its name taken out: a test renamed keeps it, a test
    /// replaced by another does not. Empty when not known (surfaces stored before it was).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Surface {
    pub settings: Vec<Setting>,
    pub markers: Vec<Marker>,
    pub tests: Vec<Test>,
    /// Stop gate name to the files it checks.
    pub checked: BTreeMap<String, BTreeSet<String>>,
    /// Tracked files that a gate would check but git keeps out of the work tree (sparse
    /// checkout, `--skip-worktree`).
    pub absent: BTreeSet<String>,
    /// The stop gates' tools that run files of the project (see [`tools`]). Only a work tree
    /// has them: a revision's `node_modules` is not in git.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, tools::ToolFact>,
    /// The project's files a stop gate's command names (`sh ci/test.sh`, `./run-tests`):
    /// what the gate runs is part of the checks, even where another gate checks it as code.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub runners: BTreeSet<String>,
    /// Of `runners`, the files a stop gate checks that a command names only right after an
    /// option (`py_compile -q calc.py`): the option's value, part of the checks, or the code
    /// the command checks; the command cannot say which, so the differential run judges them
    /// both ways.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub after_option: BTreeSet<String>,
    /// The settings the gates run by name (`scripts.check`, `target test`): one another
    /// side records only because its gates run it is a new check's, not a change to one.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub ran: BTreeSet<String>,
    /// Code only tests can use, by the language's own rule (see [`support`]): part of the
    /// checks, as the tests are.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub test_only: BTreeSet<String>,
    /// Every file of the tree described, to tell a file that left a gate from one that is
    /// gone. Not stored: only the surface described now needs it.
    #[serde(skip)]
    pub present: BTreeSet<String>,
}

impl Surface {
    /// A short digest of what is stored, for the loop's state file.
    pub fn digest(&self) -> String {
        let body = serde_json::to_vec(self).expect("surfaces serialise");
        blake3::hash(&body).to_hex()[..32].to_string()
    }
}

/// One difference between two surfaces, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub file: String,
    /// 0 when it is about a whole file.
    pub line: u32,
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.file.is_empty(), self.line) {
            (true, _) => write!(f, "{}", self.what),
            (false, 0) => write!(f, "{}: {}", self.file, self.what),
            (false, n) => write!(f, "{}:{n}: {}", self.file, self.what),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub weaker: Vec<Finding>,
    pub stronger: Vec<Finding>,
}

/// Which kinds of weakening can change a verdict of these gates: a `# noqa` matters only
/// where a gate runs a linter that reads it, a skipped test only where a gate runs tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    pub tsc: bool,
    pub tests: bool,
    pub clippy: bool,
    pub python_lint: bool,
    pub python_types: bool,
    pub eslint: bool,
    pub shellcheck: bool,
    pub cargo: bool,
    pub go: bool,
}

impl Reads {
    /// Whether a marker, a skip or a checker's option can change these gates' verdict (they
    /// run tests, a type checker, a compiler or a linter), rather than only a formatter's.
    pub fn heeds_markers(self) -> bool {
        self.tsc
            || self.tests
            || self.clippy
            || self.python_lint
            || self.python_types
            || self.eslint
            || self.shellcheck
            || self.cargo
    }

    /// What either reads: the lens two sides are compared through, so a marker a new
    /// gate reads is not taken for one added (it was there, unread).
    pub fn union(self, o: Reads) -> Reads {
        Reads {
            tsc: self.tsc || o.tsc,
            tests: self.tests || o.tests,
            clippy: self.clippy || o.clippy,
            python_lint: self.python_lint || o.python_lint,
            python_types: self.python_types || o.python_types,
            eslint: self.eslint || o.eslint,
            shellcheck: self.shellcheck || o.shellcheck,
            cargo: self.cargo || o.cargo,
            go: self.go || o.go,
        }
    }

    pub fn of(config: &Config, phase: Phase) -> Self {
        Self::of_gates(config.gates.iter().filter(|g| g.runs_in(phase)))
    }

    /// What `gates` read.
    pub fn of_gates<'a>(gates: impl Iterator<Item = &'a ralph_config::Gate>) -> Self {
        let mut r = Reads::default();
        for g in gates {
            let text = g.command_text().to_lowercase();
            let has = |w: &str| text.contains(w);
            r.tsc |= g.driver == Some(Driver::Typescript) || has("tsc");
            r.shellcheck |= g.driver == Some(Driver::Shellcheck) || has("shellcheck");
            r.cargo |= g.driver == Some(Driver::Cargo) || has("cargo");
            r.go |= has("go ") || has("gofmt");
            r.tests |= has("test") || has("jest") || has("vitest") || has("mocha") || has("bats");
            r.clippy |= has("clippy");
            r.python_lint |= has("ruff") || has("flake8") || has("pylint");
            r.python_types |= has("mypy") || has("pyright") || has("pytype");
            r.eslint |= has("eslint") || has("biome");
        }
        r
    }
}

/// The surface of `source` for `config`'s gates of `phase`.
pub fn describe(config: &Config, phase: Phase, source: &source::Source) -> Surface {
    let lens = Lens::of(config, phase);
    describe_planned(config, phase, source, (&source.plan(config, phase), &lens))
}

/// What a surface records beyond the files the gates check: the kinds of markers and
/// tests the gates read, and the scripts they run by name.
#[derive(Debug, Clone, Default)]
pub struct Lens {
    pub reads: Reads,
    pub scripts: configs::Scripts,
}

impl Lens {
    pub fn of(config: &Config, phase: Phase) -> Lens {
        Lens {
            reads: Reads::of(config, phase),
            scripts: configs::scripts_run(config, phase),
        }
    }

    /// Both lenses at once: two sides described through it differ only where their files
    /// do, not where one side's gates look further.
    pub fn union(&self, other: &Lens) -> Lens {
        let mut scripts = self.scripts.clone();
        scripts.npm.extend(other.scripts.npm.iter().cloned());
        scripts.make.extend(other.scripts.make.iter().cloned());
        Lens {
            reads: self.reads.union(other.reads),
            scripts,
        }
    }
}

/// The surface of `source` for `config`'s gates of `phase`, through `lens`.
pub fn describe_through(
    config: &Config,
    phase: Phase,
    source: &source::Source,
    lens: &Lens,
) -> Surface {
    describe_planned(config, phase, source, (&source.plan(config, phase), lens))
}

fn describe_planned(
    config: &Config,
    phase: Phase,
    source: &source::Source,
    (plan, lens): (&ralph_plan::plan::Plan, &Lens),
) -> Surface {
    let (reads, scripts) = (lens.reads, &lens.scripts);
    let settings = configs::settings(source, &reads, scripts);
    let checked = source::checked(config, plan);
    let code: BTreeSet<&PathBuf> = source
        .files
        .iter()
        .filter(|f| in_code(f, &checked))
        .collect();
    let (markers, tests) = markers::scan(source, code.into_iter(), &reads);
    let (runners, after_option) = runners(config, phase, source);
    Surface {
        settings,
        markers,
        tests,
        absent: source.absent_checked(config, phase),
        checked: checked
            .into_iter()
            .map(|(g, fs)| (g, fs.iter().map(|f| text(f)).collect()))
            .collect(),
        tools: BTreeMap::new(),
        runners,
        after_option,
        ran: scripts
            .npm
            .iter()
            .map(|n| format!("scripts.{n}"))
            .chain(scripts.make.iter().map(|t| format!("target {t}")))
            .collect(),
        test_only: support::test_only(source),
        present: source.files.iter().map(|f| text(f)).collect(),
    }
}

/// The files of `source` that a `phase` gate's command runs, relative to the project root
/// (a leading `./` dropped): the program itself (`./run-tests`), the script an interpreter
/// is given (`sh ci/test.sh`), and any other file it names that no such gate checks
/// (`-c ci/pytest.ini`), and any file right after an option (it may be the option's value:
/// a preload the runner loads). A file a gate checks, named as a plain argument (`mypy
/// calc.py`, `python3 -m doctest calc.py`, `tsc src/index.ts`), is code, whichever gate names it:
/// the differential run judges its final version. Put back as a runner, the base's code
/// was judged with the base's tests, and a broken function with its test edited to match
/// passed.
///
/// A file a gate checks that a command names only right after an option is in the second
/// set too: `jest --setupFilesAfterEnv ./ci/setup.js` loads it (part of the checks: put back,
/// a weakened setup file holds), `py_compile -q calc.py` checks it (code: kept, an edited
/// expectation holds). No reading of the words tells them apart for every tool, so the
/// differential run takes it both ways.
fn runners(
    config: &Config,
    phase: Phase,
    source: &source::Source,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let files: BTreeSet<String> = source.files.iter().map(|f| text(f)).collect();
    let gates: Vec<&ralph_config::Gate> =
        config.gates.iter().filter(|g| g.runs_in(phase)).collect();
    let checked = |rel: &str| gates.iter().any(|g| g.matches(std::path::Path::new(rel)));
    let (mut sure, mut after_option) = (BTreeSet::new(), BTreeSet::new());
    for g in &gates {
        for simple in ralph_base::shell::parse(&g.command_text(), 2) {
            let (_, words) = ralph_base::shell::unwrap(&simple.words);
            let script = script_of(words);
            for (i, w) in words.iter().enumerate() {
                let (rel, valued) = match option_value(w, &files) {
                    Some(value) => (value, true),
                    None => (
                        w.trim_start_matches("./"),
                        i > 0 && words[i - 1].starts_with('-') && !words[i - 1].contains('='),
                    ),
                };
                if !files.contains(rel) {
                    continue;
                }
                let runs = !w.starts_with('-') && (i == 0 || Some(i) == script);
                if runs || !checked(rel) {
                    sure.insert(rel.to_string());
                } else if valued {
                    after_option.insert(rel.to_string());
                }
            }
        }
    }
    after_option.retain(|f| !sure.contains(f));
    sure.extend(after_option.iter().cloned());
    (sure, after_option)
}

/// The project file an option word holds as its value: `--env-file=.env`, `-ccfg.ini`.
fn option_value<'a>(word: &'a str, files: &BTreeSet<String>) -> Option<&'a str> {
    let value = match word.split_once('=') {
        Some((option, value)) if option.starts_with('-') => value,
        _ if word.starts_with('-') && !word.starts_with("--") => word.get(2..)?,
        _ => return None,
    };
    let value = value.trim_start_matches("./");
    files.contains(value).then_some(value)
}

/// Programs that run a script named as their first plain argument.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "fish", "python", "node", "deno", "bun", "ruby", "perl",
    "php", "lua", "pwsh", "tsx", "ts-node",
];

/// Where in `words` (a command, its wrappers taken off) the script an interpreter runs is:
/// its first word that is not an option (`python -X dev ci/run.py`: the first plain word
/// after the options; a value an option takes is read as the script, which only makes it
/// a runner, the stricter reading).
fn script_of(words: &[String]) -> Option<usize> {
    let program = ralph_base::shell::base(words.first()?);
    let name = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !INTERPRETERS.contains(&name) {
        return None;
    }
    words
        .iter()
        .skip(1)
        .position(|w| !w.starts_with('-'))
        .map(|p| p + 1)
}

/// The surface of a loop's stop gates in the work tree of `config`'s project, whose files
/// (`files::all`) are `files`, with the tools they run.
pub fn of_loop(
    config: &Config,
    files: Vec<PathBuf>,
    env: &ralph_base::env::Environment,
) -> Surface {
    let source = source::Source::work_tree(&config.root, files, env);
    let plan = source.plan(config, Phase::Stop);
    let lens = Lens::of(config, Phase::Stop);
    let mut surface = describe_planned(config, Phase::Stop, &source, (&plan, &lens));
    surface.tools = tools::of(config, env, &plan);
    surface
}

/// The surface of a loop's stop gates in `project`'s work tree.
pub fn of_project(
    project: &mut ralph_plan::project::Project,
    env: &ralph_base::env::Environment,
) -> Result<Surface, ralph_plan::files::FilesError> {
    let files = project.all_files()?;
    Ok(of_loop(&project.config, files, env))
}

/// Code whose markers and tests count: what a gate checks, and `conftest.py`, which pytest
/// reads wherever it is.
fn in_code(f: &std::path::Path, checked: &BTreeMap<String, BTreeSet<PathBuf>>) -> bool {
    f.file_name().is_some_and(|n| n == "conftest.py") || checked.values().any(|s| s.contains(f))
}

/// A path as the surface stores and shows it.
pub fn text(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Every weakening and strengthening from `old` to `new`.
pub fn compare(old: &Surface, new: &Surface) -> Comparison {
    let mut out = Comparison::default();
    configs::compare(&old.settings, &newly_run_left_out(old, new), &mut out);
    markers::compare_markers(old, new, &mut out);
    markers::compare_tests(&old.tests, &new.tests, &mut out);
    compare_checked(old, new, &mut out);
    let deps = configs::dependencies_changed(&old.settings, &new.settings);
    tools::compare(&old.tools, &new.tools, &deps, &mut out);
    for f in new.absent.difference(&old.absent) {
        out.weaker.push(Finding {
            file: f.clone(),
            line: 0,
            what: "tracked but kept out of the work tree (sparse checkout, or `git update-index --skip-worktree`): no gate checks it".into(),
        });
    }
    out
}

/// `new`'s settings but the scripts and targets its gates run that `old`'s did not (a gate
/// added to run an existing `npm run check`): the gate's addition is judged with the gates;
/// the script's text was no check before it.
fn newly_run_left_out(old: &Surface, new: &Surface) -> Vec<Setting> {
    new.settings
        .iter()
        .filter(|s| {
            let by_name = new.ran.contains(&s.key) && !old.ran.contains(&s.key);
            let recorded = old
                .settings
                .iter()
                .any(|o| o.key == s.key && o.file == s.file);
            !by_name || recorded
        })
        .cloned()
        .collect()
}

fn compare_checked(old: &Surface, new: &Surface, out: &mut Comparison) {
    let none = BTreeSet::new();
    for (gate, files) in &old.checked {
        // A gate that is gone is the pin's to name, and a file it checked that stays is
        // named here: a preset's gate goes when no file is one it checks (a script that lost
        // its `#!` line), which is no reason for the file to go unchecked.
        let now = new.checked.get(gate).unwrap_or(&none);
        for f in files {
            if !now.contains(f) && new.present.contains(f) {
                out.weaker.push(Finding {
                    file: f.clone(),
                    line: 0,
                    what: format!("no longer checked by gate `{gate}`"),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
