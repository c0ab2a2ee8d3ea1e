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
mod overview;

// Everything else is a library crate under `crates/`, each using only those below it:
// hook -> loop -> surface -> runner -> plan -> config -> base (ARCHITECTURE.md).
use ralph_base::exit;

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
