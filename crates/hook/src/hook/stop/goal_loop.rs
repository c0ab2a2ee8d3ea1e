//! The session's own goal (Claude Code's or Codex's `/goal`), held like a loop of
//! ralph-gate's: the first stop that finds a held goal and no loop starts one for it (its
//! gates pinned then, its condition the prompt), every later stop reads where the goal stands,
//! and the loop ends when the goal holds nothing any more.

use super::StopError;
use crate::hook::Ask;
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::goals::{self, Goal, Status};
use ralph_loop::loops::{self, LoopState};
use ralph_plan::project::Project;
use std::path::Path;

/// Starts the loop for this session's goal when it has a held one and none yet. True when
/// a loop was started.
pub fn start(
    ask: &Ask,
    env: &Environment,
    layout: &Layout,
    base: &Path,
    config: Option<&Path>,
) -> Result<bool, StopError> {
    let Some(source) = &ask.goal else {
        return Ok(false);
    };
    if ask.session.is_empty() {
        return Ok(false);
    }
    let goal = match goals::read(source, env, 0) {
        Ok(Some(g)) if g.held() => g,
        _ => return Ok(false),
    };
    // The loop starts even when the config does not load: its stop then fails closed.
    let held = match Project::open(base, config) {
        Ok(mut project) => {
            if !on(&project) {
                return Ok(false);
            }
            // A goal is pinned now even when its surface cannot be described: its first
            // stop is already this one.
            Some(loops::held_now(&mut project, env))
        }
        Err(_) => None,
    };
    let condition = if goal.condition.trim().is_empty() {
        "(the session's goal)"
    } else {
        goal.condition.as_str()
    };
    loops::start(
        layout,
        &loops::Spec {
            prompt: condition,
            max_iterations: 0,
            promise: None,
            session: &ask.session,
            agent: ask.agent,
            pin: held.as_ref().map(|h| &h.0),
            surface: held.as_ref().and_then(|h| h.1.as_ref()),
            who: format!("{} goal", ask.agent),
            goal: Some(goal.mark),
        },
    )?;
    Ok(true)
}

/// Whether goals are held here: `[hooks] goals`, whose `false` counts only once committed
/// (a `false` in the working tree alone is an agent's to write).
fn on(project: &Project) -> bool {
    if project.config.settings.hooks.goals {
        return true;
    }
    let Some(file) = &project.config.file else {
        return true;
    };
    let root = project.root();
    let rel = file.strip_prefix(root).unwrap_or(file);
    let spec = format!("HEAD:./{}", rel.display());
    let Ok(text) = ralph_base::git::run(root, &["show", &spec]) else {
        return true;
    };
    let committed: Option<toml::Value> = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| toml::from_str(t).ok());
    committed
        .as_ref()
        .and_then(|c| c.get("hooks"))
        .and_then(|h| h.get("goals"))
        .and_then(toml::Value::as_bool)
        != Some(false)
}

/// Where a loop's goal stands at this stop.
pub enum Now {
    /// Not a goal's loop.
    NotAGoal,
    Held(Goal),
    /// The goal holds nothing any more, for this reason.
    Over(String),
}

pub fn now(ask: &Ask, env: &Environment, state: &LoopState) -> Now {
    if !state.goal {
        return Now::NotAGoal;
    }
    let read = ask
        .goal
        .as_ref()
        .map(|s| goals::read(s, env, state.goal_seen));
    let mut goal = match read {
        Some(Ok(Some(g))) => match g.status {
            Status::Over(why) => return Now::Over(why.to_string()),
            _ => g,
        },
        // Nothing says the goal is over (its record is gone or unreadable): fail closed, the
        // goal is held as it was.
        _ => Goal {
            condition: String::new(),
            status: Status::Active,
            verdict: None,
            mark: state.goal_seen,
            ignored: None,
        },
    };
    if goal.condition.trim().is_empty() {
        goal.condition = state.prompt().to_string();
    }
    Now::Held(goal)
}
