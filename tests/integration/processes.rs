//! Processes: timeouts kill whole process groups, gates run in parallel up to `jobs`, and
//! output is bounded and reported in config order.

use crate::common::Repo;
use std::path::Path;

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().expect("pid"))
        .collect()
}

#[test]
fn a_hanging_gate_is_killed_at_its_timeout_with_its_children() {
    let repo = Repo::git();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    repo.config(&format!(
        "[[gate]]\nname = \"hang\"\nglobs = [\"*.txt\"]\ntimeout = \"1s\"\nenv = {{ PIDS = \"{}\" }}\nrun = 'echo $$ >> \"$PIDS\"; sh -c \"sleep 300\" & echo $! >> \"$PIDS\"; sleep 300'\n",
        pid_file.path().display()
    ));
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let gate = run.gate("hang");
    assert_eq!(gate["status"], "timeout");
    assert_eq!(gate["reason"], "timed out after 1s");
    let pids = pids(pid_file.path());
    assert_eq!(pids.len(), 2, "the gate and its child both started");
    for pid in pids {
        assert!(
            crate::common::is_gone(pid),
            "process {pid} survived the timeout"
        );
    }
}

#[test]
fn a_background_process_left_by_a_passing_gate_does_not_survive() {
    let repo = Repo::git();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    repo.config(&format!(
        "[[gate]]\nname = \"leaky\"\nglobs = [\"*.txt\"]\nenv = {{ PIDS = \"{}\" }}\nrun = 'sleep 300 > /dev/null 2>&1 & echo $! >> \"$PIDS\"; exit 0'\n",
        pid_file.path().display()
    ));
    let run = repo.run(["check"]);
    assert_eq!(run.code, 0, "{run:?}");
    let pids = pids(pid_file.path());
    assert_eq!(pids.len(), 1);
    assert!(
        crate::common::is_gone(pids[0]),
        "the gate's background process survived"
    );
}

/// Two gates that can only pass if they run at the same time: each waits for the other's
/// flag. This proves parallelism without measuring time.
fn rendezvous_config(dir: &Path) -> String {
    let gate = |me: &str, other: &str| {
        format!(
            "[[gate]]\nname = \"{me}\"\nglobs = [\"*.txt\"]\ntimeout = \"20s\"\nrun = 'touch \"{d}/{me}\"; i=0; while [ ! -f \"{d}/{other}\" ]; do i=$((i+1)); [ $i -gt 40 ] && echo \"{other} never ran alongside\" && exit 1; sleep 0.1; done'\n",
            d = dir.display()
        )
    };
    format!("{}{}", gate("left", "right"), gate("right", "left"))
}

#[test]
fn gates_run_in_parallel_up_to_jobs() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    let flags = tempfile::tempdir().unwrap();
    repo.config(&rendezvous_config(flags.path()));
    let run = repo.run(["check", "-j", "2"]);
    assert_eq!(run.code, 0, "{run:?}");

    let flags = tempfile::tempdir().unwrap();
    repo.config(&rendezvous_config(flags.path()));
    let run = repo.run(["check", "-j", "1"]);
    assert_eq!(
        run.code, 1,
        "with one job the gates must run one after the other: {run:?}"
    );
    assert!(run.stdout.contains("never ran alongside"), "{run:?}");
}

#[test]
fn results_are_reported_in_config_order_whatever_finishes_first() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\nrun = 'sleep 1; echo slow-out; exit 1'\n\
         [[gate]]\nname = \"fast\"\nglobs = [\"*.txt\"]\nrun = 'echo fast-out; exit 1'\n",
    );
    let run = repo.run(["check", "-j", "2"]);
    assert_eq!(run.code, 1);
    let slow = run.stdout.find("FAIL  slow").expect("slow reported");
    let slow_out = run.stdout.find("slow-out").expect("slow output");
    let fast = run.stdout.find("FAIL  fast").expect("fast reported");
    assert!(slow < slow_out && slow_out < fast, "{run:?}");
}

#[test]
fn huge_output_is_cut_to_the_limit_keeping_both_ends() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[defaults]\noutput_limit = 1000\n[[gate]]\nname = \"loud\"\nglobs = [\"*.txt\"]\nrun = 'echo FIRST-LINE; seq 1 200000; echo LAST-LINE; exit 3'\n",
    );
    let run = repo.run(["check", "--format", "json"]);
    let gate = run.gate("loud");
    assert_eq!(gate["exit_code"], 3);
    let out = gate["output"].as_str().unwrap();
    assert!(out.chars().count() <= 1000, "{} chars", out.chars().count());
    assert!(out.starts_with("FIRST-LINE"), "{out}");
    assert!(out.trim_end().ends_with("LAST-LINE"), "{out}");
    assert!(out.contains("cut by ralph-gate"), "{out}");
}

