//! `ralph-gate hook EVENT --agent A`: the agent's JSON on stdin, parsed by its adapter, decided
//! agent-neutrally, answered in the agent's own format and exit codes.

use crate::agents::{self, Agent, Event};
use crate::claude_settings;
use crate::cli::{HookCommand, HookVia};
use crate::env::Environment;
use crate::exit;
use crate::hook::{post_tool_use, pre_tool_use, protocol, stop, Ask, Verdict};
use std::io::Write;
use std::path::Path;

pub fn run(
    which: &HookCommand,
    via: HookVia,
    agent: Agent,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> u8 {
    let event = match which {
        HookCommand::PreToolUse => Event::Guard,
        HookCommand::PostToolUse => Event::Edit,
        HookCommand::Stop => Event::Stop,
        HookCommand::AgentResponse => Event::Response,
    };
    let ask = match protocol::read_stdin()
        .map_err(|e| e.to_string())
        .and_then(|v| agents::ask(agent, event, &v).map_err(|e| e.to_string()))
    {
        Ok(ask) => ask,
        Err(e) => {
            say(&format!("ralph-gate hook: {e}"));
            return exit::HOOK_BAD_INPUT;
        }
    };
    if via == HookVia::Plugin && settings_act(event, env, &ask, cwd) {
        // Claude Code runs the plugin's hook and the settings' hook for the same event; two
        // would count every stop twice and double the edit feedback.
        return exit::SUCCESS;
    }
    let verdict = match event {
        Event::Guard => pre_tool_use::run(&ask, env, cwd),
        Event::Edit => post_tool_use::run(&ask, env, cwd, config),
        Event::Response => record_reply(&ask, env, cwd),
        Event::Stop => match stop::run(&ask, env, cwd, config) {
            Ok(v) => v,
            Err(e) => {
                let message =
                    format!("ralph-gate could not check this stop, so the loop goes on: {e}");
                let (answer, stderr) = agents::stop_error(agent, &message);
                if let Some(text) = stderr {
                    say(&text);
                }
                return emit(&answer);
            }
        },
    };
    emit(&agents::answer(agent, event, &verdict))
}

fn emit(answer: &agents::Answer) -> u8 {
    if let Some(text) = &answer.stdout {
        if writeln!(std::io::stdout().lock(), "{text}").is_err() {
            return exit::HOOK_BAD_INPUT;
        }
    }
    answer.code
}

/// Keeps the agent's reply for its next stop, for agents whose stop payload lacks it.
fn record_reply(ask: &Ask, env: &Environment, cwd: &Path) -> Verdict {
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = stop::workspace(env, &base);
    if let Some(text) = &ask.final_text {
        let _ = crate::atomic::write(
            &agents::reply_file(ask.agent, &ws, &ask.session),
            text.as_bytes(),
        );
    }
    Verdict::Silent
}

/// True when a settings file registers ralph-gate's hook for this event.
fn settings_act(event: Event, env: &Environment, ask: &Ask, cwd: &Path) -> bool {
    let (name, sub) = match event {
        Event::Guard => ("PreToolUse", "hook pre-tool-use"),
        Event::Edit => ("PostToolUse", "hook post-tool-use"),
        Event::Stop => ("Stop", "hook stop"),
        Event::Response => return false,
    };
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let ws = env
        .claude_project_dir
        .clone()
        .unwrap_or_else(|| stop::workspace(env, &base));
    let (settings, _) = claude_settings::load(&ws);
    settings.iter().any(|s| {
        claude_settings::hooks(&s.value, name).iter().any(|(c, _)| {
            claude_settings::is_ralph_gate_hook(c, sub) && !c.contains("--via plugin")
        })
    })
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
