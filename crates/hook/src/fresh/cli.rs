//! How each agent runs one `loop run` iteration: its non-interactive command line, and how
//! its final message, cost and tokens are read from its own output. Settled in the real CLIs
//! (Claude Code 2.1.330, Codex 0.169):
//!
//! - `claude -p PROMPT --output-format json --permission-mode acceptEdits`: one JSON object,
//!   `result` (the final message), `total_cost_usd`, `usage.input_tokens`/`output_tokens`,
//!   `is_error`, `session_id`.
//! - `codex exec --json -s workspace-write -o FILE PROMPT`: the final message in FILE, JSONL
//!   events on stdout, `turn.completed` with `usage` (`input_tokens`, `output_tokens`); no
//!   cost is reported.
//! - `qwen --output-format json --approval-mode auto-edit --prompt=PROMPT` (Qwen Code 0.24):
//!   a JSON array of Claude-shaped events, the last `result` as Claude Code's.
//! - `droid exec -o json --auto low -- PROMPT`: one Claude-shaped `result` object.
//! - `copilot --output-format json --silent --prompt=PROMPT`: JSONL events, the final message
//!   in the last `assistant.message`; no tool allowed unless `--agent-arg` says.
//! - `opencode run --format json -- PROMPT`: JSONL events, `text` parts of the last message,
//!   `step_finish` parts with `tokens.total` and `cost`.
//! - `gemini --output-format json --approval-mode auto_edit --prompt=PROMPT`: one JSON
//!   object, `response` and `stats.models.*.tokens.total`; no cost.
//!
//! The extra arguments a person gives (`--agent-arg`) come after these, so they win where the
//! CLI takes the last of an option (`--permission-mode bypassPermissions`).

use ralph_base::agent::Agent;
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;

/// The command of one iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<OsString>,
}

/// What an iteration's agent said and spent, as far as its output tells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Said {
    pub final_text: Option<String>,
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
    /// The agent's own error word, when its output carries one.
    pub error: Option<String>,
}

/// An agent `loop run` does not drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("`loop run` drives claude, codex, gemini, qwen, droid, copilot and opencode, not {0}; for {0}, `loop start --agent {0} --any-session` holds a shell loop of your own")]
pub struct Unsupported(pub Agent);

/// The agents `loop run` drives, and how to install the missing one.
pub fn supported(agent: Agent) -> Result<&'static str, Unsupported> {
    match agent {
        Agent::Claude => Ok("npm i -g @anthropic-ai/claude-code"),
        Agent::Codex => Ok("npm i -g @openai/codex"),
        Agent::Gemini => Ok("npm i -g @google/gemini-cli"),
        Agent::Qwen => Ok("npm i -g @qwen-code/qwen-code"),
        Agent::Droid => Ok("npm i -g @factory/cli"),
        Agent::Copilot => Ok("npm i -g @github/copilot"),
        Agent::Opencode => Ok("npm i -g opencode-ai"),
        other => Err(Unsupported(other)),
    }
}

