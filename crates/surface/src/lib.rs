//! The verification surface, everything besides the checked code that decides a verdict,
//! described and compared (`surface`), the stop gates a loop is held to (`pin`), and the
//! differential run that decides by effect whether a change to the checks made them pass
//! (`differential`). Uses the crates below it: base, config, plan, runner.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod baseline;
pub mod differential;
pub mod outside;
pub mod pin;
pub mod surface;
