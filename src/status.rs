//! What is going on in a project, gathered once: the loops, every gate's latest result and
//! the recent stop decisions. `ralph-gate status` prints it; the dashboard draws it.

use crate::loop_state::{self, LoopFile};
use crate::results::{self, Record};
use crate::runner::GateStatus;
use crate::text::duration;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

pub const SCHEMA: &str = "ralph-gate.status.v1";
/// How many stop decisions the status shows.
pub const RECENT_STOPS: usize = 20;

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub schema: &'static str,
    pub root: String,
    pub config: String,
    pub loops: Vec<LoopView>,
    pub gates: Vec<GateView>,
    pub stops: Vec<StopView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoopView {
    pub file: String,
    pub id: Option<String>,
    pub iteration: Option<u64>,
    pub max_iterations: Option<u64>,
    pub promise: Option<String>,
    pub session: Option<String>,
    pub started_at: Option<String>,
    pub prompt_first_line: Option<String>,
    /// The agent whose stops the loop holds.
    pub agent: Option<String>,
    /// The refusals in a row that agent allows before it ends its turn anyway (last seen at a
    /// stop; `None` before the first stop or when no cap is known).
    pub block_cap: Option<u64>,
    /// Set when the state file cannot be read.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateView {
    pub gate: String,
    pub phases: Vec<&'static str>,
    /// `None`: this gate has not run since results were kept.
    pub last: Option<Record>,
}

/// A line of the journal: a stop decision, or a loop event (start, cancel, approve, a state
/// file deleted or unreadable).
#[derive(Debug, Clone, Serialize)]
pub struct StopView {
    pub time: String,
    /// `stop`, or the event's name.
    pub event: String,
    /// For events: who caused it (`terminal`, `session <id>`, ...).
    pub who: String,
    pub session: String,
    pub loop_file: String,
    pub iteration: u64,
    pub decision: String,
    pub outcome: String,
    pub failing: usize,
    pub why: String,
    /// Tampering and other things noticed at a stop.
    pub notes: Vec<String>,
}

/// Reads the loops of `workspace`, the records of `config`'s gates and the journal.
pub fn gather(config: &crate::config::Config, describe: String, workspace: &Path) -> Status {
    let records = results::load(&config.root);
    let gates = config
        .gates
        .iter()
        .map(|g| GateView {
            gate: g.name.clone(),
            phases: g.phases.iter().map(|p| p.as_str()).collect(),
            last: records.iter().find(|r| r.gate == g.name).cloned(),
        })
        .collect();
    Status {
        schema: SCHEMA,
        root: config.root.display().to_string(),
        config: describe,
        loops: loop_state::list(workspace)
            .iter()
            .map(|f| {
                let mut v = loop_view(f);
                v.block_cap = last_cap(workspace, &loop_state::key(&f.path));
                v
            })
            .collect(),
        gates,
        stops: recent_stops(workspace, RECENT_STOPS),
    }
}

fn loop_view(f: &LoopFile) -> LoopView {
    let file = f.path.display().to_string();
    match &f.state {
        Err(e) => LoopView {
            file,
            id: None,
            iteration: None,
            max_iterations: None,
            promise: None,
            session: None,
            started_at: None,
            prompt_first_line: None,
            agent: None,
            block_cap: None,
            error: Some(e.clone()),
        },
        Ok(s) => LoopView {
            file,
            id: s.loop_id.clone(),
            iteration: Some(s.iteration),
            max_iterations: Some(s.max_iterations),
            promise: s.completion_promise.clone(),
            session: Some(s.session_id.clone()).filter(|x| !x.is_empty()),
            started_at: s.started_at.clone(),
            prompt_first_line: s.prompt().lines().next().map(String::from),
            agent: s.agent().map(|a| a.name().to_string()),
            block_cap: None,
            error: None,
        },
    }
}

/// The block cap the journal last recorded for the loop `key`, when one is known.
fn last_cap(workspace: &Path, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(crate::journal::path(workspace)).ok()?;
    text.lines().rev().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        (v.get("loop_file")?.as_str()? == key && v.get("event")?.as_str()? == "stop")
            .then(|| v.get("block_cap").and_then(serde_json::Value::as_u64))
            .flatten()
            .filter(|c| *c > 0)
    })
}

