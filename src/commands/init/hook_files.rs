//! Each agent's hook config: its file, its shape, its event and field names, its timeout unit
//! (agent-hooks.md). Merged into what is there, idempotently, never removing anything.

use ralph_hook::agents::Agent;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// How an agent lists its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Claude's: `hooks.EVENT = [{matcher?, hooks: [{type, command, timeout}]}]`.
    Grouped,
    /// The same groups with the events at the top level (Droid's `.factory/hooks.json`: Droid
    /// 0.225 ignores a `hooks` key there, "Ignoring unknown hook event keys").
    GroupedTop,
    /// Copilot's and Cursor's: `{version: 1, hooks: {event: [ENTRY]}}`.
    Flat,
    /// No command hooks: a plugin file that calls the binary (OpenCode).
    Plugin,
}

/// The OpenCode plugin `init --agent opencode` installs.
pub const OPENCODE_PLUGIN: &str = include_str!("../../../hooks/opencode/ralph-gate.js");

/// One hook ralph-gate registers: the agent's event name, ralph-gate's subcommand, the entry.
struct Hook {
    event: &'static str,
    sub: &'static str,
    entry: Value,
}

pub struct Spec {
    /// The config file, relative to the project.
    pub file: &'static str,
    shape: Shape,
    hooks: Vec<Hook>,
    /// What the user must still do, if anything.
    pub note: Option<&'static str>,
}

/// The platform a hook file is written for: each agent starts hooks through another shell
/// there (agent-hooks.md, claude-code-hooks.md), or with none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and macOS: commands run through `sh -c`, `bash -c` (Gemini CLI, Qwen Code) or the
    /// user's `$SHELL`.
    Unix,
    /// Windows: Claude Code runs a command through Git Bash, else PowerShell; Codex through
    /// PowerShell (`commandWindows`); Copilot its `powershell` entry; Gemini CLI through
    /// PowerShell (`getShellConfiguration`); Qwen Code through `%ComSpec%` (cmd.exe unless
    /// it names PowerShell) or Git Bash under MSYS; Droid and Cursor (Node programs, whose
    /// `shell: true` is `%ComSpec%`) through cmd.exe, a guess no source confirms.
    Windows,
}

impl Platform {
    /// The platform this binary was built for.
    pub fn this() -> Self {
        if ralph_base::platform::WINDOWS {
            Self::Windows
        } else {
            Self::Unix
        }
    }
}

