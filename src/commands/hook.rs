//! `ralph-gate hook EVENT --agent A`: the agent's JSON on stdin, parsed by its adapter, decided
//! agent-neutrally, answered in the agent's own format and exit codes.

use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_base::state::Layout;
use ralph_hook::agents::{self, Agent, Event};
use ralph_hook::claude_settings;
use ralph_hook::hook::{
    post_tool_use, pre_tool_use, promise::TextSource, protocol, shell_effect, stop, Ask, Verdict,
};
use std::io::Write;
use std::path::Path;

/// Who registered a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Settings,
    /// The plugin: stands down where settings register ralph-gate's hook for the same event.
    Plugin,
}

pub fn run(
    event: Event,
    via: Via,
    agent: Agent,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> u8 {
    let mut ask = match protocol::read_stdin()
        .map_err(|e| e.to_string())
        .and_then(|v| agents::ask(agent, event, &v, env).map_err(|e| e.to_string()))
    {
        Ok(ask) => ask,
        Err(e) => {
            say(&format!("ralph-gate hook: {e}"));
            return exit::HOOK_BAD_INPUT;
        }
    };
    // The folder the agent works in, and the workspace its loops live in: resolved once, so
    // every hook of a session reads and writes the same state.
    let base = ask.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    let layout = Layout::workspace_of_hook(env, cwd, &base);
    if via == Via::Plugin && settings_act(event, env, &layout) {
        // Claude Code runs the plugin's hook and the settings' hook for the same event; two
        // would count every stop twice and double the edit feedback.
        return exit::SUCCESS;
    }
    if ralph_loop::loops::maybe_any(&layout) {
        // The program that ran this hook is an agent: nothing it starts approves or cancels
        // a loop (`loop approve` reads this), however it starts it.
        ralph_loop::person::remember(&layout);
    }
    if event != Event::Stop {
        ralph_loop::loops::claim_early(&layout, &ask.session, ask.agent);
    }
    let verdict = match event {
        Event::Guard => pre_tool_use::run(&ask, env, &layout, &base),
        Event::Edit if matches!(ask.call, Some(ralph_hook::guard::Call::Bash(_))) => {
            shell_effect::after(&ask, &layout)
        }
        Event::Edit if ralph_hook::hook::batches::seen(&layout, &ask.session) => Verdict::Silent,
        Event::Edit => post_tool_use::run(&ask, env, &base, config),
        // The session's first batch was checked by its PostToolUse hooks, which stand down
        // from now on.
        Event::Batch if !ralph_hook::hook::batches::note(&layout, &ask.session) => Verdict::Silent,
        Event::Batch if ask.edited.is_empty() => Verdict::Silent,
        Event::Batch => post_tool_use::run(&ask, env, &base, config),
        Event::Response => record_reply(&ask, &layout),
        Event::Prompt => ralph_hook::hook::prompt::run(&ask, &layout),
        Event::Stop => {
            recall_reply(&mut ask, &layout);
            match stop::run(&ask, env, &layout, &base, config) {
                Ok(v) => v,
                Err(e) => {
                    let message = ralph_hook::words::stop_unchecked(&e);
                    let (answer, stderr) = agents::stop_error(agent, &message);
                    if let Some(text) = stderr {
                        say(&text);
                    }
                    return emit(&answer, event);
                }
            }
        }
    };
    emit(&agents::answer(agent, event, &verdict), event)
}

/// Writes the answer. One that cannot be written is said on stderr; at a stop the exit code
/// then refuses it (a loop never ends on an answer nobody read).
fn emit(answer: &agents::Answer, event: Event) -> u8 {
    if let Some(text) = &answer.stdout {
        if let Err(e) = writeln!(std::io::stdout().lock(), "{text}") {
            say(&format!("ralph-gate hook: cannot write the answer: {e}"));
            return match event {
                Event::Stop => exit::HOOK_BLOCKING_ERROR,
                _ => exit::HOOK_NO_ANSWER,
            };
        }
    }
    answer.code
}

/// Keeps the agent's reply for its next stop, for agents whose stop payload lacks it.
fn record_reply(ask: &Ask, layout: &Layout) -> Verdict {
    if let Some(text) = &ask.final_text {
        let _ = ralph_base::atomic::write(&layout.reply(ask.agent, &ask.session), text.as_bytes());
    }
    Verdict::Silent
}

/// At a stop of an agent that keeps its replies (Cursor), the reply its response hook kept is
/// the final message; read from the same workspace it was written to.
fn recall_reply(ask: &mut Ask, layout: &Layout) {
    if !ask.agent.keeps_replies() {
        return;
    }
    if let Ok(text) = std::fs::read_to_string(layout.reply(ask.agent, &ask.session)) {
        ask.final_text = Some(text);
        ask.text_source = TextSource::Recorded;
    }
}

/// True when a settings file registers ralph-gate's hook for this event.
fn settings_act(event: Event, env: &Environment, layout: &Layout) -> bool {
    let (name, sub) = match event {
        Event::Guard => ("PreToolUse", "hook pre-tool-use"),
        Event::Edit => ("PostToolUse", "hook post-tool-use"),
        Event::Stop => ("Stop", "hook stop"),
        Event::Prompt => ("UserPromptSubmit", "hook user-prompt-submit"),
        Event::Batch => ("PostToolBatch", "hook post-tool-batch"),
        Event::Response => return false,
    };
    let (settings, _) = claude_settings::load(env, layout.root());
    settings.iter().any(|s| {
        claude_settings::hooks(&s.value, name).iter().any(|(c, _)| {
            claude_settings::is_ralph_gate_hook(c, sub) && !c.contains("--via plugin")
        })
    })
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