#[test]
fn colour_codes_are_stripped_from_machine_formats() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"red\"\nglobs = [\"*.txt\"]\nrun = 'printf \"\\033[31merror\\033[0m here\\n\"; exit 1'\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.gate("red")["output"], "error here\n");
    let run = repo.run(["check", "--format", "junit"]);
    assert!(!run.stdout.contains('\x1b'), "{run:?}");
    let run = repo.run(["check"]);
    assert!(
        !run.stdout.contains('\x1b'),
        "NO_COLOR and no terminal: {run:?}"
    );
}

#[test]
fn terminating_ralph_gate_kills_the_gates_it_started() {
    let repo = Repo::git();
    let pid_file = tempfile::NamedTempFile::new().unwrap();
    repo.write("a.txt", "x\n");
    repo.config(&format!(
        "[[gate]]\nname = \"hang\"\nglobs = [\"*.txt\"]\ntimeout = \"5m\"\nenv = {{ PIDS = \"{}\" }}\nrun = 'sleep 300 & echo $! >> \"$PIDS\"; wait'\n",
        pid_file.path().display()
    ));
    let mut child = repo
        .cmd()
        .args(["check"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the gate has started its child (bounded: 10 s).
    let mut started = Vec::new();
    for _ in 0..200 {
        started = pids(pid_file.path());
        if !started.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(started.len(), 1, "the gate never started");
    crate::common::signal(child.id() as i32, 15);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    for _ in 0..100 {
        if crate::common::is_gone(started[0]) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        crate::common::is_gone(started[0]),
        "the gate's process outlived ralph-gate"
    );
}

#[test]
fn file_lists_beyond_the_argument_budget_are_split_and_none_is_lost() {
    let repo = Repo::git();
    let out = tempfile::NamedTempFile::new().unwrap();
    let dir = "d".repeat(60);
    for i in 0..2500 {
        repo.write(
            format!("{dir}/file_with_a_long_name_{i:05}_{}.txt", "x".repeat(40)),
            "",
        );
    }
    repo.config(&format!(
        "[[gate]]\nname = \"count\"\nglobs = [\"*.txt\"]\nenv = {{ OUT = \"{}\" }}\nrun = 'printf \"%s\\n\" {{files}} >> \"$OUT\"'\n",
        out.path().display()
    ));
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let gate = run.gate("count");
    assert_eq!(gate["files"], 2500);
    assert!(gate["runs"].as_u64().unwrap() >= 2, "{gate:#}");
    let mut seen: Vec<String> = std::fs::read_to_string(out.path())
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 2500, "every file exactly once");
}

/// Runs ralph-gate with its address space capped at 200 MB: memory that grew with the input
/// would fail the run.
fn capped(repo: &Repo, args: &str, stdin_file: Option<&Path>) -> crate::common::Run {
    let bin = env!("CARGO_BIN_EXE_ralph-gate");
    let input = stdin_file.map_or(String::new(), |f| format!(" < '{}'", f.display()));
    // The same clean environment as every other run of the binary.
    let base = repo.cmd();
    let env = base
        .get_envs()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned())));
    let mut sh = std::process::Command::new("sh");
    sh.current_dir(repo.path()).env_clear().envs(env).args([
        "-c",
        &format!("ulimit -v 200000; exec '{bin}' {args}{input}"),
    ]);
    crate::common::finish(sh.output().unwrap())
}

#[test]
fn a_gate_printing_200_mb_is_captured_in_bounded_memory() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config("[[gate]]\nname = \"loud\"\nglobs = [\"*.txt\"]\nrun = 'head -c 200000000 /dev/zero | tr \"\\\\0\" x; printf \"\\n\\377\\376 invalid utf-8 at the end\\n\"; exit 1'\n");
    let run = capped(&repo, "check --format json", None);
    assert_eq!(run.code, 1, "the gate's failure, not ralph-gate's: {run:?}");
    assert_eq!(run.gate("loud")["status"], "fail");
    assert!(
        run.gate("loud")["output"]
            .as_str()
            .unwrap()
            .contains("invalid utf-8 at the end"),
        "the tail survives"
    );
    // The full record says how much was dropped from the middle.
    let record = std::fs::read_dir(repo.path().join(".ralph/results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    let output = record["output"].as_str().unwrap();
    let dropped: u64 = output
        .split("[ralph-gate: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the drop marker");
    assert!(dropped > 199_000_000, "{dropped} bytes dropped");
}

#[test]
fn a_50_mb_stdin_is_refused_in_bounded_memory() {
    let repo = Repo::git();
    let big = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(big.path(), vec![b' '; 50_000_000]).unwrap();
    for hook in ["hook stop", "hook post-tool-use"] {
        let run = capped(&repo, hook, Some(big.path()));
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stderr.contains("larger than 16777216 bytes"), "{run:?}");
    }
}
