//! `ralph-gate loop start|status|list|cancel`: the loop state files, by hand.

use crate::cli::{LoopCommand, LoopStartArgs};
use crate::commands::AppError;
use crate::env::Environment;
use crate::exit;
use crate::hook::stop::workspace;
use crate::journal;
use crate::journal::now;
use crate::loop_state::{self, LoopFile, LoopState};
use crate::pin::store::Store;
use crate::project::Project;
use std::io::Write;
use std::path::Path;

pub fn run(
    cmd: &LoopCommand,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, AppError> {
    let ws = workspace(env, cwd);
    let text = match cmd {
        LoopCommand::Start(args) => start(&ws, args, env, cwd, config)?,
        LoopCommand::Status => status(&loop_state::list(&ws)),
        LoopCommand::List => list(&loop_state::list(&ws)),
        LoopCommand::Cancel { id } => cancel(&ws, id.as_deref(), env)?,
        LoopCommand::Approve { id } => approve(&ws, id.as_deref(), env, cwd, config)?,
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

fn start(
    ws: &Path,
    args: &LoopStartArgs,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<String, AppError> {
    let prompt = match &args.prompt_file {
        Some(f) => std::fs::read_to_string(f).map_err(|e| {
            AppError::Usage(format!("cannot read --prompt-file {}: {e}", f.display()))
        })?,
        None => args.prompt.join(" "),
    };
    if prompt.trim().is_empty() {
        return Err(AppError::Usage("the prompt is empty".into()));
    }
    let promise = args.promise.as_deref().map(crate::hook::promise::normalize);
    if let Some(p) = &promise {
        if p.is_empty() || p.contains('"') {
            return Err(AppError::Usage(
                "--promise must be non-empty text without double quotes (the state file stores it in quotes)".into(),
            ));
        }
    }
    let agent = args.agent;
    let session = if args.any_session {
        loop_state::ANY_SESSION.to_string()
    } else {
        args.session
            .clone()
            .or_else(|| agent.session_from_env(env))
            .unwrap_or_default()
    };
    let dir = ws.join(agent.state_dir());
    let main = dir.join(loop_state::MAIN_FILE);
    let (path, id) = if main.exists() {
        let id = loop_state::new_id();
        (dir.join(format!("ralph-loop-{id}.local.md")), Some(id))
    } else {
        (main, None)
    };
    let state = LoopState::new(
        &prompt,
        args.max_iterations,
        promise.as_deref(),
        &session,
        id.as_deref(),
        &now(),
        agent,
    );
    let loop_file = loop_state::key(&path);
    // A progress record left by an earlier loop of this file name must not count here.
    let _ = std::fs::remove_file(crate::hook::stop::progress_path(ws, &loop_file));
    let mut state = state;
    let pinned = match Project::open(cwd, config) {
        Ok(project) => {
            let pin = crate::pin::of(&project.config);
            state.set_pin(&pin.digest);
            Store::for_workspace(ws).write(
                &loop_file,
                &crate::pin::Record {
                    pin: pin.clone(),
                    started_at: state.started_at.clone(),
                    session: state.session_id.clone(),
                },
            )?;
            Some(pin)
        }
        // The loop still starts: its first stop pins the gates, once the config loads.
        Err(_) => None,
    };
    crate::atomic::write(&path, state.render().as_bytes())?;
    let _ = journal::append(
        ws,
        &journal::Event::new("start", journal::who(env), &loop_file, prompt_line(&prompt)),
    );
    let mut out = format!("ralph-gate: loop started in {}\n", path.display());
    for c in super::doctor::conflicts(ws) {
        out.push_str(&format!("  warning: {c}\n"));
    }
    match &pinned {
        Some(pin) => out.push_str(&format!(
            "  stop gates pinned ({}): {}\n",
            pin.source,
            if pin.gates.is_empty() {
                "none".to_string()
            } else {
                pin.gates
                    .iter()
                    .map(|g| g.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )),
        None => {
            out.push_str("  the config does not load yet: the first stop pins the stop gates\n")
        }
    }
    out.push_str(&format!(
        "  iterations: {}\n",
        if args.max_iterations == 0 {
            "unlimited".to_string()
        } else {
            args.max_iterations.to_string()
        }
    ));
    match &promise {
        Some(p) => out.push_str(&format!(
            "  to finish, every stop gate must pass and the agent must output: <promise>{p}</promise>\n"
        )),
        None => out.push_str("  no completion promise: the loop ends at its limit, when stuck, or when cancelled\n"),
    }
    Ok(out)
}

fn describe(f: &LoopFile) -> Vec<(String, String)> {
    match &f.state {
        Err(e) => vec![("error".into(), e.clone())],
        Ok(s) => vec![
            (
                "id".into(),
                s.loop_id.clone().unwrap_or_else(|| "(main)".into()),
            ),
            (
                "iteration".into(),
                if s.max_iterations > 0 {
                    format!("{}/{}", s.iteration, s.max_iterations)
                } else {
                    format!("{}/unlimited", s.iteration)
                },
            ),
            (
                "promise".into(),
                s.completion_promise
                    .clone()
                    .unwrap_or_else(|| "(none)".into()),
            ),
            (
                "session".into(),
                if s.session_id.is_empty() {
                    "(unclaimed)".into()
                } else {
                    s.session_id.clone()
                },
            ),
            ("started".into(), s.started_at.clone().unwrap_or_default()),
            (
                "prompt".into(),
                s.prompt().lines().next().unwrap_or_default().to_string(),
            ),
        ],
    }
}

fn status(files: &[LoopFile]) -> String {
    if files.is_empty() {
        return "ralph-gate: no loop\n".into();
    }
    let mut out = String::new();
    for f in files {
        out.push_str(&format!("{}\n", f.path.display()));
        for (k, v) in describe(f) {
            out.push_str(&format!("  {k:<10} {v}\n"));
        }
    }
    out
}

fn list(files: &[LoopFile]) -> String {
    files
        .iter()
        .map(|f| {
            let d = describe(f);
            d.iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join("\t")
                + "\n"
        })
        .collect()
}

/// The loop `id` names (by `loop_id` or file name), else the only one, else the main one.
fn pick<'a>(files: &'a [LoopFile], id: Option<&str>) -> Result<&'a LoopFile, AppError> {
    let target = match id {
        Some(id) => files.iter().find(|f| {
            f.state
                .as_ref()
                .is_ok_and(|s| s.loop_id.as_deref() == Some(id))
                || f.name() == id
        }),
        None if files.len() <= 1 => files.first(),
        None => files.iter().find(|f| f.name() == loop_state::MAIN_FILE),
    };
    target.ok_or_else(|| {
        AppError::Usage(match id {
            Some(id) => format!("no loop with id `{id}` (see `ralph-gate loop list`)"),
            None if files.is_empty() => "no loop".into(),
            None => "several loops: name one (see `ralph-gate loop list`)".into(),
        })
    })
}

fn cancel(ws: &Path, id: Option<&str>, env: &Environment) -> Result<String, AppError> {
    let files = loop_state::list(ws);
    let f = pick(&files, id)?;
    end_by_hand(ws, &f.path, &journal::who(env))?;
    Ok(format!("ralph-gate: cancelled {}\n", f.path.display()))
}

/// Ends a loop outside a stop (`loop cancel`, the dashboard): the state file, its progress
/// record and its pin go, and the journal says who did it, so an agent that cancels its own
/// loop is seen.
pub fn end_by_hand(ws: &Path, path: &Path, who: &str) -> std::io::Result<()> {
    std::fs::remove_file(path)?;
    let loop_file = loop_state::key(path);
    let _ = std::fs::remove_file(crate::hook::stop::progress_path(ws, &loop_file));
    Store::for_workspace(ws).remove(&loop_file);
    let _ = journal::append(
        ws,
        &journal::Event::new("cancel", who.to_string(), &loop_file, "cancelled".into()),
    );
    Ok(())
}

/// `loop approve`: a person accepts the stop gates in force as the loop's new pin.
fn approve(
    ws: &Path,
    id: Option<&str>,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<String, AppError> {
    if env.claude_session_id.is_some() || env.in_agent {
        return Err(AppError::Usage(
            "`loop approve` is for a person: it runs inside an agent's session here. Run it from your own terminal.".into(),
        ));
    }
    let files = loop_state::list(ws);
    let f = pick(&files, id)?;
    let mut state = f
        .state
        .clone()
        .map_err(|e| AppError::Usage(format!("{}: {e}", f.path.display())))?;
    let project = Project::open(cwd, config)?;
    let now = crate::pin::of(&project.config);
    let store = Store::for_workspace(ws);
    let loop_file = loop_state::key(&f.path);
    let before = store
        .read(&loop_file)
        .ok()
        .flatten()
        .filter(|c| c.started_at == state.started_at);
    let changes = match &before {
        Some(b) => crate::pin::compare(&b.pin, &now)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        None => vec!["(no earlier pin could be read)".to_string()],
    };
    store.write(
        &loop_file,
        &crate::pin::Record {
            pin: now.clone(),
            started_at: state.started_at.clone(),
            session: state.session_id.clone(),
        },
    )?;
    state.set_pin(&now.digest);
    crate::atomic::write(&f.path, state.render().as_bytes())?;
    let summary = if changes.is_empty() {
        "no change".to_string()
    } else {
        changes.join("; ")
    };
    let _ = journal::append(
        ws,
        &journal::Event::new("approve", journal::who(env), &loop_file, summary.clone()),
    );
    Ok(format!(
        "ralph-gate: the loop in {} is now held to the stop gates in force ({}): {summary}\n",
        f.path.display(),
        now.source
    ))
}

fn prompt_line(prompt: &str) -> String {
    prompt
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}