/// A program name every shell reads as one word, unquoted (`ralph-gate`, found on PATH).
fn bare(program: &str) -> bool {
    program
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// `program` as PowerShell starts it: a bare name as it is, a path through the call
/// operator with PowerShell's single quotes (`''` for `'`). A quoted path alone is a
/// string to PowerShell, and the words after it a syntax error.
fn powershell_program(program: &str) -> String {
    if bare(program) {
        program.to_string()
    } else {
        format!("& '{}'", program.replace('\'', "''"))
    }
}

/// `program` as cmd.exe starts it, and Git Bash too: a path in double quotes (a Windows
/// path holds no `"`; cmd.exe takes `'` for a letter of the name).
fn cmd_program(program: &str) -> String {
    if bare(program) {
        program.to_string()
    } else {
        format!("\"{program}\"")
    }
}

/// Hook timeouts, in seconds: the stop budget's default (600 s) plus room to answer.
const EDIT_S: u64 = 120;
const STOP_S: u64 = 900;
const GUARD_S: u64 = 10;

/// `program` is the program as the agent should start it: `ralph-gate` (found on PATH) or
/// an absolute path, unquoted; each entry quotes it for the shell that runs it, or starts it
/// with none (Claude Code's exec form).
pub fn spec(agent: Agent, program: &str, platform: Platform) -> Spec {
    let agent_arg = if agent == Agent::Claude {
        String::new()
    } else {
        format!(" --agent {agent}")
    };
    let powershell = |sub: &str| format!("{} hook {sub}{agent_arg}", powershell_program(program));
    // The one command line of an agent that names no shell: for the shell it runs hooks in.
    let cmd = |sub: &str| match (agent, platform) {
        (_, Platform::Unix) | (Agent::Codex | Agent::Copilot, _) => {
            let quoted = ralph_config::template::shell_quote(program);
            format!("{quoted} hook {sub}{agent_arg}")
        }
        (Agent::Gemini, Platform::Windows) => powershell(sub),
        (_, Platform::Windows) => format!("{} hook {sub}{agent_arg}", cmd_program(program)),
    };
    let entry = |sub: &str, timeout: u64| match (agent, platform) {
        // Exec form: the program started with these arguments and no shell, on every
        // platform (no Git Bash needed on Windows, no login shell's start-up on Unix).
        (Agent::Claude, _) => {
            json!({"type": "command", "command": program, "args": ["hook", sub], "timeout": timeout})
        }
        (Agent::Codex, Platform::Windows) => {
            json!({"type": "command", "command": cmd(sub), "commandWindows": powershell(sub), "timeout": timeout})
        }
        _ => json!({"type": "command", "command": cmd(sub), "timeout": timeout}),
    };
    let grouped = |matcher: Option<&str>, sub: &str, timeout: u64| {
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert("hooks".into(), json!([entry(sub, timeout)]));
        Value::Object(group)
    };
    // Copilot names the shell of each entry: `bash` on Unix, `powershell` on Windows.
    let copilot_shell = match platform {
        Platform::Unix => "bash",
        Platform::Windows => "powershell",
    };
    let copilot = |sub: &str| match platform {
        Platform::Unix => cmd(sub),
        Platform::Windows => powershell(sub),
    };
    let hook = |event: &'static str, sub: &'static str, entry: Value| Hook { event, sub, entry };
    match agent {
        Agent::Claude => Spec {
            file: ".claude/settings.json",
            shape: Shape::Grouped,
            hooks: vec![
                hook("PreToolUse", "pre-tool-use", grouped(Some("Write|Edit|MultiEdit|NotebookEdit|Bash"), "pre-tool-use", GUARD_S)),
                hook("PostToolUse", "post-tool-use", grouped(Some("Write|Edit|MultiEdit|NotebookEdit|Bash"), "post-tool-use", EDIT_S)),
                // A shell command that fails is reported only here; its effect is checked too.
                hook("PostToolUseFailure", "post-tool-use", grouped(Some("Bash"), "post-tool-use", GUARD_S)),
                hook("Stop", "stop", grouped(None, "stop", STOP_S)),
                // Tells the next prompt what a turn ended on the refusal cap left undone.
                hook("UserPromptSubmit", "user-prompt-submit", grouped(None, "user-prompt-submit", GUARD_S)),
                // One edit-gate run per batch of parallel edits (see `hook::batches`).
                hook("PostToolBatch", "post-tool-batch", grouped(None, "post-tool-batch", EDIT_S)),
            ],
            note: None,
        },
        Agent::Codex => Spec {
            file: ".codex/hooks.json",
            shape: Shape::Grouped,
            hooks: vec![
                hook("PostToolUse", "post-tool-use", grouped(Some("apply_patch"), "post-tool-use", EDIT_S)),
                hook("Stop", "stop", grouped(None, "stop", STOP_S)),
            ],
            note: Some("Codex runs a project's hooks only once you trust them: open /hooks in Codex and trust ralph-gate's (and trust the project)"),
        },
        Agent::Gemini => Spec {
            file: ".gemini/settings.json",
            shape: Shape::Grouped,
            // Gemini's timeouts are milliseconds.
            hooks: vec![
                hook("AfterTool", "post-tool-use", grouped(Some("write_file|replace"), "post-tool-use", EDIT_S * 1000)),
                hook("AfterAgent", "stop", grouped(None, "stop", STOP_S * 1000)),
            ],
            note: Some("Gemini CLI runs project hooks in trusted folders only: trust this folder"),
        },
        Agent::Qwen => Spec {
            file: ".qwen/settings.json",
            shape: Shape::Grouped,
            // Qwen 0.24 reads a value >= 1000 as milliseconds, its docs say milliseconds:
            // these are right under both readings.
            hooks: vec![
                hook("PostToolUse", "post-tool-use", grouped(Some("write_file|edit"), "post-tool-use", EDIT_S * 1000)),
                hook("Stop", "stop", grouped(None, "stop", STOP_S * 1000)),
            ],
            note: None,
        },
        Agent::Droid => Spec {
            file: ".factory/hooks.json",
            shape: Shape::GroupedTop,
            hooks: vec![
                hook("PostToolUse", "post-tool-use", grouped(Some("Create|Edit|ApplyPatch"), "post-tool-use", EDIT_S)),
                hook("Stop", "stop", grouped(None, "stop", STOP_S)),
            ],
            note: None,
        },
        Agent::Copilot => Spec {
            file: ".github/hooks/ralph-gate.json",
            shape: Shape::Flat,
            hooks: vec![
                hook("postToolUse", "post-tool-use", json!({"type": "command", copilot_shell: copilot("post-tool-use"),
                    "matcher": "create|edit|apply_patch", "timeoutSec": EDIT_S})),
                hook("agentStop", "stop", json!({"type": "command", copilot_shell: copilot("stop"), "timeoutSec": STOP_S})),
            ],
            note: Some("Copilot CLI runs repository hooks in trusted folders only (and with -p, only with COPILOT_PROMPT_MODE_REPO_HOOKS=1)"),
        },
        Agent::Opencode => Spec {
            file: ".opencode/plugins/ralph-gate.js",
            shape: Shape::Plugin,
            hooks: Vec::new(),
            note: Some("OpenCode loads plugins from .opencode/plugins/ at start: restart it; start loops with `ralph-gate loop start --agent opencode`"),
        },
        Agent::Cursor => Spec {
            file: ".cursor/hooks.json",
            shape: Shape::Flat,
            hooks: vec![
                hook("afterFileEdit", "post-tool-use", json!({"command": cmd("post-tool-use")})),
                hook("afterAgentResponse", "agent-response", json!({"command": cmd("agent-response")})),
                hook("stop", "stop", json!({"command": cmd("stop"), "loop_limit": ralph_hook::agents::CURSOR_LOOP_LIMIT})),
            ],
            note: Some("Cursor's hook protocol is not published on npm: the shape ralph-gate writes is from secondary sources; check it against your Cursor version"),
        },
    }
}

/// A hook file that is not shaped as its agent reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("the file is not a JSON object")]
    NotAnObject,
    #[error("`hooks` is not a JSON object")]
    HooksNotAnObject,
    #[error("`hooks.{0}` is not a JSON array")]
    EventNotAnArray(&'static str),
}

/// Pure: `existing` with the spec's hooks added where no ralph-gate hook for that event is,
/// and the events that got one.
pub fn merge(
    existing: Option<Value>,
    spec: &Spec,
) -> Result<(Value, Vec<&'static str>), ShapeError> {
    let mut root = existing.unwrap_or_else(|| Value::Object(Map::new()));
    let obj = root.as_object_mut().ok_or(ShapeError::NotAnObject)?;
    if spec.shape == Shape::Flat {
        obj.entry("version").or_insert(json!(1));
    }
    let hooks = if spec.shape == Shape::GroupedTop {
        obj
    } else {
        obj.entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or(ShapeError::HooksNotAnObject)?
    };
    let mut added = Vec::new();
    for h in &spec.hooks {
        let list = hooks
            .entry(h.event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or(ShapeError::EventNotAnArray(h.event))?;
        let ours = |c: &str| c.contains("ralph-gate") && c.contains(&format!("hook {}", h.sub));
        let present = list.iter().any(|e| match spec.shape {
            Shape::Grouped | Shape::GroupedTop => {
                e.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                    hs.iter().any(|x| {
                        ralph_hook::claude_settings::command_line(x).is_some_and(|c| ours(&c))
                    })
                })
            }
            Shape::Flat | Shape::Plugin => ["command", "bash", "powershell"]
                .iter()
                .any(|k| e.get(*k).and_then(Value::as_str).is_some_and(ours)),
        });
        if !present {
            list.push(h.entry.clone());
            added.push(h.event);
        }
    }
    Ok((root, added))
}

