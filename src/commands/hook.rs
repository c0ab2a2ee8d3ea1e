//! `ralph-gate hook ...`: stdin in, Claude Code's JSON out, exit codes as Claude Code reads them.

use crate::cli::HookCommand;
use crate::env::Environment;
use crate::exit;
use crate::hook::{post_tool_use, pre_tool_use, protocol, stop};
use std::io::Write;
use std::path::Path;

pub fn run(which: &HookCommand, env: &Environment, cwd: &Path, config: Option<&Path>) -> u8 {
    let input = match protocol::read_stdin() {
        Ok(input) => input,
        Err(e) => {
            say(&format!("ralph-gate hook: {e}"));
            return exit::HOOK_BAD_INPUT;
        }
    };
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

fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}
