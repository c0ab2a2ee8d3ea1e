//! Reading Claude Code's settings files: which hooks they register and which plugins they
//! enable. `init`, `doctor` and the plugin's hooks (which stand down when settings already
//! register ralph-gate, so one stop is never counted twice) all ask the same questions.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// One settings file that exists and parses.
pub struct Settings {
    pub path: PathBuf,
    pub value: Value,
}

/// The settings Claude Code reads for a project: user, project, local (in that order). A file
/// that does not parse is returned as an error with its path.
pub fn load(env: &ralph_base::env::Environment, ws: &Path) -> (Vec<Settings>, Vec<String>) {
    let mut files = Vec::new();
    if let Some(home) = env.claude_home() {
        files.push(home.join("settings.json"));
    }
    files.push(ws.join(".claude/settings.json"));
    files.push(ws.join(".claude/settings.local.json"));
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        match serde_json::from_str(&text) {
            Ok(value) => ok.push(Settings { path, value }),
            Err(e) => bad.push(format!("{}: {e}", path.display())),
        }
    }
    (ok, bad)
}

/// Every command hook registered for `event`, with its timeout in seconds when given.
pub fn hooks(value: &Value, event: &str) -> Vec<(String, Option<u64>)> {
    value
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| Some((command_line(h)?, h.get("timeout").and_then(Value::as_u64))))
        .collect()
}

/// A command hook's command as one shell line: its `command`, or, in exec form (`args`
/// present: the program is started with no shell in between), the program and its
/// arguments quoted as a shell would need them.
pub fn command_line(hook: &Value) -> Option<String> {
    let command = hook.get("command")?.as_str()?;
    let Some(args) = hook.get("args").and_then(Value::as_array) else {
        return Some(command.to_string());
    };
    let mut words = vec![ralph_config::template::shell_quote(command)];
    words.extend(
        args.iter()
            .filter_map(Value::as_str)
            .map(ralph_config::template::shell_quote),
    );
    Some(words.join(" "))
}

/// True when a ralph-gate hook in `value` (a settings file) is in exec form (`args`).
pub fn has_exec_form_hook(value: &Value) -> bool {
    let Some(events) = value.get("hooks").and_then(Value::as_object) else {
        return false;
    };
    events
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|entry| entry.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter(|h| h.get("args").is_some())
        .filter_map(command_line)
        .any(|c| is_ralph_gate_hook(&c, "hook "))
}

/// True when `command` is ralph-gate's hook for `subcommand` (`hook stop`, ...).
pub fn is_ralph_gate_hook(command: &str, subcommand: &str) -> bool {
    command.contains("ralph-gate") && command.contains(subcommand)
}

/// The last settings file's word on `name@...` wins, as Claude Code merges user, project and
/// local settings in that order.
pub fn plugin_enabled(all: &[Settings], name: &str) -> Option<PathBuf> {
    let mut on = None;
    for s in all {
        if let Some(map) = s.value.get("enabledPlugins").and_then(Value::as_object) {
            for (k, v) in map {
                if k.split('@').next() == Some(name) {
                    on = (v.as_bool() == Some(true)).then(|| s.path.clone());
                }
            }
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hooks_and_plugins_are_read_from_the_documented_shape() {
        let v = json!({
            "enabledPlugins": {"ralph-loop@claude-plugins-official": true, "other@m": false},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ralph-gate hook stop", "timeout": 900}]}]}
        });
        assert_eq!(
            hooks(&v, "Stop"),
            [("ralph-gate hook stop".to_string(), Some(900))]
        );
        assert!(hooks(&v, "PostToolUse").is_empty());
        let user = Settings {
            path: "u".into(),
            value: v,
        };
        let local = Settings {
            path: "l".into(),
            value: json!({"enabledPlugins": {"ralph-loop@x": false}}),
        };
        assert_eq!(
            plugin_enabled(&[user], "ralph-loop"),
            Some(PathBuf::from("u"))
        );
        let user = Settings {
            path: "u".into(),
            value: json!({"enabledPlugins": {"ralph-loop@x": true}}),
        };
        assert_eq!(
            plugin_enabled(&[user, local], "ralph-loop"),
            None,
            "local turns it off"
        );
    }
}
