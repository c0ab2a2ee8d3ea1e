//! The observer of a build that has none (no `observe` feature, or a platform other than
//! Linux): no run is observed, each says why, and its result is keyed by the drivers'
//! static model alone, as with `[cache] observe = false`.

pub use super::record::{Record, Report, StartError, Traced, Unavailable};
use std::process::Command;

/// Never starts `command`: the caller runs it unobserved.
pub fn spawn(_command: Command) -> Result<Traced, StartError> {
    Err(StartError::Unavailable(Unavailable::NotBuilt))
}

/// Runs cannot be observed in this build.
pub fn probe() -> Result<(), Unavailable> {
    Err(Unavailable::NotBuilt)
}
