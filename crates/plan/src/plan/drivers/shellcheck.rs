//! ShellCheck, one run per script, as real shell projects need it:
//! - the severity that fails comes from the gate's `fail_on` (default `warning`: likely bugs
//!   fail; notes and style hints, which real projects often leave on purpose, do not), and
//!   "not following a sourced file" (SC1091) never fails;
//! - a library without a `#!` line or `# shellcheck shell=` directive is checked in the
//!   dialect of the scripts that source it (`--shell=bash`), else as bash, instead of failing
//!   on SC2148 (no shebang);
//! - a library some script of the project sources is not failed for variables it sets for
//!   that script ("appears unused", SC2034); the library is the file the `source` path
//!   names (from the script's folder, or the root), by name only where no file is there;
//! - scripts in a dialect ShellCheck cannot read (zsh, fish) are left alone;
//! - sources are followed, as `shellcheck -x` does (from the folder the run starts in, or
//!   the script's own): a variable a sourced library sets is known, and each script's inputs
//!   include what it sources, so the per-file cache stays right.
//!
//! ShellCheck starts in milliseconds, so one run per file costs little and lets one edited
//! script re-check one script, and `check` spread over every core.

use super::{join_beside, join_inside};
use crate::plan::{as_argument, Context, Job, ProjectFs};
use crate::tools::parse_shebang;
use ralph_config::{Gate, Severity};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Interpreters ShellCheck understands, and the dialect to name for each.
fn dialect_of(interpreter: &str) -> Option<&'static str> {
    let base = interpreter.rsplit('/').next().unwrap_or(interpreter);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match base {
        "bash" | "bats" => Some("bash"),
        "sh" | "ash" => Some("sh"),
        "dash" => Some("dash"),
        "ksh" | "mksh" => Some("ksh"),
        "busybox" => Some("busybox"),
        _ => None,
    }
}

pub fn plan(gate: &Gate, matched: &[PathBuf], universe: &[PathBuf], cx: &Context<'_>) -> Vec<Job> {
    let mut index: Option<BTreeMap<Library, &'static str>> = None;
    let mut jobs: Vec<Job> = matched
        .iter()
        .filter_map(|f| job(gate, f, &mut index, (universe, cx.fs)))
        .collect();
    // The libraries those scripts source are checked too, though no glob names them (an
    // extensionless `lib/common`): what a script runs is the project's code.
    let present: std::collections::HashSet<&PathBuf> = universe.iter().collect();
    let mut libraries: Vec<PathBuf> = jobs
        .iter()
        .flat_map(|j| j.inputs.iter().skip(1))
        .filter(|p| present.contains(p) && !matched.contains(p) && !gate.excludes(p))
        .cloned()
        .collect();
    libraries.sort();
    libraries.dedup();
    for lib in &libraries {
        jobs.extend(job(gate, lib, &mut index, (universe, cx.fs)));
    }
    jobs
}

/// The run for script `f`: `None` for a dialect ShellCheck cannot read (zsh, fish).
fn job(
    gate: &Gate,
    f: &Path,
    index: &mut Option<BTreeMap<Library, &'static str>>,
    (universe, fs): (&[PathBuf], &dyn ProjectFs),
) -> Option<Job> {
    let severity = gate.severity.unwrap_or(Severity::Warning);
    let text = fs.read(f).unwrap_or_default();
    let interpreter = parse_shebang(&text);
    if interpreter
        .as_deref()
        .is_some_and(|i| dialect_of(i).is_none())
    {
        return None; // zsh, fish, python...: not a script ShellCheck can read
    }
    let text = String::from_utf8_lossy(&text);
    let declared = interpreter.is_some()
        || has_directive(&text, "shell=")
        || f.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "bash" | "ksh" | "dash" | "bats"));
    let mut argv: Vec<OsString> = vec![
        "shellcheck".into(),
        "--format=gcc".into(),
        format!("--severity={}", severity.as_str()).into(),
        "--exclude=SC1091".into(),
        // Sources are followed, from the folder it runs in or the script's own, as
        // `shellcheck -x` does: a variable a sourced library sets is set (SC2154 is no
        // failure), and what the script sources is among its inputs.
        "--external-sources".into(),
        "--source-path=SCRIPTDIR".into(),
    ];
    let index = index.get_or_insert_with(|| sourcing_dialects(gate, universe, fs));
    let name = f
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sourced_as = index
        .get(&Library::Path(f.to_path_buf()))
        .or_else(|| index.get(&Library::Name(name)))
        .copied();
    if !declared {
        argv.push(format!("--shell={}", sourced_as.unwrap_or("bash")).into());
    }
    if sourced_as.is_some() {
        // A library's variables are set for the scripts that source it: "appears unused"
        // (SC2034) is true of the library alone and false of the program.
        argv.push("--exclude=SC2034".into());
    }
    let mut inputs = vec![f.to_path_buf()];
    inputs.extend(source_closure(f, fs));
    Some(Job {
        argv: Some(argv),
        args: vec![as_argument(f)],
        inputs,
        label: Some(f.display().to_string()),
        ..Job::default()
    })
}

