//! A motivated agent with the user's shell, in a loop whose Python gate fails, tries every
//! shortcut out (issue 13). None may end the loop; each is refused with a reason and the
//! ones that touch ralph-gate's own records are noted in the journal. Honest work still ends
//! the loop.

use crate::common::{require_tool, Repo, Run};
use crate::hooks::stop;
use serde_json::Value;
use std::path::Path;

pub const GATE: &str = "[[gate]]\nname = \"python\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m py_compile {files}\"\n";
pub const BROKEN: &str = "def f(:\n    return 1\n";
pub const FIXED: &str = "def f():\n    return 1\n";

/// A repository with a Python gate, a broken file, and a loop of session `sess-A`.
pub fn broken_loop() -> Option<Repo> {
    if !require_tool("python3") {
        return None;
    }
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("pkg/ok.py", "x = 1\n");
    repo.write("pkg/mod.py", BROKEN);
    repo.commit_all();
    let run = repo.run([
        "loop",
        "start",
        "--session",
        "sess-A",
        "--promise",
        "DONE",
        "Make every module compile.",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("stop gates pinned"), "{run:?}");
    Some(repo)
}

pub fn promise(repo: &Repo) -> Run {
    stop(repo, "sess-A", Some("All fixed.\n<promise>DONE</promise>"))
}

pub fn decision(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"))
}

/// The stop was refused and the loop goes on; returns the reason.
pub fn refused(repo: &Repo, run: &Run) -> String {
    let out = decision(run);
    assert_eq!(out["decision"], "block", "the loop must go on: {run:?}");
    assert!(loop_alive(repo), "the state file stays");
    out["reason"].as_str().unwrap().to_string()
}

fn loop_alive(repo: &Repo) -> bool {
    repo.path().join(".claude/ralph-loop.local.md").exists()
}

pub fn journal(repo: &Repo) -> Vec<Value> {
    std::fs::read_to_string(repo.path().join(".ralph/journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("journal lines are JSON"))
        .collect()
}

fn last_stop(repo: &Repo) -> Value {
    journal(repo)
        .into_iter()
        .rev()
        .find(|e| e["event"] == "stop")
        .expect("a stop was journaled")
}

#[test]
fn the_honest_way_out_still_works() {
    let Some(repo) = broken_loop() else { return };
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("SyntaxError"), "{reason}");
    repo.write("pkg/mod.py", FIXED);
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "{out}");
    assert!(!loop_alive(&repo));
    assert_eq!(last_stop(&repo)["outcome"], "completed");
}

#[test]
fn a_gate_rewritten_to_true_does_not_end_the_loop() {
    let Some(repo) = broken_loop() else { return };
    repo.config(&GATE.replace("python3 -S -m py_compile {files}", "true"));
    let reason = refused(&repo, &promise(&repo));
    assert!(
        reason.contains("stop gate `python`: command changed"),
        "{reason}"
    );
    assert!(reason.contains("ralph-gate loop approve"), "{reason}");
    assert!(reason.contains("do not run it yourself"), "{reason}");
    assert_eq!(last_stop(&repo)["pin"], "weakened");
}

#[test]
fn a_deleted_gate_does_not_end_the_loop() {
    let Some(repo) = broken_loop() else { return };
    repo.config(
        "[[gate]]\nname = \"other\"\nglobs = [\"*.md\"]\nrun = \"true\"\noptional = true\n",
    );
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("stop gate `python` removed"), "{reason}");
}

#[test]
fn an_exclude_that_uncovers_the_broken_file_does_not_end_the_loop() {
    let Some(repo) = broken_loop() else { return };
    repo.config(&format!("{GATE}exclude = [\"pkg/mod.py\"]\n"));
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("coverage changed: exclude"), "{reason}");
}

#[test]
fn a_deleted_config_falling_back_to_presets_does_not_end_the_loop() {
    let Some(repo) = broken_loop() else { return };
    std::fs::remove_file(repo.path().join("ralph.toml")).unwrap();
    let reason = refused(&repo, &promise(&repo));
    assert!(
        reason.contains("the checks changed since this loop started"),
        "{reason}"
    );
}

