//! Integration tests: the built binary, in temporary git repositories, against real tools.

// The tests start the binary, the tools and the agents themselves, and set their variables.
#![allow(clippy::disallowed_methods)]

mod common;

mod agent_clis;
mod agents;
mod approval;
mod baseline;
mod cache;
mod check;
mod checks_by_effect;
mod claude_code;
mod config_errors;
mod dash;
mod differential;
mod doctor;
mod faults;
mod files;
mod github;
mod hooks;
mod hostile;
mod init;
mod js_runners;
mod load;
mod loops;
mod model_server;
mod observed;
mod outside;
mod package_managers;
mod packaging;
mod precommit;
mod presets_done;
mod processes;
mod progress;
mod properties;
mod readers;
mod real_tools;
mod remote;
mod reports;
mod scheduling;
mod setup;
mod shell;
mod staged;
mod status;
mod steering;
mod surface;
mod tamper;
mod tests_ran;
mod told;
mod told_binaries;
mod toolchains;
mod ts_layouts;
mod verdicts;
mod worktrees;
