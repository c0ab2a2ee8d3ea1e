//! What a compiled test binary itself says it ran: Go's (`go test`) and Rust's libtest
//! (`cargo test`). Every run of a gate has its test binaries started through ralph-gate
//! (`GOFLAGS=-exec=...`, `CARGO_TARGET_<host>_RUNNER=...`), whatever the command's spelling,
//! and [`serve`] passes their output through while it reads the binary's own summary.
//! An exit status of 0 must agree with it: a binary that printed `--- FAIL` or `FAIL` (a
//! `TestMain` that calls `os.Exit(0)` after `m.Run()`), a libtest run that said
//! `test result: FAILED`, or one that began (`running 3 tests`) and never printed its
//! summary (a test called `std::process::exit(0)`) fails: the wrapper exits 1, so the tool
//! reports the failure as it would any other, and writes why for the gate's result.
//!
//! The wrapper steps aside where the project chose a way of running binaries: a `-exec` in
//! `GOFLAGS` (the variable or `go env -w`), a cargo runner in a `.cargo/config` or the
//! environment. A file that adds one is part of the checks, which a loop holds.

use ralph_base::env::Environment;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

mod report;
pub use report::{judge, Heard};

/// The hidden subcommand the wrappers call: `ralph-gate told-exec <go|libtest> <dir> <binary> [args]`.
pub const SUBCOMMAND: &str = "told-exec";

/// Which test harness a binary has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Harness {
    Go,
    Libtest,
}

impl Harness {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "go" => Some(Self::Go),
            "libtest" => Some(Self::Libtest),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Go => "go",
            Self::Libtest => "libtest",
        }
    }
}

/// One run's wrappers: a folder (the two scripts, and `told/` for what they find) under an
/// unguessable name in the temporary folder, removed when dropped.
pub struct Listening {
    dir: PathBuf,
}

impl Listening {
    /// New wrappers, or `None` when they cannot be made or named safely (a path with white
    /// space, which `GOFLAGS` and a cargo runner would split; ralph-gate's own program gone):
    /// the run then goes on unheard.
    pub fn open() -> Option<Self> {
        let exe = std::env::current_exe().ok().filter(|e| e.is_file())?;
        let dir = super::job::unguessable(&std::env::temp_dir().join("ralph-gate-testbin"));
        if dir.to_str()?.contains(char::is_whitespace) {
            return None;
        }
        std::fs::create_dir_all(dir.join("told")).ok()?;
        let listening = Self { dir };
        for harness in [Harness::Go, Harness::Libtest] {
            listening.script(&exe, harness).ok()?;
        }
        Some(listening)
    }

    fn script(&self, exe: &Path, harness: Harness) -> std::io::Result<()> {
        let text = format!(
            "#!/bin/sh\nexec {} {SUBCOMMAND} {} {} \"$@\"\n",
            quoted(exe.as_os_str()),
            harness.name(),
            quoted(self.dir.join("told").as_os_str())
        );
        let path = self.dir.join(harness.name());
        std::fs::write(&path, text)?;
        ralph_base::platform::set_mode(&path, 0o755)
    }

    /// The variables that send a gate's test binaries through the wrappers, unless the
    /// project runs them its own way. `gate_env` is the gate's own `env`, `cwd` where it runs.
    pub fn vars(
        &self,
        gate_env: &BTreeMap<String, String>,
        env: &Environment,
        cwd: &Path,
    ) -> Vec<(OsString, OsString)> {
        let given = |name: &str| super::given_var(gate_env, env, name);
        let mut vars = Vec::new();
        let goflags = given("GOFLAGS").unwrap_or_else(|| go_env_file_flags(env));
        if !goflags.to_string_lossy().contains("-exec") {
            let mut value = goflags;
            if !value.is_empty() {
                value.push(" ");
            }
            value.push("-exec=");
            value.push(self.dir.join(Harness::Go.name()));
            vars.push(("GOFLAGS".into(), value));
        }
        let runner = cargo_runner_var();
        let chosen =
            given(&runner).is_some() || cargo_configs(cwd, env).iter().any(|c| names_a_runner(c));
        if !chosen {
            vars.push((
                runner.into(),
                self.dir.join(Harness::Libtest.name()).into_os_string(),
            ));
        }
        vars
    }

