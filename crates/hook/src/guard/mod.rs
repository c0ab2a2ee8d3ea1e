//! The PreToolUse guard: while a loop runs, the agent may not change what decides whether the
//! loop may end (the config, ralph-gate's state, the loop's state file, the hook settings,
//! git hooks) by editing them or by a shell command that writes, moves or deletes them.
//! Everything else is allowed, and fast. Pure: paths come in resolved (see [`paths`]).

pub mod paths;

use paths::Protected;
use ralph_base::shell::base;
use std::path::{Path, PathBuf};

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
const DEPTH: u8 = 4;

pub fn judge(call: &Call, protected: &Protected) -> Option<Denied> {
    match call {
        Call::Edit(path) => protected.hit(path, false).map(|p| Denied {
            what: format!("editing {p}"),
        }),
        Call::Bash(command) => bash(command, &Here::new(protected), DEPTH),
        Call::Other => None,
    }
}

/// The protected paths as a command line sees them: from every folder it may be in (a `cd`
/// inside a subshell is undone at its `)`, which the guard does not track, so a path is
/// judged from each folder the line has named).
struct Here<'a> {
    p: &'a Protected,
    cwds: Vec<PathBuf>,
}

impl<'a> Here<'a> {
    fn new(p: &'a Protected) -> Self {
        Self {
            p,
            cwds: vec![p.cwd().to_path_buf()],
        }
    }

    fn hit(&self, raw: &str, whole_tree: bool) -> Option<String> {
        self.cwds
            .iter()
            .find_map(|c| self.p.hit_at(raw, whole_tree, c))
    }

    fn cd(&mut self, raw: &str) {
        let last = self.cwds.last().cloned().unwrap_or_default();
        let dir = self.p.folder(raw, &last);
        if !self.cwds.contains(&dir) {
            self.cwds.push(dir);
        }
    }
}

/// Words that open or close a compound command, not a program (`if x; then rm y; fi`).
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "case",
    "esac", "in", "select", "coproc",
];

/// A simple command's words without the compound syntax in front (`then`, `{`, `function f`).
fn strip_reserved(mut words: &[String]) -> &[String] {
    loop {
        match words.first().map(String::as_str) {
            Some(w) if RESERVED.contains(&w) => words = &words[1..],
            Some("function") => words = words.get(2..).unwrap_or(&[]),
            _ => return words,
        }
    }
}

fn bash(command: &str, protected: &Here<'_>, depth: u8) -> Option<Denied> {
    let mut here = Here {
        p: protected.p,
        cwds: protected.cwds.clone(),
    };
    let mut vars = ralph_base::shell::Vars::default();
    for simple in ralph_base::shell::parse(command, depth) {
        let expanded = vars.expand(&simple.words);
        let words = strip_reserved(&expanded);
        if vars.learn(words) {
            continue;
        }
        for target in vars.expand(&simple.writes) {
            if let Some(p) = here.hit(&target, false) {
                return Some(Denied {
                    what: format!("writing {p} with a redirection"),
                });
            }
        }
        match words.first().map(|w| base(w)) {
            Some("cd" | "pushd") => {
                if let Some(dir) = operands(&words[1..]).first() {
                    here.cd(dir);
                }
                continue;
            }
            Some("alias") if depth > 0 => {
                for a in &words[1..] {
                    if let Some((_, body)) = a.split_once('=') {
                        if let Some(d) = bash(body, &here, depth - 1) {
                            return Some(d);
                        }
                    }
                }
                continue;
            }
            _ => {}
        }
        if let Some(d) = simple_command(words, &here, depth) {
            return Some(d);
        }
    }
    None
}

