//! ralph-gate: verification gates for coding agents run in a loop.
//!
//! The crate is a binary first. The library exists so that `main.rs` stays a single call and
//! so that the fuzz targets in `fuzz/` can link the real parsers; its modules stay private,
//! and the only public surface is [`main`] and the [`fuzzing`] entry points.

mod agent;
mod agents;
mod app;
mod atomic;
mod cache;
mod claude_settings;
mod cli;
mod commands;
mod config;
mod dash;
mod digest;
mod env;
mod exit;
mod files;
#[cfg(test)]
mod fuzz_props;
pub mod fuzzing;
mod guard;
mod hook;
mod journal;
mod loop_state;
mod manifests;
mod pin;
mod plan;
mod project;
mod report;
mod results;
mod runner;
mod signals;
mod staged;
mod status;
mod text;
mod tools;

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
