//! The test context: a temporary git repository, files written into it, and the real
//! ralph-gate binary run inside it with a controlled environment.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};

pub struct Repo {
    dir: tempfile::TempDir,
    /// The newest change time of a file this test wrote, in nanoseconds on the coarse clock.
    written: AtomicI64,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// The JSON entry of the named gate.
    pub fn gate(&self, name: &str) -> serde_json::Value {
        let report = self.json();
        report["gates"]
            .as_array()
            .expect("gates array")
            .iter()
            .find(|g| g["gate"] == name)
            .unwrap_or_else(|| panic!("no gate {name} in {report:#}"))
            .clone()
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Repo {
    /// A fresh git repository.
    pub fn git() -> Self {
        Self::git_in(&std::env::temp_dir())
    }

    /// A fresh git repository in a folder of `parent` (a test file system, say).
    pub fn git_in(parent: &Path) -> Self {
        let repo = Self::plain_in(parent);
        repo.git_cmd(&["init", "-q", "-b", "main"]);
        repo.git_cmd(&["config", "user.email", "t@example.com"]);
        repo.git_cmd(&["config", "user.name", "t"]);
        repo.git_cmd(&["config", "commit.gpgsign", "false"]);
        repo
    }

    /// A temporary folder that is not a git repository.
    pub fn plain() -> Self {
        Self::plain_in(&std::env::temp_dir())
    }

    fn plain_in(parent: &Path) -> Self {
        Self {
            dir: tempfile::Builder::new()
                .prefix("ralph-gate-test")
                .tempdir_in(parent)
                .expect("temp dir"),
            written: AtomicI64::new(0),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: impl AsRef<Path>, text: &str) -> &Self {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, text).expect("write file");
        let meta = std::fs::metadata(&path).expect("stat file");
        let changed = meta.ctime() * 1_000_000_000 + meta.ctime_nsec();
        self.written.fetch_max(changed, Ordering::SeqCst);
        self
    }

    /// Waits until the coarse clock has moved past the last file this test wrote. A run
    /// refuses to store a result whose input changed in the tick it started in (it cannot
    /// tell before from during), and a person never edits and runs within one 4 ms tick;
    /// a test would, and then a cache test would see a miss it did not ask for.
    fn settle(&self) {
        let written = i128::from(self.written.load(Ordering::SeqCst));
        while ralph_runner::observe::coarse_now() <= written {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    pub fn config(&self, text: &str) -> &Self {
        self.write("ralph.toml", text)
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }

    pub fn git_cmd(&self, args: &[&str]) {
        let out = Command::new("git")
            .current_dir(self.path())
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn commit_all(&self) {
        self.git_cmd(&["add", "-A"]);
        self.git_cmd(&["commit", "-q", "-m", "c"]);
    }

    /// The binary with a clean environment: PATH and HOME kept, CI unset, no colour.
    pub fn cmd(&self) -> Command {
        self.settle();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ralph-gate"));
        cmd.current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env(
                "HOME",
                std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into()),
            )
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        for keep in [
            "CARGO_HOME",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "TMPDIR",
            "PYENV_ROOT",
        ] {
            if let Some(v) = std::env::var_os(keep) {
                cmd.env(keep, v);
            }
        }
        cmd
    }

    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.cmd();
        cmd.args(args);
        finish(cmd.output().expect("ralph-gate runs"))
    }

    /// `ralph-gate ARGS` on a terminal of its own (a real pty), answering a confirmation
    /// with `answer` (`code`, `wrong`, `eof`; see terminal.py). `who` is `person` (no process
    /// of this test is above it, as in a person's own terminal) or `below` (the test, which
    /// runs the hooks and so plays the agent, made the terminal).
    pub fn on_terminal(&self, who: &str, answer: &str, args: &[&str]) -> Run {
        let mut argv = vec![env!("CARGO_BIN_EXE_ralph-gate")];
        argv.extend(args);
        self.on_terminal_argv(who, answer, &argv)
    }

    /// [`Repo::on_terminal`] with `env` on top of the usual environment.
    pub fn on_terminal_env(
        &self,
        who: &str,
        answer: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Run {
        let mut argv = vec![env!("CARGO_BIN_EXE_ralph-gate")];
        argv.extend(args);
        self.terminal(who, answer, &argv, env)
    }

    /// Any program on a terminal of its own, as [`Repo::on_terminal`].
    pub fn on_terminal_argv(&self, who: &str, answer: &str, argv: &[&str]) -> Run {
        self.terminal(who, answer, argv, &[])
    }

    fn terminal(&self, who: &str, answer: &str, argv: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.python();
        cmd.envs(env.iter().copied());
        cmd.arg("-c")
            .arg(include_str!("terminal.py"))
            .args([who, answer])
            .args(argv)
            .stdin(Stdio::null());
        finish(cmd.output().expect("python3 runs"))
    }

    /// `python3` in the repository with the environment [`Repo::cmd`] gives ralph-gate.
    pub fn python(&self) -> Command {
        let inner = self.cmd();
        let mut cmd = Command::new("python3");
        cmd.current_dir(self.path()).env_clear();
        for (k, v) in inner.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd
    }

    /// `run` in the repository as a person's shell runs it, with `env` on top of this
    /// process's environment (Python writes its bytecode caches): its exit code and its
    /// output, stdout then stderr. The bare tool's truth beside ralph-gate's verdict.
    pub fn shell(&self, run: &str, env: &[(&str, &str)]) -> (i32, String) {
        let out = Command::new("sh")
            .args(["-c", run])
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .envs(env.iter().copied())
            .current_dir(self.path())
            .output()
            .expect("sh runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code().unwrap_or(-1), text)
    }

    /// `loop start` of session `sess-S`, promise `DONE`, with `env`: it must start.
    pub fn start_loop(&self, env: &[(&str, &str)]) {
        let start = self.run_env(
            [
                "loop",
                "start",
                "--session",
                "sess-S",
                "--promise",
                "DONE",
                "Make the checks pass.",
            ],
            env,
        );
        assert_eq!(start.code, 0, "{start:?}");
    }

    pub fn run_env<I, S>(&self, args: I, env: &[(&str, &str)]) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.cmd();
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        finish(cmd.output().expect("ralph-gate runs"))
    }
}

impl Repo {
    /// Runs `ralph-gate ARGS` in the folder `dir` of the repository (a project below its
    /// top, `svc/`).
    pub fn run_in(&self, dir: &str, args: &[&str]) -> Run {
        let mut cmd = self.cmd();
        cmd.current_dir(self.path().join(dir)).args(args);
        finish(cmd.output().expect("ralph-gate runs"))
    }

    /// Runs `ralph-gate ARGS` in the folder `dir` with `stdin` piped in (a hook).
    pub fn run_stdin_in(&self, dir: &str, args: &[&str], stdin: &[u8]) -> Run {
        self.piped(self.path().join(dir), args, stdin, &[])
    }

    /// Runs `ralph-gate ARGS` with `stdin` piped in.
    pub fn run_stdin(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Run {
        self.piped(self.path().to_path_buf(), args, stdin, env)
    }

    fn piped(&self, dir: PathBuf, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Run {
        use std::io::Write;
        let mut cmd = self.cmd();
        cmd.current_dir(dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("ralph-gate runs");
        // A hook may exit before reading everything (bad input): a broken pipe is fine.
        let _ = child.stdin.take().expect("stdin").write_all(stdin);
        finish(child.wait_with_output().expect("ralph-gate finishes"))
    }
}

pub fn finish(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// True when `tool` is on PATH. When it is not, the test FAILS, naming the tool and how to
/// install it, unless `RALPH_GATE_TEST_ALLOW_MISSING` lists the tool (or says `all`): then the
/// test is recorded as skipped (see [`missing`]) and returns early.
pub fn require_tool(tool: &str) -> bool {
    which(tool).is_some() || missing(tool, &format!("`{tool}` is not on PATH"))
}

/// How a tool the tests need is installed (what `scripts/test` does when it can).
pub fn install_hint(tool: &str) -> &'static str {
    match tool {
        "shellcheck" => "apt-get install shellcheck",
        "python3" => "apt-get install python3",
        "node" | "npm" => "apt-get install nodejs npm",
        "tsc" | "typescript" => "npm install -g typescript@5",
        "typescript7" => {
            "npm install --prefix target/test-tools/ts7 typescript@7 (scripts/test does)"
        }
        "tmux" => "apt-get install tmux",
        "git" => "apt-get install git",
        "cargo" => "rustup (https://rustup.rs)",
        "go" => "apt-get install golang-go",
        "pnpm" => "npm install -g pnpm@10",
        "pnpm-store" => "pnpm store add typescript@5.9.3 (scripts/test does)",
        "yarn" | "bun" => "npm install --prefix target/test-tools/js bun@1 @yarnpkg/cli-dist@4 (scripts/test does)",
        "jest" | "vitest" => "npm install --prefix target/test-tools/jsrunners jest@30 vitest@4 (scripts/test does)",
        "yarn-pnp" => "yarn install in target/test-tools/yarn-pnp with YARN_GLOBAL_FOLDER=target/test-tools/yarn-global (scripts/test does)",
        "mypy-wheels" => {
            "pip download -d target/test-tools/wheels mypy==1.10.0 mypy==1.11.2 (scripts/test does)"
        }
        "claude" => "npm install -g @anthropic-ai/claude-code@2.1.330",
        "codex" => "npm install -g @openai/codex@0.169.0",
        "copilot" => "npm install -g @github/copilot@1.0.102",
        "opencode" => "npm install -g opencode-ai@1.18.33",
        "qwen" => "npm install -g @qwen-code/qwen-code@0.24.4",
        "gemini" => "npm install -g @google/gemini-cli@0.61.0",
        "droid" => "npm install -g @factory/cli@0.225.1 @factory/cli-linux-x64@0.225.2",
        "prek" => "pip install prek",
        "wsgidav" => "pip install wsgidav cheroot",
        "pytest" => "pip install pytest (scripts/test installs it into target/test-tools/venv)",
        "uv" => "pip install uv (scripts/test installs it into target/test-tools/venv)",
        "strip" | "objdump" => "apt-get install binutils",
        "redis-server" | "redis-cli" => "apt-get install redis-server redis-tools",
        "script" => "apt-get install bsdutils (util-linux's script)",
        "mount" => "run the tests as root, or with passwordless sudo allowed to mount",
        _ => "see scripts/test",
    }
}

/// A test cannot run here because `tool` is missing (`why` says more). That is a failure, so
/// a green run is never hollow, unless `RALPH_GATE_TEST_ALLOW_MISSING` (comma-separated tool
/// names, or `all`) allows it: then the skip is written to `target/skipped-tests.txt`, which
/// `scripts/test` prints after the run, outside the harness's captured output. Returns false,
/// for `return` at the call site.
pub fn missing(tool: &str, why: &str) -> bool {
    let allow = std::env::var("RALPH_GATE_TEST_ALLOW_MISSING").unwrap_or_default();
    missing_unless(
        tool,
        why,
        &allow,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("target/skipped-tests.txt"),
    )
}

/// [`missing`] with the allow list and the skip log given.
pub fn missing_unless(tool: &str, why: &str, allow: &str, log: &Path) -> bool {
    let allowed = allow
        .split(',')
        .map(str::trim)
        .any(|t| t == tool || t == "all");
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    assert!(
        allowed,
        "{test} needs `{tool}`, which is missing ({why}). Install it: {}, or run scripts/test, which \
         installs what it can. To skip such tests knowingly: RALPH_GATE_TEST_ALLOW_MISSING={tool}",
        install_hint(tool)
    );
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        use std::io::Write;
        let _ = writeln!(f, "{test}: skipped, `{tool}` is missing ({why})");
    }
    false
}

pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// A pid is gone when it no longer exists or is a zombie waiting for its reaper.
pub fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}

/// Sends `sig` to `pid` (a negative pid: the process group).
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; a stale pid only yields ESRCH.
    unsafe {
        kill(pid, sig);
    }
}

/// The TypeScript 5 package the tests install into their repositories as the project's own
/// (`node_modules/typescript`, `node_modules/.bin/tsc`), so no test depends on whichever
/// global tsc the machine has (7.x accepts what 5.x rejects). Taken from
/// `RALPH_GATE_TEST_TYPESCRIPT`, else from npm's global folder (where .ci/run installs
/// `typescript@5`).
pub fn typescript5() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let dir = match std::env::var_os("RALPH_GATE_TEST_TYPESCRIPT") {
                Some(d) => PathBuf::from(d),
                None => {
                    let out = Command::new("npm").args(["root", "-g"]).output().ok()?;
                    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("typescript")
                }
            };
            let manifest = std::fs::read_to_string(dir.join("package.json")).ok()?;
            let v: serde_json::Value = serde_json::from_str(&manifest).ok()?;
            v["version"]
                .as_str()
                .is_some_and(|v| v.starts_with("5."))
                .then_some(dir)
        })
        .clone()
}

/// The TypeScript 7 package `scripts/test` installs under `target/test-tools/ts7` (or
/// `RALPH_GATE_TEST_TYPESCRIPT7=DIR`), when it is there and is TypeScript 7.
pub fn typescript7() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let dir = std::env::var_os("RALPH_GATE_TEST_TYPESCRIPT7")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("target/test-tools/ts7/node_modules/typescript")
                });
            let manifest = std::fs::read_to_string(dir.join("package.json")).ok()?;
            let v: serde_json::Value = serde_json::from_str(&manifest).ok()?;
            v["version"]
                .as_str()
                .is_some_and(|v| v.starts_with("7."))
                .then_some(dir)
        })
        .clone()
}

