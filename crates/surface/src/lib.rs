//! The verification surface, everything besides the checked code that decides a verdict,
//! described and compared (`surface`), and the stop gates a loop is held to (`pin`). Uses the
//! crates below it: base, config, plan, runner.

pub mod pin;
pub mod surface;
