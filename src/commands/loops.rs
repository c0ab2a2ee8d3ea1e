//! `ralph-gate loop start|status|list|cancel|approve`: the loops, by hand. What a loop is and
//! how it starts and ends is [`ralph_loop::loops`]; this module reads the command line and words
//! the answer.

use crate::commands::AppError;
use ralph_base::agent::Agent;
use ralph_base::env::Environment;
use ralph_base::exit;
use ralph_base::state::Layout;
use ralph_loop::journal;
use ralph_loop::loops::{self, LoopFile};
use ralph_plan::project::Project;
use ralph_surface::pin::Pin;
use std::io::Write;
use std::path::Path;

/// `loop start|status|list|cancel|approve`.
#[derive(Debug, Clone)]
pub enum Command {
    Start(StartOptions),
    Status,
    List,
    Cancel { id: Option<String> },
    Approve { id: Option<String> },
    Run(ralph_hook::fresh::Options),
}

/// `loop start`'s options.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// 0: unlimited.
    pub max_iterations: u64,
    pub promise: Option<String>,
    pub prompt_file: Option<std::path::PathBuf>,
    /// `None`: the agent the project is set up for (see [`choose_agent`]).
    pub agent: Option<Agent>,
    pub session: Option<String>,
    pub any_session: bool,
    /// The prompt's words.
    pub prompt: Vec<String>,
}

pub fn run(
    cmd: &Command,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, AppError> {
    let layout = Layout::workspace(env, cwd);
    let text = match cmd {
        // The run prints as it goes, and its exit code says how it ended.
        Command::Run(o) => {
            let agent = o.agent.unwrap_or_else(|| {
                choose_agent(&super::init::hook_files::set_up(env, layout.root()), None).0
            });
            let o = ralph_hook::fresh::Options {
                agent: Some(agent),
                ..o.clone()
            };
            return Ok(ralph_hook::fresh::run(&o, env, &layout, cwd, config)?);
        }
        Command::Start(args) => start(&layout, args, env, cwd, config)?,
        Command::Status => status(&loops::list(&layout), &loops::orphans(&layout)),
        Command::List => {
            let files = loops::list(&layout);
            if files.is_empty() {
                // Said on stderr: stdout stays one line per loop, for scripts.
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("ralph-gate: no loop in {}", layout.root().display());
                }
            }
            list(&files)
        }
        Command::Cancel { id } => cancel(&layout, id.as_deref(), env)?,
        Command::Approve { id } => approve(&layout, id.as_deref(), env, cwd, config)?,
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::SUCCESS)
}

/// An agent that starts a loop of its own (one iteration, no promise) beside the person's
/// would end at its first stop; only a person starts one while one runs.
fn refuse_beside_a_running_loop(layout: &Layout, env: &Environment) -> Result<(), AppError> {
    // `in_agent` holds Claude Code's session id among the agents' marks.
    if !(env.in_agent && loops::any_open(layout)) {
        return Ok(());
    }
    let _ = journal::append(
        layout,
        journal::Entry::Refused(journal::LoopEvent::new(
            journal::who(env),
            "",
            "`loop start` inside an agent's session while a loop runs",
        )),
    );
    Err(AppError::AgentRefused(
        "a loop is running here, and `loop start` runs inside an agent's session: only a person starts a loop while another runs. End the running one from your own terminal (`ralph-gate loop cancel`), or start this one from there.".into(),
    ))
}