/// A fresh git repository with TypeScript 7 installed as its own, or `None`, said loudly,
/// when node or the TypeScript 7 package is not there.
pub fn typescript7_repo() -> Option<Repo> {
    if !require_tool("node") {
        return None;
    }
    let Some(pkg) = typescript7() else {
        missing(
            "typescript7",
            "no TypeScript 7 package in target/test-tools/ts7 (or RALPH_GATE_TEST_TYPESCRIPT7=DIR)",
        );
        return None;
    };
    let repo = Repo::git();
    repo.write(".gitignore", "node_modules/\n");
    repo.install_typescript_from(&pkg, "");
    Some(repo)
}

/// A fresh git repository with jest and vitest installed as its own (`node_modules/`, hard
/// links to the packages `scripts/test` installs under `target/test-tools/jsrunners`, which
/// it ignores), or `None`, said loudly, when node or they are not there. Copied, not linked:
/// vitest writes its results cache into `node_modules/.vite`.
pub fn js_runners_repo() -> Option<Repo> {
    if !require_tool("node") {
        return None;
    }
    let modules =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/jsrunners/node_modules");
    for tool in ["jest", "vitest"] {
        if !modules.join(tool).join("package.json").is_file() {
            missing(tool, "no jest and vitest in target/test-tools/jsrunners");
            return None;
        }
    }
    let repo = Repo::git();
    repo.write(".gitignore", "node_modules/\n");
    let out = Command::new("cp")
        .arg("-al")
        .arg(&modules)
        .arg(repo.path().join("node_modules"))
        .output()
        .expect("cp runs");
    assert!(out.status.success(), "cp -al node_modules: {out:?}");
    Some(repo)
}

