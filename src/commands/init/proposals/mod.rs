//! The project's own checks, proposed as gates by `init`: what its CI workflows, Makefile,
//! package.json scripts and pre-commit local hooks run (`sources`), when the program is a
//! checker (`classify`) that no preset `init` chose already runs. `init` writes them, runs
//! them once, and keeps live only those that pass on the tree as it found it: a guess that
//! fails would hold every loop and commit (it stays in ralph.toml, commented out, with why).

pub mod classify;
pub mod sources;

use classify::Kind;
use sources::Candidate;
use std::path::Path;

/// A gate proposed from the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub name: String,
    pub command: String,
    pub kind: Kind,
    pub source: String,
}

/// What `init` found: the gates it proposes, and the commands a chosen preset already runs
/// (named in its report, so the user sees CI's `pytest` was not forgotten).
#[derive(Debug, Default)]
pub struct Found {
    pub proposals: Vec<Proposal>,
    pub covered: Vec<(String, &'static str)>,
    /// The project's own tool folders, first on the proposed gates' PATH (as `npm run`, a
    /// venv's activation and CI's setup put them).
    pub path: Vec<String>,
}

/// The files read, as text.
#[derive(Debug, Default)]
pub struct Sources {
    /// `.github/workflows/*.yml`, by path.
    pub workflows: Vec<(String, String)>,
    pub makefile: Option<String>,
    /// The root's entries, by name (a Makefile target named like one is not run by make).
    pub entries: Vec<String>,
    pub package_json: Option<String>,
    pub pyproject: Option<String>,
    /// The command that runs a package script here (`npm`, `pnpm`, `yarn`, `bun`).
    pub manager: &'static str,
    pub pre_commit: Option<(String, String)>,
    /// Which of the project's tool folders are there.
    pub tool_dirs: Vec<String>,
}

impl Sources {
    pub fn read(root: &Path) -> Sources {
        let text = |rel: &str| std::fs::read_to_string(root.join(rel)).ok();
        let mut workflows: Vec<(String, String)> =
            std::fs::read_dir(root.join(".github/workflows"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let yaml = name.ends_with(".yml") || name.ends_with(".yaml");
                    let rel = format!(".github/workflows/{name}");
                    yaml.then(|| text(&rel).map(|t| (rel, t))).flatten()
                })
                .collect();
        workflows.sort();
        let pre_commit = [".pre-commit-config.yaml", ".pre-commit-config.yml"]
            .iter()
            .find_map(|f| text(f).map(|t| (f.to_string(), t)));
        Sources {
            workflows,
            makefile: ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .find_map(|f| text(f)),
            package_json: text("package.json"),
            pyproject: text("pyproject.toml"),
            entries: std::fs::read_dir(root)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            manager: manager(root),
            pre_commit,
            tool_dirs: TOOL_DIRS
                .iter()
                .filter(|d| root.join(d).is_dir())
                .map(|d| d.to_string())
                .collect(),
        }
    }
}

/// Where a project keeps the tools its checks run.
const TOOL_DIRS: &[&str] = &[".venv/bin", "venv/bin", "node_modules/.bin"];

/// The package manager the project installs with, by its lockfile (as the npm-test preset).
fn manager(root: &Path) -> &'static str {
    let has = |f: &str| root.join(f).exists();
    if has(".pnp.cjs") || has("yarn.lock") {
        "yarn"
    } else if has("pnpm-lock.yaml") {
        "pnpm"
    } else if has("bun.lock") || has("bun.lockb") {
        "bun"
    } else {
        "npm"
    }
}

