//! Every text an agent reads from ralph-gate: the feedback after an edit, the notice of a
//! missing tool, a refused stop and why, the end of a loop. Pure: results and decisions in,
//! text out, always under [`TEXT_CAP`]. The hooks decide; this module words it.

use ralph_base::text::{plural, strip_ansi};
use ralph_runner::runner::GateResult;

/// Claude Code stores a longer string in a file and shows the model a 2 KB preview, so every
/// string we send stays well below its 10,000-character cap.
pub const TEXT_CAP: usize = 8000;

/// Characters of the prompt repeated to the agent; a longer prompt is cut and the agent told
/// where the whole of it is.
const PROMPT_CAP: usize = 4000;

/// The least output a failing gate keeps, however many gates fail.
const MIN_PER_GATE: usize = 300;
/// Room kept for a gate's heading (name, why, command) beside its output.
const GATE_HEADING: usize = 200;

/// Cuts `text` to `cap` characters, saying so at the end.
pub fn cap(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_string();
    }
    let note = "\n[ralph-gate: cut here to stay within Claude Code's limit]";
    let keep = cap.saturating_sub(note.chars().count());
    let mut out: String = text.chars().take(keep).collect();
    out.push_str(note);
    out
}

/// The output budget of each of `gates` failing gates when `used` characters of `cap` are
/// already taken: the one rule every text follows.
fn per_gate(cap: usize, used: usize, gates: usize) -> usize {
    (cap.saturating_sub(used + GATE_HEADING) / gates.max(1)).max(MIN_PER_GATE)
}

/// One failing gate: name, why, command, and its output cut to `budget` characters.
pub fn gate_section(r: &GateResult, budget: usize) -> String {
    let why = r
        .reason
        .clone()
        .or_else(|| r.exit_code.map(|c| format!("exit {c}")))
        .unwrap_or_else(|| r.status.label().to_string());
    let command = match ralph_base::text::at_word(&r.command, 300) {
        whole if whole.len() == r.command.len() => whole.to_string(),
        cut => format!("{} …", cut.trim_end()),
    };
    let output = strip_ansi(&r.output);
    let output = output.trim_end();
    // Several failing runs' output names each run's command already: once is enough.
    let mut s = match ralph_runner::runner::names_its_commands(&r.command, output) {
        true => format!("\n[{}] {why}\n", r.name),
        false => format!("\n[{}] {why}\n$ {command}\n", r.name),
    };
    if !output.is_empty() {
        s.push_str(&ralph_runner::report::diagnostics::within(output, budget));
        s.push('\n');
    }
    s
}

/// The failing gates, each with its share of what `used` leaves of `cap`.
/// The failing gates' errors for an agent that starts afresh (`loop run`'s next iteration),
/// under `cap` bytes.
pub fn failing_gates(failing: &[&GateResult], cap: usize) -> String {
    gate_sections(failing, cap, 0)
}

fn gate_sections(failing: &[&GateResult], cap: usize, used: usize) -> String {
    let per = per_gate(cap, used, failing.len());
    failing.iter().map(|r| gate_section(r, per)).collect()
}

/// What the agent is told when gates fail after its edit to `edited`; `None` when nothing
/// failed.
pub fn edit_feedback(edited: &str, results: &[GateResult], ci: bool, cap: usize) -> Option<String> {
    let failing: Vec<&GateResult> = results.iter().filter(|r| r.counts_as_failure(ci)).collect();
    if failing.is_empty() {
        return None;
    }
    let mut text = format!(
        "ralph-gate: {} of {} failed after your edit to {}. Fix these before going on:\n",
        plural(failing.len(), "gate", "gates"),
        results.len(),
        edited
    );
    let used = text.len();
    text.push_str(&gate_sections(&failing, cap, used));
    Some(self::cap(&text, cap))
}

