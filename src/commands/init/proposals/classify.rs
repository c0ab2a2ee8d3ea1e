//! Which of a project's commands are checks: the table `init` reads CI steps, Makefile
//! targets, package scripts and pre-commit hooks through. A command is proposed only when
//! its program is a checker or test runner named here; installs, builds and deploys are
//! not. Pure: words in, a kind out.

use ralph_base::shell;

/// What a proposed command does, which decides its phases: tests at the stop, checks also
/// after edits when they proved fast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Test,
    Check,
}

/// A command recognised as a check, and the preset that already runs it (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checker {
    pub kind: Kind,
    /// The gate's name, from the program and its subcommand (`ruff-check`, `make-test`).
    pub name: String,
    /// The preset whose gate runs the same tool over the project.
    pub preset: Option<&'static str>,
}

/// Makefile targets and package scripts whose name says they check: the target itself or
/// a `name:variant` script.
/// Words in a target or script name that make it write rather than check (`lint:fix`,
/// `test:watch`, which never ends).
const NOT_CHECKS: &[&str] = &["fix", "watch", "write", "update", "dev", "serve", "u"];

const CHECK_NAMES: &[(&str, Kind)] = &[
    ("test", Kind::Test),
    ("tests", Kind::Test),
    ("unit", Kind::Test),
    ("check", Kind::Check),
    ("lint", Kind::Check),
    ("typecheck", Kind::Check),
    ("type-check", Kind::Check),
    ("types", Kind::Check),
    ("vet", Kind::Check),
];

/// The kind a target or script name says it is: `test`, `test:unit`, `lint-sh`.
pub fn named_check(name: &str) -> Option<Kind> {
    if name.split([':', '-', '_']).any(|w| NOT_CHECKS.contains(&w)) {
        return None;
    }
    let head = name
        .split([':', '-', '_'])
        .next()
        .filter(|h| !h.is_empty())?;
    let whole = CHECK_NAMES.iter().find(|(n, _)| *n == name);
    whole
        .or_else(|| CHECK_NAMES.iter().find(|(n, _)| *n == head))
        .map(|(_, k)| *k)
}

/// Programs that check, with the subcommands that make them a check (empty: any), their
/// kind and the preset that runs them.
const PROGRAMS: &[(&str, &[&str], Kind, Option<&str>)] = &[
    ("pytest", &[], Kind::Test, Some("pytest")),
    ("py.test", &[], Kind::Test, Some("pytest")),
    ("mypy", &[], Kind::Check, Some("mypy")),
    ("pyright", &[], Kind::Check, None),
    ("ruff", &["check", "format"], Kind::Check, None),
    ("flake8", &[], Kind::Check, None),
    ("pylint", &[], Kind::Check, None),
    ("black", &["--check"], Kind::Check, None),
    ("bats", &[], Kind::Test, None),
    ("shellcheck", &[], Kind::Check, Some("shell")),
    ("shfmt", &["-d", "--diff"], Kind::Check, None),
    ("tsc", &[], Kind::Check, Some("typescript")),
    ("eslint", &[], Kind::Check, None),
    ("biome", &["check", "lint", "ci"], Kind::Check, None),
    ("prettier", &["--check", "-c"], Kind::Check, None),
    ("jest", &[], Kind::Test, None),
    ("vitest", &[], Kind::Test, None),
    ("golangci-lint", &["run"], Kind::Check, None),
    ("staticcheck", &[], Kind::Check, None),
];

/// `go`, `cargo`, `deno`, `node`: the subcommands that check, each with its kind and preset.
const SUBCOMMANDS: &[(&str, &str, Kind, Option<&str>)] = &[
    ("go", "test", Kind::Test, Some("go")),
    ("go", "vet", Kind::Check, Some("go")),
    ("cargo", "test", Kind::Test, Some("rust")),
    ("cargo", "clippy", Kind::Check, None),
    ("cargo", "check", Kind::Check, Some("rust")),
    ("cargo", "fmt", Kind::Check, None),
    ("deno", "test", Kind::Test, Some("deno")),
    ("deno", "check", Kind::Check, Some("deno")),
    ("deno", "lint", Kind::Check, Some("deno")),
    ("node", "--test", Kind::Test, None),
];