    /// Why the run's test binaries contradict their exit status, if any did.
    pub fn told(&self) -> Option<String> {
        let found: Vec<Told> = super::records::read(&self.dir.join("told"));
        let reasons: Vec<String> = found.into_iter().filter_map(|t| t.reason).collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// The tests the run's test binaries said they ran, each named by where it ran relative
    /// to `root` (the package's folder), its binary (libtest) and its name: the same test has
    /// the same name in any checkout of the project. `None` when no test binary ran, or one
    /// ran tests it did not name (an output format asked for by the command that names
    /// none): which ran is not known.
    pub fn ran(&self, root: &Path) -> Option<Vec<String>> {
        let found: Vec<Told> = super::records::read(&self.dir.join("told"));
        let found: Vec<Told> = found.into_iter().filter(|t| t.tested).collect();
        if found.is_empty() || found.iter().any(|t| t.counted > t.ran.len() as u64) {
            return None;
        }
        let mut ran: Vec<String> = found.iter().flat_map(|t| t.ids(root)).collect();
        ran.sort();
        ran.dedup();
        Some(ran)
    }
}

impl Listening {
    /// The subtests the run's Go test binaries said ran, named as [`Self::ran`] names tests
    /// (`<package folder>: TestA/case`).
    pub fn subtests(&self, root: &Path) -> Vec<String> {
        let found: Vec<Told> = super::records::read(&self.dir.join("told"));
        let mut all: Vec<String> = found
            .iter()
            .filter(|t| t.tested)
            .flat_map(|t| t.named(root, &t.subtests))
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The processes of the run's test binaries that ran tests.
    pub fn test_pids(&self) -> Vec<i32> {
        let found: Vec<Told> = super::records::read(&self.dir.join("told"));
        found
            .into_iter()
            .filter(|t| t.tested)
            .filter_map(|t| i32::try_from(t.pid?).ok())
            .collect()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a wrapper writes for the gate's result: the tests the binary ran, and why its exit
/// of 0 does not count when it does not.
#[derive(Debug, Serialize, Deserialize)]
struct Told {
    harness: Harness,
    binary: String,
    /// Where the binary ran (go and cargo start it in its package's folder).
    cwd: PathBuf,
    reason: Option<String>,
    ran: Vec<String>,
    /// How many tests the binary announced (libtest), named or not.
    #[serde(default)]
    counted: u64,
    /// Whether it was run to run tests (not `go run`, `cargo run` or a listing).
    #[serde(default)]
    tested: bool,
    /// Its process id: what it, its threads and the processes it started read are the
    /// tests' (their data or the code's input).
    #[serde(default)]
    pid: Option<u32>,
    /// Go: the subtests it said passed or failed.
    #[serde(default)]
    subtests: Vec<String>,
}

impl Told {
    fn ids(&self, root: &Path) -> Vec<String> {
        self.named(root, &self.ran)
    }

    /// `names` (of tests it ran) as the IDs [`Listening::ran`] gives.
    fn named(&self, root: &Path, names: &[String]) -> Vec<String> {
        let at = match self.cwd.strip_prefix(root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => self.cwd.to_string_lossy().into_owned(),
        };
        let binary = match self.harness {
            // cargo names a test binary `<target>-<hash>`: the hash differs by build.
            Harness::Libtest => {
                let file = Path::new(&self.binary).file_name().unwrap_or_default();
                let file = file.to_string_lossy();
                let stem = file.rsplit_once('-').map_or(&*file, |(s, _)| s);
                format!("{stem} ")
            }
            Harness::Go => String::new(),
        };
        names
            .iter()
            .map(|name| format!("{at}: {binary}{name}"))
            .collect()
    }
}

/// Cargo's runner variable for the host ralph-gate was built for.
fn cargo_runner_var() -> String {
    let os = match std::env::consts::OS {
        "macos" => "apple_darwin",
        "linux" => "unknown_linux_gnu",
        other => other,
    };
    format!("CARGO_TARGET_{}_{}_RUNNER", std::env::consts::ARCH, os).to_uppercase()
}

/// `GOFLAGS` as `go env -w` left it: an inherited `GOFLAGS` replaces the file's, so the
/// wrapper's flag joins what the project's go would have used.
fn go_env_file_flags(env: &Environment) -> OsString {
    let file = env
        .gate_vars
        .get(OsStr::new("GOENV"))
        .map(PathBuf::from)
        .or_else(|| {
            let config = env
                .xdg_config_home
                .clone()
                .or_else(|| env.home.as_ref().map(|h| h.join(".config")))?;
            Some(config.join("go/env"))
        });
    let text = file.and_then(|f| std::fs::read_to_string(f).ok());
    text.as_deref()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("GOFLAGS=")))
        .map(|v| OsString::from(v.trim()))
        .unwrap_or_default()
}

/// The cargo configs a run in `cwd` reads: `.cargo/config(.toml)` in it and every folder
/// above, and in `$CARGO_HOME`.
fn cargo_configs(cwd: &Path, env: &Environment) -> Vec<String> {
    let home = env
        .cargo_home
        .clone()
        .or_else(|| env.home.as_ref().map(|h| h.join(".cargo")));
    let dirs = cwd.ancestors().map(|d| d.join(".cargo")).chain(home);
    dirs.flat_map(|d| [d.join("config.toml"), d.join("config")])
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect()
}

/// Whether a cargo config sets a runner: a key `runner`, in a `[target...]` table or dotted
/// (`target.x86_64-unknown-linux-gnu.runner = ...`), outside a comment.
fn names_a_runner(config: &str) -> bool {
    config.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with('#')
            && l.split_once('=')
                .is_some_and(|(key, _)| key.trim_end().ends_with("runner"))
    })
}