/// What the agent is told the first time in a session that a gate's tool is missing (tools in
/// `told` were named before), and the tools it names. A skipped gate is not a pass: the agent
/// should know its edits to these files go unchecked.
pub fn missing_notice(
    edited: &str,
    results: &[GateResult],
    told: &[String],
) -> Option<(String, Vec<String>)> {
    let mut by_tool: Vec<(String, Vec<&GateResult>)> = Vec::new();
    for r in results {
        let Some(tool) = r.missing.as_ref().filter(|t| !told.contains(t)) else {
            continue;
        };
        match by_tool.iter_mut().find(|(t, _)| t == tool) {
            Some((_, gates)) => gates.push(r),
            None => by_tool.push((tool.clone(), vec![r])),
        }
    }
    if by_tool.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (tool, gates) in &by_tool {
        let names: Vec<&str> = gates.iter().map(|g| g.name.as_str()).collect();
        text.push_str(&format!(
            "ralph-gate: `{tool}` is not installed, so {} did not check {} and will check nothing \
             this session until it is installed.{}\n",
            if names.len() == 1 {
                format!("the {} gate", names[0])
            } else {
                format!("the gates {}", names.join(", "))
            },
            edited,
            gates
                .iter()
                .find_map(|g| g.install.as_ref())
                .map(|i| format!(" Install it: {i}."))
                .unwrap_or_default()
        ));
    }
    text.push_str("(Said once per session.)");
    Some((text, by_tool.into_iter().map(|(t, _)| t).collect()))
}

/// The line the user sees when the edit feedback named missing tools.
pub fn missing_line(tools: &[String]) -> String {
    format!(
        "ralph-gate: not installed: {}; the gates that need it were skipped",
        tools.join(", ")
    )
}

/// After an edit, when the config does not load: the agent may have broken it itself.
pub fn edit_config_error(e: &dyn std::fmt::Display) -> String {
    cap(
        &format!("ralph-gate could not load its config, so no gate ran after this edit: {e}"),
        TEXT_CAP,
    )
}

/// At a loop's stop, when the config does not load: the loop goes on (fail closed).
pub fn stop_config_error(e: &dyn std::fmt::Display) -> (String, String) {
    (
        cap(&format!("ralph-gate cannot load its config, so the stop gates cannot run. Fix it, then finish the task:\n{e}"), TEXT_CAP),
        "ralph-gate: config error, loop continues".into(),
    )
}

/// A stop whose loop's state file is gone while its pin remains: the refusal and the user's
/// line. The agent is told to put the file back; only a person ends the loop.
pub fn state_gone(loops: &[ralph_loop::loops::Orphan]) -> (String, String) {
    let names: Vec<String> = loops
        .iter()
        .map(|o| format!("{} (started {})", o.loop_file, o.started_at))
        .collect();
    (
        cap(&format!(
            "ralph-gate: the loop's state file is gone but the loop is not over: {}. Put it back (undo what moved it, e.g. `git stash pop`) and go on with the task; the loop ends when every stop gate passes and the promise is made. Only a person ends it otherwise, with `ralph-gate loop cancel` from their own terminal.",
            names.join(", ")
        ), TEXT_CAP),
        "ralph-gate: the loop's state file is gone; the loop is held (a person ends it with `ralph-gate loop cancel`)".into(),
    )
}

/// A stop outside a loop (`gate_every_stop`) with failing gates: the refusal and the user's
/// line.
pub fn plain_stop(failing: &[&GateResult]) -> (String, String) {
    let mut reason = format!(
        "ralph-gate: {} failing. Fix them before you stop:\n",
        plural(failing.len(), "stop gate is", "stop gates are")
    );
    let used = reason.len();
    reason.push_str(&gate_sections(failing, TEXT_CAP, used));
    (
        cap(&reason, TEXT_CAP),
        format!(
            "ralph-gate: {} failing",
            plural(failing.len(), "gate", "gates")
        ),
    )
}

/// State files that could not be read at a stop: their loops are not enforced.
pub fn unreadable_loops(unreadable: &[String]) -> String {
    cap(
        &format!(
            "ralph-gate: cannot read loop state ({}); that loop is not being enforced.",
            unreadable.join("; ")
        ),
        TEXT_CAP,
    )
}

/// A tool call the guard denies while a loop runs, with words the agent can act on.
pub fn denied(what: &str) -> String {
    format!(
        "ralph-gate: denied while a loop is running: {what}. The config, ralph-gate's state (.ralph/), the loop's state file, the hook settings and git hooks decide when this loop may end, so they are not changed from inside it. Make the stop gates pass by fixing the code. If the gates or the loop really must change, say so and let the user do it (`ralph-gate loop cancel`, `ralph-gate loop approve` are theirs to run)."
    )
}

