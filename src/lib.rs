//! ralph-gate: verification gates for coding agents run in a loop.
//!
//! The crate is a binary first. The library exists so that `main.rs` stays a single call and
//! so that the fuzz targets in `fuzz/` can link the real parsers; its modules stay private,
//! and the only public surface is [`main`] and the [`fuzzing`] entry points.

// The command line: parsed in `cli`, turned into each command's options in `app`, run by
// one module per subcommand in `commands` (and the dashboard in `dash`).
mod app;
mod cli;
mod commands;
mod dash;
mod exit;
mod status;

// The pipeline of a verdict: config -> plan -> cache -> runner -> report.
mod cache;
mod config;
mod costs;
mod digest;
mod files;
mod manifests;
mod observe;
mod plan;
mod project;
mod report;
mod results;
mod runner;
mod schedule;
mod staged;
mod tools;

// The edges: agents' hooks in and out, the loops they are held to, the journal of both, and
// the guard in front of their tool calls.
mod agent;
mod agents;
mod claude_settings;
mod goals;
mod guard;
mod hook;
mod journal;
mod loops;
mod pin;
mod run;
mod surface;
mod watch;

// Shared ground: ralph-gate's state on disk, the environment, git, the shell lexer, atomic
// files and locks, signals, text helpers.
mod atomic;
mod env;
mod git;
mod shell;
mod signals;
mod state;
mod text;

// The fuzz targets' entry points (`fuzz/`), and their properties as unit tests.
#[cfg(test)]
mod fuzz_props;
pub mod fuzzing;

use clap::Parser;
use std::error::Error;
use std::process::ExitCode;

/// The whole program: parse the command line, run it, print any error with its causes.
pub fn main() -> ExitCode {
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