/// The command line of one iteration of `agent` with `prompt`; `last` is a file the agent may
/// write its final message to.
pub fn invocation(agent: Agent, prompt: &str, extra: &[String], last: &Path) -> Invocation {
    let mut args: Vec<OsString> = match agent {
        Agent::Codex => {
            let mut a: Vec<OsString> =
                vec!["exec".into(), "--json".into(), "-o".into(), last.into()];
            // Codex refuses a sandbox given twice: the person's choice replaces the default.
            if !extra.iter().any(|e| chooses_sandbox(e)) {
                a.extend(["-s".into(), "workspace-write".into()]);
            }
            a
        }
        Agent::Gemini | Agent::Qwen => {
            let mut a: Vec<OsString> = vec!["--output-format".into(), "json".into()];
            if !extra
                .iter()
                .any(|e| e.starts_with("--approval-mode") || e == "--yolo" || e == "-y")
            {
                // The same mode, spelled by each.
                let mode = if agent == Agent::Qwen {
                    "auto-edit"
                } else {
                    "auto_edit"
                };
                a.extend(["--approval-mode".into(), mode.into()]);
            }
            // `--prompt=` keeps a prompt that starts with `-` one value.
            let mut p = OsString::from("--prompt=");
            p.push(prompt);
            a.push(p);
            a
        }
        Agent::Droid => {
            let mut a: Vec<OsString> = vec!["exec".into(), "-o".into(), "json".into()];
            if !extra
                .iter()
                .any(|e| e.starts_with("--auto") || e == "--skip-permissions-unsafe")
            {
                a.extend(["--auto".into(), "low".into()]);
            }
            a
        }
        // Permissions come from the project's or the user's opencode.json.
        Agent::Opencode => vec!["run".into(), "--format".into(), "json".into()],
        Agent::Copilot => {
            // No tool is allowed by default: `--agent-arg=--allow-all-tools` (or narrower
            // `--allow-tool`) says what an unattended Copilot may run.
            let mut p = OsString::from("--prompt=");
            p.push(prompt);
            vec![
                "--output-format".into(),
                "json".into(),
                "--silent".into(),
                p,
            ]
        }
        _ => vec![
            "-p".into(),
            "--output-format".into(),
            "json".into(),
            "--permission-mode".into(),
            "acceptEdits".into(),
        ],
    };
    args.extend(extra.iter().map(OsString::from));
    if !matches!(agent, Agent::Gemini | Agent::Qwen | Agent::Copilot) {
        // The prompt last: after `--`, so one starting with `-` is not read as an option.
        args.push("--".into());
        args.push(prompt.into());
    }
    Invocation {
        program: agent.name().to_string(),
        args,
    }
}

fn chooses_sandbox(arg: &str) -> bool {
    matches!(
        arg,
        "-s" | "--sandbox" | "--full-auto" | "--dangerously-bypass-approvals-and-sandbox"
    ) || arg.starts_with("--sandbox=")
        || (arg.starts_with("-s") && arg.len() > 2)
}

/// Pure: what the agent said, from its stdout and the final-message file's text.
pub fn said(agent: Agent, stdout: &str, last_file: Option<&str>) -> Said {
    match agent {
        Agent::Codex => codex(stdout, last_file),
        Agent::Gemini => gemini(stdout),
        Agent::Copilot => copilot(stdout),
        Agent::Opencode => opencode(stdout),
        _ => claude(stdout),
    }
}

fn claude(stdout: &str) -> Said {
    // Claude Code prints one object (or one per line with stream-json); Qwen Code an array
    // of the same events.
    let events: Vec<Value> = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Array(all)) => all,
        _ => stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .collect(),
    };
    let Some(v) = events.into_iter().rev().find(|v| v["type"] == "result") else {
        return Said::default();
    };
    let usage = &v["usage"];
    let tokens = usage["input_tokens"]
        .as_u64()
        .zip(usage["output_tokens"].as_u64())
        .map(|(i, o)| i + o);
    Said {
        final_text: v["result"].as_str().map(str::to_string),
        cost_usd: v["total_cost_usd"].as_f64(),
        tokens,
        error: (v["is_error"] == true).then(|| {
            v["result"]
                .as_str()
                .or(v["subtype"].as_str())
                .unwrap_or("error")
                .to_string()
        }),
    }
}

/// Gemini CLI's `--output-format json`: one (pretty-printed) object, `response` and, per
/// model, `stats.models.*.tokens.total`; no cost.
fn gemini(stdout: &str) -> Said {
    let object = stdout
        .find('{')
        .zip(stdout.rfind('}'))
        .and_then(|(a, b)| serde_json::from_str::<Value>(&stdout[a..=b]).ok());
    let Some(v) = object else {
        return Said::default();
    };
    let tokens = v["stats"]["models"].as_object().map(|models| {
        models
            .values()
            .filter_map(|m| m["tokens"]["total"].as_u64())
            .sum()
    });
    Said {
        final_text: v["response"].as_str().map(str::to_string),
        cost_usd: None,
        tokens,
        error: v["error"]["message"].as_str().map(str::to_string),
    }
}

