//! `ralph-gate doctor`: what would make the verdict untrustworthy or the loop misbehave in
//! this project, found and explained. Exit 1 on any problem. `init` and `loop start` run the
//! conflict checks and warn.

use crate::commands::AppError;
use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_base::state::Layout;
use ralph_config::Phase;
use ralph_hook::claude_settings::{self, Settings};
use ralph_loop::loops;
use ralph_plan::project::Project;
use ralph_surface::pin::{self, store::Store};
use std::io::Write;
use std::path::Path;

/// Events ralph-gate hooks and the subcommand each runs.
const EVENTS: [(&str, &str); 3] = [
    ("PreToolUse", "hook pre-tool-use"),
    ("PostToolUse", "hook post-tool-use"),
    ("Stop", "hook stop"),
];

pub fn run(env: &Environment, cwd: &Path, config: Option<&Path>) -> Result<u8, AppError> {
    let layout = Layout::workspace(env, cwd);
    let ws = layout.root();
    let mut problems = conflicts(env, ws);
    let mut fine = Vec::new();
    let (settings, unreadable) = claude_settings::load(env, ws);
    problems.extend(
        unreadable
            .iter()
            .map(|u| format!("a settings file does not parse: {u}")),
    );

    if let Some(by) = claude_settings::plugin_enabled(&settings, "ralph-gate") {
        let in_settings = settings.iter().any(|s| {
            claude_settings::hooks(&s.value, "Stop")
                .iter()
                .any(|(c, _)| claude_settings::is_ralph_gate_hook(c, "hook stop"))
        });
        fine.push(if in_settings {
            format!("the ralph-gate plugin ({}) and settings both register hooks: the plugin's stand down, so each event acts once", by.display())
        } else {
            format!("the ralph-gate plugin is enabled ({}) and its hooks act", by.display())
        });
    }
    hooks_on_path(&settings, env, &mut problems, &mut fine);
    exec_form(&settings, env, &mut problems, &mut fine);
    match Project::open(cwd, config) {
        Ok(mut project) => {
            stop_timeout(&settings, &project, &mut problems, &mut fine);
            edit_budget(&project, &mut problems);
            for r in super::first_runs(&mut project, env, Phase::Stop) {
                if let Some(m) = &r.missing {
                    problems.push(format!(
                        "stop gate `{}`: {}: until it is, what those runs check is verified by nothing and a loop cannot complete",
                        r.gate,
                        super::cannot_start(m, r.runs)
                    ));
                }
            }
            fine.push(observation(&project));
            loops(&layout, &project, &mut problems, &mut fine);
            surfaces(&layout, &mut project, env, &mut problems);
        }
        Err(e) => problems.push(format!("the config does not load: {e}")),
    }
    leftovers(&layout, &mut problems);
    for e in agent_events(&layout) {
        problems.push(e);
    }

    let mut out = format!("ralph-gate doctor: {}\n", ws.display());
    for f in &fine {
        out.push_str(&format!("  ok: {f}\n"));
    }
    for p in &problems {
        out.push_str(&format!("  PROBLEM: {p}\n"));
    }
    out.push_str(&if problems.is_empty() {
        "no problem found\n".to_string()
    } else {
        format!(
            "{}\n",
            ralph_base::text::plural(problems.len(), "problem", "problems")
        )
    });
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(if problems.is_empty() {
        exit::SUCCESS
    } else {
        exit::GATE_FAILED
    })
}

/// Whether a gate's stored result is checked against what its run read, or keyed by the
/// drivers' static model alone (`[cache] observe = false`, a build without the observer, a
/// kernel or sandbox that refuses tracing).
fn observation(project: &Project) -> String {
    if !project.config.settings.observe_inputs {
        return "inputs: keyed by the drivers' static model alone ([cache] observe = false)".into();
    }
    match ralph_runner::observe::trace::probe() {
        Ok(()) => "inputs: observed as each gate runs (every file its processes open or look for)".into(),
        Err(why) => format!(
            "inputs: not observed here ({why}): every gate runs fresh, as no stored result could be checked against what its run read ([cache] observe = false stores results keyed by the drivers' static model alone: faster, and a change to a file no model names can be served a stale pass)"
        ),
    }
}

