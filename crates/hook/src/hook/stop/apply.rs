//! A stop's plan carried out, always in this order: the loop file changed (advanced and
//! pinned again, or ended), then the journal's lines appended. The one place a stop writes.

use super::plan::Plan;
use super::{Judged, StopError};
use crate::hook::Verdict;
use ralph_base::state::Layout;
use ralph_loop::{journal, loops};

/// What a stop carried out answers.
pub struct Done {
    pub verdict: Verdict,
    pub judged: Option<Judged>,
}

/// Carries `plan` out; `None` when the loop it changes was gone by then (cancelled while the
/// gates ran): such a stop says nothing and records nothing.
pub fn carry_out(layout: &Layout, plan: Plan<'_>) -> Result<Option<Done>, StopError> {
    if let Some((path, change)) = plan.change {
        if !loops::settle(layout, path, change)? {
            return Ok(None);
        }
    }
    for line in plan.journal {
        let written = journal::append(layout, line.entry);
        if let (Err(source), true) = (written, line.must) {
            return Err(StopError::Journal {
                path: layout.journal(),
                source,
            });
        }
    }
    Ok(Some(Done {
        verdict: plan.verdict,
        judged: plan.judged,
    }))
}