#[test]
fn a_weakened_config_committed_stays_weakened() {
    let Some(repo) = broken_loop() else { return };
    repo.config(&GATE.replace("python3 -S -m py_compile {files}", "true"));
    repo.commit_all();
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("command changed"), "{reason}");
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn forged_cache_entries_do_not_end_the_loop_and_are_journaled() {
    let Some(repo) = broken_loop() else { return };
    refused(&repo, &promise(&repo));
    // Every stored result now says exit 0 with no output.
    let mut forged = 0;
    for entry in walk(&repo.results_dir()) {
        let Ok(mut v) = serde_json::from_slice::<Value>(&std::fs::read(&entry).unwrap()) else {
            continue;
        };
        if v.get("exit_code").is_some() {
            v["exit_code"] = 0.into();
            v["output"] = "".into();
            std::fs::write(&entry, v.to_string()).unwrap();
            forged += 1;
        }
    }
    assert!(forged > 0, "the failing run was stored");
    for results in walk(&repo.path().join(".ralph/results")) {
        let text = std::fs::read_to_string(&results).unwrap();
        std::fs::write(&results, text.replace("\"fail\"", "\"pass\"")).unwrap();
    }
    let reason = refused(&repo, &promise(&repo));
    assert!(
        reason.contains("SyntaxError"),
        "the fresh run's error: {reason}"
    );
    let notes = last_stop(&repo)["notes"].to_string();
    assert!(
        notes.contains("the stored result said pass, a fresh run says fail"),
        "{notes}"
    );
}

#[test]
fn a_deleted_state_folder_changes_nothing_and_is_noted() {
    let Some(repo) = broken_loop() else { return };
    refused(&repo, &promise(&repo));
    std::fs::remove_dir_all(repo.path().join(".ralph")).unwrap();
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("SyntaxError"), "{reason}");
    let notes = last_stop(&repo)["notes"].to_string();
    assert!(
        notes.contains(".ralph was deleted during the loop"),
        "{notes}"
    );
    assert_eq!(last_stop(&repo)["pin"], "same", "the pin outlives .ralph");
}

#[test]
fn a_broken_file_with_a_passing_runs_size_mtime_and_inode_is_still_hashed() {
    let Some(repo) = broken_loop() else { return };
    let path = repo.path().join("pkg/mod.py");
    // Same length as BROKEN, compiles.
    let good = "def f():\n   return 1\n";
    assert_eq!(good.len(), BROKEN.len());
    std::fs::write(&path, good).unwrap();
    set_mtime(&path, 1_700_000_000);
    let out = decision(&stop(&repo, "sess-A", Some("checking")));
    assert_eq!(out["decision"], "block", "no promise yet: {out}");
    // Break it again in place (same inode, same size) and put the old mtime back.
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, BROKEN.as_bytes()))
        .unwrap();
    set_mtime(&path, 1_700_000_000);
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&meta), inode);
    assert_eq!(meta.len(), good.len() as u64);
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("SyntaxError"), "{reason}");
    // The write moved ctime, which no one can set back: the remembered stamp no longer
    // matches, so the stored pass is not even a candidate (before, it was served and only
    // the stop's fresh run caught it).
    let notes = last_stop(&repo)["notes"].to_string();
    assert!(
        !notes.contains("the stored result said pass"),
        "the stamp is not fooled: {notes}"
    );
}

#[test]
fn an_edited_pin_in_the_state_file_is_tampering() {
    let Some(repo) = broken_loop() else { return };
    repo.config(&GATE.replace("python3 -S -m py_compile {files}", "true"));
    let state_path = repo.path().join(".claude/ralph-loop.local.md");
    let text = std::fs::read_to_string(&state_path).unwrap();
    let forged: String = text
        .lines()
        .map(|l| {
            if l.starts_with("gates_pin: ") {
                "gates_pin: 00000000000000000000000000000000".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&state_path, forged).unwrap();
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("was altered"), "{reason}");
    assert_eq!(last_stop(&repo)["pin"], "tampered");
    // Removing the line instead is seen too.
    let text = std::fs::read_to_string(&state_path).unwrap();
    let without: String = text
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("gates_pin: "))
        .collect();
    std::fs::write(&state_path, without).unwrap();
    let reason = refused(&repo, &promise(&repo));
    assert!(reason.contains("`gates_pin` line was removed"), "{reason}");
}