fn start(
    layout: &Layout,
    args: &StartOptions,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<String, AppError> {
    let prompt = prompt_of(args.prompt_file.as_deref(), &args.prompt)?;
    refuse_beside_a_running_loop(layout, env)?;
    let promise = args.promise.as_deref().map(promise_of).transpose()?;
    let (agent, agent_note) = match args.agent {
        Some(a) => (a, None),
        None => {
            let (a, why) = choose_agent(
                &super::init::hook_files::set_up(env, layout.root()),
                in_session(env),
            );
            (a, Some(why))
        }
    };
    let session = if args.any_session {
        loops::ANY_SESSION.to_string()
    } else {
        args.session
            .clone()
            .or_else(|| agent.session_from_env(env))
            .unwrap_or_default()
    };
    // The loop still starts when the config does not load: its first stop pins the gates.
    // So does one whose surface cannot be described: both are pinned together then.
    let held = Project::open(cwd, config).ok().and_then(|mut p| {
        let (pin, surface) = loops::held_now(&mut p, env);
        Some((pin, surface?))
    });
    let pin = held.as_ref().map(|h| h.0.clone());
    if pin.as_ref().is_some_and(|p| p.gates.is_empty()) {
        return Err(AppError::Usage(
            "no stop gate: a loop with nothing to check at its stop would end on the agent's first promise. Add a gate that runs at the stop to ralph.toml (phases include \"stop\"), or let the presets pick them (no ralph.toml); `ralph-gate gates` shows what runs.".into(),
        ));
    }
    let path = loops::start(
        layout,
        &loops::Spec {
            prompt: &prompt,
            max_iterations: args.max_iterations,
            promise: promise.as_deref(),
            session: &session,
            agent,
            pin: pin.as_ref(),
            surface: held.as_ref().map(|h| &h.1),
            who: journal::who(env),
            goal: None,
        },
    )?;
    if pin.is_some() {
        // The tests the start tree runs, taken while the agent works: the stop that ends
        // the loop compares them with its own run's.
        super::start_tests::start(cwd, config, &path);
    }
    let mut out = format!("ralph-gate: loop started in {}\n", path.display());
    if let Some(note) = agent_note {
        out.push_str(&format!("  agent: {note}\n"));
    }
    for c in super::doctor::conflicts(env, layout.root()) {
        out.push_str(&format!("  warning: {c}\n"));
    }
    out.push_str(&started_text(
        pin.as_ref(),
        args.max_iterations,
        promise.as_deref(),
    ));
    Ok(out)
}

/// The prompt of `loop start` and `loop run`: the file's text when one is named, else the
/// words joined with spaces.
pub fn prompt_of(file: Option<&Path>, words: &[String]) -> Result<String, AppError> {
    let prompt = match file {
        Some(f) => std::fs::read_to_string(f).map_err(|source| AppError::Read {
            what: "--prompt-file",
            path: f.to_path_buf(),
            source,
        })?,
        None => words.join(" "),
    };
    if prompt.trim().is_empty() {
        return Err(AppError::Usage("the prompt is empty".into()));
    }
    Ok(prompt)
}

/// A promise as the loop's state file keeps it: normalized, not empty, no double quote.
pub fn promise_of(text: &str) -> Result<String, AppError> {
    let p = ralph_hook::hook::promise::normalize(text);
    if p.is_empty() || p.contains('"') {
        return Err(AppError::Usage(
            "--promise must be non-empty text without double quotes (the state file stores it in quotes)".into(),
        ));
    }
    Ok(p)
}

/// The agent whose session runs `loop start`, as its shell shows it.
fn in_session(env: &Environment) -> Option<Agent> {
    Agent::ALL
        .into_iter()
        .find(|a| a.session_from_env(env).is_some())
}

/// Pure: the agent a loop started without `--agent` is for, given the agents the project is
/// set up for and the one whose session runs the command, and why, said so that the person
/// knows how to choose another.
pub fn choose_agent(set_up: &[Agent], in_session: Option<Agent>) -> (Agent, String) {
    let chosen = match set_up {
        [] => return (
            Agent::Claude,
            "claude: no agent's stop hook is set up here yet (`ralph-gate init`); another: --agent"
                .into(),
        ),
        [one] => {
            return (
                *one,
                format!("{one}, the agent this project is set up for; another: --agent"),
            )
        }
        several => in_session
            .filter(|a| several.contains(a))
            .or_else(|| several.contains(&Agent::Claude).then_some(Agent::Claude))
            .unwrap_or(several[0]),
    };
    let names: Vec<&str> = set_up.iter().map(|a| a.name()).collect();
    let others: Vec<String> = set_up
        .iter()
        .filter(|a| **a != chosen)
        .map(|a| format!("--agent {a}"))
        .collect();
    (
        chosen,
        format!(
            "{chosen}; this project is set up for {}: for another, start the loop with {}",
            names.join(", "),
            others.join(" or ")
        ),
    )
}

/// What `loop start` tells the person about the loop they started.
fn started_text(pin: Option<&Pin>, max_iterations: u64, promise: Option<&str>) -> String {
    let mut out = match pin {
        Some(pin) => format!(
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
        ),
        None => "  the config does not load yet: the first stop pins the stop gates\n".into(),
    };
    out.push_str(&format!(
        "  iterations: {}\n",
        if max_iterations == 0 {
            "unlimited".to_string()
        } else {
            max_iterations.to_string()
        }
    ));
    match promise {
        Some(p) => out.push_str(&format!(
            "  to finish, every stop gate must pass and the agent must output: <promise>{p}</promise>\n"
        )),
        None => out.push_str("  no completion promise: the loop ends at its limit, when stuck, or when cancelled\n"),
    }
    out
}

fn describe(f: &LoopFile) -> Vec<(String, String)> {
    match &f.state {
        Err(e) => vec![("error".into(), e.to_string())],
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
                match (&s.completion_promise, s.goal) {
                    (_, true) => "(goal)".into(),
                    (Some(p), false) => p.clone(),
                    (None, false) => "(none)".into(),
                },
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
                if s.goal { "goal" } else { "prompt" }.into(),
                s.prompt().lines().next().unwrap_or_default().to_string(),
            ),
        ],
    }
}