/// Runners in front of a tool that change nothing about what it checks.
const RUNNERS: &[&[&str]] = &[
    &["npx"],
    &["bunx"],
    &["uvx"],
    &["uv", "run"],
    &["poetry", "run"],
    &["pdm", "run"],
    &["hatch", "run"],
    &["pipenv", "run"],
    &["pnpm", "exec"],
    &["pnpm", "dlx"],
    &["yarn", "exec"],
    &["npm", "exec"],
    &["python", "-m"],
    &["python3", "-m"],
];

/// Runners' options that take a value (`uv run --with pytest pytest`).
const RUNNER_VALUED: &[&str] = &[
    "--with",
    "--with-requirements",
    "--with-editable",
    "--python",
    "-p",
    "--package",
    "--extra",
    "--group",
    "--only-group",
    "--directory",
    "--project",
    "--env-file",
    "--index",
    "--from",
];

/// The words with runners, wrappers and assignments in front taken away.
fn tool_words(words: &[String]) -> &[String] {
    let (_, mut rest) = shell::unwrap(words);
    'again: loop {
        for runner in RUNNERS {
            let n = runner.len();
            if rest.len() > n && rest.iter().zip(runner.iter()).all(|(w, r)| w == r) {
                rest = &rest[n..];
                while let Some(w) = rest
                    .first()
                    .filter(|w| w.starts_with('-') && *w != "--test")
                {
                    let valued = RUNNER_VALUED.contains(&w.as_str());
                    rest = &rest[if valued { 2 } else { 1 }.min(rest.len())..];
                }
                continue 'again;
            }
        }
        return rest;
    }
}

/// What the package managers call scripts: `npm run lint`, `npm test`, `pnpm lint`,
/// `yarn typecheck`, `bun run check`. The script's name, when the command runs one.
pub fn script_of(words: &[String]) -> Option<&str> {
    let words = tool_words(words);
    let (pm, rest) = words.split_first()?;
    if !["npm", "pnpm", "yarn", "bun"].contains(&shell::base(pm)) {
        return None;
    }
    match rest {
        [run, script, ..] if run == "run" || run == "run-script" => Some(script),
        [test, ..] if test == "test" || test == "t" => Some("test"),
        [script, ..] if shell::base(pm) != "npm" && !script.starts_with('-') => Some(script),
        _ => None,
    }
}

/// Options that make a checker rewrite the files it checks: such a command fixes, it
/// does not check.
const WRITES: &[&str] = &["--fix", "--fix-only", "--write", "-w", "--unsafe-fixes"];

/// A formatter's subcommand that writes unless told to only look.
fn formats_in_place(args: &[String]) -> bool {
    let formats = args.first().is_some_and(|a| a == "format" || a == "fmt");
    let looks = args
        .iter()
        .any(|a| ["--check", "--diff", "-d", "-l", "--list"].contains(&a.as_str()));
    formats && !looks
}

/// package.json's scripts: name to command.
pub type Scripts = std::collections::BTreeMap<String, String>;

/// What a package script checks, by its name (`test:unit`) or else by what it runs
/// (`"shellcheck": "shellcheck ./git-open"`).
fn script_check(script: &str, scripts: &Scripts) -> Option<(Kind, Option<&'static str>)> {
    if script == "test" {
        return Some((Kind::Test, Some("npm-test")));
    }
    if let Some(kind) = named_check(script) {
        return Some((kind, None));
    }
    // Every command of the body must check (`npm run man && npm test` builds first).
    let body = scripts.get(script)?;
    let checks: Vec<Checker> = ralph_base::shell::parse(body, 0)
        .iter()
        .map(|s| checker(&s.words, &Scripts::new()))
        .collect::<Option<_>>()?;
    let first = checks.first()?;
    let kind = match checks.iter().any(|c| c.kind == Kind::Test) {
        true => Kind::Test,
        false => Kind::Check,
    };
    Some((kind, first.preset))
}