/// True when a TypeScript 5 package is there to install; says so loudly when not.
pub fn require_typescript5() -> bool {
    typescript5().is_some()
        || missing(
            "typescript",
            "no TypeScript 5 package in npm's global folder (or RALPH_GATE_TEST_TYPESCRIPT=DIR)",
        )
}

/// A fresh git repository with TypeScript 5 installed as its own (`node_modules/`, which it
/// ignores), or `None`, said loudly, when node or a TypeScript 5 package is not there.
/// A `project` gate named `tests` that runs `run` once for every `.py` file of the project:
/// how the tests set up a test runner's gate.
pub fn tests_gate(run: &str) -> String {
    format!(
        "[[gate]]\nname = \"tests\"\nglobs = [\"**/*.py\"]\nscope = \"project\"\nrun = \"{run}\"\n"
    )
}

pub fn typescript_repo() -> Option<Repo> {
    if !require_tool("node") || !require_typescript5() {
        return None;
    }
    let repo = Repo::git();
    repo.write(".gitignore", "node_modules/\n");
    repo.install_typescript("");
    Some(repo)
}

impl Repo {
    /// Installs TypeScript 5 as `DIR/node_modules/typescript` with its `.bin/tsc`, the way
    /// npm lays out a project's own dependency.
    pub fn install_typescript(&self, dir: &str) {
        let pkg = typescript5().expect("require_typescript5() first");
        self.install_typescript_from(&pkg, dir);
    }