/// `s` in single quotes for `sh`.
fn quoted(s: &OsStr) -> String {
    format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"))
}

/// How the wrapper rewrites a binary's output: as it came, or rebuilt from the output that
/// names every test (Go's verbose, libtest's pretty) into the one the command asked for.
enum Rewrite {
    AsItCame,
    GoQuiet(report::Quiet),
    Terse(report::Terse),
}

impl Rewrite {
    /// The arguments to run the binary with, and how to show its output: a Go test binary is
    /// run verbose (`-test.v=true`, first: Go's flags end at the first argument that is not
    /// one) unless asked otherwise; a libtest one asked for `--quiet` is run without it.
    fn of(harness: Harness, binary: &Path, args: &[OsString]) -> (Vec<OsString>, Self) {
        let given = |p: &str| args.iter().any(|a| a.to_string_lossy().starts_with(p));
        match harness {
            Harness::Go if report::go_runs_tests(binary, args) && !given("-test.v") => {
                let with =
                    std::iter::once(OsString::from("-test.v=true")).chain(args.iter().cloned());
                (with.collect(), Self::GoQuiet(report::Quiet::default()))
            }
            Harness::Libtest if report::libtest_runs_tests(binary, args) && !given("--format") => {
                let quiet = |a: &OsString| a == "--quiet" || a == "-q";
                if !args.iter().any(quiet) {
                    return (args.to_vec(), Self::AsItCame);
                }
                let without = args.iter().filter(|a| !quiet(a)).cloned();
                (without.collect(), Self::Terse(report::Terse::default()))
            }
            _ => (args.to_vec(), Self::AsItCame),
        }
    }

    fn line(&mut self, raw: &[u8]) -> Vec<Vec<u8>> {
        match self {
            Self::AsItCame => vec![raw.to_vec()],
            Self::GoQuiet(q) => q.line(raw),
            Self::Terse(t) => vec![t.line(raw)],
        }
    }

    fn rest(&mut self) -> Vec<Vec<u8>> {
        match self {
            Self::GoQuiet(q) => q.rest(),
            _ => Vec::new(),
        }
    }
}

