//! The words of a loop's stop: why it is refused and what to do, or why it ended.

use super::{cap, gate_sections, PROMPT_CAP, TEXT_CAP};
use ralph_base::text::plural;
use ralph_plan::files::Unopenable;
use ralph_runner::runner::GateResult;

/// What a stop that does not end the loop is refused for: the facts its text is worded from,
/// as `hook::decide::judge` finds them.
#[derive(Debug)]
pub struct Refusal<'a> {
    /// The iteration the loop goes on to.
    pub next: u64,
    pub max_iterations: u64,
    /// The promise the loop expects, normalised.
    pub expected: Option<String>,
    /// The expected promise was made (and is refused).
    pub promised: bool,
    pub failing: Vec<&'a GateResult>,
    pub unverified: Vec<&'a GateResult>,
    pub hold: Option<&'a str>,
    pub misplaced: bool,
    pub blocks_in_a_row: u32,
    pub block_cap: u32,
    /// The session's own goal's condition, when the loop holds a goal (no promise then).
    pub goal: Option<&'a str>,
    /// What the goal's record says that was not honoured (see [`ralph_loop::goals::Goal::ignored`]).
    pub goal_ignored: Option<&'static str>,
}

/// A refused stop, worded.
pub struct Refused {
    /// The agent's next instruction.
    pub reason: String,
    /// The user's line.
    pub system: String,
    /// One line for the journal.
    pub why: String,
}

/// The loop reached its limit unfinished.
pub fn limit(max_iterations: u64, failing: &[&str]) -> String {
    if failing.is_empty() {
        format!("ralph-gate: the loop reached its limit of {max_iterations} iterations unfinished (no promise); every gate passes.")
    } else {
        format!(
            "ralph-gate: the loop reached its limit of {max_iterations} iterations unfinished; still failing: {}.",
            failing.join(", ")
        )
    }
}

/// The loop ended as stuck.
pub fn stuck(stops: u32, failing: &[&str]) -> String {
    format!(
        "ralph-gate: the loop was stopped as stuck: {stops} stops in a row with no change to the working tree and the same gate results{}.",
        if failing.is_empty() {
            String::new()
        } else {
            format!(" (failing: {})", failing.join(", "))
        }
    )
}

/// A refused stop: what blocks completion, the failing gates' errors, the task again and how
/// to finish.
pub fn refusal(r: &Refusal<'_>, prompt: &str) -> Refused {
    let of = if r.max_iterations > 0 {
        r.max_iterations.to_string()
    } else {
        "∞".into()
    };
    let system = format!(
        "ralph-gate: iteration {}/{of}, {} failing",
        r.next,
        plural(r.failing.len(), "gate", "gates")
    );
    let finish = match &r.expected {
        _ if r.goal.is_some() => "To finish: make every stop gate pass; ralph-gate checks them again at your next stop, and the goal is not done before they pass.".into(),
        Some(p) => format!("To finish: make every gate pass, then output <promise>{p}</promise> (only when it is true)."),
        None => "This loop has no completion promise; it ends at its iteration limit or when cancelled.".into(),
    };
    let prompt = cap(prompt, PROMPT_CAP);
    let blockers = blockers(r);
    let head = head(r, &blockers);
    let used = head.len() + prompt.len() + finish.len();
    let mut gates = String::new();
    if !r.failing.is_empty() {
        gates.push_str("\nFailing gates:\n");
        gates.push_str(&gate_sections(&r.failing, TEXT_CAP, used));
    }
    // Something to say beyond "go on" comes first; otherwise the task leads, as in the
    // official plugin.
    let reason = if !head.is_empty() {
        format!("{head}{gates}\nThe task, again:\n{prompt}\n\n{finish}")
    } else {
        format!("{prompt}\n{gates}\n{finish}")
    };
    let why = match (r.promised, blockers.is_empty()) {
        _ if r.goal.is_some() => format!("goal held: {}", blockers.join("; ")),
        (true, _) => format!("promise refused: {}", blockers.join("; ")),
        (false, true) => "no promise".to_string(),
        (false, false) => format!("no promise; {}", blockers.join("; ")),
    };
    Refused {
        reason: cap(&reason, TEXT_CAP),
        system,
        why,
    }
}

/// What stands between the agent and completion, one phrase each.
fn blockers(r: &Refusal<'_>) -> Vec<String> {
    let mut blockers = Vec::new();
    if !r.failing.is_empty() {
        let names: Vec<&str> = r.failing.iter().map(|g| g.name.as_str()).collect();
        blockers.push(format!(
            "{} still failing ({})",
            plural(r.failing.len(), "gate is", "gates are"),
            names.join(", ")
        ));
    }
    let (part, nothing): (Vec<&GateResult>, Vec<&GateResult>) = r
        .unverified
        .iter()
        .copied()
        .partition(|g| partly(g).is_some());
    if !nothing.is_empty() {
        let list: Vec<String> = nothing.iter().map(|g| unverified(g)).collect();
        blockers.push(format!(
            "{} verified nothing: {}",
            plural(nothing.len(), "stop gate", "stop gates"),
            list.join(", ")
        ));
    }
    if !part.is_empty() {
        let list: Vec<String> = part.iter().filter_map(|g| partly(g)).collect();
        blockers.push(format!(
            "{} checked only part of the project: {}",
            plural(part.len(), "stop gate", "stop gates"),
            list.join(", ")
        ));
    }
    if r.hold.is_some() {
        blockers.push(
            "the checks changed since this loop started, or what was judged did (why below)".into(),
        );
    }
    blockers
}