    /// Installs the TypeScript package at `pkg` as `DIR/node_modules/typescript`.
    pub fn install_typescript_from(&self, pkg: &Path, dir: &str) {
        let modules = self.path().join(dir).join("node_modules");
        std::fs::create_dir_all(modules.join(".bin")).expect("mkdir node_modules/.bin");
        std::os::unix::fs::symlink(pkg, modules.join("typescript")).expect("link typescript");
        std::os::unix::fs::symlink("../typescript/bin/tsc", modules.join(".bin/tsc"))
            .expect("link tsc");
    }

    /// Links `name` to `target` inside the repository (a workspace package in node_modules).
    pub fn link(&self, name: &str, target: &str) {
        let path = self.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, path).expect("symlink");
    }

    /// `git ARGS` in the repository with this PATH (a commit runs the hooks with it); what
    /// git said, stdout then stderr, and whether it succeeded.
    pub fn git_with_path(&self, path: &std::ffi::OsStr, args: &[&str]) -> (bool, String) {
        let out = Command::new("git")
            .current_dir(self.path())
            .env("PATH", path)
            .args(args)
            .output()
            .expect("git runs");
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), said)
    }

    /// `PATH` with `dir` in front of the test's own.
    pub fn path_with(dir: &Path) -> std::ffi::OsString {
        let mut dirs = vec![dir.to_path_buf()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).expect("joinable PATH")
    }
}

/// Writes an executable script.
pub fn write_exe(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A loop state file without the `gates_pin` line ralph-gate adds at a loop's first stop,
/// for comparing the rest byte for byte. The line must be there at most once.
pub fn without_pin(text: &str) -> String {
    let pins = text
        .lines()
        .filter(|l| l.starts_with("gates_pin: "))
        .count();
    assert!(pins <= 1, "one pin line at most: {text}");
    text.split_inclusive('\n')
        .filter(|l| !l.starts_with("gates_pin: "))
        .collect()
}

impl Repo {
    /// Where this repository's stored results are: shared by its worktrees under the git
    /// folder, or `.ralph/cache` outside git.
    pub fn results_dir(&self) -> PathBuf {
        let shared = self.path().join(".git/ralph-gate/cache");
        if self.path().join(".git").is_dir() {
            shared
        } else {
            self.path().join(".ralph/cache")
        }
    }
}
