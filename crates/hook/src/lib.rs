//! What an agent meets: the hooks' decisions (`hook`: stop, edit feedback, the guard's
//! answer), the words an agent reads (`words`), one adapter per agent (`agents`), the guard
//! in front of tool calls (`guard`), Claude Code's settings (`claude_settings`) and the
//! fresh-process loop (`run`). Uses every crate below it.

// Tests set up processes and variables of their own.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agents;
pub mod claude_settings;
pub mod fresh;
pub mod guard;
pub mod hook;
pub mod words;
