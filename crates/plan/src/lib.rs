//! From files and gates to runs: which files (`files`), what a tool really is (`tools`), the
//! plan and its drivers (`plan`), what runs cost (`costs`) and when they start (`schedule`),
//! the project opened (`project`), and the configs outside the project a tool reads
//! (`manifests`). Uses `ralph-base` and `ralph-config`.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod costs;
pub mod files;
pub mod manifests;
pub mod plan;
pub mod project;
pub mod schedule;
pub mod tools;
