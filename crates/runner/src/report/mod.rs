//! Turning gate results into output: a verdict (pure), and human, JSON and JUnit renderings of
//! the same results.

pub mod diagnostics;
pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod progress;
pub mod reporter;
#[cfg(any(test, feature = "testing"))]
pub mod sample;
#[cfg(test)]
mod snapshots;

use crate::runner::{GateResult, GateStatus};
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Junit,
    /// GitHub Actions: the human report in groups, and annotations (the default under
    /// `GITHUB_ACTIONS=true`).
    Github,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub timed_out: usize,
    pub skipped: usize,
    pub no_files: usize,
    /// Gates that count as failures (failed, timed out, or skipped under CI).
    pub failing: usize,
}

impl Summary {
    pub fn of(results: &[GateResult], ci: bool) -> Self {
        let mut s = Summary::default();
        for r in results {
            match r.status {
                GateStatus::Pass => s.passed += 1,
                GateStatus::Fail => s.failed += 1,
                GateStatus::Timeout => s.timed_out += 1,
                GateStatus::Skipped => s.skipped += 1,
                GateStatus::NoFiles => s.no_files += 1,
            }
            if r.counts_as_failure(ci) {
                s.failing += 1;
            }
        }
        s
    }

    pub fn ok(&self) -> bool {
        self.failing == 0
    }
}

/// Everything a reporter needs besides the results.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub ci: bool,
    pub output_limit: usize,
    pub duration: Duration,
    pub config: Option<String>,
    pub presets: Vec<(String, Option<String>)>,
}
