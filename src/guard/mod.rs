//! The PreToolUse guard: while a loop runs, the agent may not change what decides whether the
//! loop may end (the config, ralph-gate's state, the loop's state file, the hook settings,
//! git hooks) by editing them or by a shell command that writes, moves or deletes them.
//! Everything else is allowed, and fast. Pure: paths come in resolved (see [`paths`]).

pub mod paths;

use crate::shell::base;
use paths::Protected;
use std::path::Path;

/// A tool call, as far as the guard is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// Write, Edit, MultiEdit, NotebookEdit: the file they change.
    Edit(String),
    Bash(String),
    Other,
}

/// Why a call is denied: the path (or command) and what it would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub what: String,
}

/// Levels of `bash -c`, `eval` and `$(...)` read inside a command.
const DEPTH: u8 = 2;

pub fn judge(call: &Call, protected: &Protected) -> Option<Denied> {
    match call {
        Call::Edit(path) => protected.hit(path, false).map(|p| Denied {
            what: format!("editing {p}"),
        }),
        Call::Bash(command) => bash(command, protected, DEPTH),
        Call::Other => None,
    }
}

fn bash(command: &str, protected: &Protected, depth: u8) -> Option<Denied> {
    for simple in crate::shell::parse(command, depth) {
        for target in &simple.writes {
            if let Some(p) = protected.hit(target, false) {
                return Some(Denied {
                    what: format!("writing {p} with a redirection"),
                });
            }
        }
        if let Some(d) = simple_command(&simple.words, protected, depth) {
            return Some(d);
        }
    }
    None
}

/// The command a wrapped command runs (`sudo nice -n 5 rm x` runs `rm x`).
fn unwrap(words: &[String]) -> &[String] {
    crate::shell::unwrap(words).1
}

/// Non-option arguments (after `--`, everything).
fn operands(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if options && a == "--" {
            options = false;
        } else if options && a.starts_with('-') && a.len() > 1 {
            continue;
        } else {
            out.push(a);
        }
    }
    out
}

fn simple_command(words: &[String], protected: &Protected, depth: u8) -> Option<Denied> {
    let words = unwrap(words);
    let (cmd, args) = words.split_first()?;
    let name = base(cmd);
    let deny = |verb: &str, p: String| {
        Some(Denied {
            what: format!("{verb} {p} (`{name}`)"),
        })
    };
    let any =
        |list: &[&String], whole_tree: bool| list.iter().find_map(|a| protected.hit(a, whole_tree));
    match name {
        "bash" | "sh" | "zsh" | "dash" | "ksh" if depth > 0 => {
            let at = args.iter().position(|a| {
                a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
            })?;
            let script = args.get(at + 1)?;
            bash(script, protected, depth - 1)
        }
        "eval" if depth > 0 => bash(&args.join(" "), protected, depth - 1),
        "rm" | "rmdir" | "unlink" | "shred" => {
            any(&operands(args), true).and_then(|p| deny("deleting", p))
        }
        "mv" => any(&operands(args), true).and_then(|p| deny("moving", p)),
        "truncate" | "touch" | "chmod" | "chown" | "chgrp" | "tee" | "chattr" => {
            // Option values (`truncate -s 0`, `chmod 000`) are not paths but also never a
            // protected path, so checking every operand is safe.
            any(&operands(args), false).and_then(|p| deny("changing", p))
        }
        "cp" | "install" | "ln" | "rsync" | "scp" => {
            copy_target(args, protected).and_then(|p| deny("overwriting", p))
        }
        "sed" | "perl" | "ruby" => {
            let in_place = args.iter().any(|a| {
                a == "-i"
                    || a.starts_with("--in-place")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            });
            if !in_place {
                return None;
            }
            any(&operands(args), false).and_then(|p| deny("editing", p))
        }
        "dd" => args
            .iter()
            .find_map(|a| a.strip_prefix("of="))
            .and_then(|t| protected.hit(t, false))
            .and_then(|p| deny("writing", p)),
        "find" => find(args, protected).and_then(|p| deny("deleting under", p)),
        "git" => git(args, protected),
        "ralph-gate" => ralph_gate(args),
        _ => None,
    }
}

/// The protected path a copy, link or sync would overwrite: the destination (`-t DIR`, else
/// the last operand), and in a folder destination each source under its own name.
fn copy_target(args: &[String], protected: &Protected) -> Option<String> {
    let mut ops = operands(args);
    let dir_flag = args
        .iter()
        .position(|a| a == "-t" || a == "--target-directory")
        .and_then(|i| args.get(i + 1))
        .or_else(|| args.iter().find(|a| a.starts_with("--target-directory=")))
        .map(|a| a.trim_start_matches("--target-directory=").to_string());
    ops.retain(|o| Some(o.as_str()) != dir_flag.as_deref());
    let (dest, sources): (String, Vec<&String>) = match dir_flag {
        Some(d) => (d, ops),
        None => {
            let (last, rest) = ops.split_last()?;
            ((*last).clone(), rest.to_vec())
        }
    };
    let into = sources.iter().filter_map(|s| {
        Path::new(s.as_str())
            .file_name()
            .map(|n| format!("{dest}/{}", n.to_string_lossy()))
    });
    std::iter::once(dest.clone())
        .chain(into)
        .find_map(|t| protected.hit(&t, false))
}

/// The protected path under a `find` that deletes or runs commands on what it finds.
fn find(args: &[String], protected: &Protected) -> Option<String> {
    let destructive = args
        .iter()
        .any(|a| a == "-delete" || a == "-exec" || a == "-execdir");
    if !destructive {
        return None;
    }
    args.iter()
        .take_while(|a| !a.starts_with('-'))
        .find_map(|a| protected.hit(a, false))
}

/// `ralph-gate loop cancel|approve`: only a person may run them.
fn ralph_gate(args: &[String]) -> Option<Denied> {
    match operands(args).as_slice() {
        [l, verb, ..] if *l == "loop" && (*verb == "cancel" || *verb == "approve") => {
            Some(Denied {
                what: format!("`ralph-gate loop {verb}`, which only a person may run"),
            })
        }
        _ => None,
    }
}

fn git(args: &[String], protected: &Protected) -> Option<Denied> {
    // Global options before the subcommand (`-c k=v`) are skipped; `-C dir` moves where
    // the paths after it are relative to.
    let mut i = 0;
    let mut base = String::new();
    while let Some(a) = args.get(i) {
        if a == "-C" {
            if let Some(d) = args.get(i + 1) {
                base.push_str(d);
                base.push('/');
            }
            i += 2;
        } else if a == "-c" || a == "--git-dir" || a == "--work-tree" {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let sub = args.get(i)?;
    let rest = &args[i + 1..];
    match sub.as_str() {
        "checkout" | "restore" | "rm" | "mv" => operands(rest)
            .iter()
            .map(|a| {
                if a.starts_with('/') {
                    (*a).clone()
                } else {
                    format!("{base}{a}")
                }
            })
            .find_map(|a| protected.hit(&a, sub == "rm" || sub == "mv"))
            .map(|p| Denied {
                what: format!("`git {sub}` of {p}"),
            }),
        "clean"
            if rest.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('x') || a.contains('X'))
            }) =>
        {
            Some(Denied {
                what: "`git clean -x`, which deletes ralph-gate's ignored state".into(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
