//! Live progress on a terminal (a pseudo-terminal made by util-linux `script`): the running
//! gate is named with its time well within two seconds of its start, and the line is erased
//! before the report; nothing of it without a terminal, with --quiet, or in JSON.

use crate::common::{require_tool, Repo};

fn slow_repo() -> Repo {
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\nrun = \"sleep 4\"\n\
         [[gate]]\nname = \"quick\"\nglobs = [\"*.txt\"]\nrun = \"true\"\n",
    );
    repo.write("a.txt", "x\n");
    repo
}

/// `ralph-gate ARGS` on a pseudo-terminal; what the terminal showed.
fn on_terminal(repo: &Repo, args: &str) -> String {
    let command = format!("{} {args}", env!("CARGO_BIN_EXE_ralph-gate"));
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(repo.path())
        .env("COLUMNS", "100")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("script runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The elapsed times the progress line showed for `gate`, in milliseconds.
fn shown(screen: &str, gate: &str) -> Vec<f64> {
    let re = regex::Regex::new(&format!(
        r"running (?:[^\r\n]*, )?{gate} (\d+(?:\.\d+)?)(ms|s)"
    ))
    .unwrap();
    re.captures_iter(screen)
        .map(|c| {
            let n: f64 = c[1].parse().unwrap();
            if &c[2] == "s" {
                n * 1000.0
            } else {
                n
            }
        })
        .collect()
}

#[test]
fn a_running_gate_is_named_within_two_seconds_and_erased_before_the_report() {
    if !require_tool("script") {
        return;
    }
    let repo = slow_repo();
    let screen = on_terminal(&repo, "check --no-cache");
    let times = shown(&screen, "slow");
    assert!(!times.is_empty(), "the running gate was shown: {screen:?}");
    assert!(
        times[0] <= 2000.0,
        "first shown at {} ms: {screen:?}",
        times[0]
    );
    assert!(
        times.iter().any(|t| *t >= 3000.0),
        "and kept up to date: {times:?}"
    );
    let last_progress = screen.rfind("running").unwrap();
    let report = last_progress
        + screen[last_progress..]
            .find("PASS")
            .expect("the report after it");
    assert!(
        screen[last_progress..report].contains("\x1b[2K"),
        "the progress line is erased before the report: {screen:?}"
    );
}

#[test]
fn no_progress_without_a_terminal_with_quiet_or_for_machines() {
    if !require_tool("script") {
        return;
    }
    let repo = slow_repo();
    repo.config("[[gate]]\nname = \"slow\"\nglobs = [\"*.txt\"]\nrun = \"sleep 1\"\n");
    let plain = repo.run(["check", "--no-cache"]);
    assert!(
        !plain.stdout.contains("running") && !plain.stderr.contains("running"),
        "{plain:?}"
    );
    for args in ["check --no-cache --quiet", "check --no-cache --format json"] {
        let screen = on_terminal(&repo, args);
        assert!(shown(&screen, "slow").is_empty(), "{args}: {screen:?}");
    }
}
