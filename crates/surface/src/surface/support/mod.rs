//! Code only the tests can use, decided by the language's own rule rather than by a name:
//! part of the checks (an assertion helper, a fake), whatever its folder is called. Left as
//! code, a helper's comparison widened to accept broken code kept its final version in the
//! differential run, and the loop ended on it.
//!
//! Go: an internal package no code of its module reaches ([`go`]). Rust: a module file
//! declared under `#[cfg(test)]`, which only a test build compiles ([`rust`]). Other
//! languages have no such rule (a Python module only the tests import may be a library's
//! public API, as `click.testing` is), so they are not judged here.

mod go;
mod rust;

use super::source::Source;
use std::collections::BTreeSet;

/// The files of `source` (relative to the project root, as shown) that only tests use.
pub fn test_only(source: &Source) -> BTreeSet<String> {
    let mut out = go::test_only(source);
    out.extend(rust::test_only(source));
    out
}