/// The last `n` journal lines (stop decisions and loop events), oldest first; malformed lines
/// are skipped.
pub fn recent_stops(workspace: &Path, n: usize) -> Vec<StopView> {
    let path = workspace
        .join(crate::files::STATE_DIR)
        .join("journal.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut stops: Vec<StopView> = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .take(n)
        .map(|v| {
            let s = |k: &str| {
                v.get(k)
                    .and_then(|x| x.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            StopView {
                time: s("time"),
                event: v
                    .get("event")
                    .and_then(|x| x.as_str())
                    .unwrap_or("stop")
                    .to_string(),
                who: s("who"),
                notes: v
                    .get("notes")
                    .and_then(|n| n.as_array())
                    .map(|n| {
                        n.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
                session: s("session"),
                loop_file: s("loop_file"),
                iteration: v.get("iteration").and_then(|x| x.as_u64()).unwrap_or(0),
                decision: s("decision"),
                outcome: s("outcome"),
                failing: v.get("gates").and_then(|g| g.as_array()).map_or(0, |g| {
                    g.iter()
                        .filter(|x| x.get("failing") == Some(&serde_json::Value::Bool(true)))
                        .count()
                }),
                why: s("why"),
            }
        })
        .collect();
    stops.reverse();
    stops
}

/// `12s ago`, `3m ago`, `2h ago`, `4d ago`.
pub fn ago(now_ms: u64, then_ms: u64) -> String {
    let s = now_ms.saturating_sub(then_ms) / 1000;
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

pub fn status_tag(status: GateStatus) -> &'static str {
    match status {
        GateStatus::Pass => "PASS",
        GateStatus::Fail => "FAIL",
        GateStatus::Timeout => "TIME",
        GateStatus::Skipped => "SKIP",
        GateStatus::NoFiles => "----",
    }
}

/// The status as plain text, for people without a terminal UI and for scripts that grep.
pub fn render_text(st: &Status, now_ms: u64) -> String {
    let mut out = format!("ralph-gate status: {}\n{}\n\nLoops\n", st.root, st.config);
    if st.loops.is_empty() {
        out.push_str("  no loop\n");
    }
    for l in &st.loops {
        if let Some(e) = &l.error {
            out.push_str(&format!("  {}: unreadable: {e}\n", l.file));
            continue;
        }
        let of = match l.max_iterations {
            Some(0) | None => "unlimited".to_string(),
            Some(m) => m.to_string(),
        };
        let agent = match (l.agent.as_deref(), l.block_cap) {
            (Some(a), Some(cap)) => {
                format!("  agent {a} (ends its turn after {cap} refusals in a row)")
            }
            (Some(a), None) => format!("  agent {a}"),
            (None, _) => String::new(),
        };
        out.push_str(&format!(
            "  {}  iteration {}/{of}  promise {}  session {}  started {}{agent}\n    {}\n",
            l.id.as_deref().unwrap_or("(main)"),
            l.iteration.unwrap_or(0),
            l.promise.as_deref().unwrap_or("(none)"),
            l.session.as_deref().unwrap_or("(unclaimed)"),
            l.started_at.as_deref().unwrap_or("?"),
            l.prompt_first_line.as_deref().unwrap_or(""),
        ));
    }
    out.push_str("\nGates\n");
    for g in &st.gates {
        match &g.last {
            None => out.push_str(&format!("  ----  {:<20} not run yet\n", g.gate)),
            Some(r) => out.push_str(&format!(
                "  {}  {:<20} {:>8}  {:>5} files  {:<8} {:<9} by {}\n",
                status_tag(r.status),
                g.gate,
                duration(Duration::from_millis(r.duration_ms)),
                r.files,
                if r.cached { "cached" } else { "" },
                ago(now_ms, r.finished_at_ms),
                r.phase
            )),
        }
    }
    out.push_str("\nRecent stops\n");
    if st.stops.is_empty() {
        out.push_str("  none\n");
    }
    for s in &st.stops {
        if s.event != "stop" {
            out.push_str(&format!(
                "  {}  {} {} by {}: {}\n",
                s.time,
                s.event.replace('_', " "),
                if s.loop_file.is_empty() {
                    "-"
                } else {
                    &s.loop_file
                },
                s.who,
                s.why
            ));
            continue;
        }
        out.push_str(&format!(
            "  {}  iteration {:<4} {:<5} {:<16} {} failing  ({})\n",
            s.time, s.iteration, s.decision, s.outcome, s.failing, s.why
        ));
        for n in &s.notes {
            out.push_str(&format!("    ! {n}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_reads_naturally() {
        assert_eq!(ago(10_000, 5_000), "5s ago");
        assert_eq!(ago(200_000, 0), "3m ago");
        assert_eq!(ago(7_300_000, 0), "2h ago");
        assert_eq!(
            ago(0, 5_000),
            "0s ago",
            "a clock step backwards is not negative time"
        );
    }

    #[test]
    fn recent_stops_skip_garbage_and_keep_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".ralph")).unwrap();
        let line = |i: u64| {
            format!(
                r#"{{"time":"t{i}","iteration":{i},"decision":"block","outcome":"continue","gates":[{{"failing":true}},{{"failing":false}}],"why":"w"}}"#
            )
        };
        let text = format!("{}\nnot json\n{}\n{}\n", line(1), line(2), line(3));
        std::fs::write(dir.path().join(".ralph/journal.jsonl"), text).unwrap();
        let stops = recent_stops(dir.path(), 2);
        assert_eq!(
            stops.iter().map(|s| s.iteration).collect::<Vec<_>>(),
            [2, 3]
        );
        assert_eq!(stops[0].failing, 1);
    }
}
