//! `ralph-gate hook post-tool-use`: after an agent edits a file, run the edit-phase gates that
//! match it and hand their errors straight back to the agent as `additionalContext`.

use super::notices;
use super::protocol;
use super::{Ask, Verdict};
use crate::config::Phase;
use crate::env::Environment;
use crate::files;
use crate::project::Project;
use crate::report::counts_as_failure;
use crate::runner::{self, GateResult, Limits};
use crate::text::{head_tail, plural, strip_ansi};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Pure: what the agent is told when gates fail after its edit; `None` when nothing failed.
pub fn feedback(edited: &str, results: &[GateResult], ci: bool, cap: usize) -> Option<String> {
    let failing: Vec<&GateResult> = results
        .iter()
        .filter(|r| counts_as_failure(r, ci))
        .collect();
    if failing.is_empty() {
        return None;
    }
    let mut text = format!(
        "ralph-gate: {} of {} failed after your edit to {}. Fix these before going on:\n",
        plural(failing.len(), "gate", "gates"),
        results.len(),
        edited
    );
    let per_gate = (cap.saturating_sub(text.len() + 200) / failing.len()).max(300);
    for r in &failing {
        text.push_str(&gate_section(r, per_gate));
    }
    Some(protocol::cap(&text, cap))
}

/// One failing gate: name, why, command, and its output cut to `budget` characters.
pub fn gate_section(r: &GateResult, budget: usize) -> String {
    let why = r
        .reason
        .clone()
        .or_else(|| r.exit_code.map(|c| format!("exit {c}")))
        .unwrap_or_else(|| r.status.label().to_string());
    let command: String = r.command.chars().take(300).collect();
    let mut s = format!("\n[{}] {why}\n$ {command}\n", r.name);
    let output = strip_ansi(&r.output);
    let output = output.trim_end();
    if !output.is_empty() {
        s.push_str(&head_tail(output, budget));
        s.push('\n');
    }
    s
}

/// The edit gates for the files an edit wrote, and what the agent is told.
pub fn run(ask: &Ask, env: &Environment, cwd: &Path, config: Option<&Path>) -> Verdict {
    let started = Instant::now();
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    // Deleted files, and things that are not files, have nothing to check.
    let edited: Vec<&PathBuf> = ask
        .edited
        .iter()
        .filter(|p| base.join(p).is_file())
        .collect();
    if edited.is_empty() {
        return Verdict::Silent;
    }
    let project = match Project::open(&base, config) {
        Ok(p) => p,
        // The agent may have broken ralph.toml itself; tell it, so it can repair it.
        Err(e) => {
            return context(format!(
                "ralph-gate could not load its config, so no gate ran after this edit: {e}"
            ))
        }
    };
    let rels: Vec<PathBuf> = edited
        .iter()
        .filter_map(|p| files::relative_to_root(project.root(), &base, p).ok())
        .filter(|rel| !files::is_own_state(rel))
        .collect();
    if rels.is_empty() {
        return Verdict::Silent;
    }
    let root = project.root().to_path_buf();
    let config = &project.config;
    // The common case is an edit no gate cares about: answer it without listing the project.
    let head = |p: &Path| files::head(&root.join(p));
    let matching: Vec<&crate::config::Gate> = config
        .gates
        .iter()
        .filter(|g| g.runs_in(Phase::Edit) && rels.iter().any(|r| g.matches_file(r, &head)))
        .collect();
    if matching.is_empty() {
        return Verdict::Silent;
    }
    // Project gates, drivers and declared inputs see more than the edited files.
    let universe = if matching.iter().any(|g| g.needs_listing()) {
        files::all(&root).unwrap_or_else(|_| rels.clone())
    } else {
        rels.clone()
    };
    let plan = project.plan(&rels, &universe, Phase::Edit, &[]);
    let limits = Limits {
        jobs: config.settings.jobs,
        deadline: Some(started + config.settings.hooks.edit_budget),
    };
    let results: Vec<GateResult> = crate::results::run_recorded(
        config,
        &plan,
        &limits,
        env,
        runner::Reuse::Everything,
        Phase::Edit,
        &|_| {},
    )
    .into_iter()
    .filter(|r| r.runs > 0)
    .collect();
    let named = rels
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let told = notices::told(&root, &ask.session);
    let notice = missing_notice(&named, &results, &told);
    if let Some((_, tools)) = &notice {
        notices::remember(&root, &ask.session, tools);
    }
    let failures = feedback(&named, &results, env.strict(), protocol::TEXT_CAP);
    let text = match (failures, &notice) {
        (None, None) => return Verdict::Silent,
        (Some(f), None) => f,
        (None, Some((n, _))) => n.clone(),
        (Some(f), Some((n, _))) => format!("{n}\n\n{f}"),
    };
    Verdict::Context {
        text: protocol::cap(&text, protocol::TEXT_CAP),
        system: notice.map(|(_, tools)| {
            format!(
                "ralph-gate: not installed: {}; the gates that need it were skipped",
                tools.join(", ")
            )
        }),
    }
}