#[test]
fn a_person_approves_a_changed_gate_and_an_agent_cannot() {
    let Some(repo) = broken_loop() else { return };
    repo.config(&format!("{GATE}exclude = [\"pkg/mod.py\"]\n"));
    refused(&repo, &promise(&repo));
    let agent = repo.run_env(["loop", "approve"], &[("CLAUDECODE", "1")]);
    assert_eq!(agent.code, 2, "{agent:?}");
    assert!(agent.stderr.contains("for a person"), "{agent:?}");
    let agent = repo.run_env(["loop", "approve"], &[("CLAUDE_CODE_SESSION_ID", "sess-A")]);
    assert_eq!(agent.code, 2, "{agent:?}");
    refused(&repo, &promise(&repo));

    let person = repo.on_terminal("person", "code", &["loop", "approve"]);
    assert_eq!(person.code, 0, "{person:?}");
    assert!(
        person.stdout.contains("coverage changed: exclude"),
        "{person:?}"
    );
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "approved: {out}");
    let approvals: Vec<Value> = journal(&repo)
        .into_iter()
        .filter(|e| e["event"] == "approve")
        .collect();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["who"], "terminal");
}

#[test]
fn an_added_gate_is_accepted_without_approval() {
    let Some(repo) = broken_loop() else { return };
    repo.write("pkg/mod.py", FIXED);
    repo.config(&format!(
        "{GATE}\n[[gate]]\nname = \"compileall\"\nglobs = [\"**/*.py\"]\nrun = \"python3 -S -m compileall -q {{files}}\"\n"
    ));
    let out = decision(&promise(&repo));
    assert!(out.get("decision").is_none(), "a stronger config: {out}");
    let entry = last_stop(&repo);
    assert_eq!(entry["pin"], "strengthened");
    assert_eq!(entry["outcome"], "completed");
}

