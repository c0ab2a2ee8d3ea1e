//! Real agent CLIs other than Claude Code, from the npm registry, driven offline against the
//! scripted model server (Responses API) with HOME and config in a temporary folder. For each:
//! the model breaks a file -> the gate's error is in its next request; it claims the promise
//! while the file is broken -> the agent goes on and the refusal reaches the model; it fixes
//! the file and claims the promise -> the agent exits and the loop is recorded complete.

use crate::common::{require_tool, which, Repo};
use crate::model_server::{ModelServer, Reply, Wire};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const GATE: &str = "[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n";
const BREAK: &str =
    "*** Begin Patch\n*** Add File: pkg/bad.py\n+def g(:\n+    return 1\n*** End Patch\n";
const FIX: &str =
    "*** Begin Patch\n*** Update File: pkg/bad.py\n@@\n-def g(:\n+def g():\n*** End Patch\n";

/// A home with `ralph-gate` on PATH, as users install it.
struct Home {
    dir: tempfile::TempDir,
    path: std::ffi::OsString,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ralph-gate"), bin.join("ralph-gate"))
            .unwrap();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        Self {
            path: std::env::join_paths(dirs).unwrap(),
            dir,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self, program: &Path, cwd: &Path, env: &[(&str, String)]) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.arg("300")
            .arg(program)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.path())
            .env("TMPDIR", self.path().join("tmp"))
            .env("NO_COLOR", "1");
        for keep in ["CARGO_HOME", "RUSTUP_HOME", "PYENV_ROOT"] {
            if let Some(v) = std::env::var_os(keep) {
                cmd.env(keep, v);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }
}

/// A repository with the Python gate, hooks for `agent` and a loop of that agent (`extra`:
/// more `loop start` options).
fn project(home: &Home, agent: &str) -> Repo {
    project_with(home, agent, &[])
}

fn project_with(home: &Home, agent: &str, extra: &[&str]) -> Repo {
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/ok.py", "x = 1\n");
    repo.commit_all();
    let me = PathBuf::from(env!("CARGO_BIN_EXE_ralph-gate"));
    for args in [
        vec!["init", "--agent", agent],
        [
            &[
                "loop",
                "start",
                "--agent",
                agent,
                "--max-iterations",
                "6",
                "--promise",
                "DONE",
            ][..],
            extra,
            &["Add pkg/bad.py and make every module compile."],
        ]
        .concat(),
    ] {
        let out = home
            .command(&me, repo.path(), &[])
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    repo
}

/// The scripted model every CLI here talks to: it breaks pkg/bad.py, promises too early, fixes
/// the file when refused, then promises. `field` is where the provider's API puts the
/// conversation; `edit` is the tool call that writes the file (its call id, and whether it
/// fixes or breaks it). Requests that offer no tools (a model router, a title) get `other`.
fn scripted(
    field: &'static str,
    other: Option<&'static str>,
    edit: impl Fn(&str, bool) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    move |req| {
        let offers_tools = req
            .get("tools")
            .is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty()));
        if let (Some(text), false) = (other, offers_tools) {
            return Reply::text(text);
        }
        let all = req[field].to_string();
        if all.contains("call_fix") {
            Reply::text("Fixed pkg/bad.py; every module compiles.\n<promise>DONE</promise>")
        } else if all.contains("refused your promise") {
            edit("call_fix", true)
        } else if all.contains("call_break") {
            Reply::text("Done.\n<promise>DONE</promise>")
        } else {
            edit("call_break", false)
        }
    }
}

/// Codex's and Copilot's edit: a patch through `apply_patch`.
fn patch(id: &str, fix: bool) -> Reply {
    Reply::custom(id, "apply_patch", if fix { FIX } else { BREAK })
}