/// The wrapper: runs `argv` (a test binary and its arguments) with its output passed through,
/// and returns the exit code to give: the binary's, or 1 when it exited 0 against its own
/// report. What it ran, and why its exit does not count, go to `told` for the gate's result.
/// The binary is run so that it names every test it runs ([`Rewrite`]), and its output is
/// shown as the command asked for it.
pub fn serve(harness: Harness, told: &Path, argv: &[OsString]) -> u8 {
    let Some((binary, args)) = argv.split_first() else {
        return 2;
    };
    let (run_args, mut rewrite) = Rewrite::of(harness, Path::new(binary), args);
    let mut command = ralph_base::child::command(binary);
    command.args(&run_args).stdout(std::process::Stdio::piped());
    let Ok(mut child) = command.spawn() else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("ralph-gate: cannot start {}", Path::new(binary).display());
        }
        return 1;
    };
    let mut heard = Heard::default();
    let pid = child.id();
    if let Some(out) = child.stdout.take() {
        pass_through(out, &mut heard, &mut rewrite);
    }
    let code = match child.wait() {
        Ok(status) => exit_code(status),
        Err(_) => 1,
    };
    let reason = (code == 0)
        .then(|| judge(harness, Path::new(binary), args, &heard))
        .flatten();
    let contradicted = reason.is_some();
    let tested = match harness {
        Harness::Go => report::go_runs_tests(Path::new(binary), args),
        Harness::Libtest => report::libtest_runs_tests(Path::new(binary), args),
    };
    if harness == Harness::Go && tested {
        if let Some(defined) = go_functions(Path::new(binary), &heard.top_names()) {
            heard.only_defined(&defined);
        }
    }
    write_told(told, (harness, binary, pid), (reason, heard, tested));
    match contradicted {
        true => 1,
        false => code,
    }
}

/// Which of `names` are functions of the Go binary at `binary`: a function `TestA` of any
/// package (`example.com/calc.TestA`, `calc_test.TestA`) is named in the runtime's table of
/// functions (`.gopclntab`, which every Go binary keeps for its stack traces, stripped or
/// not: `go test` strips the symbol table). `None` when none were asked, or the binary has
/// no such table to read (not Go, not ELF): what it printed is all there is.
pub fn go_functions(binary: &Path, names: &BTreeSet<String>) -> Option<BTreeSet<String>> {
    use object::{Object, ObjectSection};
    if names.is_empty() {
        return None;
    }
    let data = std::fs::read(binary).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let table = file.section_by_name(".gopclntab")?.data().ok()?;
    let found = names
        .iter()
        .filter(|n| memchr::memmem::find(table, format!(".{n}\0").as_bytes()).is_some())
        .cloned()
        .collect();
    Some(found)
}

/// Copies the binary's output to ours line by line (each flushed, so `go test -json` and
/// `-v` stream as they would), reading it on the way, and shown as `rewrite` says.
fn pass_through(out: std::process::ChildStdout, heard: &mut Heard, rewrite: &mut Rewrite) {
    let mut reader = std::io::BufReader::new(out);
    let mut stdout = std::io::stdout().lock();
    let mut show = |lines: Vec<Vec<u8>>| {
        for l in lines {
            let _ = stdout.write_all(&l);
        }
        let _ = stdout.flush();
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                heard.line(&String::from_utf8_lossy(&line));
                show(rewrite.line(&line));
            }
        }
    }
    show(rewrite.rest());
}

fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), ralph_base::platform::signal_of(&status)) {
        (Some(c), _) => u8::try_from(c.clamp(0, 255)).unwrap_or(1),
        (None, Some(s)) => u8::try_from((128 + s).clamp(0, 255)).unwrap_or(1),
        (None, None) => 1,
    }
}

fn write_told(
    dir: &Path,
    (harness, binary, pid): (Harness, &OsStr, u32),
    (reason, heard, tested): (Option<String>, Heard, bool),
) {
    let told = Told {
        harness,
        binary: binary.to_string_lossy().into_owned(),
        cwd: std::env::current_dir().unwrap_or_default(),
        reason,
        ran: heard.ran,
        counted: heard.counted,
        tested,
        pid: Some(pid),
        subtests: heard.subtests,
    };
    // One binary may be run more than once by one process (nextest): each its own record.
    let name = format!(
        "{}-{}.json",
        super::job::unguessable(Path::new(&std::process::id().to_string())).display(),
        harness.name()
    );
    if let Ok(body) = serde_json::to_vec(&told) {
        let _ = ralph_base::atomic::write(&dir.join(name), &body);
    }
}

#[cfg(test)]
mod tests;