/// Pure: what the agent is told the first time in a session that a gate's tool is missing
/// (tools in `told` were named before), and the tools it names. A skipped gate is not a
/// pass: the agent should know its edits to these files go unchecked.
pub fn missing_notice(
    edited: &str,
    results: &[GateResult],
    told: &[String],
) -> Option<(String, Vec<String>)> {
    let mut by_tool: Vec<(String, Vec<&GateResult>)> = Vec::new();
    for r in results {
        let Some(tool) = r.missing.as_ref().filter(|t| !told.contains(t)) else {
            continue;
        };
        match by_tool.iter_mut().find(|(t, _)| t == tool) {
            Some((_, gates)) => gates.push(r),
            None => by_tool.push((tool.clone(), vec![r])),
        }
    }
    if by_tool.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (tool, gates) in &by_tool {
        let names: Vec<&str> = gates.iter().map(|g| g.name.as_str()).collect();
        text.push_str(&format!(
            "ralph-gate: `{tool}` is not installed, so {} did not check {} and will check nothing \
             this session until it is installed.{}\n",
            if names.len() == 1 {
                format!("the {} gate", names[0])
            } else {
                format!("the gates {}", names.join(", "))
            },
            edited,
            gates
                .iter()
                .find_map(|g| g.install.as_ref())
                .map(|i| format!(" Install it: {i}."))
                .unwrap_or_default()
        ));
    }
    text.push_str("(Said once per session.)");
    Some((text, by_tool.into_iter().map(|(t, _)| t).collect()))
}

fn context(text: String) -> Verdict {
    Verdict::Context {
        text: protocol::cap(&text, protocol::TEXT_CAP),
        system: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::GateStatus;
    use std::time::Duration;

    fn result(name: &str, status: GateStatus, output: &str) -> GateResult {
        GateResult {
            gate: 0,
            name: name.into(),
            status,
            duration: Duration::from_millis(5),
            files: 1,
            runs: 1,
            command: format!("{name} a.py"),
            output: output.into(),
            exit_code: (status == GateStatus::Fail).then_some(1),
            reason: None,
            optional: false,
            cached: false,
            ..Default::default()
        }
    }

    #[test]
    fn feedback_names_only_failing_gates_without_colour() {
        let results = [
            result("ok", GateStatus::Pass, "fine"),
            result("py", GateStatus::Fail, "\x1b[31mSyntaxError\x1b[0m: bad"),
        ];
        let text = feedback("a.py", &results, false, 8000).unwrap();
        assert!(
            text.contains("1 gate of 2 failed after your edit to a.py"),
            "{text}"
        );
        assert!(
            text.contains("[py] exit 1\n$ py a.py\nSyntaxError: bad"),
            "{text}"
        );
        assert!(!text.contains("[ok]"));
        assert!(feedback("a.py", &results[..1], false, 8000).is_none());
    }

    #[test]
    fn a_missing_tool_is_named_once_with_its_gates_and_install_hint() {
        let skipped = |name: &str, tool: &str| GateResult {
            missing: Some(tool.into()),
            install: Some(format!("apt-get install {tool}")),
            ..result(name, GateStatus::Skipped, "")
        };
        let results = [
            skipped("shellcheck", "shellcheck"),
            skipped("shellcheck-strict", "shellcheck"),
            skipped("tsc", "tsc"),
            result("py", GateStatus::Pass, ""),
        ];
        let (text, tools) = missing_notice("a.sh", &results, &[]).unwrap();
        assert_eq!(tools, ["shellcheck", "tsc"]);
        assert!(
            text.contains("`shellcheck` is not installed, so the gates shellcheck, shellcheck-strict did not check a.sh"),
            "{text}"
        );
        assert!(text.contains("Install it: apt-get install tsc."), "{text}");
        let (_, again) = missing_notice("a.sh", &results, &["shellcheck".into()]).unwrap();
        assert_eq!(again, ["tsc"]);
        assert!(missing_notice("a.sh", &results, &tools).is_none());
    }

    #[test]
    fn feedback_stays_under_the_cap_and_keeps_every_gate() {
        let noisy = "error: something is wrong\n".repeat(2000);
        let results: Vec<GateResult> = (0..4)
            .map(|i| result(&format!("g{i}"), GateStatus::Fail, &noisy))
            .collect();
        let text = feedback("a.rs", &results, false, protocol::TEXT_CAP).unwrap();
        assert!(
            text.chars().count() <= protocol::TEXT_CAP,
            "{}",
            text.chars().count()
        );
        for i in 0..4 {
            assert!(text.contains(&format!("[g{i}] exit 1")), "gate g{i} lost");
        }
        assert!(text.contains("cut by ralph-gate"));
    }
}
