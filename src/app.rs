//! The top layer: turns parsed arguments into each command's options and a run into an exit
//! code. The only module besides `cli` that sees clap's types.

use crate::cli::{Cli, Command};
use crate::commands::{self, AppError};
use crate::env::Environment;
use crate::project::Project;

pub fn run(cli: Cli) -> Result<u8, AppError> {
    let env = Environment::from_process();
    let cwd = std::env::current_dir()?;
    let config = cli.config.as_deref();
    match cli.command {
        Command::Check(args) => {
            let options = args.into();
            commands::check::run(&mut Project::open(&cwd, config)?, &options, &env)
        }
        Command::Gates(args) => {
            commands::gates::run(&Project::open(&cwd, config)?, &args.into(), &env)
        }
        Command::Hook { via, agent, event } => Ok(commands::hook::run(
            event.into(),
            via.into(),
            agent,
            &env,
            &cwd,
            config,
        )),
        Command::Loop(cmd) => commands::loops::run(&cmd.into(), &env, &cwd, config),
        Command::Doctor => commands::doctor::run(&env, &cwd, config),
        Command::Completions { shell } => commands::docs::completions(shell),
        Command::Man => commands::docs::man(),
        Command::Dash => commands::dash::run(&env, &cwd, config),
        Command::Status { format } => commands::status::run(format.into(), &env, &cwd, config),
        Command::Init {
            force,
            absolute,
            agents,
        } => commands::init::run(
            &env,
            &cwd,
            &commands::init::Options {
                force,
                absolute,
                agents: agents.into_iter().flatten().collect(),
            },
        ),
        Command::Cache(cmd) => commands::cache::run(&cmd.into(), &cwd, config),
    }
}