fn status(files: &[LoopFile], gone: &[loops::Orphan]) -> String {
    let mut out = String::new();
    for o in gone {
        out.push_str(&format!(
            "{}: its state file is gone; the loop is held (started {}). `ralph-gate loop cancel {}` ends it\n",
            o.loop_file, o.started_at, o.loop_file
        ));
    }
    if files.is_empty() && gone.is_empty() {
        return "ralph-gate: no loop\n".into();
    }
    for f in files {
        out.push_str(&format!("{}\n", f.path.display()));
        for (k, v) in describe(f) {
            out.push_str(&format!("  {k:<10} {v}\n"));
        }
        if let Ok(s) = &f.state {
            let agent = s.agent().unwrap_or_default();
            out.push_str(&format!("  {:<10} {agent}\n", "agent"));
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

fn cancel(layout: &Layout, id: Option<&str>, env: &Environment) -> Result<String, AppError> {
    let files = loops::list(layout);
    let gone = loops::orphans(layout);
    // A loop whose state file is gone is cancelled by its name, or when it is the only one.
    let orphan = match id {
        Some(id) => gone.iter().find(|o| o.loop_file == id),
        None if files.is_empty() && gone.len() == 1 => gone.first(),
        None => None,
    };
    if let Some(o) = orphan {
        super::person::only_a_person(layout, env, "loop cancel", &o.loop_file)?;
        super::person::confirm_on_terminal(&format!(
            "ralph-gate: cancel the loop of {} (its state file is gone)?",
            o.loop_file
        ))?;
        loops::cancel_orphan(layout, o, &journal::who(env));
        return Ok(format!(
            "ralph-gate: cancelled {} (its state file was gone)\n",
            o.loop_file
        ));
    }
    let f = loops::pick(&files, id)?;
    super::person::only_a_person(layout, env, "loop cancel", &loops::key(&f.path))?;
    super::person::confirm_on_terminal(&format!(
        "ralph-gate: cancel the loop in {}? The agent may then stop with its work unverified.",
        f.path.display()
    ))?;
    loops::cancel(layout, &f.path, &journal::who(env))?;
    Ok(format!("ralph-gate: cancelled {}\n", f.path.display()))
}

/// `loop approve`: a person accepts the stop gates in force as the loop's new pin.
fn approve(
    layout: &Layout,
    id: Option<&str>,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<String, AppError> {
    let files = loops::list(layout);
    let f = loops::pick(&files, id)?;
    super::person::only_a_person(layout, env, "loop approve", &loops::key(&f.path))?;
    if let Err(e) = &f.state {
        return Err(AppError::LoopState {
            path: f.path.clone(),
            source: e.clone(),
        });
    }
    super::person::confirm_on_terminal(&format!(
        "ralph-gate: approve the loop in {}? It will be held to the stop gates and checks as they are now, whatever weakened them.",
        f.path.display()
    ))?;
    let mut project = Project::open(cwd, config)?;
    let now = ralph_surface::pin::of(&project.config);
    let surface = ralph_surface::surface::of_project(&mut project, env)?;
    let summary = loops::approve(layout, f, (&now, &surface), &journal::who(env))?;
    Ok(format!(
        "ralph-gate: the loop in {} is now held to the stop gates in force ({}): {summary}\n",
        f.path.display(),
        now.source
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_the_one_set_up_else_the_sessions_else_claude() {
        assert_eq!(choose_agent(&[], None).0, Agent::Claude);
        assert_eq!(choose_agent(&[Agent::Codex], None).0, Agent::Codex);
        let both = [Agent::Claude, Agent::Gemini];
        let (a, why) = choose_agent(&both, None);
        assert_eq!(a, Agent::Claude);
        assert!(why.contains("--agent gemini"), "{why}");
        assert_eq!(choose_agent(&both, Some(Agent::Gemini)).0, Agent::Gemini);
        assert_eq!(
            choose_agent(&[Agent::Qwen, Agent::Droid], Some(Agent::Claude)).0,
            Agent::Qwen
        );
    }
}
