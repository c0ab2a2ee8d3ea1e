//! The remote cache against a real redis-server on a free loopback port: a second "machine"
//! (another checkout, another absolute path, another HOME) hits what the first stored; a
//! server that dies, a damaged entry and a full store each cost one warning and a local run,
//! never a failure or a wrong verdict; `write = false` reads only.

use crate::common::{require_tool, which, Repo, Run};
use serde_json::Value;
use std::process::{Child, Command, Stdio};

struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start(extra: &[&str]) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(which("redis-server").expect("checked"))
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let r = Redis { child, port };
        for _ in 0..100 {
            if r.cli(&["ping"]).trim() == "PONG" {
                return r;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("redis-server did not start");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self) -> Vec<String> {
        self.cli(&["--raw", "keys", "ralph-gate-v2/*"])
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A checkout of the same project in a folder of its own, with a HOME of its own: another
/// machine as far as the cache can tell.
fn machine(config: &str) -> (Repo, tempfile::TempDir) {
    let repo = Repo::git();
    repo.config(config);
    repo.write("pkg/a.py", "x = 1\n");
    repo.write("pkg/b.py", "def f(:\n");
    repo.commit_all();
    (repo, tempfile::tempdir().unwrap())
}

const GATE: &str =
    "[[gate]]\nname = \"py\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n";

fn check(repo: &Repo, home: &tempfile::TempDir, url: &str) -> Run {
    repo.run_env(
        ["check", "--format", "json"],
        &[
            ("HOME", home.path().to_str().unwrap()),
            ("RALPH_GATE_REMOTE_CACHE", url),
        ],
    )
}

fn gate(run: &Run) -> Value {
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    v["gates"][0].clone()
}

fn ready() -> bool {
    require_tool("redis-server") && require_tool("redis-cli") && require_tool("python3")
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_second_machine_hits_what_the_first_stored_with_the_same_verdict() {
    if !ready() {
        return;
    }
    let redis = Redis::start(&[]);
    let (one, home1) = machine(GATE);
    let first = check(&one, &home1, &redis.url());
    assert_eq!(
        (first.code, gate(&first)["cached"].clone()),
        (1, Value::Bool(false)),
        "{first:?}"
    );
    assert_eq!(redis.keys().len(), 1, "stored remotely");
    let (two, home2) = machine(GATE);
    assert_ne!(one.path(), two.path());
    let second = check(&two, &home2, &redis.url());
    assert_eq!(second.code, 1, "the same failing verdict: {second:?}");
    assert_eq!(gate(&second)["cached"], true, "{second:?}");
    assert!(gate(&second)["output"]
        .as_str()
        .unwrap()
        .contains("SyntaxError"));
    let stats = two.run_env(
        ["cache", "stats"],
        &[("RALPH_GATE_REMOTE_CACHE", &redis.url())],
    );
    assert!(
        stats
            .stdout
            .contains(&format!("1 hits from remote {}", redis.url())),
        "{stats:?}"
    );
    // Fixed on the second machine: a miss, run, and stored for others.
    two.write("pkg/b.py", "def f():\n    pass\n");
    let fixed = check(&two, &home2, &redis.url());
    assert_eq!(
        (fixed.code, gate(&fixed)["cached"].clone()),
        (0, Value::Bool(false))
    );
    assert_eq!(redis.keys().len(), 2);
}

/// Machines that differ only in where they live (home, cache and temporary folders, host and
/// container names) share results; a locale or a `CI` of another value decides what tests
/// and tools say, so it does not.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn where_a_machine_lives_is_shared_and_its_locale_or_ci_is_not() {
    if !ready() {
        return;
    }
    let redis = Redis::start(&[]);
    let url = redis.url();
    let on = |repo: &Repo, vars: &[(&str, &str)]| {
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join("cache");
        let mut env = vec![
            ("HOME", home.path().to_str().unwrap()),
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
            ("RALPH_GATE_REMOTE_CACHE", url.as_str()),
            ("LANG", "C.UTF-8"),
            ("CI", "true"),
        ];
        env.extend_from_slice(vars);
        let run = repo.run_env(["check", "--format", "json"], &env);
        gate(&run)["cached"].clone()
    };
    let (one, _h) = machine(GATE);
    let first = on(&one, &[("HOSTNAME", "alpha"), ("container", "podman")]);
    assert_eq!(first, false, "stored by the first machine");
    let (two, _h) = machine(GATE);
    let here = [
        ("HOSTNAME", "beta"),
        ("container", "docker"),
        ("TMPDIR", "/var/tmp"),
        ("GOCACHE", "/var/tmp/go-build"),
    ];
    assert_eq!(on(&two, &here), true, "another home, host and caches hit");
    let (three, _h) = machine(GATE);
    assert_eq!(
        on(&three, &[("LANG", "de_DE.UTF-8")]),
        false,
        "another locale"
    );
    assert_eq!(on(&three, &[("LC_ALL", "C")]), false, "a locale category");
    assert_eq!(on(&three, &[("CI", "false")]), false, "not CI");
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_dead_server_a_damaged_entry_and_a_full_store_each_degrade_to_a_local_run() {
    if !ready() {
        return;
    }
    let redis = Redis::start(&[]);
    let (one, home1) = machine(GATE);
    check(&one, &home1, &redis.url());
    // Damaged: every stored value replaced by garbage.
    for k in redis.keys() {
        redis.cli(&["set", &k, "garbage"]);
    }
    let (two, home2) = machine(GATE);
    let damaged = check(&two, &home2, &redis.url());
    assert_eq!(
        (damaged.code, gate(&damaged)["cached"].clone()),
        (1, Value::Bool(false)),
        "{damaged:?}"
    );
    assert!(
        damaged.stderr.contains("damaged"),
        "one warning: {damaged:?}"
    );
    // Dead: the verdict is the local one, with one warning, and no failure for the remote.
    let url = redis.url();
    drop(redis);
    let (three, home3) = machine(GATE);
    let dead = check(&three, &home3, &url);
    assert_eq!(
        (dead.code, gate(&dead)["status"].clone()),
        (1, Value::from("fail")),
        "{dead:?}"
    );
    assert_eq!(
        dead.stderr.matches("remote cache").count(),
        1,
        "said once: {dead:?}"
    );
    // Full: writes refused (no memory allowed), the run goes on.
    let full = Redis::start(&["--maxmemory", "1", "--maxmemory-policy", "noeviction"]);
    let (four, home4) = machine(GATE);
    let run = check(&four, &home4, &full.url());
    assert_eq!(run.code, 1, "{run:?}");
    assert!(full.keys().is_empty());
    assert!(run.stderr.contains("cannot write"), "{run:?}");
}

#[test]
fn a_read_only_machine_reads_but_never_writes() {
    if !ready() {
        return;
    }
    let redis = Redis::start(&[]);
    let config = format!(
        "{GATE}\n[cache.remote]\nurl = \"{}\"\nwrite = false\n",
        redis.url()
    );
    let (one, home1) = machine(&config);
    let run = one.run_env(["check"], &[("HOME", home1.path().to_str().unwrap())]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(redis.keys().is_empty(), "nothing written");
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_webdav_server_shares_verdicts_between_machines() {
    if !require_tool("wsgidav") || !require_tool("python3") {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(which("wsgidav").expect("checked"))
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--auth",
            "anonymous",
            "--root",
        ])
        .arg(root.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/ralph-cache/");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (one, home1) = machine(GATE);
    assert_eq!(gate(&check(&one, &home1, &url))["cached"], false);
    let (two, home2) = machine(GATE);
    let second = check(&two, &home2, &url);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        (second.code, gate(&second)["cached"].clone()),
        (1, Value::Bool(true)),
        "{second:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_server_killed_while_a_check_runs_costs_a_warning_not_the_verdict() {
    if !ready() {
        return;
    }
    let redis = Redis::start(&[]);
    let slow = "[[gate]]\nname = \"slow\"\nglobs = [\"**/*.py\"]\nrun = \"sleep 1; python3 -S -m py_compile {files}\"\n";
    let (one, home1) = machine(slow);
    let mut cmd = one.cmd();
    cmd.args(["check", "--format", "json"])
        .env("HOME", home1.path())
        .env("RALPH_GATE_REMOTE_CACHE", redis.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The gate is running (its key was looked up remotely): the server goes away now.
    std::thread::sleep(std::time::Duration::from_millis(400));
    drop(redis);
    let run = crate::common::finish(child.wait_with_output().unwrap());
    assert_eq!(run.code, 1, "the gate's own verdict: {run:?}");
    assert_eq!(gate(&run)["status"], "fail", "{run:?}");
    assert!(
        run.stderr.contains("remote cache") && run.stderr.contains("cannot write"),
        "{run:?}"
    );
}