/// A tool call that writes `file` whole, as `tool` takes it (`path_key` names the path).
fn write_with(
    tool: &'static str,
    path_key: &'static str,
    file: PathBuf,
) -> impl Fn(&str, bool) -> Reply + Send + Sync + 'static {
    move |id, fix| {
        let text = if fix {
            "def g():\n    return 1\n"
        } else {
            "def g(:\n    return 1\n"
        };
        Reply::tool(
            id,
            tool,
            serde_json::json!({path_key: file, "content": text}),
        )
    }
}

/// One agent CLI run once in the scenario: how it is configured, started and checked.
struct Cli {
    /// The agent's name in ralph-gate (`init --agent`, `loop start --agent`).
    agent: &'static str,
    program: &'static str,
    wire: Wire,
    /// Where the provider's API puts the conversation.
    field: &'static str,
    /// The answer to requests that offer no tools (a model router, a title).
    other: Option<&'static str>,
    /// The tool call that writes pkg/bad.py.
    edit: fn(&Repo) -> Edit,
    /// Files the CLI reads before it starts (config, sign-in, trust), and its environment.
    setup: fn(&Home, &Repo, &ModelServer) -> Vec<(&'static str, String)>,
    args: &'static [&'static str],
    /// Where init writes the CLI's hooks.
    hooks: &'static str,
    /// Where `loop start --agent` writes the loop.
    loop_file: &'static str,
    /// What else this CLI shows: its stdout, the conversation, the journal's stops.
    check: fn(&str, &[String], &[Value]),
}

type Edit = Box<dyn Fn(&str, bool) -> Reply + Send + Sync>;

const PROMPT: &str = "Add pkg/bad.py and make every module compile.";

fn codex_setup(home: &Home, repo: &Repo, server: &ModelServer) -> Vec<(&'static str, String)> {
    let codex_home = home.path().join("codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"SCRIPTED_KEY\"\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        server.url(),
        repo.path().display()
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    vec![
        ("CODEX_HOME", codex_home.display().to_string()),
        ("SCRIPTED_KEY", "dummy".into()),
    ]
}

fn copilot_setup(_: &Home, _: &Repo, server: &ModelServer) -> Vec<(&'static str, String)> {
    vec![
        ("COPILOT_OFFLINE", "true".into()),
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url())),
        ("COPILOT_PROVIDER_WIRE_API", "responses".into()),
        ("COPILOT_MODEL", "gpt-5.5".into()),
        // Repository hooks run in -p mode only with this, in a trusted folder (exactly
        // "true" trusts the working directory).
        ("COPILOT_PROMPT_MODE_REPO_HOOKS", "1".into()),
        ("COPILOT_ALLOW_ALL", "true".into()),
    ]
}

fn qwen_setup(_: &Home, _: &Repo, server: &ModelServer) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_BASE_URL", format!("{}/v1", server.url())),
        ("OPENAI_API_KEY", "dummy".into()),
        ("OPENAI_MODEL", "scripted".into()),
        ("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1".into()),
    ]
}

