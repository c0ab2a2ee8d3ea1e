//! ralph-gate: verification gates for coding agents run in a loop.

mod app;
mod atomic;
mod cache;
mod cli;
mod commands;
mod config;
mod dash;
mod env;
mod exit;
mod files;
#[cfg(test)]
mod fuzz_props;
mod hook;
mod loop_state;
mod plan;
mod project;
mod report;
mod results;
mod runner;
mod status;

use clap::Parser;
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match app::run(cli) {
        Ok(code) => exit::code(code),
        Err(err) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {err}");
                let mut cause = err.source();
                while let Some(c) = cause {
                    eprintln!("caused by: {c}");
                    cause = c.source();
                }
            }
            exit::code(exit::USAGE_OR_SETUP)
        }
    }
}
