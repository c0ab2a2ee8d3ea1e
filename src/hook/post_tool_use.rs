//! `ralph-gate hook post-tool-use`: after an agent edits a file, run the edit-phase gates that
//! match it and hand their errors straight back to the agent as `additionalContext`.

use super::notices;
use super::protocol::{self, HookInput, HookOutput, HookSpecificOutput};
use crate::config::Phase;
use crate::env::Environment;
use crate::files;
use crate::project::Project;
use crate::report::counts_as_failure;
use crate::report::text::{head_tail, plural, strip_ansi};
use crate::runner::{self, GateResult, Limits};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Pure: the file an edit tool wrote, if this tool call edited one.
pub fn edited_path(input: &HookInput) -> Option<PathBuf> {
    let key = match input.tool_name.as_deref()? {
        "Write" | "Edit" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        _ => return None,
    };
    let path = input.tool_input.as_ref()?.get(key)?.as_str()?;
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// Pure: what the agent is told when gates fail after its edit; `None` when nothing failed.
pub fn feedback(edited: &Path, results: &[GateResult], ci: bool, cap: usize) -> Option<String> {
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
        edited.display()
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

pub fn run(
    input: &HookInput,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Option<HookOutput> {
    let started = Instant::now();
    let edited = edited_path(input)?;
    let base = input.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let absolute = base.join(&edited);
    if !absolute.is_file() {
        return None; // deleted, or not a file: nothing to check
    }
    let project = match Project::open(&base, config) {
        Ok(p) => p,
        // The agent may have broken ralph.toml itself; tell it, so it can repair it.
        Err(e) => {
            return Some(context(format!(
                "ralph-gate could not load its config, so no gate ran after this edit: {e}"
            )))
        }
    };
    let rel = files::relative_to_root(project.root(), &base, &edited).ok()?;
    if files::is_own_state(&rel) {
        return None;
    }
    let root = project.root().to_path_buf();
    let config = &project.config;
    let edited_only = std::slice::from_ref(&rel);
    // The common case is an edit no gate cares about: answer it without listing the project.
    let head = |p: &Path| files::head(&root.join(p));
    let matching: Vec<&crate::config::Gate> = config
        .gates
        .iter()
        .filter(|g| g.runs_in(Phase::Edit) && g.matches_file(&rel, &head))
        .collect();
    if matching.is_empty() {
        return None;
    }
    // Project gates, drivers and declared inputs see more than the edited file.
    let universe = if matching.iter().any(|g| g.needs_listing()) {
        files::all(&root).unwrap_or_else(|_| edited_only.to_vec())
    } else {
        edited_only.to_vec()
    };
    let plan = project.plan(edited_only, &universe, Phase::Edit, &[]);
    let limits = Limits {
        jobs: config.settings.jobs,
        deadline: Some(started + config.settings.hooks.edit_budget),
    };
    let results: Vec<GateResult> = runner::run_recorded(
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
    let session = input.session_id.as_deref().unwrap_or("");
    let told = notices::told(&root, session);
    let notice = missing_notice(&rel, &results, &told);
    if let Some((_, tools)) = &notice {
        notices::remember(&root, session, tools);
    }
    let failures = feedback(&rel, &results, env.strict(), protocol::TEXT_CAP);
    let text = match (failures, &notice) {
        (None, None) => return None,
        (Some(f), None) => f,
        (None, Some((n, _))) => n.clone(),
        (Some(f), Some((n, _))) => format!("{n}\n\n{f}"),
    };
    let mut out = context(text);
    if let Some((_, tools)) = notice {
        out.system_message = Some(format!(
            "ralph-gate: not installed: {}; the gates that need it were skipped",
            tools.join(", ")
        ));
    }
    Some(out)
}

/// Pure: what the agent is told the first time in a session that a gate's tool is missing
/// (tools in `told` were named before), and the tools it names. A skipped gate is not a
/// pass: the agent should know its edits to these files go unchecked.
pub fn missing_notice(
    edited: &Path,
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
            edited.display(),
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

fn context(text: String) -> HookOutput {
    HookOutput {
        hook_specific_output: Some(HookSpecificOutput {
            hook_event_name: "PostToolUse",
            additional_context: Some(protocol::cap(&text, protocol::TEXT_CAP)),
            permission_decision: None,
            permission_decision_reason: None,
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::GateStatus;
    use std::time::Duration;

    fn input(tool: &str, tool_input: serde_json::Value) -> HookInput {
        HookInput {
            tool_name: Some(tool.into()),
            tool_input: Some(tool_input),
            ..Default::default()
        }
    }

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
    fn edit_tools_name_their_file_and_others_do_not() {
        let j = serde_json::json!({"file_path": "/p/a.py", "content": "x"});
        assert_eq!(
            edited_path(&input("Write", j.clone())),
            Some("/p/a.py".into())
        );
        assert_eq!(
            edited_path(&input("Edit", j.clone())),
            Some("/p/a.py".into())
        );
        assert_eq!(
            edited_path(&input("MultiEdit", j.clone())),
            Some("/p/a.py".into())
        );
        assert_eq!(
            edited_path(&input("Bash", serde_json::json!({"command": "rm -rf /"}))),
            None
        );
        assert_eq!(edited_path(&input("Read", j)), None);
        let nb = serde_json::json!({"notebook_path": "/p/n.ipynb", "new_source": ""});
        assert_eq!(
            edited_path(&input("NotebookEdit", nb)),
            Some("/p/n.ipynb".into())
        );
        assert_eq!(
            edited_path(&input("Write", serde_json::json!({"file_path": 7}))),
            None
        );
    }

    #[test]
    fn feedback_names_only_failing_gates_without_colour() {
        let results = [
            result("ok", GateStatus::Pass, "fine"),
            result("py", GateStatus::Fail, "\x1b[31mSyntaxError\x1b[0m: bad"),
        ];
        let text = feedback(Path::new("a.py"), &results, false, 8000).unwrap();
        assert!(
            text.contains("1 gate of 2 failed after your edit to a.py"),
            "{text}"
        );
        assert!(
            text.contains("[py] exit 1\n$ py a.py\nSyntaxError: bad"),
            "{text}"
        );
        assert!(!text.contains("[ok]"));
        assert!(feedback(Path::new("a.py"), &results[..1], false, 8000).is_none());
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
        let (text, tools) = missing_notice(Path::new("a.sh"), &results, &[]).unwrap();
        assert_eq!(tools, ["shellcheck", "tsc"]);
        assert!(
            text.contains("`shellcheck` is not installed, so the gates shellcheck, shellcheck-strict did not check a.sh"),
            "{text}"
        );
        assert!(text.contains("Install it: apt-get install tsc."), "{text}");
        let (_, again) =
            missing_notice(Path::new("a.sh"), &results, &["shellcheck".into()]).unwrap();
        assert_eq!(again, ["tsc"]);
        assert!(missing_notice(Path::new("a.sh"), &results, &tools).is_none());
    }

    #[test]
    fn feedback_stays_under_the_cap_and_keeps_every_gate() {
        let noisy = "error: something is wrong\n".repeat(2000);
        let results: Vec<GateResult> = (0..4)
            .map(|i| result(&format!("g{i}"), GateStatus::Fail, &noisy))
            .collect();
        let text = feedback(Path::new("a.rs"), &results, false, protocol::TEXT_CAP).unwrap();
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
