//! Approval and cancellation are a person's (issue 37, item 6), decided by what cannot be
//! forged from inside the agent's session: the processes above the command (the agent
//! program whose hooks ran here, a shell an agent's session started) and a code shown on the
//! command's own terminal that must be typed back. Each attack here is one an agent with
//! the user's shell can make: its variables removed, a terminal of its own that it types
//! into, a job it leaves behind, a program that is not the one whose hooks ran. Real ptys,
//! a real detached process, real `setsid`; the test binary runs the hooks, so it plays the
//! agent unless a test starts one of its own.

use crate::common::{require_tool, Repo, Run};
use crate::tamper::{broken_loop, decision, journal, promise, refused, GATE};
use serde_json::Value;
use std::process::Command;

/// A loop whose stop is refused only because its gate was weakened: an approval would end it.
fn held_by_a_weakening() -> Option<Repo> {
    let repo = broken_loop()?;
    repo.config(&format!("{GATE}exclude = [\"pkg/mod.py\"]\n"));
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("ralph-gate loop approve"), "{reason}");
    Some(repo)
}

fn approvals(repo: &Repo) -> usize {
    journal(repo)
        .iter()
        .filter(|e| e["event"] == "approve")
        .count()
}

/// Nothing was approved: no approval journaled, and the loop still refuses the promise.
fn nothing_approved(repo: &Repo, attempt: &Run) {
    assert_ne!(attempt.code, 0, "{attempt:?}");
    assert_eq!(approvals(repo), 0, "{attempt:?}");
    refused(repo, &promise(repo));
}

#[test]
fn an_agent_with_its_variables_removed_cannot_approve() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    // `repo.run` clears the environment: no CLAUDECODE, no session id, nothing.
    let attempt = repo.run(["loop", "approve"]);
    assert_eq!(attempt.code, 2, "{attempt:?}");
    assert!(
        attempt.stderr.contains("is for a person")
            && attempt
                .stderr
                .contains("the agent whose hooks run in this project"),
        "{attempt:?}"
    );
    nothing_approved(&repo, &attempt);
    let refusal = journal(&repo)
        .into_iter()
        .find(|e| e["event"] == "refused")
        .expect("the refusal is journaled");
    assert!(
        refusal["why"]
            .as_str()
            .unwrap_or_default()
            .contains("loop approve"),
        "{refusal}"
    );
}

#[test]
fn a_terminal_the_agent_makes_cannot_approve_though_it_types_the_code() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    let attempt = repo.on_terminal("below", "code", &["loop", "approve"]);
    assert!(attempt.stdout.contains("is for a person"), "{attempt:?}");
    nothing_approved(&repo, &attempt);
}

#[test]
fn a_job_the_agent_leaves_behind_cannot_approve() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    if !require_tool("setsid") {
        return;
    }
    // The job outlives the shell that started it: by the time it runs, nothing above it is
    // the agent (it is re-parented), and it has no terminal to be confirmed on.
    let said = left_behind(
        &repo,
        "setsid sh -c 'sleep 0.3; exec \"$0\" loop approve' '{rg}' >'{out}' 2>&1 </dev/null &",
    );
    assert!(said.contains("no terminal to confirm on"), "{said}");
    assert_eq!(approvals(&repo), 0);
    refused(&repo, &promise(&repo));
}