/// The command a wrapped command runs (`sudo nice -n 5 rm x` runs `rm x`).
fn unwrap(words: &[String]) -> &[String] {
    ralph_base::shell::unwrap(words).1
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

fn simple_command(words: &[String], protected: &Here<'_>, depth: u8) -> Option<Denied> {
    if let Some(line) = env_split(words) {
        return (depth > 0)
            .then(|| bash(line, protected, depth - 1))
            .flatten();
    }
    let words = unwrap(words);
    let (cmd, args) = words.split_first()?;
    let name = base(cmd);
    match name {
        "bash" | "sh" | "zsh" | "dash" | "ksh" if depth > 0 => {
            let at = args.iter().position(|a| {
                a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
            })?;
            let script = args.get(at + 1)?;
            bash(script, protected, depth - 1)
        }
        "eval" if depth > 0 => bash(&args.join(" "), protected, depth - 1),
        "git" => git(args, protected),
        "ralph-gate" => ralph_gate(args),
        _ => written(name, args, protected).map(|(verb, p)| Denied {
            what: format!("{verb} {p} (`{name}`)"),
        }),
    }
}

/// The protected path a file command `name` would change with `args`, and how.
fn written(name: &str, args: &[String], protected: &Here<'_>) -> Option<(&'static str, String)> {
    let any =
        |list: &[&String], whole_tree: bool| list.iter().find_map(|a| protected.hit(a, whole_tree));
    let hit = match name {
        "rm" | "rmdir" | "unlink" | "shred" => ("deleting", any(&operands(args), true)?),
        "mv" => ("moving", any(&operands(args), true)?),
        // Option values (`truncate -s 0`, `chmod 000`) are not paths but also never a
        // protected path, so checking every operand is safe.
        "truncate" | "touch" | "chmod" | "chown" | "chgrp" | "tee" | "chattr" => {
            ("changing", any(&operands(args), false)?)
        }
        "ln" => {
            let source = operands(args)
                .split_last()
                .and_then(|(_, sources)| any(sources, false));
            ("linking", source.or_else(|| copy_target(args, protected))?)
        }
        "rsync"
            if args
                .iter()
                .any(|a| a.starts_with("--delete") || a.starts_with("--remove-source")) =>
        {
            let dest = operands(args).last().and_then(|d| protected.hit(d, true));
            (
                "syncing over",
                dest.or_else(|| copy_target(args, protected))?,
            )
        }
        "cp" | "install" | "rsync" | "scp" => ("overwriting", copy_target(args, protected)?),
        "awk" | "gawk"
            if args.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace")
                || args
                    .iter()
                    .any(|a| a == "-iinplace" || a == "--include=inplace") =>
        {
            ("editing", any(&operands(args), false)?)
        }
        "ex" | "vi" | "vim" | "nvim" | "ed" | "sponge" | "emacs" | "nano" => {
            ("editing", any(&operands(args), false)?)
        }
        "sed" | "perl" | "ruby" if edits_in_place(args) => {
            ("editing", any(&operands(args), false)?)
        }
        "dd" => {
            let target = args.iter().find_map(|a| a.strip_prefix("of="))?;
            ("writing", protected.hit(target, false)?)
        }
        "find" => ("deleting under", find(args, protected)?),
        _ => return None,
    };
    Some(hit)
}

/// `sed -i`, `perl -pi`, `ruby -i`: an option that edits the files in place.
fn edits_in_place(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "-i"
            || a.starts_with("--in-place")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
    })
}

/// The protected path a copy, link or sync would overwrite: the destination (`-t DIR`, else
/// the last operand), and in a folder destination each source under its own name.
fn copy_target(args: &[String], protected: &Here<'_>) -> Option<String> {
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

/// `env -S 'LINE'` (`--split-string`): the line env splits and runs.
fn env_split(words: &[String]) -> Option<&str> {
    let at = words.iter().position(|w| base(w) == "env")?;
    let rest = &words[at + 1..];
    rest.iter().enumerate().find_map(|(i, w)| match w.as_str() {
        "-S" | "--split-string" => rest.get(i + 1).map(String::as_str),
        _ => w
            .strip_prefix("--split-string=")
            .or_else(|| w.strip_prefix("-S").filter(|v| !v.is_empty())),
    })
}

/// The protected path under a `find` that deletes or runs commands on what it finds: a
/// start folder holding one, unless every `-name` test rules all of them out.
fn find(args: &[String], protected: &Here<'_>) -> Option<String> {
    let destructive = args
        .iter()
        .any(|a| a == "-delete" || a == "-exec" || a == "-execdir" || a == "-ok");
    if !destructive {
        return None;
    }
    let dot = ".".to_string();
    let mut starts: Vec<&String> = args.iter().take_while(|a| !a.starts_with('-')).collect();
    if starts.is_empty() {
        starts.push(&dot);
    }
    let hit = starts.iter().find_map(|a| protected.hit(a, true))?;
    let names: Vec<&String> = args
        .windows(2)
        .filter(|w| w[0] == "-name" || w[0] == "-iname")
        .map(|w| &w[1])
        .collect();
    let other_tests = args.iter().any(|a| {
        matches!(
            a.as_str(),
            "-path" | "-wholename" | "-regex" | "-ipath" | "-iregex" | "-o" | "-or" | "-not" | "!"
        )
    });
    if names.is_empty() || other_tests {
        return Some(hit);
    }
    // Only files with these names: protected when one of the protected files has one.
    let named = |n: &String| {
        globset::GlobBuilder::new(n)
            .case_insensitive(true)
            .build()
            .map(|g| g.compile_matcher())
            .ok()
    };
    let matchers: Vec<_> = names.iter().filter_map(|n| named(n)).collect();
    let protected_names = protected_file_names(protected);
    protected_names
        .iter()
        .any(|f| matchers.iter().any(|m| m.is_match(f)))
        .then_some(hit)
}

/// The names of the protected files and of the files under protected folders (for `find
/// -name`); the loop files' patterns are named by their pattern's own spelling.
fn protected_file_names(protected: &Here<'_>) -> Vec<String> {
    let mut out = vec![
        ralph_loop::loops::MAIN_FILE.to_string(),
        "ralph-loop-x.local.md".to_string(),
        "settings.json".to_string(),
        "settings.local.json".to_string(),
    ];
    for p in protected.p.named() {
        if p.is_dir() {
            out.extend(walk_names(p, 3));
        }
        out.extend(p.file_name().map(|n| n.to_string_lossy().into_owned()));
    }
    out
}

fn walk_names(dir: &Path, depth: u8) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten().take(500) {
        out.push(e.file_name().to_string_lossy().into_owned());
        if depth > 0 && e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk_names(&e.path(), depth - 1));
        }
    }
    out
}