/// Setups where two hooks fight over one loop: the official ralph-loop plugin beside
/// ralph-gate, or ralph-gate's hooks registered twice.
pub fn conflicts(env: &Environment, ws: &Path) -> Vec<String> {
    let (settings, _) = claude_settings::load(env, ws);
    let mut out = Vec::new();
    if let Some(by) = claude_settings::plugin_enabled(&settings, "ralph-loop") {
        out.push(format!(
            "the official ralph-loop plugin is enabled ({}): its Stop hook deletes the loop state on any promise, so ralph-gate's refusal is moot, and each stop counts two iterations. Disable it: set \"ralph-loop@claude-plugins-official\": false under enabledPlugins (ralph-gate reads its state files and keeps /ralph-loop working)",
            by.display()
        ));
    }
    let plugin = claude_settings::plugin_enabled(&settings, "ralph-gate");
    for (event, sub) in EVENTS {
        let registered: Vec<String> = settings
            .iter()
            .flat_map(|s| {
                claude_settings::hooks(&s.value, event)
                    .into_iter()
                    .filter(|(c, _)| claude_settings::is_ralph_gate_hook(c, sub))
                    .map(move |(c, _)| format!("{} ({c})", s.path.display()))
            })
            .collect();
        if registered.len() > 1 {
            out.push(format!(
                "ralph-gate's {event} hook is registered {} times: {}. Claude Code runs each, so every {} twice. Keep one",
                registered.len(),
                registered.join(", "),
                if event == "Stop" { "stop counts" } else { "call is checked" }
            ));
        }
    }
    if let Some(by) = &plugin {
        for file in installed_plugin_hooks(env) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if text.contains("ralph-gate hook") && !text.contains("--via plugin") {
                out.push(format!(
                    "the ralph-gate plugin enabled in {} is an old version ({}): its hooks do not stand down when settings register ralph-gate, so each stop may count twice. Update the plugin",
                    by.display(),
                    file.display()
                ));
            }
        }
    }
    out
}

/// `hooks/hooks.json` of installed copies of the ralph-gate plugin.
fn installed_plugin_hooks(env: &Environment) -> Vec<std::path::PathBuf> {
    let Some(home) = env.claude_home() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![(home.join("plugins"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && depth < 6 {
                stack.push((p, depth + 1));
            } else if p.ends_with("hooks/hooks.json")
                && p.ancestors()
                    .any(|a| a.file_name().is_some_and(|n| n == "ralph-gate"))
            {
                out.push(p);
            }
        }
    }
    out
}

/// Every ralph-gate hook command's program must be what the agent's shell finds.
fn hooks_on_path(
    settings: &[Settings],
    env: &Environment,
    problems: &mut Vec<String>,
    fine: &mut Vec<String>,
) {
    let dirs = path_dirs(env);
    for s in settings {
        for (event, sub) in EVENTS {
            for (command, _) in claude_settings::hooks(&s.value, event) {
                if !claude_settings::is_ralph_gate_hook(&command, sub) {
                    continue;
                }
                let program = ralph_base::shell::parse(&command, 0)
                    .into_iter()
                    .next()
                    .and_then(|s| s.words.into_iter().next())
                    .unwrap_or_default();
                let found = if program.contains('/') {
                    Path::new(&program)
                        .is_file()
                        .then(|| program.clone().into())
                } else {
                    ralph_plan::tools::find(&program, &dirs, Path::new("/"))
                };
                match found {
                    Some(p) => fine.push(format!("{event} hook in {}: `{program}` is {}", s.path.display(), p.display())),
                    None => problems.push(format!(
                        "the {event} hook in {} runs `{program}`, which is not on this PATH: Claude Code would fail to run it and the loop would not be gated (put ralph-gate on PATH, or run `ralph-gate init --absolute`)",
                        s.path.display()
                    )),
                }
            }
        }
    }
}

/// The first Claude Code release known to start a hook in exec form (`command` + `args`, no
/// shell): the exec form is in 2.1.143's release notes (May 2026). An older one runs
/// `command` alone through a shell, so every hook starts ralph-gate with no arguments.
const CLAUDE_EXEC_FORM: (u64, u64, u64) = (2, 1, 143);

/// Hooks in exec form need a Claude Code that knows the form: asks the `claude` on PATH.
fn exec_form(
    settings: &[Settings],
    env: &Environment,
    problems: &mut Vec<String>,
    fine: &mut Vec<String>,
) {
    let Some(s) = settings
        .iter()
        .find(|s| claude_settings::has_exec_form_hook(&s.value))
    else {
        return;
    };
    let Some(claude) = ralph_plan::tools::find("claude", &path_dirs(env), Path::new("/")) else {
        return;
    };
    let line = ralph_plan::tools::version_line(&claude);
    let (at, needed) = (s.path.display(), dotted(CLAUDE_EXEC_FORM));
    match version(&line) {
        Some(v) if v >= CLAUDE_EXEC_FORM => fine.push(format!(
            "Claude Code {} starts the hooks in {at} without a shell (exec form)",
            dotted(v)
        )),
        Some(v) => problems.push(format!(
            "the hooks in {at} are in exec form (`command` + `args`), which Claude Code starts without a shell from {needed} on; {} is {}, which would start ralph-gate with no arguments: update Claude Code (`claude update`)",
            claude.display(),
            dotted(v)
        )),
        None => problems.push(format!(
            "could not tell the version of {} (`--version` said {line:?}): the hooks in {at} need {needed} or later (exec form)",
            claude.display()
        )),
    }
}

/// The folders of the PATH doctor was started with.
fn path_dirs(env: &Environment) -> Vec<std::path::PathBuf> {
    env.path
        .as_ref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default()
}

fn dotted((major, minor, patch): (u64, u64, u64)) -> String {
    format!("{major}.{minor}.{patch}")
}

/// The first `MAJOR.MINOR.PATCH` in a `--version` line (`2.1.330 (Claude Code)`).
fn version(line: &str) -> Option<(u64, u64, u64)> {
    line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').map(|p| p.parse::<u64>().ok());
            let v = (parts.next()??, parts.next()??, parts.next()??);
            Some(v)
        })
}