#[test]
fn cancel_and_a_deleted_state_file_are_journaled_with_who() {
    let Some(repo) = broken_loop() else { return };
    refused(&repo, &stop(&repo, "sess-A", Some("working")));
    assert!(repo.exists(".ralph/progress/ralph-loop.local.md.json"));
    let agent = repo.run_env(["loop", "cancel"], &[("CLAUDE_CODE_SESSION_ID", "sess-A")]);
    assert_eq!(agent.code, 2, "an agent's session cannot cancel: {agent:?}");
    let run = repo.on_terminal("person", "code", &["loop", "cancel"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !repo.exists(".ralph/progress/ralph-loop.local.md.json"),
        "cancel clears progress"
    );
    let cancel = journal(&repo)
        .into_iter()
        .find(|e| e["event"] == "cancel")
        .unwrap();
    assert_eq!(cancel["who"], "terminal");
    let status = repo.run(["status"]);
    assert!(
        status
            .stdout
            .contains("cancel ralph-loop.local.md by terminal"),
        "{status:?}"
    );

    // A new loop starts counting from zero, and deleting its file by hand is seen.
    let run = repo.run([
        "loop",
        "start",
        "--session",
        "sess-A",
        "--promise",
        "DONE",
        "Again.",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = decision(&stop(&repo, "sess-A", Some("working")));
    assert_eq!(
        out["systemMessage"],
        "ralph-gate: iteration 2/∞, 1 gate failing"
    );
    std::fs::remove_file(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    let run = stop(&repo, "sess-A", Some("<promise>DONE</promise>"));
    assert_eq!(
        decision(&run)["decision"],
        "block",
        "a deleted state file does not end the loop: {run:?}"
    );
    let deleted = journal(&repo)
        .into_iter()
        .find(|e| e["event"] == "state_deleted")
        .expect("the deletion is journaled");
    assert!(
        deleted["who"].as_str().unwrap().contains("sess-A"),
        "{deleted}"
    );
}

#[test]
fn a_promise_that_is_not_at_the_end_is_explained() {
    let Some(repo) = broken_loop() else { return };
    repo.write("pkg/mod.py", FIXED);
    let run = stop(
        &repo,
        "sess-A",
        Some("<promise>DONE</promise>\nLet me know if you need more."),
    );
    let reason = refused(&repo, &run);
    assert!(
        reason.contains("the tag must END the final message"),
        "{reason}"
    );
}

#[test]
fn the_state_files_mode_and_line_endings_survive_a_stop() {
    let Some(repo) = broken_loop() else { return };
    let path = repo.path().join(".claude/ralph-loop.local.md");
    let dos = std::fs::read_to_string(&path)
        .unwrap()
        .replace('\n', "\r\n");
    std::fs::write(&path, &dos).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    refused(&repo, &stop(&repo, "sess-A", Some("working")));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("iteration: 2\r\n"), "{after:?}");
    assert!(!after.replace("\r\n", "").contains('\n'), "{after:?}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn a_corrupt_state_file_is_named_and_journaled() {
    let Some(repo) = broken_loop() else { return };
    let path = repo.path().join(".claude/ralph-loop.local.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("iteration: 1", "iteration: lots")).unwrap();
    let out = decision(&stop(&repo, "sess-A", Some("<promise>DONE</promise>")));
    let msg = out["systemMessage"].as_str().unwrap();
    assert!(
        msg.contains("cannot read loop state") && msg.contains("iteration"),
        "{msg}"
    );
    assert!(
        journal(&repo)
            .iter()
            .any(|e| e["event"] == "state_unreadable"),
        "journaled"
    );
}

#[test]
fn loop_start_takes_options_after_the_prompt_in_the_plugins_spelling() {
    let repo = Repo::git();
    // A loop needs a stop gate to start.
    repo.config("[[gate]]\nname = \"ok\"\nglobs = [\"*\"]\nrun = \"true\"\n");
    let run = repo.run([
        "loop",
        "start",
        "Fix",
        "the",
        "parser",
        "--max-iterations",
        "5",
        "--completion-promise",
        "ALL GREEN",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(repo.path().join(".claude/ralph-loop.local.md")).unwrap();
    assert!(text.contains("max_iterations: 5\n"), "{text}");
    assert!(
        text.contains("completion_promise: \"ALL GREEN\"\n"),
        "{text}"
    );
    assert!(text.ends_with("\n\nFix the parser\n"), "{text}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out
}

fn set_mtime(path: &Path, secs: i64) {
    let status = std::process::Command::new("touch")
        .arg("-m")
        .arg("-d")
        .arg(format!("@{secs}"))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn pre_tool_use(repo: &Repo, session: &str, tool: &str, input: Value) -> Run {
    let payload = serde_json::json!({
        "session_id": session,
        "transcript_path": "/nonexistent.jsonl",
        "cwd": repo.path().join("pkg"),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1"
    });
    repo.run_stdin(
        &["hook", "pre-tool-use"],
        payload.to_string().as_bytes(),
        &[],
    )
}

fn denied(run: &Run) -> Option<String> {
    assert_eq!(run.code, 0, "{run:?}");
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let out = &v["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "deny");
    Some(
        out["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

#[test]
fn the_guard_denies_changes_to_what_decides_the_end_only_inside_a_loop() {
    let Some(repo) = broken_loop() else { return };
    let toml = repo.path().join("ralph.toml");
    let reason = denied(&pre_tool_use(
        &repo,
        "sess-A",
        "Write",
        serde_json::json!({"file_path": toml, "content": "x"}),
    ))
    .expect("writing the config is denied");
    assert!(reason.contains("editing ralph.toml"), "{reason}");
    assert!(reason.contains("fixing the code"), "{reason}");
    for cmd in [
        "rm -rf ../.ralph",
        "sed -i s/py_compile/true/ ../ralph.toml",
        "ralph-gate loop cancel",
        "bash -c 'echo > ../.claude/ralph-loop.local.md'",
    ] {
        let run = pre_tool_use(&repo, "sess-A", "Bash", serde_json::json!({"command": cmd}));
        assert!(denied(&run).is_some(), "{cmd}: {run:?}");
    }
    for cmd in [
        "python3 -m py_compile mod.py",
        "rm -f stale.pyc",
        "cat ../ralph.toml",
    ] {
        let run = pre_tool_use(&repo, "sess-A", "Bash", serde_json::json!({"command": cmd}));
        assert_eq!(denied(&run), None, "{cmd}");
    }
    let edit = pre_tool_use(
        &repo,
        "sess-A",
        "Edit",
        serde_json::json!({"file_path": repo.path().join("pkg/mod.py"), "old_string": "(:", "new_string": "():"}),
    );
    assert_eq!(denied(&edit), None, "the work itself is allowed");

    // Another session's loop is not this session's business.
    let run = pre_tool_use(
        &repo,
        "sess-B",
        "Bash",
        serde_json::json!({"command": "rm ../ralph.toml"}),
    );
    assert_eq!(denied(&run), None);
    // No loop: everything goes.
    repo.on_terminal("person", "code", &["loop", "cancel"]);
    let run = pre_tool_use(
        &repo,
        "sess-A",
        "Bash",
        serde_json::json!({"command": "rm -rf ../.ralph"}),
    );
    assert_eq!(denied(&run), None);
}

#[test]
fn the_guard_answers_bad_input_with_a_clear_error() {
    let repo = Repo::git();
    let run = repo.run_stdin(&["hook", "pre-tool-use"], b"{not json", &[]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("not a valid JSON object"), "{run:?}");
}

#[test]
fn refusals_near_the_agents_block_cap_say_what_work_is_needed_and_are_journaled() {
    let Some(repo) = broken_loop() else { return };
    let input = |active: bool| {
        serde_json::json!({"session_id": "sess-A", "cwd": repo.path(), "hook_event_name": "Stop",
                           "stop_hook_active": active, "last_assistant_message": "Still thinking."})
        .to_string()
    };
    let cap = [("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3")];
    let first = repo.run_stdin(&["hook", "stop"], input(false).as_bytes(), &cap);
    assert!(!refused(&repo, &first).contains("stops in a row"));
    repo.run_stdin(&["hook", "stop"], input(true).as_bytes(), &cap);
    let third = repo.run_stdin(&["hook", "stop"], input(true).as_bytes(), &cap);
    let reason = refused(&repo, &third);
    assert!(
        reason.contains("3 stops in a row with nothing changed"),
        "{reason}"
    );
    assert!(reason.contains("after 3 refused stops"), "{reason}");
    assert!(
        reason.contains("do the work: 1 gate is still failing (python)"),
        "{reason}"
    );
    let notes = last_stop(&repo)["notes"].to_string();
    assert!(
        notes.contains("stop-block cap (3) likely ends its turn here"),
        "{notes}"
    );
    let status = repo.run(["status"]);
    assert!(
        status.stdout.contains("! 3 refusals in a row"),
        "{status:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_loops_own_state_file_does_not_make_whole_project_gates_miss() {
    let repo = Repo::git();
    repo.config(
        "[[gate]]\nname = \"whole\"\nglobs = [\"**/*\"]\nscope = \"project\"\nrun = \"true\"\nphases = [\"stop\"]\n",
    );
    repo.write("a.txt", "x");
    repo.commit_all();
    let run = repo.run([
        "loop",
        "start",
        "--session",
        "sess-A",
        "--promise",
        "DONE",
        "Go.",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for _ in 0..2 {
        refused(&repo, &stop(&repo, "sess-A", Some("working")));
    }
    let status: Value =
        serde_json::from_str(&repo.run(["status", "--format", "json"]).stdout).unwrap();
    assert_eq!(
        status["gates"][0]["last"]["cached"], true,
        "the second stop reuses the first one's result although the state file changed"
    );
}