/// Agents whose config folder the project already has (beside Claude, always set up).
pub fn detected(ws: &Path) -> Vec<Agent> {
    let marks: [(Agent, &[&str]); 7] = [
        (Agent::Codex, &[".codex", "AGENTS.md"]),
        (
            Agent::Copilot,
            &[
                ".github/hooks",
                ".github/copilot",
                ".github/copilot-instructions.md",
            ],
        ),
        (Agent::Gemini, &[".gemini", "GEMINI.md"]),
        (Agent::Cursor, &[".cursor", ".cursorrules"]),
        (Agent::Qwen, &[".qwen", "QWEN.md"]),
        (Agent::Droid, &[".factory"]),
        (Agent::Opencode, &[".opencode", "opencode.json"]),
    ];
    marks
        .iter()
        .filter(|(_, files)| files.iter().any(|f| ws.join(f).exists()))
        .map(|(a, _)| *a)
        .collect()
}

/// The agents whose stops ralph-gate holds in this project: their hook file registers
/// `hook stop` (OpenCode: holds ralph-gate's plugin), or, for Claude Code, any settings file
/// it reads does, or the ralph-gate plugin is enabled.
pub fn set_up(env: &ralph_base::env::Environment, ws: &Path) -> Vec<Agent> {
    Agent::ALL
        .into_iter()
        .filter(|&agent| {
            let spec = spec(agent, "ralph-gate", Platform::this());
            let text = std::fs::read_to_string(path(ws, &spec)).unwrap_or_default();
            let here = if spec.is_plugin() {
                text.contains("ralph-gate")
            } else {
                text.contains("hook stop")
            };
            here || (agent == Agent::Claude && claude_holds_stops(env, ws))
        })
        .collect()
}

