//! The Claude Code hooks: protocol types, and per event a pure decision plus thin I/O.

pub mod decide;
pub mod notices;
pub mod post_tool_use;
pub mod pre_tool_use;
pub mod promise;
pub mod protocol;
pub mod stop;