/// `ralph-gate loop start|cancel|approve` and `ralph-gate hook ...`: only a person starts or
/// ends a loop, and only the agent's own hooks speak for it.
fn ralph_gate(args: &[String]) -> Option<Denied> {
    match operands(args).as_slice() {
        [l, verb, ..]
            if *l == "loop" && matches!(verb.as_str(), "start" | "cancel" | "approve") =>
        {
            Some(Denied {
                what: format!("`ralph-gate loop {verb}`, which only a person may run"),
            })
        }
        [h, ..] if *h == "hook" => Some(Denied {
            what: "`ralph-gate hook`, which only the agent's own hooks run".into(),
        }),
        _ => None,
    }
}

fn git(args: &[String], protected: &Here<'_>) -> Option<Denied> {
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
    let shorts = |letters: &[char]| {
        rest.iter().any(|a| {
            a.starts_with('-') && !a.starts_with("--") && a.chars().any(|c| letters.contains(&c))
        })
    };
    let long = |names: &[&str]| rest.iter().any(|a| names.iter().any(|n| a == n));
    let paths = || -> Vec<String> {
        operands(rest)
            .iter()
            .map(|a| {
                if a.starts_with('/') {
                    (*a).clone()
                } else {
                    format!("{base}{a}")
                }
            })
            .collect()
    };
    let denied = |what: String| Some(Denied { what });
    match sub.as_str() {
        // Whole folders count: `git checkout .` puts back every tracked file under it,
        // the config included.
        "checkout" | "restore" | "rm" | "mv" => paths()
            .iter()
            .find_map(|a| protected.hit(a, a.ends_with('.') || sub == "rm" || sub == "mv" || a.ends_with('/')))
            .and_then(|p| denied(format!("`git {sub}` of {p}"))),
        "reset" if long(&["--hard", "--merge", "--keep"]) => {
            denied("`git reset --hard`, which puts back every tracked file, the config included; name the files to reset instead (`git checkout -- src/`)".into())
        }
        "clean" if shorts(&['x', 'X']) => {
            denied("`git clean -x`, which deletes ralph-gate's ignored state".into())
        }
        "clean" if shorts(&['f']) || long(&["--force"]) => {
            let named = paths();
            let hit = if named.is_empty() {
                protected.hit(".", true)
            } else {
                named.iter().find_map(|a| protected.hit(a, true))
            };
            hit.and_then(|p| denied(format!("`git clean` of {p}, which deletes the loop's untracked state; name the folders to clean instead")))
        }
        "stash"
            if shorts(&['u', 'a'])
                || long(&["--include-untracked", "--all"]) =>
        {
            denied("`git stash --include-untracked`, which moves the loop's state file away; stash your tracked changes (`git stash`) or name the paths".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