/// An API key sign-in, and the project trusted (Gemini CLI runs project hooks only there).
fn gemini_setup(home: &Home, repo: &Repo, server: &ModelServer) -> Vec<(&'static str, String)> {
    let dot = home.path().join(".gemini");
    std::fs::create_dir_all(&dot).unwrap();
    std::fs::write(
        dot.join("settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
    )
    .unwrap();
    std::fs::write(
        dot.join("trustedFolders.json"),
        serde_json::json!({ repo.path().display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    vec![
        ("GEMINI_API_KEY", "dummy".into()),
        ("GOOGLE_GEMINI_BASE_URL", server.url()),
    ]
}

/// A custom (BYOK) model on the scripted server: no Factory sign-in needed.
fn droid_setup(home: &Home, _: &Repo, server: &ModelServer) -> Vec<(&'static str, String)> {
    let dot = home.path().join(".factory");
    std::fs::create_dir_all(&dot).unwrap();
    let settings = serde_json::json!({"customModels": [{"model": "scripted", "displayName": "scripted",
        "baseUrl": format!("{}/v1", server.url()), "apiKey": "dummy",
        "provider": "generic-chat-completion-api", "maxOutputTokens": 1000}]});
    std::fs::write(dot.join("settings.json"), settings.to_string()).unwrap();
    Vec::new()
}

fn writes_file(tool: &'static str) -> impl Fn(&Repo) -> Edit {
    move |repo| {
        Box::new(write_with(
            tool,
            "file_path",
            repo.path().join("pkg/bad.py"),
        ))
    }
}

fn clis() -> Vec<Cli> {
    vec![
        Cli {
            agent: "codex",
            program: "codex",
            wire: Wire::Responses,
            field: "input",
            other: None,
            edit: |_| Box::new(patch),
            setup: codex_setup,
            // Tests only: the hooks ralph-gate registered are trusted without the /hooks review.
            args: &[
                "exec",
                "--json",
                "--dangerously-bypass-hook-trust",
                "-s",
                "danger-full-access",
                PROMPT,
            ],
            hooks: ".codex/hooks.json",
            loop_file: ".codex/ralph-loop.local.md",
            check: |stdout, _, _| assert!(stdout.contains("turn.completed"), "{stdout}"),
        },
        Cli {
            agent: "copilot",
            program: "copilot",
            wire: Wire::Responses,
            field: "input",
            other: None,
            edit: |_| Box::new(patch),
            setup: copilot_setup,
            args: &["-p", PROMPT, "--allow-all-tools"],
            hooks: ".github/hooks/ralph-gate.json",
            loop_file: ".copilot/ralph-loop.local.md",
            check: |_, seen, _| {
                assert!(
                    seen.iter()
                        .any(|r| r.contains("Additional guidance from postToolUse hooks")),
                    "the feedback arrived as Copilot's postToolUse guidance: {seen:#?}"
                )
            },
        },
        Cli {
            agent: "qwen",
            program: "qwen",
            wire: Wire::Chat,
            field: "messages",
            other: Some("ok"),
            edit: |repo| writes_file("write_file")(repo),
            setup: qwen_setup,
            args: &[PROMPT, "--approval-mode", "yolo", "--auth-type", "openai"],
            hooks: ".qwen/settings.json",
            loop_file: ".qwen/ralph-loop.local.md",
            check: |_, _, _| {},
        },
        Cli {
            agent: "gemini",
            program: "gemini",
            wire: Wire::Gemini,
            field: "contents",
            // Requests without tools are the model router asking which model to use.
            other: Some(r#"{"reasoning": "a small edit", "model_choice": "flash"}"#),
            edit: |repo| writes_file("write_file")(repo),
            setup: gemini_setup,
            args: &["-p", PROMPT, "--approval-mode", "yolo"],
            hooks: ".gemini/settings.json",
            loop_file: ".gemini/ralph-loop.local.md",
            check: |_, _, _| {},
        },
        Cli {
            agent: "droid",
            program: "droid",
            wire: Wire::Chat,
            field: "messages",
            other: Some("ok"),
            edit: |repo| writes_file("Create")(repo),
            setup: droid_setup,
            args: &["exec", "--auto", "high", "-m", "custom:scripted", PROMPT],
            hooks: ".factory/hooks.json",
            loop_file: ".factory/ralph-loop.local.md",
            check: |_, _, stops| {
                assert!(
                    stops.iter().all(|e| e["promise_source"] == "transcript"),
                    "Droid's final message comes from its transcript"
                )
            },
        },
    ]
}

/// One CLI through the scenario: the gate's error reaches the model after its edit, its early
/// promise is refused, and the honest one ends the loop.
fn run_the_loop(cli: &Cli, program: &Path) {
    let home = Home::new();
    let repo = project(&home, cli.agent);
    assert!(
        repo.exists(cli.hooks) && repo.exists(cli.loop_file),
        "{}",
        cli.agent
    );
    let server =
        ModelServer::start_wire(cli.wire, scripted(cli.field, cli.other, (cli.edit)(&repo)));
    let env = (cli.setup)(&home, &repo, &server);
    let out = home
        .command(program, repo.path(), &env)
        .args(cli.args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: {}\n{stdout}",
        cli.agent,
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = conversation(&server, cli.field);
    assert_the_loop(cli.agent, &repo, &seen);
    assert!(!repo.exists(cli.loop_file), "{}: the loop ended", cli.agent);
    (cli.check)(&stdout, &seen, &stops(&repo));
}

/// Every CLI in the table, each on its own thread (the runs are independent and mostly wait
/// on their CLI); every failure is reported, not only the first.
#[test]
fn every_agent_cli_runs_a_gated_loop_to_an_honest_end() {
    if !require_tool("python3") {
        return;
    }
    let runs: Vec<(&'static str, std::thread::JoinHandle<()>)> = clis()
        .into_iter()
        .filter(|cli| require_tool(cli.program))
        .map(|cli| {
            let program = which(cli.program).expect("checked");
            (
                cli.agent,
                std::thread::spawn(move || run_the_loop(&cli, &program)),
            )
        })
        .collect();
    let failed: Vec<&str> = runs
        .into_iter()
        .filter_map(|(agent, run)| run.join().is_err().then_some(agent))
        .collect();
    assert!(
        failed.is_empty(),
        "failed: {failed:?} (their panics are above)"
    );
}

fn stops(repo: &Repo) -> Vec<Value> {
    std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "stop")
        .collect()
}

/// What the model saw, request by request (the agent's own requests, which offer tools);
/// `field` is where the provider's API puts the conversation.
fn conversation(server: &ModelServer, field: &str) -> Vec<String> {
    server
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.get("tools").is_some())
        .map(|r| r[field].to_string())
        .collect()
}

fn assert_the_loop(agent: &str, repo: &Repo, seen: &[String]) {
    let fed_back = seen
        .iter()
        .position(|r| {
            r.contains("failed after your edit to pkg/bad.py") && r.contains("SyntaxError")
        })
        .unwrap_or_else(|| panic!("{agent}: the gate's error reached the model: {seen:#?}"));
    let refused = seen
        .iter()
        .position(|r| r.contains("refused your promise"))
        .unwrap_or_else(|| panic!("{agent}: the refusal reached the model: {seen:#?}"));
    assert!(fed_back < refused, "{agent}: feedback, then the refusal");
    let outcomes: Vec<String> = stops(repo)
        .iter()
        .map(|e| e["outcome"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(outcomes, ["promise_refused", "completed"], "{agent}");
    assert!(stops(repo).iter().all(|e| e["agent"] == agent), "{agent}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/bad.py")).unwrap(),
        "def g():\n    return 1\n"
    );
}

/// OpenCode has plugins, not command hooks: `init --agent opencode` installs
/// `hooks/opencode/ralph-gate.js`. `opencode run` ends its process when the session goes idle,
/// so a refusal cannot continue that run: the next run (the Ralph pattern's next iteration)
/// carries the loop on, and the loop ends only when the gates pass and the promise is made.
#[test]
fn opencode_with_the_plugin_gets_feedback_and_ends_a_loop_only_when_honest() {
    if !require_tool("opencode") {
        return;
    }
    let opencode = which("opencode").expect("checked");
    if !require_tool("python3") {
        return;
    }
    let home = Home::new();
    // Each `opencode run` is a new session: the loop is for any session of OpenCode.
    let repo = project_with(&home, "opencode", &["--any-session"]);
    assert!(
        repo.exists(".opencode/plugins/ralph-gate.js")
            && repo.exists(".opencode/ralph-loop.local.md")
    );
    let bad = repo.path().join("pkg/bad.py");
    let target = bad.clone();
    let server = ModelServer::start_wire(Wire::Chat, move |req| {
        if req
            .get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty))
        {
            return Reply::text("A title");
        }
        let all = req["messages"].to_string();
        let write = |id: &str, text: &str| {
            Reply::tool(
                id,
                "write",
                serde_json::json!({"filePath": target, "content": text}),
            )
        };
        if all.contains("Carry on") {
            if all.contains("call_fix") {
                Reply::text("Fixed pkg/bad.py; every module compiles.\n<promise>DONE</promise>")
            } else {
                write("call_fix", "def g():\n    return 1\n")
            }
        } else if all.contains("call_break") {
            Reply::text("Done.\n<promise>DONE</promise>")
        } else {
            write("call_break", "def g(:\n    return 1\n")
        }
    });
    let config = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
            "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "dummy"},
            "models": {"m": {"name": "m"}}}},
        "model": "scripted/m",
        "permission": {"edit": "allow", "bash": "allow"}
    });
    repo.write("opencode.json", &config.to_string());
    let env = |h: &Path| -> Vec<(&'static str, String)> {
        vec![
            ("XDG_CONFIG_HOME", h.join(".config").display().to_string()),
            (
                "XDG_DATA_HOME",
                h.join(".local/share").display().to_string(),
            ),
            ("XDG_CACHE_HOME", h.join(".cache").display().to_string()),
            (
                "XDG_STATE_HOME",
                h.join(".local/state").display().to_string(),
            ),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ]
    };
    let run = |prompt: &str| {
        let out = home
            .command(&opencode, repo.path(), &env(home.path()))
            .args(["run", prompt])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "opencode run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    run("Add pkg/bad.py and make every module compile.");
    let seen = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect::<Vec<_>>();
    assert!(
        seen.iter().any(
            |r| r.contains("failed after your edit to pkg/bad.py") && r.contains("SyntaxError")
        ),
        "the plugin appended the gate's error to the tool's output: {seen:#?}"
    );
    let first: Vec<String> = stops(&repo)
        .iter()
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(first, ["promise_refused"], "one reply, one stop, refused");
    assert!(
        repo.exists(".opencode/ralph-loop.local.md"),
        "the loop goes on"
    );

    run("Carry on: make every module compile.");
    let outcomes: Vec<String> = stops(&repo)
        .iter()
        .map(|e| e["outcome"].as_str().unwrap().to_string())
        .collect();
    let seen: Vec<String> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r["messages"].to_string())
        .collect();
    assert_eq!(outcomes, ["promise_refused", "completed"], "{seen:#?}");
    assert!(stops(&repo).iter().all(|e| e["agent"] == "opencode"));
    assert!(
        !repo.exists(".opencode/ralph-loop.local.md"),
        "the loop ended"
    );
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        "def g():\n    return 1\n"
    );
}

