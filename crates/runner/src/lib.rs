//! Running a plan: observing what a run reads (`observe`), the cache of results (`cache`),
//! process groups, timeouts and capture (`runner`), the results kept per gate (`results`),
//! `--staged`'s index swap (`staged`) and the report formats (`report`). Uses `ralph-base`,
//! `ralph-config` and `ralph-plan`.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod cache;
pub mod observe;
pub mod report;
pub mod results;
pub mod runner;
pub mod staged;