/// Runs `script` (`{rg}`: the binary, `{out}`: where the job writes) from a shell that
/// exits at once, leaving the job behind; returns what the job said once it refused.
fn left_behind(repo: &Repo, script: &str) -> String {
    let out = repo.path().join("../job.out");
    let script = script
        .replace("{rg}", env!("CARGO_BIN_EXE_ralph-gate"))
        .replace("{out}", &out.display().to_string());
    let started = Command::new("sh")
        .current_dir(repo.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(["-c", &script])
        .status()
        .expect("sh runs");
    assert!(started.success());
    wait_for_text(&out, "nothing was done")
}

fn wait_for_text(path: &std::path::Path, text: &str) -> String {
    for _ in 0..300 {
        let said = std::fs::read_to_string(path).unwrap_or_default();
        if said.contains(text) {
            return said;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!(
        "{} never said {text:?}: {:?}",
        path.display(),
        std::fs::read_to_string(path)
    );
}

#[test]
fn a_shell_an_agent_session_started_cannot_approve_from_a_detached_terminal() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    // Detached from the test (no recorded agent above), but started by a shell that an
    // agent's session marked, which then cleared its own variables.
    let rg = env!("CARGO_BIN_EXE_ralph-gate");
    let attempt = repo.on_terminal_argv(
        "person",
        "code",
        &[
            "env",
            "CLAUDECODE=1",
            "sh",
            "-c",
            "env -i \"$0\" loop approve; exit $?",
            rg,
        ],
    );
    assert!(attempt.stdout.contains("CLAUDECODE is set"), "{attempt:?}");
    nothing_approved(&repo, &attempt);
}

/// A stand-in for an agent CLI that is not the test and sets no variable of its own (as
/// Codex): it runs its stop hook through a shell, then one tool command (if given) through
/// another. Arguments: ralph-gate, the stop payload, the tool's argv.
pub const AGENT: &str = r#"
import subprocess, sys
hook, payload, tool = sys.argv[1], sys.argv[2], sys.argv[3:]
subprocess.run(["sh", "-c", '"$0" hook stop', hook], input=payload.encode(), capture_output=True)
done = subprocess.run(["sh", "-c", '"$@"', "sh", *tool], capture_output=True)
sys.stdout.write(done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace"))
sys.exit(done.returncode)
"#;

#[test]
fn an_agent_program_is_found_above_its_hook_and_its_tools() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    let rg = env!("CARGO_BIN_EXE_ralph-gate");
    let payload = serde_json::json!({
        "session_id": "sess-A",
        "cwd": repo.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": "working",
    })
    .to_string();
    // Its tool makes a terminal, and there replaces itself with ralph-gate with an empty
    // environment, typing the code it is shown.
    let exec = "import os, sys; os.execve(sys.argv[1], [sys.argv[1], 'loop', 'approve'], {})";
    let mut cmd = repo.python();
    cmd.args(["-c", AGENT, rg, &payload])
        .args([
            "python3",
            "-c",
            include_str!("terminal.py"),
            "below",
            "code",
        ])
        .args(["python3", "-c", exec, rg]);
    let attempt = crate::common::finish(cmd.output().expect("python3 runs"));
    assert!(
        attempt.stdout.contains("it runs under `python3"),
        "the agent program is named: {attempt:?}"
    );
    nothing_approved(&repo, &attempt);
}

#[test]
fn an_agent_cannot_cancel_and_a_person_can() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    let attempt = repo.run(["loop", "cancel"]);
    assert_eq!(attempt.code, 2, "{attempt:?}");
    assert!(
        attempt.stderr.contains("`loop cancel` is for a person"),
        "{attempt:?}"
    );
    refused(&repo, &promise(&repo));

    let person = repo.on_terminal("person", "code", &["loop", "cancel"]);
    assert_eq!(person.code, 0, "{person:?}");
    assert!(!repo.exists(".claude/ralph-loop.local.md"), "cancelled");
    let cancel: Vec<Value> = journal(&repo)
        .into_iter()
        .filter(|e| e["event"] == "cancel")
        .collect();
    assert_eq!(cancel.len(), 1, "{cancel:?}");
    assert_eq!(cancel[0]["who"], "terminal");
}

#[test]
fn a_person_at_their_own_terminal_approves_with_the_code_and_the_loop_ends() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    let wrong = repo.on_terminal("person", "wrong", &["loop", "approve"]);
    assert!(wrong.stdout.contains("the code typed was not"), "{wrong:?}");
    nothing_approved(&repo, &wrong);
    let none = repo.on_terminal("person", "eof", &["loop", "approve"]);
    assert!(none.stdout.contains("nothing was done"), "{none:?}");
    nothing_approved(&repo, &none);

    let person = repo.on_terminal("person", "code", &["loop", "approve"]);
    assert_eq!(person.code, 0, "{person:?}");
    assert!(
        person.stdout.contains("approve the loop in")
            && person.stdout.contains("coverage changed: exclude"),
        "{person:?}"
    );
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "approved: {out}");
    assert_eq!(approvals(&repo), 1);
}

#[test]
fn a_job_whose_shell_exits_cannot_cancel() {
    let Some(repo) = held_by_a_weakening() else {
        return;
    };
    // No setsid: the job is re-parented when its shell exits, so no agent is above it when
    // it runs; it has no terminal to be confirmed on.
    let said = left_behind(
        &repo,
        "( sleep 0.3; exec '{rg}' loop cancel ) >'{out}' 2>&1 </dev/null & exit 0",
    );
    assert!(said.contains("no terminal to confirm on"), "{said}");
    assert!(repo.exists(".claude/ralph-loop.local.md"), "not cancelled");
    refused(&repo, &promise(&repo));
}