/// Codex's own goal: the model sets it (`create_goal`), breaks a file and marks the goal
/// complete (`update_goal`) while the gate fails. ralph-gate holds the stop, the error reaches
/// the model in the same turn, and once fixed the session ends.
#[test]
fn a_codex_goal_completed_while_a_gate_fails_is_held_until_fixed() {
    codex_goal_held(|all| {
        if all.contains("call_fix") {
            Reply::text("Fixed pkg/bad.py.")
        } else if all.contains("holds your goal") {
            patch("call_fix", true)
        } else if all.contains("call_complete") {
            Reply::text("Goal complete.")
        } else if all.contains("call_break") {
            complete("call_complete")
        } else if all.contains("call_goal") {
            patch("call_break", false)
        } else {
            create_goal()
        }
    });
}

/// A motivated agent pauses its own goal in Codex's database with a shell command: the
/// pause, set during its turn, does not end the hold.
#[test]
fn a_codex_goal_the_agent_pauses_in_the_database_is_still_held() {
    let pause = "python3 -c \"import os, sqlite3; c = sqlite3.connect(os.path.expanduser('~/.codex/goals_1.sqlite')); c.execute(\\\"update thread_goals set status = 'paused'\\\"); c.commit()\"";
    codex_goal_held(move |all| {
        if all.contains("call_complete") {
            Reply::text("Goal complete.")
        } else if all.contains("call_fix") {
            complete("call_complete")
        } else if all.contains("holds your goal") {
            patch("call_fix", true)
        } else if all.contains("call_pause") {
            Reply::text("The goal is paused.")
        } else if all.contains("call_break") {
            Reply::tool(
                "call_pause",
                "exec_command",
                serde_json::json!({"cmd": pause}),
            )
        } else if all.contains("call_goal") {
            patch("call_break", false)
        } else {
            create_goal()
        }
    });
}