/// Copilot CLI's `--output-format json`: JSONL events; the final message is the last
/// `assistant.message`'s `data.content`. Neither tokens nor cost are reported.
fn copilot(stdout: &str) -> Said {
    let final_text = stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(|v| v["type"] == "assistant.message")
        .filter_map(|v| v["data"]["content"].as_str().map(str::to_string))
        .find(|t| !t.trim().is_empty());
    Said {
        final_text,
        ..Said::default()
    }
}

/// OpenCode's `run --format json`: JSONL events; the final message is the text parts of the
/// last message; `step_finish` parts carry tokens and cost.
fn opencode(stdout: &str) -> Said {
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .collect();
    let last = events
        .iter()
        .rev()
        .find(|v| v["type"] == "text")
        .and_then(|v| v["part"]["messageID"].as_str());
    let text: Vec<&str> = events
        .iter()
        .filter(|v| v["type"] == "text" && v["part"]["messageID"].as_str() == last)
        .filter_map(|v| v["part"]["text"].as_str())
        .collect();
    let steps: Vec<&Value> = events
        .iter()
        .filter(|v| v["type"] == "step_finish")
        .collect();
    Said {
        final_text: (!text.is_empty()).then(|| text.concat()),
        cost_usd: steps.iter().map(|v| v["part"]["cost"].as_f64()).sum(),
        tokens: steps
            .iter()
            .map(|v| v["part"]["tokens"]["total"].as_u64())
            .sum(),
        error: None,
    }
}

