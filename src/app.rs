//! The top layer: turns parsed arguments into a run and a run into an exit code.

use crate::cli::{Cli, Command};
use crate::commands;
use crate::env::Environment;
use crate::project::{OpenError, Project};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Files(#[from] crate::files::FilesError),
    #[error(transparent)]
    Staged(#[from] crate::staged::StagedError),
    #[error("{0}")]
    Usage(String),
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

pub fn run(cli: Cli) -> Result<u8, AppError> {
    let env = Environment::from_process();
    let cwd = std::env::current_dir()?;
    let config = cli.config.as_deref();
    match cli.command {
        Command::Check(args) => {
            commands::check::run(&mut Project::open(&cwd, config)?, &args, &env)
        }
        Command::Gates(args) => commands::gates::run(&Project::open(&cwd, config)?, &args, &env),
        Command::Hook { via, agent, event } => {
            Ok(commands::hook::run(&event, via, agent, &env, &cwd, config))
        }
        Command::Loop(cmd) => commands::loops::run(&cmd, &env, &cwd, config),
        Command::Doctor => commands::doctor::run(&env, &cwd, config),
        Command::Dash => {
            crate::dash::run(&cwd, config, &env)?;
            Ok(crate::exit::SUCCESS)
        }
        Command::Status { format } => {
            let project = Project::open(&cwd, config)?;
            let ws = crate::hook::stop::workspace(&env, &cwd);
            let st = crate::status::gather(&project.config, project.describe_config(), &ws);
            let text = match format {
                crate::cli::StatusFormat::Human => {
                    crate::status::render_text(&st, crate::results::now_ms())
                }
                crate::cli::StatusFormat::Json => {
                    serde_json::to_string_pretty(&st).expect("status serialises") + "\n"
                }
            };
            use std::io::Write;
            std::io::stdout().lock().write_all(text.as_bytes())?;
            Ok(crate::exit::SUCCESS)
        }
        Command::Init {
            force,
            absolute,
            agents,
        } => {
            let mut chosen: Vec<crate::agents::Agent> = Vec::new();
            for a in agents.into_iter().flatten() {
                if !chosen.contains(&a) {
                    chosen.push(a);
                }
            }
            commands::init::run(
                &env,
                &cwd,
                &commands::init::Options {
                    force,
                    absolute,
                    agents: chosen,
                },
            )
        }
        Command::Cache(crate::cli::CacheCommand::Clear) => {
            let project = Project::open(&cwd, config)?;
            let freed = crate::cache::clear(project.root())?;
            use std::io::Write;
            writeln!(
                std::io::stdout().lock(),
                "ralph-gate: cache cleared ({} KiB freed)",
                freed / 1024
            )?;
            Ok(crate::exit::SUCCESS)
        }
    }
}
