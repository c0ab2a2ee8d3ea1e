//! `ralph-gate hook user-prompt-submit`: a held goal whose last turn ended while ralph-gate
//! still refused its stop (Claude Code overrides a hook after `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`
//! refusals in a row; a person may interrupt) left stop gates failing. The journal records it
//! once, and the session's next prompt is told what is left, so the work is not lost between
//! turns. Read from ralph-gate's own journal, not predicted at the stop: any way a turn ends
//! while held counts.

use super::{Ask, Verdict};
use ralph_base::state::Layout;
use ralph_loop::journal::{self, Decision, Entry, Line, LoopEvent};
use ralph_loop::loops;

/// What Claude Code writes to the transcript when it overrides a refusing stop hook.
const OVERRIDDEN: &str = "overriding and ending turn";

pub fn run(ask: &Ask, layout: &Layout) -> Verdict {
    if ask.session.is_empty() || !loops::maybe_any(layout) {
        return Verdict::Silent;
    }
    let key = loops::session_key(&ask.session);
    let journal = journal::read(layout);
    let told: Vec<String> = loops::list(layout)
        .iter()
        .filter(|f| {
            f.state
                .as_ref()
                .is_ok_and(|s| s.goal && s.active && s.session_id == key)
        })
        .filter_map(|f| ended_held(&journal, &loops::key(&f.path)).map(|g| (f, g)))
        .map(|(f, failing)| tell(layout, ask, &loops::key(&f.path), &failing))
        .collect();
    if told.is_empty() {
        return Verdict::Silent;
    }
    Verdict::Context {
        text: told.join("\n"),
        system: Some(
            "ralph-gate: the last turn ended with the goal held and stop gates failing".into(),
        ),
    }
}

/// Pure: the failing gates of the goal loop `key` when its last stop was refused and no
/// later line says so already; `None` otherwise.
pub fn ended_held(journal: &[Line], key: &str) -> Option<Vec<String>> {
    for line in journal.iter().rev() {
        match &line.entry {
            Entry::GoalCapped(e) if e.loop_file == key => return None,
            Entry::Stop(s) if s.loop_file == key => {
                return (s.decision == Decision::Block).then(|| {
                    s.gates
                        .iter()
                        .filter(|g| g.failing)
                        .map(|g| g.gate.clone())
                        .collect()
                })
            }
            _ => {}
        }
    }
    None
}

/// Journals the held end of `key`'s last turn and words it for the agent.
fn tell(layout: &Layout, ask: &Ask, key: &str, failing: &[String]) -> String {
    let how = if overridden(ask) {
        "on the agent's cap on refused stops"
    } else {
        "while ralph-gate still refused its stop (the agent's cap, or an interruption)"
    };
    let gates = if failing.is_empty() {
        "the stop gates did not all pass".to_string()
    } else {
        format!("failing stop gates: {}", failing.join(", "))
    };
    let _ = journal::append(
        layout,
        Entry::GoalCapped(LoopEvent {
            session: loops::session_key(&ask.session),
            ..LoopEvent::new(
                format!("{} goal", ask.agent),
                key,
                format!("the goal's last turn ended {how}; {gates}"),
            )
        }),
    );
    format!(
        "ralph-gate: your last turn ended {how}, with your goal still held and {gates}. The goal is not done: make every stop gate pass (`ralph-gate check` shows them) before you stop."
    )
}

/// Whether the transcript's tail records Claude Code overriding a refusing stop hook.
fn overridden(ask: &Ask) -> bool {
    let Some(path) = &ask.transcript else {
        return false;
    };
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let tail = &bytes[bytes.len().saturating_sub(256 * 1024)..];
    memchr::memmem::find(tail, OVERRIDDEN.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ralph_loop::journal::{Gate, Outcome, Stop};

    fn stop(key: &str, decision: Decision) -> Line {
        Line {
            time: String::new(),
            entry: Entry::Stop(Box::new(Stop {
                agent: ralph_base::agent::Agent::Claude,
                block_cap: 8,
                session: "s".into(),
                loop_file: key.into(),
                iteration: 2,
                promise_expected: None,
                promise_seen: None,
                promise_source: crate::hook::promise::TextSource::None,
                stop_hook_active: true,
                unchanged_stops: 0,
                blocks_in_a_row: 1,
                pin: "same".into(),
                gates: vec![Gate {
                    gate: "tsc".into(),
                    status: "fail".into(),
                    failing: true,
                    duration_ms: 1,
                    files: 1,
                }],
                decision,
                outcome: Outcome::GoalRefused,
                why: String::new(),
                notes: Vec::new(),
                goal_verdict: None,
            })),
        }
    }

    #[test]
    fn a_refused_last_stop_is_told_once_and_an_allowed_one_never() {
        let refused = vec![stop("g", Decision::Allow), stop("g", Decision::Block)];
        assert_eq!(ended_held(&refused, "g"), Some(vec!["tsc".to_string()]));
        assert_eq!(ended_held(&refused, "other"), None);
        let mut told = refused.clone();
        told.push(Line {
            time: String::new(),
            entry: Entry::GoalCapped(LoopEvent::new("claude goal", "g", "x")),
        });
        assert_eq!(ended_held(&told, "g"), None);
        let allowed = vec![stop("g", Decision::Block), stop("g", Decision::Allow)];
        assert_eq!(ended_held(&allowed, "g"), None);
    }
}