/// Options that put a checker in another mode than checking: it clears or writes its own
/// state, sets itself up, never ends (a watch), or only says something about itself.
const NOT_CHECKING: &[&str] = &[
    "--clearCache",
    "--clear-cache",
    "--init",
    "--version",
    "--help",
    "--watch",
    "--watchAll",
    "--generateTrace",
    "--showConfig",
    "--install-types",
    "--updateSnapshot",
    "--update-snapshots",
    "-u",
];

/// A simple command that rewrites what it checks (`--fix`, `ruff format` without
/// `--check`) or that runs a checker in a mode that checks nothing (`jest --clearCache`,
/// `tsc --watch`, `vitest -u`).
pub fn writes(words: &[String]) -> bool {
    words
        .iter()
        .any(|w| WRITES.contains(&w.as_str()) || NOT_CHECKING.contains(&w.as_str()))
        || formats_in_place(tool_words(words).get(1..).unwrap_or_default())
}

/// The checker a simple command runs, if it is one; `scripts` are the package's, for
/// `npm run NAME`.
pub fn checker(words: &[String], scripts: &Scripts) -> Option<Checker> {
    if writes(words) {
        return None;
    }
    if let Some(script) = script_of(words) {
        let (kind, preset) = script_check(script, scripts)?;
        return Some(Checker {
            kind,
            name: format!("npm-{}", slug(script)),
            preset,
        });
    }
    let words = tool_words(words);
    let (program, args) = words.split_first()?;
    let program = shell::base(program);
    if let Some((_, sub, kind, preset)) = SUBCOMMANDS
        .iter()
        .find(|(p, s, ..)| *p == program && args.first().is_some_and(|a| a == s))
    {
        return Some(Checker {
            kind: *kind,
            name: format!("{program}-{}", slug(sub)),
            preset: *preset,
        });
    }
    if program == "make" || program == "gmake" {
        let target = make_target(args)?;
        return Some(Checker {
            kind: named_check(target)?,
            name: format!("make-{}", slug(target)),
            preset: None,
        });
    }
    let (_, subs, kind, preset) = PROGRAMS.iter().find(|(p, ..)| *p == program)?;
    let sub = args.iter().find(|a| subs.contains(&a.as_str()));
    if !subs.is_empty() && sub.is_none() {
        return None;
    }
    let name = match sub.filter(|s| !s.starts_with('-')) {
        Some(s) => format!("{program}-{s}"),
        None => program.to_string(),
    };
    Some(Checker {
        kind: *kind,
        name: slug(&name),
        preset: *preset,
    })
}

/// make's first target on its command line: its options and their values skipped.
fn make_target(args: &[String]) -> Option<&String> {
    const VALUED: &[&str] = &["-C", "-f", "-I", "-o", "-W", "--directory", "--file"];
    let mut args = args.iter().peekable();
    while let Some(a) = args.next() {
        let numeric_next = args.peek().is_some_and(|n| n.parse::<u32>().is_ok());
        if VALUED.contains(&a.as_str()) || (a == "-j" && numeric_next) {
            args.next();
        } else if !a.starts_with('-') && !a.contains('=') {
            return Some(a);
        }
    }
    None
}

/// Whether `command` runs its checks through something whose body ralph-gate does not see
/// as it runs (a make rule, a package script: a Makefile's `SHELL`, an include, npm's
/// `script-shell` can change what runs), so only what the runners report tells.
pub fn wrapped(command: &str) -> bool {
    shell::parse(command, 0).iter().any(|s| {
        let words = tool_words(&s.words);
        let make = words
            .first()
            .is_some_and(|p| ["make", "gmake"].contains(&shell::base(p)));
        make || script_of(&s.words).is_some()
    })
}

