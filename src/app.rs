//! The top layer: turns parsed arguments into each command's options and a run into an exit
//! code. The only module besides `cli` that sees clap's types.

use crate::cli::{
    CacheCommand, CheckArgs, Cli, Command, GatesArgs, HookCommand, HookVia, LoopCommand,
    StatusFormat,
};
use crate::commands::{self, cache, check, gates, loops, status, AppError};
use ralph_base::env::Environment;
use ralph_plan::project::Project;

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
            agent.0,
            &env,
            &cwd,
            config,
        )),
        Command::Loop(cmd) => commands::loops::run(&loop_command(cmd)?, &env, &cwd, config),
        Command::Doctor => commands::doctor::run(&env, &cwd, config),
        Command::Completions { shell } => commands::docs::completions(shell),
        Command::Man => commands::docs::man(),
        Command::ToldExec {
            harness,
            told,
            argv,
        } => {
            use ralph_runner::runner::testbin;
            // Only ralph-gate's own wrappers call this; a name it does not know is a usage error.
            Ok(
                testbin::Harness::parse(&harness).map_or(ralph_base::exit::USAGE_OR_SETUP, |h| {
                    testbin::serve(h, &told, &argv)
                }),
            )
        }
        Command::StartTests { loop_file } => {
            commands::start_tests::run(&env, &cwd, config, &loop_file)
        }
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

impl From<CheckArgs> for check::Options {
    fn from(a: CheckArgs) -> Self {
        check::Options {
            paths: a.paths,
            staged: a.staged,
            changed: a.changed,
            base: a.base,
            gates: a.gates,
            phase: a.phase.0,
            jobs: a.jobs,
            format: a.format.map(|f| f.0),
            quiet: a.quiet,
            no_cache: a.no_cache,
            strict: a.strict,
        }
    }
}

impl From<GatesArgs> for gates::Options {
    fn from(a: GatesArgs) -> Self {
        gates::Options {
            explain: a.explain,
            phase: a.phase.map(|p| p.0),
        }
    }
}

impl From<StatusFormat> for status::Format {
    fn from(f: StatusFormat) -> Self {
        match f {
            StatusFormat::Human => status::Format::Human,
            StatusFormat::Json => status::Format::Json,
        }
    }
}

impl From<CacheCommand> for cache::Command {
    fn from(c: CacheCommand) -> Self {
        match c {
            CacheCommand::Clear => cache::Command::Clear,
            CacheCommand::Stats { format } => cache::Command::Stats {
                format: format.into(),
            },
        }
    }
}

impl From<HookVia> for crate::commands::hook::Via {
    fn from(v: HookVia) -> Self {
        match v {
            HookVia::Settings => crate::commands::hook::Via::Settings,
            HookVia::Plugin => crate::commands::hook::Via::Plugin,
        }
    }
}

impl From<HookCommand> for ralph_hook::agents::Event {
    fn from(c: HookCommand) -> Self {
        use ralph_hook::agents::Event;
        match c {
            HookCommand::PreToolUse => Event::Guard,
            HookCommand::PostToolUse => Event::Edit,
            HookCommand::Stop => Event::Stop,
            HookCommand::AgentResponse => Event::Response,
            HookCommand::UserPromptSubmit => Event::Prompt,
            HookCommand::PostToolBatch => Event::Batch,
        }
    }
}

fn loop_command(c: LoopCommand) -> Result<loops::Command, AppError> {
    Ok(match c {
        LoopCommand::Start(a) => loops::Command::Start(loops::StartOptions {
            max_iterations: a.max_iterations,
            promise: a.promise,
            prompt_file: a.prompt_file,
            agent: a.agent.map(|a| a.0),
            session: a.session,
            any_session: a.any_session,
            prompt: a.prompt,
        }),
        LoopCommand::Status => loops::Command::Status,
        LoopCommand::List => loops::Command::List,
        LoopCommand::Cancel { id } => loops::Command::Cancel { id },
        LoopCommand::Approve { id } => loops::Command::Approve { id },
        LoopCommand::Run(a) => loops::Command::Run(run_options(a)?),
    })
}

/// `loop run`'s options, the prompt read from its file when given.
fn run_options(a: crate::cli::LoopRunArgs) -> Result<ralph_hook::fresh::Options, AppError> {
    let prompt = loops::prompt_of(a.prompt_file.as_deref(), &a.prompt)?;
    let promise = loops::promise_of(&a.promise)?;
    if a.max_cost.is_some_and(|c| c.is_nan() || c <= 0.0) {
        return Err(AppError::Usage(
            "--max-cost must be a positive number of dollars".into(),
        ));
    }
    Ok(ralph_hook::fresh::Options {
        agent: a.agent.map(|a| a.0),
        prompt,
        promise,
        max_iterations: a.max_iterations,
        max_time: a.max_time,
        max_cost: a.max_cost,
        iteration_timeout: a.iteration_timeout,
        stall: a.stall,
        agent_args: a.agent_args,
        commit: a.commit,
        prd: a.prd,
        story: a.story,
        parallel: a.parallel,
    })
}