fn has_directive(text: &str, what: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with('#')
            && l.trim_start_matches('#')
                .trim_start()
                .starts_with("shellcheck ")
            && l.contains(what)
    })
}

/// The files a script sources, as written (`source lib.sh`, `. "$DIR/lib.sh"`,
/// `# shellcheck source=lib.sh`).
fn sourced(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix('#') {
            let rest = rest.trim_start();
            if let Some(d) = rest.strip_prefix("shellcheck ") {
                for part in d.split_whitespace() {
                    if let Some(p) = part.strip_prefix("source=") {
                        out.push(p.to_string());
                    }
                }
            }
            continue;
        }
        let after = l.strip_prefix("source ").or_else(|| l.strip_prefix(". "));
        if let Some(rest) = after {
            let word = first_word(rest.trim_start());
            if !word.is_empty() {
                out.push(word);
            }
        }
    }
    out
}

/// The first shell word of `s`, quotes removed, command substitutions kept whole
/// (`"$(dirname "$0")/lib.sh"` is one word).
fn first_word(s: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if depth == 0 && (c.is_whitespace() || matches!(c, ';' | '&' | '|')) => break,
            (None, '\'' | '"') | (Some('"'), '"') if depth == 0 => {
                quote = if quote.is_some() { None } else { Some(c) };
            }
            (Some('\''), '\'') => quote = None,
            (_, '$') if chars.peek() == Some(&'(') => {
                depth += 1;
                out.push(c);
            }
            (_, ')') if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            (_, '"') if depth > 0 => {}
            _ => out.push(c),
        }
    }
    out
}

/// A library a script sources: the file its path names, or where that path cannot be told
/// (no such file from the script's folder or the root) only its file name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Library {
    Path(PathBuf),
    Name(String),
}

/// The library `target` (as `script` sources it) is: a leading part that names a folder
/// through a variable or a command (`$DIR/`, `$(dirname "$0")/`) is the script's folder.
fn library(script: &Path, target: &str, fs: &dyn ProjectFs) -> Option<Library> {
    let name = target.rsplit('/').next().unwrap_or(target);
    if name.is_empty() || name.contains('$') {
        return None;
    }
    let rel = match target.rfind("$") {
        Some(at) => target[at..].split_once('/').map_or("", |(_, rest)| rest),
        None => target,
    };
    let dir = script.parent().unwrap_or(Path::new(""));
    [dir, Path::new("")]
        .iter()
        .filter_map(|base| join_inside(base, rel))
        .find(|p| fs.is_file(p))
        .map(Library::Path)
        .or_else(|| Some(Library::Name(name.to_string())))
}

/// For every library a script in the project sources, the dialect of those scripts (bash
/// wins when scripts of several dialects source it).
fn sourcing_dialects(
    gate: &Gate,
    universe: &[PathBuf],
    fs: &dyn ProjectFs,
) -> BTreeMap<Library, &'static str> {
    let head = |p: &Path| fs.head(p);
    let mut out: BTreeMap<Library, &'static str> = BTreeMap::new();
    for f in universe.iter().filter(|f| gate.matches_file(f, &head)) {
        let Some(text) = fs.read(f) else { continue };
        let Some(dialect) = parse_shebang(&text).as_deref().and_then(dialect_of) else {
            continue;
        };
        for target in sourced(&String::from_utf8_lossy(&text)) {
            let Some(lib) = library(f, &target, fs) else {
                continue;
            };
            let slot = out.entry(lib).or_insert(dialect);
            if dialect == "bash" {
                *slot = "bash";
            }
        }
    }
    out
}

/// What a script sources, transitively, wherever ShellCheck may look for it (the folder it
/// runs in, the script's folder); paths that do not exist count too (their creation changes
/// the result).
fn source_closure(f: &Path, fs: &dyn ProjectFs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut queue = vec![f.to_path_buf()];
    while let Some(script) = queue.pop() {
        let Some(text) = fs.read(&script) else {
            continue;
        };
        let dir = script.parent().unwrap_or(Path::new("")).to_path_buf();
        for target in sourced(&String::from_utf8_lossy(&text)) {
            // A leading folder named through a variable or a command (`$(dirname "$0")/`,
            // `${0%/*}/`) is taken for the script's, as `library` does: ShellCheck with
            // `--source-path=SCRIPTDIR` follows it, and a file too many in the key only
            // costs a run.
            let target = match target.rfind('$') {
                Some(at) => match target[at..].split_once('/') {
                    Some((_, rest)) if !rest.contains('$') => rest.to_string(),
                    _ => continue,
                },
                None => target.replace("SCRIPTDIR/", ""),
            };
            for base in [Path::new(""), dir.as_path()] {
                // A library beside the project is read, never planned: its content joins
                // the key (the static model's; observation sees it anyway).
                if let Some(p) = join_beside(base, &target).filter(|p| !out.contains(p)) {
                    out.push(p);
                }
                if let Some(p) = join_inside(base, &target) {
                    if !out.contains(&p) && p != f {
                        out.push(p.clone());
                        if fs.is_file(&p) {
                            queue.push(p);
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
