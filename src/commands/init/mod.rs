//! `ralph-gate init`: set a project up in one step, safely and repeatably. Writes ralph.toml
//! for the presets the project shows evidence of, merges the two hooks into
//! `.claude/settings.json` without removing anything, joins the project's pre-commit
//! framework (prek, pre-commit, lefthook, husky) or installs the git pre-commit hook (never
//! over a foreign one without --force), ignores `.ralph/`, says when the `ralph-gate`
//! the hooks will call is not on PATH, and runs the gates it wrote once, naming those that
//! fail on the tree as it is. Running it twice changes nothing.

mod frameworks;
pub(crate) mod hook_files;
mod proposals;

use crate::commands::AppError;
use frameworks::Framework;
use proposals::classify::Kind;
use proposals::Verdict;
use ralph_base::atomic;
use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_config::presets;
use ralph_config::template::shell_quote;
use ralph_plan::files;
use ralph_runner::runner::GateResult;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

const PRE_COMMIT: &str = include_str!("../../../hooks/pre-commit");

/// How init was asked to run.
pub struct Options {
    /// Replace a pre-commit hook that is not ralph-gate's.
    pub force: bool,
    /// Write this binary's absolute path into the hooks instead of `ralph-gate`.
    pub absolute: bool,
    /// The agents to set up; empty: Claude Code and every agent the project shows signs of.
    pub agents: Vec<ralph_hook::agents::Agent>,
}

