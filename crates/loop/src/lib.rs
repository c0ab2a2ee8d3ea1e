//! The state of loops: a loop's life and its files (`loops`), the journal of stops and loop
//! events (`journal`), the guard by effect on protected files (`watch`), and the agents' own
//! goals, read only (`goals`). Uses the crates below it: base, config, plan, runner, surface.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod goals;
pub mod journal;
pub mod loops;
pub mod person;
pub mod watch;