/// A skipped stop gate some of whose runs ran, with why the others could not start (a
/// nested project whose own install is missing): `None` when none ran or none was skipped.
fn partly(r: &GateResult) -> Option<String> {
    let skipped: Vec<String> = r
        .run_details
        .iter()
        .filter_map(|d| {
            let why = d.skipped.as_deref()?;
            let what = d.label.as_deref().unwrap_or(&d.dir);
            Some(format!("{what}: {why}"))
        })
        .collect();
    let ran = r.run_details.len() - skipped.len();
    if ran == 0 || skipped.is_empty() || !r.unverified.is_empty() {
        return None;
    }
    Some(format!(
        "{} ({} of its {} runs could not start: {}; or a person marks the gate `optional = true`)",
        r.name,
        skipped.len(),
        r.run_details.len(),
        skipped.join("; ")
    ))
}

/// A stop gate that verified nothing, and why.
fn unverified(r: &GateResult) -> String {
    if !r.unverified.is_empty() {
        let of = |kind: Unopenable| -> Vec<&str> {
            r.unopenable
                .iter()
                .filter(|(_, why)| *why == kind)
                .map(|(f, _)| f.as_str())
                .collect()
        };
        let unread: Vec<&str> = r
            .unverified
            .iter()
            .filter(|f| !r.unopenable.iter().any(|(u, _)| u == *f))
            .map(String::as_str)
            .collect();
        let mut why = Vec::new();
        if !unread.is_empty() {
            why.push(format!(
                "it cannot tell how to check {}: the #! line names no interpreter it can read; give the file a plain #! line such as `#!/bin/sh`, or an extension",
                unread.join(", ")
            ));
        }
        let links = of(Unopenable::DanglingLink);
        if !links.is_empty() {
            why.push(format!(
                "{} is a link to nothing, which no checker can open: restore its target, or remove the link if it is not needed",
                links.join(", ")
            ));
        }
        let folders = of(Unopenable::NotAFile);
        if !folders.is_empty() {
            why.push(format!(
                "{} is not a file (a folder, or a link to one), which no checker can open: put the file back, or stop tracking the path if it is not needed",
                folders.join(", ")
            ));
        }
        return format!("{} ({})", r.name, why.join("; "));
    }
    match &r.missing {
        Some(tool) => format!(
            "{} (its tool `{tool}` is not installed{})",
            r.name,
            r.install
                .as_deref()
                .map(|i| format!("; install it: {i}"))
                .unwrap_or_default()
        ),
        None => format!("{} (it matched no file)", r.name),
    }
}

/// What comes before the gates' errors: a misplaced promise, the refusal, a note near the
/// block cap, and the checks that cannot grant completion.
fn head(r: &Refusal<'_>, blockers: &[String]) -> String {
    let mut head = String::new();
    if r.misplaced {
        head.push_str("ralph-gate: your final message contains a <promise> tag, but the tag must END the final message; nothing may follow it.\n");
    }
    if r.goal.is_some() {
        head.push_str(&format!(
            "ralph-gate holds your goal to the project's stop gates: {}. Keep working; the session may stop once every stop gate passes.\n",
            blockers.join("; ")
        ));
        if let Some(why) = r.goal_ignored {
            head.push_str(&format!("The goal's record says it was {why}, but that was written during this turn or already seen, so only passing gates end the hold.\n"));
        }
    } else if r.promised {
        head.push_str(&format!(
            "ralph-gate refused your promise <promise>{}</promise>: {}. The loop goes on.\n",
            r.expected.as_deref().unwrap_or_default(),
            blockers.join("; ")
        ));
    }
    if r.blocks_in_a_row >= 2 {
        head.push_str(&near_cap(r, blockers));
    }
    if !r.unverified.is_empty() {
        head.push_str("\nA stop gate that checked nothing, or only part of the project, cannot grant completion. If that is expected, a person installs what is missing or marks the gate `optional = true` in the config; do not change the config yourself.\n");
    }
    if let Some(hold) = r.hold {
        head.push_str(&format!("\n{hold}\n"));
    }
    head
}

/// Refusals in a row with nothing changed: say plainly what work is needed, and that the
/// agent's own cap may end the turn.
fn near_cap(r: &Refusal<'_>, blockers: &[String]) -> String {
    let work = if blockers.is_empty() {
        match &r.expected {
            Some(p) => format!("every gate passes: if the task is done, end your final message with <promise>{p}</promise>"),
            None => "finish the task".into(),
        }
    } else {
        blockers.join("; ")
    };
    let cap_note = if r.block_cap > 0 {
        format!(
            " Your session ends its turn after {} refused stops in a row, and the loop would then stall unfinished.",
            r.block_cap
        )
    } else {
        String::new()
    };
    format!(
        "ralph-gate: {} stops in a row with nothing changed.{cap_note} Stopping again does not help; do the work: {work}.\n",
        r.blocks_in_a_row
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ralph_runner::runner::{GateStatus, RunDetail};

    #[test]
    fn a_gate_whose_nested_project_could_not_start_checked_part_not_nothing() {
        let run = |dir: &str, skipped: Option<&str>| RunDetail {
            dir: dir.into(),
            skipped: skipped.map(str::to_string),
            ..Default::default()
        };
        let mut r = GateResult {
            name: "tsc".into(),
            status: GateStatus::Skipped,
            run_details: vec![run(".", None), run("examples/app", Some("not installed"))],
            ..Default::default()
        };
        let said = partly(&r).expect("part");
        assert!(
            said.contains("1 of its 2 runs could not start: examples/app: not installed"),
            "{said}"
        );
        r.run_details.remove(0);
        assert_eq!(partly(&r), None, "none ran: nothing was checked");
    }
}
