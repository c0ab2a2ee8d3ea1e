//! `#!` lines: the first bytes of a file and the interpreter its `#!` line names, read the
//! way the kernel and `env` read them. The config (a gate's `shebang` filter), the planner and
//! tool identification all ask here.

use std::path::Path;

/// The first bytes of a file (enough for a `#!` line), or `None` when it cannot be read.
pub fn head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut buf = vec![0u8; 256];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// True for a `#!` line whose interpreter cannot be told: none, not text, or an option or
/// assignment where the program should be (an env form the reader does not know). Such a
/// file is reported as unverified by every gate that checks scripts by their `#!` line,
/// never silently left out.
pub fn undeterminable_shebang(head: &[u8]) -> bool {
    if !head.starts_with(b"#!") {
        return false;
    }
    match parse_shebang(head) {
        None => true,
        Some(p) => p.is_empty() || p.starts_with('-') || crate::shell::is_assignment(&p),
    }
}

/// The interpreter a `#!` line names: the program, or for `/usr/bin/env ... NAME` the name
/// env looks up (past its options and the wrappers it runs).
pub fn parse_shebang(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    let program = words.first()?;
    if crate::shell::base(program) == "env" {
        // The kernel passes env one argument; `-S` splits it, as splitting on spaces does.
        return crate::shell::unwrap(&words).1.first().cloned();
    }
    Some(program.clone())
}