/// A Stop hook killed by its timeout fails open: the stop budget must end first.
fn stop_timeout(
    settings: &[Settings],
    project: &Project,
    problems: &mut Vec<String>,
    fine: &mut Vec<String>,
) {
    let budget = project.config.settings.hooks.stop_budget;
    for s in settings {
        for (command, timeout) in claude_settings::hooks(&s.value, "Stop") {
            if !claude_settings::is_ralph_gate_hook(&command, "hook stop") {
                continue;
            }
            // Claude Code's default for command hooks.
            let secs = timeout.unwrap_or(600);
            if budget.as_secs() >= secs {
                problems.push(format!(
                    "the Stop hook in {} times out after {secs} s, but the stop gates may take {} s (hooks.stop_budget): Claude Code kills a hook at its timeout and lets the agent stop. Raise the timeout above the budget or lower the budget",
                    s.path.display(),
                    budget.as_secs()
                ));
            } else {
                fine.push(format!(
                    "Stop hook timeout {secs} s > stop budget {} s",
                    budget.as_secs()
                ));
            }
        }
    }
}

/// An edit gate whose last run took most of the edit budget: the next edit that makes it a
/// little slower gets no feedback at all. Its last uncached run says so: one after an edit,
/// or any run of a gate that checks a whole project (it does the same work either way).
fn edit_budget(project: &Project, problems: &mut Vec<String>) {
    let config = &project.config;
    let budget = config.settings.hooks.edit_budget;
    for r in ralph_runner::results::load(project.root()) {
        let Some(gate) = config.gates.iter().find(|g| g.name == r.gate) else {
            continue;
        };
        let like_an_edit =
            r.phase == Phase::Edit.as_str() || gate.scope == ralph_config::Scope::Project;
        let took = std::time::Duration::from_millis(r.duration_ms);
        if r.cached || !like_an_edit || !gate.runs_in(Phase::Edit) || took < budget * 3 / 5 {
            continue;
        }
        problems.push(format!(
            "edit gate `{}` took {} s on its last {} run, against the {} s edit budget (hooks.edit_budget): an edit that makes it slower gets no feedback. Run it at stops only (phases = [\"stop\", \"check\"] in its [[gate]]), narrow its globs or files, or raise hooks.edit_budget",
            gate.name,
            took.as_secs(),
            r.phase,
            budget.as_secs()
        ));
    }
}

/// Each loop: readable, and held to the gates it was pinned to.
fn loops(layout: &Layout, project: &Project, problems: &mut Vec<String>, fine: &mut Vec<String>) {
    let store = Store::of(layout);
    let now = pin::of(&project.config);
    for f in loops::list(layout) {
        let name = loops::key(&f.path);
        let state = match &f.state {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!(
                    "the loop state {} cannot be read ({e}): that loop is not enforced; fix or remove it",
                    f.path.display()
                ));
                continue;
            }
        };
        if state.goal {
            fine.push(format!(
                "loop {name}: holds the {} session's own goal to the stop gates: {}",
                state.agent().unwrap_or_default(),
                ralph_base::text::shorten(state.prompt().lines().next().unwrap_or_default(), 120)
            ));
        }
        let copy = store
            .read(&name)
            .ok()
            .flatten()
            .filter(|c| c.started_at == state.started_at);
        match pin::judge(state.gates_pin.as_deref(), copy.as_ref(), &now) {
            pin::Verdict::Weaker(changes) => problems.push(format!(
                "loop {name}: the stop gates changed since it started ({}); it cannot complete until a person runs `ralph-gate loop approve`",
                changes.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            )),
            pin::Verdict::Tampered(why) => problems.push(format!(
                "loop {name}: the record of its gates was altered ({why})"
            )),
            pin::Verdict::First => fine.push(format!(
                "loop {name}: not pinned yet (started by the official plugin's command); its first stop pins the gates"
            )),
            _ => fine.push(format!("loop {name}: held to the gates it started with")),
        }
    }
}

