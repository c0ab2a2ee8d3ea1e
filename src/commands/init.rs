//! `ralph-gate init`: set a project up in one step, safely and repeatably. Writes ralph.toml
//! for the detected presets, merges the two hooks into `.claude/settings.json` without
//! removing anything, installs the git pre-commit hook (never over a foreign one without
//! --force) and ignores `.ralph/`. Running it twice changes nothing.

use crate::app::AppError;
use crate::atomic;
use crate::config::presets;
use crate::env::Environment;
use crate::exit;
use crate::files;
use crate::hook::stop::workspace;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

const PRE_COMMIT: &str = include_str!("../../hooks/pre-commit");
const PRE_COMMIT_MARK: &str = "ralph-gate check --staged";
const EDIT_COMMAND: &str = "ralph-gate hook post-tool-use";
const STOP_COMMAND: &str = "ralph-gate hook stop";

pub fn run(env: &Environment, cwd: &Path, force: bool) -> Result<u8, AppError> {
    let ws = workspace(env, cwd);
    let mut report = vec![format!("ralph-gate init in {}", ws.display())];
    report.push(write_config(&ws)?);
    report.push(write_settings(&ws)?);
    report.push(install_pre_commit(&ws, force)?);
    report.push(ignore_state(&ws)?);
    let mut text = report.join("\n  ");
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

fn write_config(ws: &Path) -> Result<String, AppError> {
    let path = ws.join(crate::config::FILE_NAME);
    if path.exists() {
        return Ok("ralph.toml: exists, left as it is".into());
    }
    let listing = files::all(ws)?;
    let found = presets::detect(&listing, &|rel| files::head(&ws.join(rel)));
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
        if why.is_empty() { "nothing yet; add presets or gates".to_string() } else { why.join(", ") },
        names.join(", ")
    );
    atomic::write(&path, text.as_bytes())?;
    Ok(format!(
        "ralph.toml: written with presets [{}]",
        found.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
    ))
}

fn write_settings(ws: &Path) -> Result<String, AppError> {
    let path = ws.join(".claude/settings.json");
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str::<Value>(&text).map_err(|e| {
            AppError::Usage(format!(
                "{} is not valid JSON ({e}); fix it and run init again (nothing was changed)",
                path.display()
            ))
        })?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let (merged, added) = merge_settings(existing)
        .map_err(|e| AppError::Usage(format!("{}: {e}", path.display())))?;
    if added.is_empty() {
        return Ok(".claude/settings.json: the hooks are already there".into());
    }
    let mut text = serde_json::to_string_pretty(&merged).expect("settings serialise");
    text.push('\n');
    atomic::write(&path, text.as_bytes())?;
    Ok(format!(
        ".claude/settings.json: added the {} hook",
        added.join(" and ")
    ))
}

/// Pure: `settings` with ralph-gate's PostToolUse and Stop hooks added where missing, and the
/// names of the events that got one. Nothing already there is removed or reordered.
pub fn merge_settings(settings: Option<Value>) -> Result<(Value, Vec<&'static str>), String> {
    let mut root = settings.unwrap_or_else(|| Value::Object(Map::new()));
    let obj = root
        .as_object_mut()
        .ok_or("the settings are not a JSON object")?;
    let hooks = obj
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks
        .as_object_mut()
        .ok_or("`hooks` is not a JSON object")?;
    let wanted = [
        (
            "PostToolUse",
            EDIT_COMMAND,
            json!({
                "matcher": "Write|Edit|MultiEdit|NotebookEdit",
                "hooks": [{"type": "command", "command": EDIT_COMMAND, "timeout": 120}]
            }),
        ),
        (
            "Stop",
            STOP_COMMAND,
            json!({
                "hooks": [{"type": "command", "command": STOP_COMMAND, "timeout": 900}]
            }),
        ),
    ];
    let mut added = Vec::new();
    for (event, command, entry) in wanted {
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let list = list
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` is not a JSON array"))?;
        let present = list.iter().any(|e| {
            e.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| c.contains(command))
                })
            })
        });
        if !present {
            list.push(entry);
            added.push(event);
        }
    }
    Ok((root, added))
}

fn install_pre_commit(ws: &Path, force: bool) -> Result<String, AppError> {
    if !files::in_git(ws) {
        return Ok("pre-commit: not a git repository, no hook installed".into());
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["rev-parse", "--git-path", "hooks/pre-commit"])
        .output()?;
    let rel = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path = ws.join(rel);
    match std::fs::read_to_string(&path) {
        Ok(current) if current == PRE_COMMIT => return Ok("pre-commit: already ralph-gate's".into()),
        Ok(current) if !current.contains(PRE_COMMIT_MARK) && !force => {
            return Ok(format!(
                "pre-commit: left alone, {} is not ralph-gate's (run `ralph-gate init --force` to replace it; the old one is kept as pre-commit.before-ralph-gate)",
                path.display()
            ))
        }
        Ok(current) if !current.contains(PRE_COMMIT_MARK) => {
            std::fs::write(path.with_file_name("pre-commit.before-ralph-gate"), current)?;
        }
        _ => {}
    }
    atomic::write(&path, PRE_COMMIT.as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(format!("pre-commit: installed {}", path.display()))
}

fn ignore_state(ws: &Path) -> Result<String, AppError> {
    let path = ws.join(".gitignore");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current
        .lines()
        .any(|l| matches!(l.trim(), ".ralph" | ".ralph/" | "/.ralph" | "/.ralph/"))
    {
        return Ok(".gitignore: already ignores .ralph/".into());
    }
    let mut text = current.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(".ralph/\n");
    atomic::write(&path, text.as_bytes())?;
    Ok(".gitignore: added .ralph/".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_both_hooks_to_empty_settings() {
        let (v, added) = merge_settings(None).unwrap();
        assert_eq!(added, ["PostToolUse", "Stop"]);
        assert_eq!(
            v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            EDIT_COMMAND
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
        let (once, added) = merge_settings(Some(existing.clone())).unwrap();
        assert_eq!(added.len(), 2);
        assert_eq!(once["model"], "opus");
        assert_eq!(once["hooks"]["PreToolUse"], existing["hooks"]["PreToolUse"]);
        assert_eq!(
            once["hooks"]["PostToolUse"][0],
            existing["hooks"]["PostToolUse"][0]
        );
        assert_eq!(once["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        let (twice, added) = merge_settings(Some(once.clone())).unwrap();
        assert!(added.is_empty());
        assert_eq!(twice, once);
    }

    #[test]
    fn merge_refuses_shapes_it_would_have_to_destroy() {
        assert!(merge_settings(Some(json!([1]))).is_err());
        assert!(merge_settings(Some(json!({"hooks": "x"}))).is_err());
        assert!(merge_settings(Some(json!({"hooks": {"Stop": {}}}))).is_err());
    }

    #[test]
    fn the_plugin_and_the_settings_snippet_call_the_same_commands() {
        let plugin: Value =
            serde_json::from_str(include_str!("../../hooks/claude-plugin/hooks/hooks.json"))
                .unwrap();
        let snippet: Value =
            serde_json::from_str(include_str!("../../hooks/settings.json")).unwrap();
        let (merged, _) = merge_settings(None).unwrap();
        assert_eq!(plugin["hooks"], merged["hooks"]);
        assert_eq!(snippet["hooks"], merged["hooks"]);
    }
}