pub fn run(env: &Environment, cwd: &Path, opts: &Options) -> Result<u8, AppError> {
    let layout = ralph_base::state::Layout::workspace(env, cwd);
    let ws = layout.root().to_path_buf();
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    // Unquoted: each hook file quotes it for the shell that runs it (or starts it with none).
    let program = match (&me, opts.absolute) {
        (Some(p), true) => p.to_string_lossy().into_owned(),
        _ => "ralph-gate".to_string(),
    };
    let mut report = vec![format!("ralph-gate init in {}", ws.display())];
    if !opts.absolute {
        if let Some(warning) = path_warning(env, &ws, me.as_deref()) {
            report.push(warning);
        }
    }
    let (said, written) = write_config(&ws, env)?;
    report.push(said);
    let mut asked: Vec<ralph_hook::agents::Agent> = Vec::new();
    for a in &opts.agents {
        if !asked.contains(a) {
            asked.push(*a);
        }
    }
    let chosen = if asked.is_empty() {
        let mut all = vec![ralph_hook::agents::Agent::Claude];
        let found = hook_files::detected(&ws);
        if !found.is_empty() {
            report.push(format!(
                "agents found in this project besides Claude Code: {}",
                found
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        all.extend(found);
        all
    } else {
        asked
    };
    for agent in &chosen {
        report.push(write_agent(env, &ws, *agent, &program)?);
    }
    report.push(pre_commit(&ws, &program, opts.force)?);
    report.push(ignore_state(&ws, &chosen)?);
    for c in super::doctor::conflicts(env, &ws) {
        report.push(format!("warning: {c}"));
    }
    if let Some(written) = written {
        report.extend(first_verdicts(&ws, env, &written)?);
    }
    let mut text = report.join("\n  ");
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

/// A warning when the hooks' `ralph-gate` would not be this binary: not on PATH at all, or
/// another one first.
fn path_warning(env: &Environment, ws: &Path, me: Option<&Path>) -> Option<String> {
    let dirs: Vec<PathBuf> = env
        .path
        .as_deref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    let me_text = me.map_or_else(|| "this binary".to_string(), |p| p.display().to_string());
    match ralph_plan::tools::find("ralph-gate", &dirs, ws) {
        None => Some(format!(
            "WARNING: `ralph-gate` is not on PATH, so the hooks written below would fail to start. \
             Put it there (cargo install --path <ralph-gate checkout>), or run `ralph-gate init --absolute` \
             to write {me_text} into them"
        )),
        Some(found) => {
            let found = found.canonicalize().unwrap_or(found);
            (me.is_some_and(|m| m != found)).then(|| {
                format!(
                    "WARNING: the `ralph-gate` on PATH is {}, not {me_text}; the hooks will run that one \
                     (`ralph-gate init --absolute` writes this one's path instead)",
                    found.display()
                )
            })
        }
    }
}

/// The config `init` wrote: its text without the project's own checks, and those checks,
/// which the first run settles.
struct Written {
    base: String,
    found: proposals::Found,
}

fn write_config(ws: &Path, env: &Environment) -> Result<(String, Option<Written>), AppError> {
    let path = ws.join(ralph_config::FILE_NAME);
    if path.exists() {
        return Ok(("ralph.toml: exists, left as it is".into(), None));
    }
    let listing = files::all(ws)?;
    let found = presets::detect_in(ws, &listing);
    let chosen: Vec<&str> = found.iter().map(|d| d.name).collect();
    let own = proposals::propose(&proposals::Sources::read(ws), &chosen);
    let names: Vec<String> = found.iter().map(|d| format!("\"{}\"", d.name)).collect();
    let why: Vec<String> = found
        .iter()
        .map(|d| format!("{} (found {})", d.name, d.because))
        .collect();
    let text = format!(
        "# ralph.toml, written by `ralph-gate init`. Every option is described in ralph.toml.example\n\
         # of the ralph-gate repository; `ralph-gate gates` shows the gates these presets give.\n\n\
         # Detected: {}\n\
         presets = [{}]\n\n\
         [hooks]\n\
         # hook post-tool-use finishes within this (its hook timeout is 120 s).\n\
         edit_budget = \"90s\"\n\
         # hook stop finishes within this (its hook timeout is 900 s).\n\
         stop_budget = \"10m\"\n\
         # A loop with no change to the tree and the same failures for this many stops ends.\n\
         stuck_after = 3\n\n\
         # Your own gates:\n\
         # [[gate]]\n\
         # name = \"unit-tests\"\n\
         # globs = [\"src/**\"]\n\
         # run = \"make test\"\n\
         # scope = \"project\"\n\
         # phases = [\"stop\", \"check\"]\n",
        match (why.is_empty(), own.proposals.is_empty()) {
            (true, true) => "nothing yet; add presets or gates".to_string(),
            (true, false) => "no preset's stack; the project's own checks are below".to_string(),
            _ => why.join(", "),
        },
        names.join(", ")
    );
    let unsettled: Vec<_> = own
        .proposals
        .iter()
        .map(|p| (p.clone(), Verdict::Unknown))
        .collect();
    atomic::write(
        &path,
        format!("{text}{}", proposals::render(&unsettled, &own.path)).as_bytes(),
    )?;
    let mut out = format!("ralph.toml: written with presets [{}]", chosen.join(", "));
    if !own.proposals.is_empty() {
        let names: Vec<&str> = own.proposals.iter().map(|p| p.name.as_str()).collect();
        out.push_str(&format!(
            " and the project's own checks [{}]",
            names.join(", ")
        ));
    }
    for line in what_runs(ws, env) {
        out.push_str("\n      ");
        out.push_str(&line);
    }
    for line in covered_lines(&own.covered) {
        out.push_str("\n      ");
        out.push_str(&line);
    }
    Ok((
        out,
        Some(Written {
            base: text,
            found: own,
        }),
    ))
}

/// One line per preset that runs commands the project runs (so CI's `pytest` is not taken
/// for forgotten).
fn covered_lines(covered: &[(String, &'static str)]) -> Vec<String> {
    let mut presets: Vec<&str> = covered.iter().map(|c| c.1).collect();
    presets.sort_unstable();
    presets.dedup();
    presets
        .into_iter()
        .map(|preset| {
            let commands: Vec<String> = covered
                .iter()
                .filter(|c| c.1 == preset)
                .map(|c| format!("`{}`", ralph_base::text::shorten(&c.0, 60)))
                .collect();
            let (them, are) = match commands.len() {
                1 => ("it", "is"),
                _ => ("them", "are"),
            };
            format!(
                "{} (the project runs {them}) {are} run by the {preset} preset",
                commands.join(", ")
            )
        })
        .collect()
}

/// What the new config's gates say of the tree as it is: the project's own checks settled
/// (those that failed commented out, fast ones also after edits; ralph.toml rewritten),
/// and the presets' gates that fail named (see [`first_results`]).
fn first_verdicts(
    ws: &Path,
    env: &Environment,
    written: &Written,
) -> Result<Vec<String>, AppError> {
    let before = ralph_base::snapshot::work_tree(ws).ok();
    let results = first_results(ws, env);
    // Something the run wrote in the tree: which of the project's own checks did it is
    // found by running each alone (a preset's gate writing, say coverage, is not one).
    let after = ralph_base::snapshot::work_tree(ws).ok();
    let written_paths: Vec<String> = match (&before, &after) {
        (Some(b), Some(a)) if b != a => ralph_base::snapshot::diff(ws, b, a)
            .map(|c| c.iter().map(|c| c.path.display().to_string()).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let wrote = !written_paths.is_empty();
    let mut said = Vec::new();
    let own = &written.found.proposals;
    if !own.is_empty() {
        let settled: Vec<_> = own
            .iter()
            .map(|p| {
                let r = results.iter().find(|r| r.name == p.name);
                (p.clone(), settle(p, r, (ws, env), wrote))
            })
            .collect();
        let text = format!(
            "{}{}",
            written.base,
            proposals::render(&settled, &written.found.path)
        );
        atomic::write(&ws.join(ralph_config::FILE_NAME), text.as_bytes())?;
        said.extend(settled.iter().map(|(p, v)| settled_line(p, v)));
    }
    let failing: Vec<&GateResult> = results
        .iter()
        .filter(|r| r.failed() && !own.iter().any(|p| p.name == r.name))
        .collect();
    said.extend(failing_line(&failing));
    if wrote {
        said.push(format!(
            "WARNING: running the gates changed the work tree: {}. A gate that writes what it \
             checks is no check; look at what ran (ralph-gate gates)",
            ralph_base::text::shorten(&written_paths.join(", "), 200)
        ));
    }
    Ok(said)
}

/// A proposal's verdict, by what its first run did: failed, ran no test, ran its tests
/// where no runner was heard (through make or a script), or (when the run `wrote` the tree)
/// changes files when run alone.
fn settle(
    p: &proposals::Proposal,
    r: Option<&GateResult>,
    (ws, env): (&Path, &Environment),
    wrote: bool,
) -> Verdict {
    let v = verdict(r);
    if !matches!(v, Verdict::Passed(_)) {
        return v;
    }
    let unheard = r.is_some_and(|r| heard(r).is_none_or(|tests| tests.is_empty()));
    if p.kind == Kind::Test && unheard && proposals::classify::wrapped(&p.command) {
        return Verdict::Failed(
            "it runs its tests through make or a package script, and no test runner \
             ralph-gate hears reported a test it ran, so a pass would say nothing"
                .to_string(),
        );
    }
    match wrote.then(|| changes_when_run(ws, env, &p.name)).flatten() {
        Some(paths) => Verdict::Failed(format!(
            "it changed files when run ({}), so it is no check",
            paths.join(", ")
        )),
        None => v,
    }
}

/// A proposal's verdict from its gate's first result (none: it did not run).
fn verdict(r: Option<&GateResult>) -> Verdict {
    match r {
        None => Verdict::Unknown,
        Some(r) if r.failed() => Verdict::Failed(match r.exit_code {
            Some(127) => "it fails here: exit 127, its program is not installed".to_string(),
            Some(code) => format!("it fails on this tree as it is (exit {code})"),
            None => format!("it fails on this tree as it is ({})", r.status.label()),
        }),
        Some(r) if ran_no_test(r) => Verdict::Failed(
            "its test runner ran no test, so it would pass whatever the code does".to_string(),
        ),
        Some(r) => Verdict::Passed(r.duration.as_millis()),
    }
}

/// The tests the runners ralph-gate hears (pytest, node's, jest, vitest, go, cargo)
/// reported `r` ran, when any was heard (`differential::ran`, the stop's reading).
fn heard(r: &GateResult) -> Option<std::collections::BTreeSet<String>> {
    ralph_surface::differential::ran(std::slice::from_ref(r)).remove(&r.name)
}

/// By what the runners reported: every run heard one, and none ran a test (pytest's
/// `--collect-only`, every test skipped, a filter that selects none).
fn ran_no_test(r: &GateResult) -> bool {
    let every_run_heard = r.run_details.iter().all(|d| d.tests.is_some());
    every_run_heard && heard(r).is_some_and(|tests| tests.is_empty())
}

fn settled_line(p: &proposals::Proposal, v: &Verdict) -> String {
    let what = format!(
        "{} (`{}`, from {})",
        p.name,
        ralph_base::text::shorten(&p.command, 80),
        p.source
    );
    match v {
        Verdict::Failed(why) => format!(
            "{what}: {why}; it is written commented out: uncomment it in ralph.toml once \
             it passes and checks"
        ),
        Verdict::Passed(ms) => format!("{what}: passes ({ms} ms)"),
        Verdict::Unknown => format!("{what}: did not run"),
    }
}

/// The gates that fail on the tree as `init` found it, each with its exit, and the ways
/// out: a baseline only for those that printed findings (not one that timed out).
fn failing_line(failing: &[&GateResult]) -> Option<String> {
    if failing.is_empty() {
        return None;
    }
    let why: Vec<String> = failing
        .iter()
        .map(|r| match r.exit_code {
            Some(code) => format!("{} (exit {code})", r.name),
            None => format!("{} ({})", r.name, r.status.label()),
        })
        .collect();
    let names: Vec<&str> = failing
        .iter()
        .filter(|r| r.exit_code.is_some())
        .map(|r| r.name.as_str())
        .collect();
    let gates = ralph_base::text::plural(failing.len(), "gate fails", "gates fail");
    let they = if failing.len() == 1 {
        "it passes"
    } else {
        "they pass"
    };
    let baseline = match names.is_empty() {
        true => String::new(),
        false => format!(
            ", or hold loops and commits only for what is new: `baseline = [{}]` at the top \
             of ralph.toml",
            names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(format!(
        "{gates} on this tree as it is: {}. A loop is held until {they}, and so is a \
         commit; `ralph-gate check` shows why. Fix the tree first or narrow the gates in \
         ralph.toml{baseline}",
        why.join(", "),
    ))
}

/// How long init's first run of the gates may take.
const FIRST_RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(180);

/// Runs the new config's `check` gates once on the tree as it is, after every file init
/// writes (stored, so the first `check` after init is warm): a gate written that already
/// fails would hold the first loop and every commit unsaid.
fn first_results(ws: &Path, env: &Environment) -> Vec<GateResult> {
    let _ = writeln!(
        std::io::stderr(),
        "ralph-gate init: running the gates once on the tree as it is (at most {}s)...",
        FIRST_RUN_LIMIT.as_secs()
    );
    // Fresh: what the runners report decides which proposals are live, and a stored
    // result (a worktree's) does not keep it. The results are still stored.
    run_gates(ws, env, &[], ralph_runner::runner::Reuse::Nothing)
}

/// The `check` gates (`only` these, when named) run on the tree as it is.
fn run_gates(
    ws: &Path,
    env: &Environment,
    only: &[String],
    reuse: ralph_runner::runner::Reuse,
) -> Vec<GateResult> {
    let Ok(mut project) = ralph_plan::project::Project::open(ws, None) else {
        return Vec::new();
    };
    let Ok(all) = project.all_files() else {
        return Vec::new();
    };
    let phase = ralph_config::Phase::Check;
    let plan = project.plan(&all, &all, phase, only);
    // A gate that never ends (a test script in watch mode) must not hold init: past this,
    // it is said to have timed out, as a check that failed.
    let limits = ralph_runner::runner::Limits {
        jobs: project.config.settings.jobs,
        deadline: Some(std::time::Instant::now() + FIRST_RUN_LIMIT),
        cargo_target: None,
        private_tmp: false,
        untracked: None,
        observe: false,
        checkout_of: None,
    };
    ralph_runner::results::run_recorded(&project.config, &plan, &limits, env, reuse, phase, &|_| {})
}

/// The files `gate` changes in the work tree when run alone (fresh), where it changes any:
/// a command that writes what it is meant to check is no check.
fn changes_when_run(ws: &Path, env: &Environment, gate: &str) -> Option<Vec<String>> {
    let before = ralph_base::snapshot::work_tree(ws).ok()?;
    let _ = run_gates(
        ws,
        env,
        &[gate.to_string()],
        ralph_runner::runner::Reuse::Nothing,
    );
    let after = ralph_base::snapshot::work_tree(ws).ok()?;
    let changed = ralph_base::snapshot::diff(ws, &before, &after).ok()?;
    (!changed.is_empty()).then(|| {
        changed
            .iter()
            .map(|c| c.path.display().to_string())
            .collect()
    })
}

/// One line per gate of the new config: the evidence for its preset, how many runs it makes
/// on this project and with which command (so `tsc -b` for references, one cargo run per
/// workspace and `--shell=bash` for sourced libraries show), and its tool, or that the tool
/// is missing and how to install it.
fn what_runs(ws: &Path, env: &Environment) -> Vec<String> {
    let Ok(mut project) = ralph_plan::project::Project::open(ws, None) else {
        return Vec::new();
    };
    super::first_runs(&mut project, env, ralph_config::Phase::Check)
        .into_iter()
        .map(|r| {
            let mut tool = r
                .tool
                .as_ref()
                .map(|t| format!("; {t}"))
                .unwrap_or_default();
            if let Some(m) = &r.missing {
                tool = match m.runs == r.runs {
                    true => String::new(),
                    false => tool,
                };
                tool.push_str(&format!("; {}", super::cannot_start(m, r.runs)));
            }
            format!(
                "{}: {} on this project, e.g. `{}`{tool}",
                r.gate,
                ralph_base::text::plural(r.runs, "run", "runs"),
                ralph_base::text::shorten(&r.command, 120)
            )
        })
        .collect()
}

/// Registers ralph-gate's hooks in `agent`'s own config file, merged into what is there.
fn write_agent(
    env: &Environment,
    ws: &Path,
    agent: ralph_hook::agents::Agent,
    program: &str,
) -> Result<String, AppError> {
    let spec = hook_files::spec(agent, program, hook_files::Platform::this());
    if agent == ralph_hook::agents::Agent::Claude {
        let (all, _) = ralph_hook::claude_settings::load(env, ws);
        if let Some(by) = ralph_hook::claude_settings::plugin_enabled(&all, "ralph-gate") {
            // Both would run for every event: one stop would count as two iterations.
            return Ok(format!(
                "{}: no hooks added, the ralph-gate plugin is enabled ({}) and its hooks act",
                spec.file,
                by.display()
            ));
        }
    }
    let path = hook_files::path(ws, &spec);
    let note = spec
        .note
        .map(|n| format!("\n    note: {n}"))
        .unwrap_or_default();
    if spec.is_plugin() {
        return Ok(match std::fs::read_to_string(&path) {
            Ok(t) if t == hook_files::OPENCODE_PLUGIN => {
                format!("{} ({agent}): already there{note}", spec.file)
            }
            Ok(_) => format!(
                "{} ({agent}): exists and differs from this version's plugin; left as it is{note}",
                spec.file
            ),
            Err(_) => {
                atomic::write(&path, hook_files::OPENCODE_PLUGIN.as_bytes())?;
                format!("{} ({agent}): the plugin is installed{note}", spec.file)
            }
        });
    }
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(
            serde_json::from_str::<Value>(&text).map_err(|e| AppError::HookFile {
                path: path.clone(),
                problem: e.into(),
            })?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let (merged, added) = hook_files::merge(existing, &spec).map_err(|e| AppError::HookFile {
        path: path.clone(),
        problem: e.into(),
    })?;
    if added.is_empty() {
        return Ok(format!(
            "{} ({agent}): the hooks are already there{note}",
            spec.file
        ));
    }
    let mut text = serde_json::to_string_pretty(&merged).expect("settings serialise");
    text.push('\n');
    atomic::write(&path, text.as_bytes())?;
    let names = match added.split_last() {
        Some((last, [])) => format!("the {last} hook"),
        Some((last, rest)) => format!("the {} and {last} hooks", rest.join(", ")),
        None => String::new(),
    };
    Ok(format!("{} ({agent}): added {names}{note}", spec.file))
}

/// Joins the project's pre-commit framework when it has one, else installs the git hook.
fn pre_commit(ws: &Path, program: &str, force: bool) -> Result<String, AppError> {
    let program = &shell_quote(program);
    let command = format!("{program} check --staged --quiet");
    for (framework, file) in frameworks::FILES {
        let path = ws.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        return Ok(match frameworks::add(*framework, &text, &command) {
            None => format!(
                "pre-commit: {file} ({}) already runs ralph-gate",
                framework.name()
            ),
            Some(new) => {
                atomic::write(&path, new.as_bytes())?;
                if *framework == Framework::Husky {
                    keep_executable(&path)?;
                }
                format!(
                    "pre-commit: added ralph-gate to {file}, so {} runs it (the git hook is {}'s to manage)",
                    framework.name(),
                    framework.name()
                )
            }
        });
    }
    install_git_hook(ws, program, force)
}

fn keep_executable(path: &Path) -> std::io::Result<()> {
    let mode = ralph_base::platform::mode(&std::fs::metadata(path)?);
    ralph_base::platform::set_mode(path, mode | 0o755)
}

/// A hook is ralph-gate's when it runs `ralph-gate ... check --staged`.
fn is_ours(text: &str) -> bool {
    text.contains("ralph-gate") && text.contains("check --staged")
}

fn install_git_hook(ws: &Path, program: &str, force: bool) -> Result<String, AppError> {
    if !ralph_base::git::in_work_tree(ws) {
        return Ok("pre-commit: not a git repository, no hook installed".into());
    }
    let path = ralph_base::git::git_path(ws, "hooks/pre-commit")?;
    let script = if program == "ralph-gate" {
        PRE_COMMIT.to_string()
    } else {
        format!(
            "#!/bin/sh\n# git pre-commit hook: run ralph-gate's check-phase gates on the staged files.\n\
             # Written by `ralph-gate init --absolute`. Skip once with: git commit --no-verify\n\
             exec {program} check --staged --quiet\n"
        )
    };
    match std::fs::read_to_string(&path) {
        Ok(current) if current == script => return Ok("pre-commit: already ralph-gate's".into()),
        Ok(current) if !is_ours(&current) && !force => {
            return Ok(format!(
                "pre-commit: left alone, {} is not ralph-gate's (run `ralph-gate init --force` to replace it; the old one is kept as pre-commit.before-ralph-gate)",
                path.display()
            ))
        }
        Ok(current) if !is_ours(&current) => {
            std::fs::write(path.with_file_name("pre-commit.before-ralph-gate"), current)?;
        }
        _ => {}
    }
    atomic::write(&path, script.as_bytes())?;
    ralph_base::platform::set_mode(&path, 0o755)?;
    Ok(format!("pre-commit: installed {}", path.display()))
}

/// `.ralph/` and the loop files of the chosen agents other than Claude are never committed.
fn ignore_state(ws: &Path, chosen: &[ralph_hook::agents::Agent]) -> Result<String, AppError> {
    let path = ws.join(".gitignore");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let has = |line: &str| current.lines().any(|l| l.trim() == line);
    let mut missing: Vec<String> = Vec::new();
    if !current
        .lines()
        .any(|l| matches!(l.trim(), ".ralph" | ".ralph/" | "/.ralph" | "/.ralph/"))
    {
        missing.push(".ralph/".into());
    }
    for line in chosen.iter().map(|a| hook_files::ignore_line(*a)) {
        if !has(&line) && !missing.contains(&line) {
            missing.push(line);
        }
    }
    if missing.is_empty() {
        return Ok(".gitignore: already ignores .ralph/".into());
    }
    let mut text = current.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for m in &missing {
        text.push_str(m);
        text.push('\n');
    }
    atomic::write(&path, text.as_bytes())?;
    Ok(format!(".gitignore: added {}", missing.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_adds_both_hooks_to_empty_settings() {
        let (v, added) = hook_files::merge(
            None,
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix,
            ),
        )
        .unwrap();
        assert_eq!(
            added,
            [
                "PreToolUse",
                "PostToolUse",
                "PostToolUseFailure",
                "Stop",
                "UserPromptSubmit",
                "PostToolBatch"
            ]
        );
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "ralph-gate"
        );
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]["args"],
            serde_json::json!(["hook", "post-tool-use"])
        );
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["timeout"], 900);
    }

    #[test]
    fn merge_keeps_everything_and_is_idempotent() {
        let existing = json!({
            "model": "opus",
            "hooks": {
                "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
                "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "guard.sh"}]}]
            }
        });
        let (once, added) = hook_files::merge(
            Some(existing.clone()),
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix,
            ),
        )
        .unwrap();
        assert_eq!(added.len(), 6);
        assert_eq!(once["model"], "opus");
        assert_eq!(
            once["hooks"]["PreToolUse"][0], existing["hooks"]["PreToolUse"][0],
            "a foreign PreToolUse hook is kept, ralph-gate's is added after it"
        );
        assert_eq!(once["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            once["hooks"]["PostToolUse"][0],
            existing["hooks"]["PostToolUse"][0]
        );
        assert_eq!(once["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        let (twice, added) = hook_files::merge(
            Some(once.clone()),
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix,
            ),
        )
        .unwrap();
        assert!(added.is_empty());
        assert_eq!(twice, once);
    }

    #[test]
    fn merge_refuses_shapes_it_would_have_to_destroy() {
        assert!(hook_files::merge(
            Some(json!([1])),
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix
            )
        )
        .is_err());
        assert!(hook_files::merge(
            Some(json!({"hooks": "x"})),
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix
            )
        )
        .is_err());
        assert!(hook_files::merge(
            Some(json!({"hooks": {"Stop": {}}})),
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix
            )
        )
        .is_err());
    }

    #[test]
    fn the_plugin_and_the_settings_snippet_call_the_same_commands() {
        let plugin: Value = serde_json::from_str(include_str!(
            "../../../hooks/claude-plugin/hooks/hooks.json"
        ))
        .unwrap();
        let snippet: Value =
            serde_json::from_str(include_str!("../../../hooks/settings.json")).unwrap();
        let (merged, _) = hook_files::merge(
            None,
            &hook_files::spec(
                ralph_hook::agents::Agent::Claude,
                "ralph-gate",
                hook_files::Platform::Unix,
            ),
        )
        .unwrap();
        let plugin = plugin["hooks"]
            .to_string()
            .replace(r#","--via","plugin""#, "");
        assert_eq!(
            plugin,
            merged["hooks"].to_string(),
            "the plugin's commands, with --via plugin"
        );
        assert_eq!(snippet["hooks"], merged["hooks"]);
    }
}
