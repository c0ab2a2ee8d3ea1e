//! `ralph-gate completions SHELL` and `ralph-gate man`: generated from the same clap
//! definition as the parser, so they can never list a subcommand that does not exist.

use super::AppError;
use crate::cli::Cli;
use clap::CommandFactory;
use std::io::Write;

pub fn completions(shell: clap_complete::Shell) -> Result<u8, AppError> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ralph-gate", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(ralph_base::exit::SUCCESS)
}

pub fn man() -> Result<u8, AppError> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    // Each subcommand's own section, so the one page documents all of them.
    for sub in cmd.get_subcommands() {
        writeln!(out, ".SH \"RALPH-GATE {}\"", sub.get_name().to_uppercase())?;
        let page = clap_mangen::Man::new(sub.clone());
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(ralph_base::exit::SUCCESS)
}