fn claude_holds_stops(env: &ralph_base::env::Environment, ws: &Path) -> bool {
    let (settings, _) = ralph_hook::claude_settings::load(env, ws);
    ralph_hook::claude_settings::plugin_enabled(&settings, "ralph-gate").is_some()
        || settings.iter().any(|s| {
            ralph_hook::claude_settings::hooks(&s.value, "Stop")
                .iter()
                .any(|(c, _)| ralph_hook::claude_settings::is_ralph_gate_hook(c, "hook stop"))
        })
}

/// The line `.gitignore` needs for this agent's loop files. Claude Code ignores none of
/// them itself: a new user's `git add -A` during a loop took `.claude/ralph-loop.local.md`.
pub fn ignore_line(agent: Agent) -> String {
    format!("{}/ralph-loop*.local.md", agent.state_dir())
}

impl Spec {
    /// True when this agent gets a plugin file rather than hooks in a config file.
    pub fn is_plugin(&self) -> bool {
        self.shape == Shape::Plugin
    }
}

pub fn path(ws: &Path, spec: &Spec) -> PathBuf {
    ws.join(spec.file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_gets_its_events_in_its_shape_and_units() {
        let (codex, added) =
            merge(None, &spec(Agent::Codex, "ralph-gate", Platform::Unix)).unwrap();
        assert_eq!(added, ["PostToolUse", "Stop"]);
        assert_eq!(codex["hooks"]["PostToolUse"][0]["matcher"], "apply_patch");
        assert_eq!(
            codex["hooks"]["Stop"][0]["hooks"][0]["command"],
            "ralph-gate hook stop --agent codex"
        );
        assert_eq!(codex["hooks"]["Stop"][0]["hooks"][0]["timeout"], 900);

        let (gemini, _) = merge(None, &spec(Agent::Gemini, "ralph-gate", Platform::Unix)).unwrap();
        assert_eq!(
            gemini["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"], 900_000,
            "ms"
        );
        assert_eq!(
            gemini["hooks"]["AfterTool"][0]["matcher"],
            "write_file|replace"
        );

        let (copilot, added) =
            merge(None, &spec(Agent::Copilot, "ralph-gate", Platform::Unix)).unwrap();
        assert_eq!(added, ["postToolUse", "agentStop"]);
        assert_eq!(copilot["version"], 1);
        assert_eq!(
            copilot["hooks"]["agentStop"][0]["bash"],
            "ralph-gate hook stop --agent copilot"
        );
        assert_eq!(copilot["hooks"]["postToolUse"][0]["timeoutSec"], 120);

        let (cursor, _) = merge(None, &spec(Agent::Cursor, "ralph-gate", Platform::Unix)).unwrap();
        assert_eq!(
            cursor["hooks"]["stop"][0]["loop_limit"],
            ralph_hook::agents::CURSOR_LOOP_LIMIT
        );
        assert_eq!(
            cursor["hooks"]["afterAgentResponse"][0]["command"],
            "ralph-gate hook agent-response --agent cursor"
        );
    }

    /// The file `init` writes for each agent on each platform, for a program at a path a
    /// shell must quote (a space, a quote). Sources: claude-code-hooks.md and Claude Code
    /// 2.1.330's settings schema (`args`: exec form, no shell); agent-hooks.md and Codex
    /// 0.169.0's `HookHandlerConfig::Command` (`commandWindows`, run by PowerShell);
    /// Copilot's hooks reference (`bash` and `powershell` entries); Gemini CLI's and Qwen
    /// Code's `getShellConfiguration` (`bash -c` on Unix; PowerShell, and `%ComSpec%` or
    /// Git Bash, on Windows); Droid and Cursor: Node's `shell: true` (unconfirmed).
    #[test]
    fn each_agents_hook_file_on_each_platform() {
        for platform in [Platform::Unix, Platform::Windows] {
            let program = match platform {
                Platform::Unix => "/opt/ralph gate/it's/ralph-gate",
                Platform::Windows => r"C:\Program Files\ralph gate\it's\ralph-gate.exe",
            };
            for agent in Agent::ALL {
                let spec = spec(agent, program, platform);
                if spec.is_plugin() {
                    continue;
                }
                let (file, _) = merge(None, &spec).unwrap();
                let text = serde_json::to_string_pretty(&file).unwrap();
                insta::assert_snapshot!(format!("{agent}-{platform:?}").to_lowercase(), text);
            }
        }
    }

    #[test]
    fn a_hook_in_exec_form_is_found_again_and_not_added_twice() {
        let s = spec(Agent::Claude, "ralph-gate", Platform::Unix);
        let (once, added) = merge(None, &s).unwrap();
        assert_eq!(added.len(), s.hooks.len());
        let stop = &once["hooks"]["Stop"][0]["hooks"][0];
        assert_eq!(stop["command"], "ralph-gate");
        assert_eq!(stop["args"], json!(["hook", "stop"]));
        assert_eq!(
            ralph_hook::claude_settings::command_line(stop).as_deref(),
            Some("ralph-gate hook stop")
        );
        let (twice, added) = merge(Some(once.clone()), &s).unwrap();
        assert!(added.is_empty());
        assert_eq!(twice, once);
    }

    #[test]
    fn powershell_starts_a_path_through_the_call_operator() {
        assert_eq!(powershell_program("ralph-gate"), "ralph-gate");
        assert_eq!(
            powershell_program(r"C:\Program Files\it's\ralph-gate.exe"),
            r"& 'C:\Program Files\it''s\ralph-gate.exe'"
        );
        assert_eq!(cmd_program("ralph-gate"), "ralph-gate");
        assert_eq!(
            cmd_program(r"C:\Program Files\it's\ralph-gate.exe"),
            r#""C:\Program Files\it's\ralph-gate.exe""#
        );
    }

    #[test]
    fn merging_keeps_what_is_there_and_is_idempotent() {
        let s = spec(Agent::Copilot, "ralph-gate", Platform::Unix);
        let existing = json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "./notify.sh"}]}, "x": 1});
        let (once, added) = merge(Some(existing.clone()), &s).unwrap();
        assert_eq!(added, ["postToolUse", "agentStop"]);
        assert_eq!(
            once["hooks"]["agentStop"][0],
            existing["hooks"]["agentStop"][0]
        );
        assert_eq!(once["x"], 1);
        let (twice, added) = merge(Some(once.clone()), &s).unwrap();
        assert!(added.is_empty());
        assert_eq!(twice, once);
        assert!(merge(Some(json!([1])), &s).is_err());
    }
}