/// Each loop's verification surface against the one it started with: a weakening holds it.
fn surfaces(layout: &Layout, project: &mut Project, env: &Environment, problems: &mut Vec<String>) {
    let list = loops::list(layout);
    if list.is_empty() {
        return;
    }
    let now = match ralph_surface::surface::of_project(project, env) {
        Ok(s) => s,
        Err(e) => {
            problems.push(format!(
                "the project's files cannot be listed ({e}), so no loop's surface is compared"
            ));
            return;
        }
    };
    for f in &list {
        let Some(weaker) = crate::overview::weakened(layout, f, &now).filter(|w| !w.is_empty())
        else {
            continue;
        };
        problems.push(format!(
            "loop {}: what the checks check is weaker than at its start ({}); it cannot complete until a person runs `ralph-gate loop approve`",
            loops::key(&f.path),
            weaker.join("; ")
        ));
    }
}

/// Progress records and pins whose loop is gone: left by a loop ended outside ralph-gate.
fn leftovers(layout: &Layout, problems: &mut Vec<String>) {
    let has_loop = |key: &str| loops::exists(layout, key);
    if let Ok(entries) = std::fs::read_dir(layout.progress_dir()) {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if let Some(loop_file) = file.strip_suffix(".json") {
                if !has_loop(loop_file) {
                    problems.push(format!(
                        "{} is left from a loop that no longer exists: a new loop of that name would count its stops (remove it)",
                        e.path().display()
                    ));
                }
            }
        }
    }
    for (loop_file, _) in Store::of(layout).pinned() {
        if !has_loop(&loop_file) {
            problems.push(format!(
                "the pin of {loop_file} remains but its state file was deleted outside ralph-gate (the next stop journals it)"
            ));
        }
    }
}

/// What an agent did or tried to a loop, from the journal: a person's command refused (an
/// approval or a cancel from under an agent), a cancel from a session (journals of versions
/// that took one), a state file deleted by hand.
fn agent_events(layout: &Layout) -> Vec<String> {
    crate::overview::recent_stops(layout, crate::overview::RECENT_STOPS * 5)
        .into_iter()
        .filter(|e| {
            (e.event == "cancel" && e.who.starts_with("session"))
                || e.event == "refused"
                || e.event == "state_deleted"
                || !e.notes.is_empty()
        })
        .map(|e| {
            if e.event == "stop" {
                format!("{} stop of {}: {}", e.time, e.loop_file, e.notes.join("; "))
            } else {
                format!(
                    "{} {} {} by {}: {}",
                    e.time,
                    e.event.replace('_', " "),
                    e.loop_file,
                    e.who,
                    e.why
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_read_from_what_claude_says() {
        assert_eq!(version("2.1.330 (Claude Code)"), Some((2, 1, 330)));
        assert_eq!(version("claude 2.1.42"), Some((2, 1, 42)));
        assert_eq!(version("v1.0.9-beta"), Some((1, 0, 9)));
        assert_eq!(version("Claude Code"), None);
        assert_eq!(version("2.1"), None);
        assert!(version("2.1.142").unwrap() < CLAUDE_EXEC_FORM);
        assert!(version("2.10.0").unwrap() > CLAUDE_EXEC_FORM);
    }

    #[test]
    fn only_ralph_gates_hooks_in_exec_form_are_found() {
        let exec = serde_json::json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "/opt/x/ralph-gate", "args": ["hook", "stop"]}
        ]}]}});
        let shell = serde_json::json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "ralph-gate hook stop"}
        ]}]}});
        let other = serde_json::json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "node", "args": ["notify.js"]}
        ]}]}});
        assert!(claude_settings::has_exec_form_hook(&exec));
        assert!(!claude_settings::has_exec_form_hook(&shell));
        assert!(!claude_settings::has_exec_form_hook(&other));
    }
}