fn codex(stdout: &str, last_file: Option<&str>) -> Said {
    let mut tokens: Option<u64> = None;
    let mut from_events = None;
    let mut error = None;
    for v in stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    {
        match v["type"].as_str() {
            Some("turn.completed") => {
                let u = &v["usage"];
                let n = u["input_tokens"].as_u64().unwrap_or(0)
                    + u["output_tokens"].as_u64().unwrap_or(0);
                tokens = Some(tokens.unwrap_or(0) + n);
            }
            Some("item.completed") if v["item"]["type"] == "agent_message" => {
                from_events = v["item"]["text"].as_str().map(str::to_string);
            }
            Some("turn.failed") | Some("error") => {
                error = v["error"]["message"]
                    .as_str()
                    .or(v["message"].as_str())
                    .map(str::to_string);
            }
            _ => {}
        }
    }
    Said {
        final_text: last_file
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string)
            .or(from_events),
        cost_usd: None,
        tokens,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_json_gives_the_result_cost_and_tokens() {
        let out = r#"{"type":"result","subtype":"success","is_error":false,"result":"Done <promise>COMPLETE</promise>","total_cost_usd":0.25,"usage":{"input_tokens":10,"output_tokens":5}}"#;
        let s = said(Agent::Claude, out, None);
        assert_eq!(
            s.final_text.as_deref(),
            Some("Done <promise>COMPLETE</promise>")
        );
        assert_eq!(
            (s.cost_usd, s.tokens, s.error),
            (Some(0.25), Some(15), None)
        );
        assert_eq!(said(Agent::Claude, "not json", None), Said::default());
    }

    #[test]
    fn codex_events_give_the_message_and_tokens_and_the_file_wins() {
        let out = "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"from events\"}}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":7,\"output_tokens\":3}}\n";
        let s = said(Agent::Codex, out, None);
        assert_eq!(s.final_text.as_deref(), Some("from events"));
        assert_eq!(s.tokens, Some(10));
        let s = said(Agent::Codex, out, Some("from the file\n"));
        assert_eq!(s.final_text.as_deref(), Some("from the file\n"));
    }

    #[test]
    fn qwen_json_is_an_array_of_claude_shaped_events() {
        let out = r#"[{"type":"system","subtype":"init"},{"type":"result","is_error":false,"result":"Hi <promise>COMPLETE</promise>","usage":{"input_tokens":20,"output_tokens":10}}]"#;
        let s = said(Agent::Qwen, out, None);
        assert_eq!(
            s.final_text.as_deref(),
            Some("Hi <promise>COMPLETE</promise>")
        );
        assert_eq!((s.tokens, s.cost_usd), (Some(30), None));
    }

    #[test]
    fn copilot_jsonl_gives_the_last_assistant_message() {
        let out = "{\"type\":\"assistant.message\",\"data\":{\"content\":\"first\"}}\n{\"type\":\"assistant.message\",\"data\":{\"content\":\"Done <promise>COMPLETE</promise>\"}}\n{\"type\":\"result\",\"exitCode\":0}\n";
        let s = said(Agent::Copilot, out, None);
        assert_eq!(
            s.final_text.as_deref(),
            Some("Done <promise>COMPLETE</promise>")
        );
    }

    #[test]
    fn opencode_jsonl_gives_the_last_messages_text_tokens_and_cost() {
        let out = concat!(
            "{\"type\":\"text\",\"part\":{\"messageID\":\"m1\",\"text\":\"old\"}}\n",
            "{\"type\":\"step_finish\",\"part\":{\"tokens\":{\"total\":7},\"cost\":0.01}}\n",
            "{\"type\":\"text\",\"part\":{\"messageID\":\"m2\",\"text\":\"Done \"}}\n",
            "{\"type\":\"text\",\"part\":{\"messageID\":\"m2\",\"text\":\"<promise>COMPLETE</promise>\"}}\n",
            "{\"type\":\"step_finish\",\"part\":{\"tokens\":{\"total\":8},\"cost\":0.02}}\n"
        );
        let s = said(Agent::Opencode, out, None);
        assert_eq!(
            s.final_text.as_deref(),
            Some("Done <promise>COMPLETE</promise>")
        );
        assert_eq!(s.tokens, Some(15));
        assert!((s.cost_usd.unwrap() - 0.03).abs() < 1e-9);
    }

    #[test]
    fn gemini_json_gives_the_response_and_tokens() {
        let out = "Loaded cached credentials.\n{\n  \"response\": \"Done <promise>COMPLETE</promise>\",\n  \"stats\": {\"models\": {\"m\": {\"tokens\": {\"total\": 42}}}}\n}\n";
        let s = said(Agent::Gemini, out, None);
        assert_eq!(
            s.final_text.as_deref(),
            Some("Done <promise>COMPLETE</promise>")
        );
        assert_eq!(s.tokens, Some(42));
    }

    #[test]
    fn the_prompt_is_one_argument_and_extra_arguments_come_after_the_defaults() {
        let extra = vec!["--model".to_string(), "m".to_string()];
        let i = invocation(Agent::Claude, "-x; rm -rf /", &extra, Path::new("/t/last"));
        assert_eq!(i.program, "claude");
        assert_eq!(
            i.args[i.args.len() - 4..],
            ["--model", "m", "--", "-x; rm -rf /"].map(OsString::from)
        );
        let g = invocation(Agent::Gemini, "-p x", &[], Path::new("/t/last"));
        assert!(g.args.contains(&OsString::from("--prompt=-p x")));
        let i = invocation(Agent::Codex, "-p", &[], Path::new("/t/last"));
        assert!(i.args.contains(&OsString::from("workspace-write")));
        let own = ["-s".to_string(), "danger-full-access".to_string()];
        let mine = invocation(Agent::Codex, "x", &own, Path::new("/t/last"));
        assert!(!mine.args.contains(&OsString::from("workspace-write")));
        assert_eq!(
            i.args[i.args.len() - 2..],
            [OsString::from("--"), OsString::from("-p")]
        );
        assert!(supported(Agent::Cursor).is_err());
        let q = invocation(Agent::Qwen, "x", &[], Path::new("/t/last"));
        assert!(q.args.contains(&OsString::from("auto-edit")));
    }
}