/// A shell command changed what decides the loop's end: what it did, what was put back.
pub fn restored(command: &str, done: &[String], left: &[String]) -> String {
    let mut out = format!(
        "ralph-gate: your command `{}` changed what decides when this loop may end: {}.",
        ralph_base::text::shorten(command, 200),
        done.iter()
            .chain(left)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !done.is_empty() {
        out.push_str(" It was put back.");
    }
    if !left.is_empty() {
        out.push_str(&format!(
            " These could not be put back and hold the loop until a person looks: {}.",
            left.join(", ")
        ));
    }
    out.push_str(" The config, the loop's state and pins, and the hook settings are not changed from inside the loop: make the stop gates pass by fixing the code.");
    cap(&out, TEXT_CAP)
}

/// A stop that came while one of the agent's own shell commands still ran: not a real stop.
pub fn stop_in_command(command: &str) -> String {
    format!(
        "ralph-gate: a stop came while your shell command `{}` was still running. A loop's stop is the agent's, not a command's: it was not counted. Go on with the task.",
        ralph_base::text::shorten(command, 200)
    )
}

/// A stop ralph-gate could not check: the loop goes on.
pub fn stop_unchecked(e: &dyn std::fmt::Display) -> String {
    format!("ralph-gate could not check this stop, so the loop goes on: {e}")
}

/// The words the agent reads when the gates in force are not the pinned ones.
const APPROVE: &str = "Only a person may accept this, by running `ralph-gate loop approve` in their own terminal; do not run it yourself, and do not edit the config, the loop's state or ralph-gate's files to get out of the loop.";

/// Why a loop whose checks were made to check less cannot end: each weakening with its file
/// and line, and what undoes it.
pub fn surface_hold(weakened: &[ralph_surface::surface::Finding]) -> String {
    format!(
        "Since this loop started, what the stop gates check was weakened, so their passing does not show the work is done:\n{}\nUndo these (fix the code or the test instead of suppressing, skipping, deleting or excluding it). {APPROVE}",
        weakened
            .iter()
            .map(|f| format!("- {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Why a loop whose checks pass only because they were changed cannot end: the checks as
/// they were when the loop started (the files put back, each with why it counts as one)
/// fail on the final code, with their output.
pub fn load_bearing(
    prepared: &ralph_surface::differential::Prepared,
    failing: &[(String, String)],
    deferred: &[ralph_surface::surface::Finding],
) -> String {
    let back = prepared
        .put_back
        .iter()
        .map(|p| format!("- {} ({})", p.shown, p.why));
    let unlent = prepared
        .unlent
        .iter()
        .map(|u| format!("- {u} (ignored by git, and not there or not the same at the start)"));
    let files: Vec<String> = back.chain(unlent).collect();
    let outputs: Vec<String> = failing
        .iter()
        .map(|(gate, output)| {
            format!(
                "gate `{gate}` with the checks as they were:\n{}",
                ralph_surface::differential::failure_tail(output, 30)
            )
        })
        .collect();
    let mut text = format!(
        "The stop gates pass, but only because the checks changed since this loop started. Run with these files as they were at the start, on your final code, they fail:\n{}\n\n{}",
        files.join("\n"),
        outputs.join("\n\n")
    );
    if !deferred.is_empty() {
        let found: Vec<String> = deferred.iter().map(|f| format!("- {f}")).collect();
        text.push_str(&format!(
            "\n\nWhat changed in them that checks less:\n{}",
            found.join("\n")
        ));
    }
    text.push_str(&format!(
        "\n\nFix the code so the original tests and settings pass, and put those files back. {APPROVE}"
    ));
    text
}

/// Why a loop whose checked code was moved where no gate reads it cannot end.
pub fn left_reach(moved: &[(String, String)]) -> String {
    format!(
        "Code the stop gates checked when this loop started was moved where none of them reads it:\n{}\nMove it back, or where a gate checks it. {APPROVE}",
        moved.iter().map(|(from, to)| format!("- {from} -> {to}")).collect::<Vec<_>>().join("\n")
    )
}

/// Why a loop whose tests no longer read code they read when it started cannot end.
pub fn out_of_reach(unreached: &[ralph_surface::differential::Unreached]) -> String {
    let lines: Vec<String> = unreached
        .iter()
        .map(|u| format!("- {} (read by `{}` at the start, not now)", u.file, u.gate))
        .collect();
    format!(
        "The tests read this code when this loop started; it is still here, and they no longer read it:\n{}\nSomething else now answers for it where they look (a file the import system finds first, an option, a copy), or it is no longer used. Make the tests reach it again, or delete it if it is dead. {APPROVE}",
        lines.join("\n")
    )
}

/// Why a loop whose stop gates read files outside the work tree that changed after it began
/// cannot end: no run can put those back. `also`: the checks in the repository that changed
/// too (not judged: a person's approval accepts them with the rest, so they are named).
pub fn outside_changed(changed: &[ralph_surface::outside::Changed], also: &[&str]) -> String {
    let lines: Vec<String> = changed
        .iter()
        .map(|c| {
            let what = if c.loaded {
                "ran as part of the test runner"
            } else {
                "read"
            };
            format!("- {} ({what} by {})", c.path.display(), c.gates.join(", "))
        })
        .collect();
    let beside = match also {
        [] => String::new(),
        files => format!(
            "\nThe checks in the repository changed since the loop began too, and were not judged: {}.",
            ralph_base::text::listed(files, 20)
        ),
    };
    format!(
        "Files the stop gates depend on that no tree judged holds (outside the repository, ignored by git, or in a repository nested in this one) changed after this loop started:\n{}\nThe gates' verdict rests on them, and ralph-gate cannot run the checks with them as they were.{beside} Put them back as they were (or remove what was added). {APPROVE}",
        lines.join("\n")
    )
}

/// Why a loop whose final run did not run tests that ran when it started cannot end:
/// `put_back` says whether they did not run with the start's checks put back either (so the
/// code under test, not a change to the tests, stopped them).
pub fn not_run(tests: &ralph_surface::differential::Tests, put_back: bool) -> String {
    let lines: Vec<String> = tests
        .iter()
        .flat_map(|(gate, ids)| {
            let shown = ids
                .iter()
                .take(10)
                .map(move |id| format!("- {id} (gate `{gate}`)"));
            let more = (ids.len() > 10)
                .then(|| format!("- ... and {} more (gate `{gate}`)", ids.len() - 10));
            shown.chain(more)
        })
        .collect();
    let why = if put_back {
        "They do not run even with the tests and configs as they were at the start, so something in the code stops them (a filter, a skip, an exit, a changed test list)."
    } else {
        "Nothing the checks are made of changed, so something in the code stops them (a filter, a skip, an exit, a changed test list)."
    };
    format!(
        "The stop gates pass, but tests that ran when this loop started did not run now:\n{}\n{why} Make them run and pass. {APPROVE}",
        lines.join("\n")
    )
}

/// Why a stop whose work tree changed while it was judged cannot end the loop.
pub fn moved_during(paths: &[String]) -> String {
    format!(
        "The work tree changed while this stop ran its gates, so their verdict is not of the code that is there now:\n{}\nStop anything that is still changing files, and stop again.",
        paths.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n")
    )
}

/// Why a loop whose checks changed cannot end when the differential run could not be made.
pub fn unconfirmed(why: &str) -> String {
    format!(
        "The checks changed since this loop started, and running them as they were on your final code failed to start ({why}), so the loop cannot end on them. {APPROVE}"
    )
}

pub fn pin_hold(verdict: &ralph_surface::pin::Verdict) -> Option<String> {
    use ralph_surface::pin::Verdict;
    let approve = format!(
        "{APPROVE} Put the gates back as they were, or finish the task and let a person decide."
    );
    if !verdict.holds() {
        return None;
    }
    match verdict {
        Verdict::Weaker(changes) => Some(format!(
            "The stop gates changed since this loop started, in ways that could let failing work pass:\n{}\n{approve}",
            changes
                .iter()
                .map(|c| format!("- {c}"))
                .collect::<Vec<_>>()
                .join("\n")
        )),
        Verdict::Tampered(why) => Some(format!(
            "The record of the gates this loop started with was altered: {why}.\n{approve}"
        )),
        _ => None,
    }
}

pub mod stop;

#[cfg(test)]
mod tests {
    use super::*;
    use ralph_runner::runner::GateStatus;
    use std::time::Duration;

    fn result(name: &str, status: GateStatus, output: &str) -> GateResult {
        GateResult {
            gate: 0,
            name: name.into(),
            status,
            duration: Duration::from_millis(5),
            files: 1,
            runs: 1,
            command: format!("{name} a.py"),
            output: output.into(),
            exit_code: (status == GateStatus::Fail).then_some(1),
            reason: None,
            optional: false,
            cached: false,
            ..Default::default()
        }
    }

    #[test]
    fn feedback_names_only_failing_gates_without_colour() {
        let results = [
            result("ok", GateStatus::Pass, "fine"),
            result("py", GateStatus::Fail, "\x1b[31mSyntaxError\x1b[0m: bad"),
        ];
        let text = edit_feedback("a.py", &results, false, 8000).unwrap();
        assert!(
            text.contains("1 gate of 2 failed after your edit to a.py"),
            "{text}"
        );
        assert!(
            text.contains("[py] exit 1\n$ py a.py\nSyntaxError: bad"),
            "{text}"
        );
        assert!(!text.contains("[ok]"));
        assert!(edit_feedback("a.py", &results[..1], false, 8000).is_none());
    }

    #[test]
    fn a_command_is_shown_once_where_several_runs_failed() {
        let mut r = result("sc", GateStatus::Fail, "");
        r.command = "sc a.sh".into();
        r.output = "$ sc a.sh\na.sh:1: bad\n\n$ sc b.sh\nb.sh:1: bad".into();
        let text = gate_section(&r, 8000);
        assert_eq!(text.matches("$ sc a.sh").count(), 1, "{text}");
        assert!(text.contains("$ sc b.sh\nb.sh:1: bad"), "{text}");
        // One run: its output carries no command, the heading does.
        let one = gate_section(&result("py", GateStatus::Fail, "SyntaxError"), 8000);
        assert!(one.contains("$ py a.py\nSyntaxError"), "{one}");
    }

    #[test]
    fn a_missing_tool_is_named_once_with_its_gates_and_install_hint() {
        let skipped = |name: &str, tool: &str| GateResult {
            missing: Some(tool.into()),
            install: Some(format!("apt-get install {tool}")),
            ..result(name, GateStatus::Skipped, "")
        };
        let results = [
            skipped("shellcheck", "shellcheck"),
            skipped("shellcheck-strict", "shellcheck"),
            skipped("tsc", "tsc"),
            result("py", GateStatus::Pass, ""),
        ];
        let (text, tools) = missing_notice("a.sh", &results, &[]).unwrap();
        assert_eq!(tools, ["shellcheck", "tsc"]);
        assert!(
            text.contains("`shellcheck` is not installed, so the gates shellcheck, shellcheck-strict did not check a.sh"),
            "{text}"
        );
        assert!(text.contains("Install it: apt-get install tsc."), "{text}");
        let (_, again) = missing_notice("a.sh", &results, &["shellcheck".into()]).unwrap();
        assert_eq!(again, ["tsc"]);
        assert!(missing_notice("a.sh", &results, &tools).is_none());
    }

    #[test]
    fn feedback_stays_under_the_cap_and_keeps_every_gate() {
        let noisy = "error: something is wrong\n".repeat(2000);
        let results: Vec<GateResult> = (0..4)
            .map(|i| result(&format!("g{i}"), GateStatus::Fail, &noisy))
            .collect();
        let text = edit_feedback("a.rs", &results, false, TEXT_CAP).unwrap();
        assert!(text.chars().count() <= TEXT_CAP, "{}", text.chars().count());
        for i in 0..4 {
            assert!(text.contains(&format!("[g{i}] exit 1")), "gate g{i} lost");
        }
        assert!(text.contains("cut by ralph-gate"));
    }
}

#[cfg(test)]
mod snapshots;