fn create_goal() -> Reply {
    Reply::tool(
        "call_goal",
        "create_goal",
        serde_json::json!({"objective": "pkg/bad.py compiles"}),
    )
}

fn complete(id: &str) -> Reply {
    Reply::tool(id, "update_goal", serde_json::json!({"status": "complete"}))
}

/// Codex (as users run it, `CODEX_HOME` unset) with a goal whose model answers by `script`
/// (given the conversation): the gate's error reaches the model, the fix lands, and the
/// stops are one refusal, then the goal's completion.
fn codex_goal_held(script: impl Fn(&str) -> Reply + Send + Sync + 'static) {
    if !require_tool("codex") || !require_tool("python3") {
        return;
    }
    let home = Home::new();
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/ok.py", "x = 1\n");
    repo.commit_all();
    let me = PathBuf::from(env!("CARGO_BIN_EXE_ralph-gate"));
    let out = home
        .command(&me, repo.path(), &[])
        .args(["init", "--agent", "codex"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let server = ModelServer::start_wire(Wire::Responses, move |req| {
        script(&req["input"].to_string())
    });
    let mut env = codex_setup(&home, &repo, &server);
    // CODEX_HOME unset: the hook finds the goals from the rollout's path.
    let codex_home = home.path().join(".codex");
    std::fs::rename(home.path().join("codex"), &codex_home).unwrap();
    env.retain(|(k, _)| *k != "CODEX_HOME");
    let out = home
        .command(&which("codex").unwrap(), repo.path(), &env)
        .args([
            "exec",
            "--json",
            "--dangerously-bypass-hook-trust",
            "-s",
            "danger-full-access",
            "Add pkg/bad.py; use a goal.",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = conversation(&server, "input");
    assert!(
        seen.iter()
            .any(|c| c.contains("holds your goal") && c.contains("SyntaxError")),
        "the refusal with the gate's error reached the model: {seen:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/bad.py")).unwrap(),
        "def g():\n    return 1\n"
    );
    let outcomes: Vec<String> = stops(&repo)
        .iter()
        .map(|e| e["outcome"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        outcomes,
        ["goal_refused", "completed"],
        "{:#?}",
        stops(&repo)
    );
    assert!(
        !std::fs::read_dir(repo.path().join(".codex"))
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("ralph-loop")),
        "the goal's loop ended"
    );
}

/// `loop run` with Codex: the first `codex exec` claims the promise over a failing gate; the
/// second, a new process and thread, gets the gate's error in its prompt and fixes the file.
#[test]
fn loop_run_drives_codex_exec_until_the_gate_passes() {
    if !require_tool("codex") || !require_tool("python3") {
        return;
    }
    let home = Home::new();
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/bad.py", "def g(:\n    return 1\n");
    repo.commit_all();
    let server = ModelServer::start_wire(Wire::Responses, |req| {
        let all = req["input"].to_string();
        if all.contains("call_fix") {
            Reply::text("Fixed pkg/bad.py. <promise>COMPLETE</promise>")
        } else if all.contains("ralph-gate, after iteration 1") {
            patch("call_fix", true)
        } else {
            Reply::text("Nothing to do. <promise>COMPLETE</promise>")
        }
    });
    let env = codex_setup(&home, &repo, &server);
    let me = PathBuf::from(env!("CARGO_BIN_EXE_ralph-gate"));
    let out = home
        .command(&me, repo.path(), &env)
        .args([
            "loop",
            "run",
            "--agent",
            "codex",
            "--max-iterations",
            "4",
            "--agent-arg=-s",
            "--agent-arg=danger-full-access",
            "Make pkg/bad.py compile.",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("done after 2 iterations"), "{stdout}");
    let seen = conversation(&server, "input");
    let second = seen
        .iter()
        .find(|c| c.contains("ralph-gate, after iteration 1"))
        .unwrap_or_else(|| panic!("a second iteration: {seen:#?}"));
    assert!(second.contains("SyntaxError"), "{second}");
    assert!(!second.contains("Nothing to do."), "a new thread: {second}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/bad.py")).unwrap(),
        "def g():\n    return 1\n"
    );
    let journal = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
    let iterations: Vec<serde_json::Value> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "iteration")
        .collect();
    assert_eq!(iterations.len(), 2, "{journal}");
    // Codex reports tokens, not cost.
    assert!(iterations[0]["tokens"].as_u64().is_some(), "{journal}");
    assert_eq!(iterations[1]["outcome"], "completed", "{journal}");
}

/// One agent `loop run` drives beside Claude Code and Codex: how to talk to it, and the
/// arguments its run needs here.
struct Driven {
    agent: &'static str,
    wire: Wire,
    /// Where the provider's API puts the conversation.
    field: &'static str,
    /// The answer to requests that offer no tools (a model router, a title).
    other: &'static str,
    setup: fn(&Home, &Repo, &ModelServer) -> Vec<(&'static str, String)>,
    extra: &'static [&'static str],
    /// The tool call that writes the fixed pkg/bad.py.
    fix: fn(&Repo) -> Edit,
    /// The agent overwrites only a file it read in the same session (Qwen Code).
    read_first: bool,
}

/// `loop run --agent X` for Gemini CLI, Qwen Code, Droid and Copilot CLI: the first process
/// claims the promise over a failing gate; the second, a new session that knows nothing of
/// the first, gets the gate's error in its prompt and fixes the file; the run ends done.
#[test]
fn loop_run_drives_every_other_agent_until_the_gate_passes() {
    let driven = [
        Driven {
            agent: "gemini",
            wire: Wire::Gemini,
            field: "contents",
            other: r#"{"reasoning": "a small edit", "model_choice": "flash"}"#,
            setup: gemini_setup,
            extra: &[],
            fix: |repo| writes_file("write_file")(repo),
            read_first: false,
        },
        Driven {
            agent: "qwen",
            wire: Wire::Chat,
            field: "messages",
            other: "ok",
            setup: qwen_setup,
            extra: &["--agent-arg=--auth-type", "--agent-arg=openai"],
            fix: |repo| writes_file("write_file")(repo),
            read_first: true,
        },
        Driven {
            agent: "droid",
            wire: Wire::Chat,
            field: "messages",
            other: "ok",
            setup: droid_setup,
            extra: &["--agent-arg=-m", "--agent-arg=custom:scripted"],
            fix: |repo| writes_file("Create")(repo),
            read_first: false,
        },
        Driven {
            agent: "copilot",
            wire: Wire::Responses,
            field: "input",
            other: "ok",
            setup: copilot_setup,
            extra: &["--agent-arg=--allow-all-tools"],
            fix: |_| Box::new(patch),
            read_first: false,
        },
    ];
    for d in driven {
        if !require_tool(d.agent) || !require_tool("python3") {
            return;
        }
        claims_then_fixes(&d);
    }
}

fn claims_then_fixes(d: &Driven) {
    let home = Home::new();
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/bad.py", "def g(:\n    return 1\n");
    repo.commit_all();
    let fix = (d.fix)(&repo);
    let bad = repo.path().join("pkg/bad.py");
    let (field, other, read_first) = (d.field, d.other, d.read_first);
    let server = ModelServer::start_wire(d.wire, move |req| {
        let offers_tools = req
            .get("tools")
            .is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty()));
        if !offers_tools {
            return Reply::text(other);
        }
        let all = req[field].to_string();
        if all.contains("call_fix") {
            Reply::text("Fixed pkg/bad.py. <promise>COMPLETE</promise>")
        } else if read_first
            && all.contains("ralph-gate, after iteration 1")
            && !all.contains("call_read")
        {
            Reply::tool(
                "call_read",
                "read_file",
                serde_json::json!({"file_path": bad}),
            )
        } else if all.contains("ralph-gate, after iteration 1") {
            fix("call_fix", true)
        } else {
            Reply::text("Nothing to do. <promise>COMPLETE</promise>")
        }
    });
    let env = (d.setup)(&home, &repo, &server);
    let me = PathBuf::from(env!("CARGO_BIN_EXE_ralph-gate"));
    let mut args = vec!["loop", "run", "--agent", d.agent, "--max-iterations", "4"];
    args.extend_from_slice(d.extra);
    args.push("Make pkg/bad.py compile.");
    let out = home
        .command(&me, repo.path(), &env)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let agent = d.agent;
    assert_eq!(out.status.code(), Some(0), "{agent}: {stdout}\n{stderr}");
    assert!(
        stdout.contains("done after 2 iterations"),
        "{agent}: {stdout}"
    );
    let seen = conversation(&server, d.field);
    let second = seen
        .iter()
        .find(|c| c.contains("ralph-gate, after iteration 1"))
        .unwrap_or_else(|| panic!("{agent}: a second iteration: {seen:#?}"));
    assert!(second.contains("SyntaxError"), "{agent}: {second}");
    assert!(
        !second.contains("Nothing to do."),
        "{agent}: a new session: {second}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/bad.py")).unwrap(),
        "def g():\n    return 1\n",
        "{agent}"
    );
}

