//! The shared ground every other crate stands on: the environment (read in one place), the
//! workspace's state layout under `.ralph/`, atomic writes and locks, git, signals, text
//! helpers, content digests, the shell lexer and `#!` lines, the agents' identities and the
//! exit codes. It uses no other crate of ralph-gate.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agent;
pub mod atomic;
pub mod digest;
pub mod env;
pub mod exit;
pub mod git;
pub mod jsonc;
pub mod platform;
pub mod shebang;
pub mod shell;
pub mod snapshot;
pub mod state;
pub mod text;

// Where they were before the platform module gathered them: every crate names them so.
pub use platform::{child, clock, process, signals};