/// The proposals from `sources`, given the presets chosen: CI first (what "done" means
/// there), then the Makefile, the package scripts and pre-commit; each command once.
pub fn propose(sources: &Sources, presets: &[&str]) -> Found {
    let scripts = sources
        .package_json
        .as_deref()
        .map(sources::scripts_of)
        .unwrap_or_default();
    let exists = |name: &str| sources.entries.iter().any(|e| e == name);
    let mut all: Vec<Candidate> = Vec::new();
    for (path, text) in &sources.workflows {
        all.extend(sources::workflow(path, text, &scripts));
    }
    if let Some(text) = &sources.makefile {
        all.extend(sources::makefile(text, &exists, &scripts));
    }
    all.extend(sources::package_scripts(&scripts, sources.manager));
    all.extend(sources::python_configs(
        sources.pyproject.as_deref(),
        &exists,
    ));
    if let Some((path, text)) = &sources.pre_commit {
        all.extend(sources::pre_commit_local(path, text, &scripts));
    }
    // The npm-test preset runs the `test` script, and so every script it calls.
    let under_test = match presets.contains(&"npm-test") {
        true => sources::scripts_run_by("test", &scripts),
        false => Vec::new(),
    };
    let mut found = Found {
        path: sources.tool_dirs.clone(),
        ..Found::default()
    };
    let mut seen: Vec<String> = Vec::new();
    for c in all {
        if seen.contains(&c.identity) {
            continue;
        }
        seen.push(c.identity.clone());
        let tested = c.script.as_ref().is_some_and(|s| under_test.contains(s));
        let preset = c.checker.preset.or(tested.then_some("npm-test"));
        let preset = preset.filter(|p| presets.contains(p) && checks_no_more(&c.command));
        if let Some(preset) = preset {
            found.covered.push((c.command, preset));
            continue;
        }
        let mut name = c.checker.name.clone();
        let mut n = 1;
        while found.proposals.iter().any(|p| p.name == name) || preset_gates().contains(&name) {
            n += 1;
            name = format!("{}-{n}", c.checker.name);
        }
        found.proposals.push(Proposal {
            name,
            command: c.command,
            kind: c.checker.kind,
            source: c.source,
        });
    }
    found
}

/// Options that change how a checker reports or stops, not what it checks: a command with
/// no option but these checks nothing its preset's does not.
const REPORTING: &[&str] = &[
    "-q",
    "--quiet",
    "-v",
    "-vv",
    "--verbose",
    "--color",
    "--locked",
    "--frozen",
    "--offline",
    "--workspace",
    "--all",
    "--all-targets",
    "--no-fail-fast",
    "-x",
    "--exitfirst",
    "--tb",
    "--durations",
    "-ra",
    "-rA",
    "-count",
    "--ci",
];

/// Pure: whether `command` (a checker a preset runs) has only [`REPORTING`] options: one
/// that picks features, a target, a profile or more kinds of tests (`cargo check
/// --no-default-features`, `pytest --doctest-modules`, `go test -race`) checks what the
/// preset's command does not, and is the project's own check.
fn checks_no_more(command: &str) -> bool {
    ralph_base::shell::parse(command, 0).iter().all(|simple| {
        let (_, words) = ralph_base::shell::unwrap(&simple.words);
        words
            .iter()
            .filter(|w| w.starts_with('-'))
            .all(|w| REPORTING.contains(&w.split('=').next().unwrap_or(w)))
    })
}

/// Every embedded preset's gate names, which a proposal's name must not take.
fn preset_gates() -> Vec<String> {
    ralph_config::presets::names()
        .into_iter()
        .filter_map(ralph_config::presets::by_name)
        .filter_map(|p| ralph_config::presets::parse(p).ok())
        .flat_map(|raw| raw.gate.into_iter().map(|g| g.name.into_inner()))
        .collect()
}

/// What the first run said of a proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Not run yet: written for the stop and `check`.
    Unknown,
    /// Passed, in this many milliseconds.
    Passed(u128),
    /// Failed, and why (`exit 1`, `missing tool`).
    Failed(String),
}

/// A check that passed within this is also run after each edit.
const FAST_MS: u128 = 5_000;

/// The `[[gate]]` tables for the proposals, each with its verdict: live when it passed (or
/// has not run), commented out with the reason when it failed.
pub fn render(proposals: &[(Proposal, Verdict)], path: &[String]) -> String {
    if proposals.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n# The project's own checks, read by `ralph-gate init` from where it keeps them.\n",
    );
    for (p, verdict) in proposals {
        let phases = match (p.kind, verdict) {
            (Kind::Check, Verdict::Passed(ms)) if *ms <= FAST_MS => r#"["edit", "stop", "check"]"#,
            _ => r#"["stop", "check"]"#,
        };
        let mut table = format!(
            "[[gate]]\nname = {}\nglobs = [\"**\"]\nrun = {}\nscope = \"project\"\nphases = {phases}\n",
            toml_string(&p.name),
            toml_string(&p.command),
        );
        if !path.is_empty() {
            let dirs: Vec<String> = path.iter().map(|d| toml_string(d)).collect();
            table.push_str(&format!("path = [{}]\n", dirs.join(", ")));
        }
        out.push_str(&format!("\n# From {}.\n", p.source));
        match verdict {
            Verdict::Failed(why) => {
                out.push_str(&format!(
                    "# Left out when init ran it: {why}. Uncomment it once it passes and checks.\n"
                ));
                for line in table.lines() {
                    out.push_str(&format!("# {line}\n"));
                }
            }
            _ => out.push_str(&table),
        }
    }
    out
}

/// A TOML basic string holding `text`.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests;
