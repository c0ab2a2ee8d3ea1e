//! Entry points for the coverage-guided fuzz targets in `fuzz/`. Each takes raw bytes, runs
//! one parser the way ralph-gate runs it on untrusted input, and panics only when an invariant
//! the rest of the program relies on is broken, so a fuzzer crash is always a real finding.
//! The same functions run in the unit tests below on the checked-in regression inputs.

use std::path::Path;

/// Hook input on stdin, from any agent: a value or an error whose message names where the
/// JSON broke; every agent's adapter reads it as any event without panicking, and an edited
/// path is never empty.
pub fn hook_input(bytes: &[u8]) {
    use ralph_hook::agents::{self, Agent, Event};
    match ralph_hook::hook::protocol::parse(bytes) {
        Ok(input) => {
            for agent in Agent::ALL {
                // Stop may read a transcript the payload names: not from fuzzed input.
                for event in [Event::Edit, Event::Guard] {
                    if let Ok(ask) = agents::ask(
                        agent,
                        event,
                        &input,
                        &ralph_base::env::Environment::default(),
                    ) {
                        assert!(
                            ask.edited.iter().all(|p| !p.as_os_str().is_empty()),
                            "an empty edited path"
                        );
                    }
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// A transcript tail, as JSON lines: whatever is found is a single promise with whitespace
/// collapsed, taken from text that ends with the closing tag.
pub fn transcript(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = ralph_hook::hook::promise::last_message_text(&lines) else {
        return;
    };
    if let Some(promise) = ralph_hook::hook::promise::extract(&last) {
        assert!(!promise.is_empty(), "an empty promise");
        assert!(
            last.trim_end().ends_with("</promise>"),
            "promise not at end"
        );
        assert!(
            !promise.contains("</promise>"),
            "a promise holding its own closing tag"
        );
        assert_eq!(
            promise,
            ralph_hook::hook::promise::normalize(&promise),
            "promise not normalised"
        );
    }
}

/// A loop state file: what parses renders back to the same state, and the two updates a stop
/// makes (the next iteration, the claiming session) survive a write and a re-read.
pub fn loop_state(bytes: &[u8]) {
    use ralph_loop::loops::LoopState;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(mut state) = LoopState::parse(text) else {
        return;
    };
    let again = LoopState::parse(&state.render()).expect("a rendered state parses");
    assert_eq!(again, state, "render/parse round trip");

    let next = state.iteration.saturating_add(1);
    state.set_iteration(next);
    let reread = LoopState::parse(&state.render()).expect("an updated state parses");
    assert_eq!(reread.iteration, next, "iteration lost in a rewrite");
    assert_eq!(
        reread.prompt(),
        state.prompt(),
        "prompt changed by a rewrite"
    );

    // A session id of hostile bytes (it comes from the hook input) must not add or change
    // any other field; the prompt, which may hold newlines and `---`, is used as one.
    let mut claimed = reread.clone();
    claimed.claim(reread.prompt());
    let after = LoopState::parse(&claimed.render()).expect("a claimed state parses");
    assert_eq!(after.iteration, next, "claim changed the iteration");
    assert_eq!(
        after.max_iterations, reread.max_iterations,
        "claim changed the limit"
    );
    assert_eq!(after.active, reread.active, "claim changed `active`");
    assert_eq!(
        after.completion_promise, reread.completion_promise,
        "claim changed the promise"
    );
    assert_eq!(after.prompt(), reread.prompt(), "claim changed the prompt");
}

/// The stop decision on any loop state, promise and gate results: a loop ends as complete
/// only with the expected promise and no failing gate, ends otherwise only at its limit or
/// as stuck, and every refusal counts an iteration and fits Claude Code's text limit.
///
/// Layout: byte 0 holds flags (CI; promise: none, the expected one, or the text after the
/// gate bytes), byte 1 `stuck_after`, byte 2 `unchanged_stops`, byte 3 the gate count (up
/// to 7), then one byte per gate status; the rest is the state file. The same bytes then
/// check the whole stop's plan (`hook::stop::plan::property`).
pub fn stop_decision(bytes: &[u8]) {
    use ralph_hook::hook::decide::{decide, Outcome, StopFacts};
    use ralph_loop::loops::LoopState;
    let [flags, stuck_after, unchanged, count, rest @ ..] = bytes else {
        return;
    };
    let count = usize::from(count % 8).min(rest.len());
    let (statuses, text) = rest.split_at(count);
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(state) = LoopState::parse(text) else {
        return;
    };
    let expected = state
        .completion_promise
        .as_deref()
        .map(ralph_hook::hook::promise::normalize);
    let seen = match flags >> 1 & 3 {
        0 => None,
        1 => expected.clone(),
        _ => Some(ralph_hook::hook::promise::normalize(text)),
    };
    let results = fuzz_results(statuses, text);
    let facts = StopFacts {
        state: &state,
        promise_seen: seen.as_deref(),
        results: &results,
        ci: flags & 1 == 1,
        unchanged_stops: u32::from(*unchanged),
        stuck_after: u32::from(*stuck_after),
        hold: (flags & 2 == 2).then(|| "gates changed".to_string()),
        promise_misplaced: flags & 4 == 4,
        blocks_in_a_row: u32::from(*unchanged),
        block_cap: 8,
        goal: None,
    };
    let d = decide(&facts);

    // Anything that keeps a promise from counting: a failing gate, a gate that verified
    // nothing, a hold on the pinned gates.
    let failing = results.iter().any(|r| r.counts_as_failure(facts.ci))
        || !ralph_hook::hook::decide::unverified(&results, facts.ci).is_empty()
        || facts.hold.is_some();
    let promised = expected.is_some() && seen == expected;
    let stuck = facts.stuck_after > 0 && facts.unchanged_stops >= facts.stuck_after;
    match d.outcome {
        Outcome::Completed => assert!(
            promised && !failing,
            "completed without the promise, with a failing or unverified gate, or on hold"
        ),
        Outcome::LimitReached => assert!(state.limit_reached(), "ended at a limit not reached"),
        Outcome::Stuck => assert!(stuck, "ended as stuck when not stuck"),
        Outcome::PromiseRefused => assert!(
            promised && failing,
            "refused a promise not made, or with nothing failing"
        ),
        Outcome::Continue => assert!(!promised, "the promise was made and not answered"),
        Outcome::GoalRefused | Outcome::GoalGoesOn => panic!("a goal's outcome without a goal"),
    }
    check_state_change(&d, &state);
    // The whole stop around that judgement: every kind of stop, its loop file's change and
    // its journal line (`byte 1` picks the kind).
    ralph_hook::hook::stop::plan::property(*stuck_after, state, results, *flags);
}

/// Gate results from status bytes: `b % 5` the status, the high bit `optional`.
fn fuzz_results(statuses: &[u8], output: &str) -> Vec<ralph_runner::runner::GateResult> {
    use ralph_runner::runner::{GateResult, GateStatus};
    statuses
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let status = match b % 5 {
                0 => GateStatus::Pass,
                1 => GateStatus::Fail,
                2 => GateStatus::Timeout,
                3 => GateStatus::Skipped,
                _ => GateStatus::NoFiles,
            };
            GateResult {
                gate: i,
                name: format!("gate{i}"),
                status,
                duration: std::time::Duration::ZERO,
                files: usize::from(status != GateStatus::NoFiles),
                runs: 1,
                command: format!("check {i}"),
                output: output.to_string(),
                exit_code: (status == GateStatus::Fail).then_some(1),
                reason: None,
                optional: b & 0x80 != 0,
                cached: false,
                ..Default::default()
            }
        })
        .collect()
}

/// A refusal counts an iteration and fits Claude Code's limit; an allowed stop ends the loop.
fn check_state_change(
    d: &ralph_hook::hook::decide::StopDecision,
    state: &ralph_loop::loops::LoopState,
) {
    use ralph_hook::hook::decide::{Outcome, StateChange};
    if d.blocks() {
        assert_eq!(
            d.state,
            StateChange::SetIteration(state.iteration.saturating_add(1)),
            "a refusal must count the iteration"
        );
        let reason = d.output.reason().unwrap_or_default();
        assert!(
            reason.chars().count() <= ralph_hook::words::TEXT_CAP,
            "reason over Claude Code's limit"
        );
    } else {
        assert_eq!(
            d.state,
            StateChange::Remove,
            "a loop allowed to stop must end"
        );
        assert!(
            matches!(
                d.outcome,
                Outcome::Completed | Outcome::LimitReached | Outcome::Stuck
            ),
            "allowed with outcome {:?}",
            d.outcome
        );
    }
}

/// `ralph.toml` text: a config, or an error that says where in the file it is.
pub fn config(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let path = Path::new("ralph.toml");
    match ralph_config::parse(path, text.to_string()) {
        Ok(file) => {
            let resolved = ralph_config::resolve(
                std::path::PathBuf::from("/project"),
                Some(file),
                &mut Vec::new,
            );
            if let Err(e) = resolved {
                assert!(!e.to_string().is_empty());
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("ralph.toml:"),
                "a config error that does not say where: {msg}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    //! The fuzzers' seed inputs (`fuzz/seeds/<target>/`) and every input they ever crashed on
    //! (`fuzz/regressions/<target>/`) are replayed here, so a finding stays fixed without the
    //! fuzzer and the seeds stay valid examples of what they stand for.

    use std::path::{Path, PathBuf};

    fn inputs(dir: &Path) -> Vec<PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .map(|e| e.expect("a directory entry").path())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("cannot read {}: {e}", dir.display()),
        }
    }

    fn replay(target: &str, run: fn(&[u8])) {
        let fuzz = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        let seeds = inputs(&fuzz.join("seeds").join(target));
        assert!(!seeds.is_empty(), "no seed inputs for fuzz target {target}");
        for path in seeds
            .iter()
            .chain(&inputs(&fuzz.join("regressions").join(target)))
        {
            let bytes = std::fs::read(path).expect("a fuzz input");
            run(&bytes);
        }
    }

    #[test]
    fn hook_input_regressions() {
        replay("hook_input", super::hook_input);
    }

    #[test]
    fn transcript_regressions() {
        replay("transcript", super::transcript);
    }

    #[test]
    fn loop_state_regressions() {
        replay("loop_state", super::loop_state);
    }

    #[test]
    fn stop_decision_regressions() {
        replay("stop_decision", super::stop_decision);
    }

    #[test]
    fn config_regressions() {
        replay("config", super::config);
    }
}