#[test]
fn loop_run_drives_opencode_until_the_gate_passes() {
    if !require_tool("opencode") || !require_tool("python3") {
        return;
    }
    let home = Home::new();
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/bad.py", "def g(:\n    return 1\n");
    repo.commit_all();
    let target = repo.path().join("pkg/bad.py");
    let server = ModelServer::start_wire(Wire::Chat, move |req| {
        if req
            .get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty))
        {
            return Reply::text("A title");
        }
        let all = req["messages"].to_string();
        if all.contains("call_fix") {
            Reply::text("Fixed pkg/bad.py. <promise>COMPLETE</promise>")
        } else if all.contains("ralph-gate, after iteration 1") {
            Reply::tool(
                "call_fix",
                "write",
                serde_json::json!({"filePath": target, "content": "def g():\n    return 1\n"}),
            )
        } else {
            Reply::text("Nothing to do. <promise>COMPLETE</promise>")
        }
    });
    let config = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
            "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "dummy"},
            "models": {"m": {"name": "m"}}}},
        "model": "scripted/m",
        "permission": {"edit": "allow", "bash": "allow"}
    });
    repo.write("opencode.json", &config.to_string());
    let h = home.path();
    let env: Vec<(&'static str, String)> = vec![
        ("XDG_CONFIG_HOME", h.join(".config").display().to_string()),
        (
            "XDG_DATA_HOME",
            h.join(".local/share").display().to_string(),
        ),
        ("XDG_CACHE_HOME", h.join(".cache").display().to_string()),
        (
            "XDG_STATE_HOME",
            h.join(".local/state").display().to_string(),
        ),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
    ];
    let me = PathBuf::from(env!("CARGO_BIN_EXE_ralph-gate"));
    let out = home
        .command(&me, repo.path(), &env)
        .args([
            "loop",
            "run",
            "--agent",
            "opencode",
            "--max-iterations",
            "4",
            "Make pkg/bad.py compile.",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("done after 2 iterations"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("pkg/bad.py")).unwrap(),
        "def g():\n    return 1\n"
    );
    let journal = std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl")).unwrap();
    assert!(
        journal.contains("\"tokens\":"),
        "OpenCode reports tokens: {journal}"
    );
}
