//! `ralph-gate hook ...`: stdin in, Claude Code's JSON out, exit codes as Claude Code reads them.

use crate::claude_settings;
use crate::cli::{HookCommand, HookVia};
use crate::env::Environment;
use crate::exit;
use crate::hook::{post_tool_use, pre_tool_use, protocol, stop};
use std::io::Write;
use std::path::Path;

pub fn run(
    which: &HookCommand,
    via: HookVia,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> u8 {
    let input = match protocol::read_stdin() {
        Ok(input) => input,
        Err(e) => {
            say(&format!("ralph-gate hook: {e}"));
            return exit::HOOK_BAD_INPUT;
        }
    };
    if via == HookVia::Plugin && settings_act(which, env, &input, cwd) {
        // Claude Code runs the plugin's hook and the settings' hook for the same event; two
        // would count every stop twice and double the edit feedback.
        return exit::SUCCESS;
    }
    let output = match which {
        HookCommand::PreToolUse => pre_tool_use::run(&input, env, cwd),
        HookCommand::PostToolUse => post_tool_use::run(&input, env, cwd, config),
        HookCommand::Stop => match stop::run(&input, env, cwd, config) {
            Ok(out) => out,
            Err(e) => {
                say(&format!(
                    "ralph-gate could not check this stop, so the loop goes on: {e}"
                ));
                return exit::HOOK_BLOCKING_ERROR;
            }
        },
    };
    // An empty answer is no answer: Claude Code reads silence as "go on".
    if let Some(out) = output.filter(|o| *o != protocol::HookOutput::default()) {
        let mut text = serde_json::to_string(&out).expect("hook output serialises");
        text.push('\n');
        if std::io::stdout().lock().write_all(text.as_bytes()).is_err() {
            return exit::HOOK_BAD_INPUT;
        }
    }
    exit::SUCCESS
}

/// True when a settings file registers ralph-gate's hook for this event.
fn settings_act(
    which: &HookCommand,
    env: &Environment,
    input: &protocol::HookInput,
    cwd: &Path,
) -> bool {
    let (event, sub) = match which {
        HookCommand::PreToolUse => ("PreToolUse", "hook pre-tool-use"),
        HookCommand::PostToolUse => ("PostToolUse", "hook post-tool-use"),
        HookCommand::Stop => ("Stop", "hook stop"),
    };
    let base = input.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = env
        .claude_project_dir
        .clone()
        .unwrap_or_else(|| stop::workspace(env, &base));
    let (settings, _) = claude_settings::load(&ws);
    settings.iter().any(|s| {
        claude_settings::hooks(&s.value, event)
            .iter()
            .any(|(c, _)| {
                claude_settings::is_ralph_gate_hook(c, sub) && !c.contains("--via plugin")
            })
    })
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
