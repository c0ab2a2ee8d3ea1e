//! `ralph-gate loop start|status|list|cancel`: the loop state files, by hand.

use crate::app::AppError;
use crate::cli::{LoopCommand, LoopStartArgs};
use crate::env::Environment;
use crate::exit;
use crate::hook::stop::{now, workspace};
use crate::loop_state::{self, LoopFile, LoopState};
use std::io::Write;
use std::path::Path;

pub fn run(cmd: &LoopCommand, env: &Environment, cwd: &Path) -> Result<u8, AppError> {
    let ws = workspace(env, cwd);
    let text = match cmd {
        LoopCommand::Start(args) => start(&ws, args, env)?,
        LoopCommand::Status => status(&loop_state::list(&ws)),
        LoopCommand::List => list(&loop_state::list(&ws)),
        LoopCommand::Cancel { id } => cancel(&ws, id.as_deref())?,
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

fn start(ws: &Path, args: &LoopStartArgs, env: &Environment) -> Result<String, AppError> {
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
    let session = args
        .session
        .clone()
        .or_else(|| env.claude_session_id.clone())
        .unwrap_or_default();
    let main = ws.join(loop_state::DIR).join(loop_state::MAIN_FILE);
    let (path, id) = if main.exists() {
        let id = loop_state::new_id();
        (
            ws.join(loop_state::DIR)
                .join(format!("ralph-loop-{id}.local.md")),
            Some(id),
        )
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
    );
    crate::atomic::write(&path, state.render().as_bytes())?;
    let mut out = format!("ralph-gate: loop started in {}\n", path.display());
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

fn cancel(ws: &Path, id: Option<&str>) -> Result<String, AppError> {
    let files = loop_state::list(ws);
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
    let Some(f) = target else {
        return Err(AppError::Usage(match id {
            Some(id) => format!("no loop with id `{id}` (see `ralph-gate loop list`)"),
            None if files.is_empty() => "no loop to cancel".into(),
            None => "several loops: name one (see `ralph-gate loop list`)".into(),
        }));
    };
    std::fs::remove_file(&f.path)?;
    Ok(format!("ralph-gate: cancelled {}\n", f.path.display()))
}