/// A gate name made of a command's words: letters, digits and dashes.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Option<(Kind, String, Option<&'static str>)> {
        let simple = shell::parse(line, 0).into_iter().next()?;
        let scripts = Scripts::from([
            ("sc".to_string(), "shellcheck x.sh".to_string()),
            (
                "prepublish".to_string(),
                "npm run man && npm test".to_string(),
            ),
        ]);
        checker(&simple.words, &scripts).map(|c| (c.kind, c.name, c.preset))
    }

    #[test]
    fn checkers_are_known_by_program_and_subcommand() {
        let t = |s: &str| s.to_string();
        assert_eq!(
            of("pytest -q"),
            Some((Kind::Test, t("pytest"), Some("pytest")))
        );
        assert_eq!(
            of("uv run --frozen python -m pytest tests"),
            Some((Kind::Test, t("pytest"), Some("pytest")))
        );
        assert_eq!(
            of("ruff check ."),
            Some((Kind::Check, t("ruff-check"), None))
        );
        assert_eq!(of("ruff --version"), None);
        assert_eq!(of("bats test/"), Some((Kind::Test, t("bats"), None)));
        assert_eq!(
            of("go test -race ./..."),
            Some((Kind::Test, t("go-test"), Some("go")))
        );
        assert_eq!(of("go build ./..."), None);
        assert_eq!(
            of("make -j2 lint"),
            Some((Kind::Check, t("make-lint"), None))
        );
        assert_eq!(of("make install"), None);
        assert_eq!(
            of("make -C sub -j 4 V=1 test"),
            Some((Kind::Test, t("make-test"), None))
        );
        assert_eq!(of("make -C test install"), None);
        assert_eq!(of("npm run lint"), Some((Kind::Check, t("npm-lint"), None)));
        assert_eq!(
            of("pnpm typecheck"),
            Some((Kind::Check, t("npm-typecheck"), None))
        );
        assert_eq!(
            of("npm test"),
            Some((Kind::Test, t("npm-test"), Some("npm-test")))
        );
        assert_eq!(of("npm ci"), None);
        assert_eq!(of("npm run prepublish"), None);
        assert_eq!(
            of("npm run sc"),
            Some((Kind::Check, t("npm-sc"), Some("shell")))
        );
        assert_eq!(of("npm run build"), None);
        assert_eq!(
            of("npx tsc --noEmit"),
            Some((Kind::Check, t("tsc"), Some("typescript")))
        );
        assert_eq!(
            of("black --check src"),
            Some((Kind::Check, t("black"), None))
        );
        assert_eq!(of("black src"), None);
        assert_eq!(of("ruff format ."), None);
        assert_eq!(
            of("ruff format --check ."),
            Some((Kind::Check, t("ruff-format"), None))
        );
        assert_eq!(of("cargo fmt --all"), None);
        assert_eq!(
            of("cargo fmt --all -- --check"),
            Some((Kind::Check, t("cargo-fmt"), None))
        );
        assert_eq!(of("eslint --fix ."), None);
        assert_eq!(of("pip install -e ."), None);
        assert_eq!(
            of("CI=1 timeout 60 node --test"),
            Some((Kind::Test, t("node-test"), None))
        );
        assert_eq!(
            of("uv run --with dist/x.whl --with pytest pytest testing"),
            Some((Kind::Test, t("pytest"), Some("pytest")))
        );
    }

    #[test]
    fn names_say_what_checks() {
        assert_eq!(named_check("test:unit"), Some(Kind::Test));
        assert_eq!(named_check("lint-sh"), Some(Kind::Check));
        assert_eq!(named_check("latest"), None);
        assert_eq!(named_check("testdata"), None);
        assert_eq!(named_check("build"), None);
        assert_eq!(named_check("lint:fix"), None);
        assert_eq!(named_check("test-watch"), None);
    }
}
