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
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

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
        use std::os::unix::fs::PermissionsExt;
        let text = format!(
            "#!/bin/sh\nexec {} {SUBCOMMAND} {} {} \"$@\"\n",
            quoted(exe.as_os_str()),
            harness.name(),
            quoted(self.dir.join("told").as_os_str())
        );
        let path = self.dir.join(harness.name());
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
    }

    /// The variables that send a gate's test binaries through the wrappers, unless the
    /// project runs them its own way. `gate_env` is the gate's own `env`, `cwd` where it runs.
    pub fn vars(
        &self,
        gate_env: &BTreeMap<String, String>,
        env: &Environment,
        cwd: &Path,
    ) -> Vec<(OsString, OsString)> {
        let given = |name: &str| {
            gate_env
                .get(name)
                .map(OsString::from)
                .or_else(|| env.gate_vars.get(OsStr::new(name)).cloned())
        };
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
        let reasons: Vec<String> = found.into_iter().map(|t| t.reason).collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a wrapper writes for the gate's result.
#[derive(Debug, Serialize, Deserialize)]
struct Told {
    harness: Harness,
    binary: String,
    reason: String,
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

/// What a test binary's output said, read line by line as it passes through.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Heard {
    /// Go: the top-level tests a `--- FAIL:` line named (the testing package writes them at
    /// the start of a line; a subtest's are indented, a `t.Log` line is prefixed), and the
    /// last summary line, `PASS` (true) or `FAIL`: the testing package writes it last, so a
    /// program's own `FAIL` before it is output, not a verdict.
    failed: Vec<String>,
    summary_passed: Option<bool>,
    /// libtest: `running N tests` seen, then `test result:` (and whether it said FAILED).
    began: bool,
    summary: bool,
    summary_failed: bool,
}

impl Heard {
    pub fn line(&mut self, raw: &str) {
        // `go test -json` has the binary mark its lines with a SYN byte.
        let line = raw.trim_start_matches('\u{16}').trim_end();
        if let Some(rest) = line.strip_prefix("--- FAIL: ") {
            self.failed
                .extend(rest.split_whitespace().next().map(String::from));
        } else if line == "FAIL" {
            self.summary_passed = Some(false);
        } else if line.ends_with("PASS") {
            // A program's output without a final newline runs into the summary.
            self.summary_passed = Some(true);
        } else if line.starts_with("running ")
            && line
                .split_whitespace()
                .nth(1)
                .is_some_and(|n| n.parse::<u64>().is_ok())
            && (line.ends_with(" test") || line.ends_with(" tests"))
        {
            self.began = true;
            self.summary = false;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            self.summary = true;
            self.summary_failed |= rest.starts_with("FAILED");
        }
    }
}

/// Pure: why a test binary that exited 0 did not pass by its own account. `binary` is its
/// path, `args` what it was given; a Go binary is judged only when `go test` started it (a
/// `.test` file given `-test.` flags: `go run` shares the `-exec`), a libtest one only when
/// cargo built it as a test (in a `deps` folder: `cargo run` shares the runner), and neither
/// when asked only to list its tests.
pub fn judge(harness: Harness, binary: &Path, args: &[OsString], heard: &Heard) -> Option<String> {
    let arg = |p: &str| args.iter().any(|a| a.to_string_lossy().starts_with(p));
    let name = binary.file_name().unwrap_or_default().to_string_lossy();
    match harness {
        Harness::Go => {
            if !name.ends_with(".test") || !arg("-test.") || arg("-test.list") {
                return None;
            }
            if !heard.failed.is_empty() || heard.summary_passed == Some(false) {
                let named = if heard.failed.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", heard.failed.join(", "))
                };
                Some(format!(
                    "go's test binary {name} reported a failure{named}, but exited 0: the exit status does not count"
                ))
            } else if heard.summary_passed.is_none() {
                Some(format!(
                    "go's test binary {name} exited 0 without the testing package's PASS, so its tests did not run to their end: the exit status does not count"
                ))
            } else {
                None
            }
        }
        Harness::Libtest => {
            let in_deps = binary
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d == "deps");
            if !in_deps || arg("--list") || !heard.began {
                return None;
            }
            if heard.summary_failed {
                Some(format!(
                    "libtest in {name} said `test result: FAILED`, but the binary exited 0: the exit status does not count"
                ))
            } else if !heard.summary {
                Some(format!(
                    "the test binary {name} exited 0 before libtest's `test result:` line (a test or the code under test ended the process): the exit status does not count"
                ))
            } else {
                None
            }
        }
    }
}

/// The wrapper: runs `argv` (a test binary and its arguments) with its output passed through,
/// and returns the exit code to give: the binary's, or 1 when it exited 0 against its own
/// report (written to `told`, for the gate's result).
pub fn serve(harness: Harness, told: &Path, argv: &[OsString]) -> u8 {
    let Some((binary, args)) = argv.split_first() else {
        return 2;
    };
    let mut command = ralph_base::child::command(binary);
    command.args(args).stdout(std::process::Stdio::piped());
    let Ok(mut child) = command.spawn() else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("ralph-gate: cannot start {}", Path::new(binary).display());
        }
        return 1;
    };
    let mut heard = Heard::default();
    if let Some(out) = child.stdout.take() {
        pass_through(out, &mut heard);
    }
    let code = match child.wait() {
        Ok(status) => exit_code(status),
        Err(_) => 1,
    };
    if code != 0 {
        return code;
    }
    match judge(harness, Path::new(binary), args, &heard) {
        Some(reason) => {
            // Said once, at the end of the gate's output, by the gate's result.
            write_told(told, harness, binary, &reason);
            1
        }
        None => 0,
    }
}

/// Copies the binary's output to ours line by line (each flushed, so `go test -json` and
/// `-v` stream as they would), reading it on the way.
fn pass_through(out: std::process::ChildStdout, heard: &mut Heard) {
    let mut reader = std::io::BufReader::new(out);
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                heard.line(&String::from_utf8_lossy(&line));
                let _ = stdout.write_all(&line);
                let _ = stdout.flush();
            }
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => u8::try_from(c.clamp(0, 255)).unwrap_or(1),
        (None, Some(s)) => u8::try_from((128 + s).clamp(0, 255)).unwrap_or(1),
        (None, None) => 1,
    }
}

fn write_told(dir: &Path, harness: Harness, binary: &OsStr, reason: &str) {
    let told = Told {
        harness,
        binary: binary.to_string_lossy().into_owned(),
        reason: reason.to_string(),
    };
    let name = format!("{}-{}.json", std::process::id(), harness.name());
    if let Ok(body) = serde_json::to_vec(&told) {
        let _ = ralph_base::atomic::write(&dir.join(name), &body);
    }
}

#[cfg(test)]
mod tests;
