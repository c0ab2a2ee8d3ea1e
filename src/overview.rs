//! What is going on in a project, gathered once: the loops, every gate's latest result and
//! the recent stop decisions. `ralph-gate status` prints it; the dashboard draws it.

use ralph_base::state::Layout;
use ralph_base::text::duration;
use ralph_loop::journal::{self, Entry, Line};
use ralph_loop::loops::{self, LoopFile};
use ralph_runner::results::{self, Record};
use ralph_runner::runner::GateStatus;
use serde::Serialize;
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
    /// The session's own goal (`/goal`), when the loop holds one.
    pub goal: Option<GoalView>,
    /// A `loop run`'s loop: its iterations so far.
    pub run: Option<RunView>,
    /// Set when the state file cannot be read.
    pub error: Option<String>,
    /// What the gates check, against the surface recorded when the loop started: each
    /// weakening (empty: none). `None` when it was not compared (no surface recorded, or
    /// none described for this view).
    pub weakened: Option<Vec<String>>,
}

/// A goal's loop: the condition (its prompt), the stops ralph-gate judged, and the agent's
/// judge's last reason.
#[derive(Debug, Clone, Serialize)]
pub struct GoalView {
    pub condition: String,
    pub stops: u64,
    pub verdict: Option<String>,
}

/// A live `loop run`: the iterations done, what they cost, and the last one's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub iterations: u64,
    pub cost_usd: f64,
    pub last: Option<String>,
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

/// Reads the loops of the workspace `layout`, the records of `config`'s gates and the
/// journal; `surface`, when given, is compared with the one each loop started with.
pub fn gather(
    config: &ralph_config::Config,
    describe: String,
    layout: &Layout,
    surface: Option<&ralph_surface::surface::Surface>,
) -> Status {
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
    let journal = journal::read(layout);
    Status {
        schema: SCHEMA,
        root: config.root.display().to_string(),
        config: describe,
        loops: loops::list(layout)
            .iter()
            .map(|f| {
                let mut v = loop_view(f);
                v.block_cap = last_cap(&journal, &loops::key(&f.path));
                if let Some(g) = &mut v.goal {
                    g.verdict = last_verdict(&journal, &loops::key(&f.path));
                }
                if v.session.as_deref() == Some(ralph_base::state::RUN_SESSION) {
                    v.run = Some(run_view(&journal, &loops::key(&f.path)));
                }
                v.weakened = surface.and_then(|now| weakened(layout, f, now));
                v
            })
            .collect(),
        gates,
        stops: recent(&journal, RECENT_STOPS),
    }
}

/// The weakenings of `now` against the surface the loop `f` started with, if it has one.
pub fn weakened(
    layout: &Layout,
    f: &LoopFile,
    now: &ralph_surface::surface::Surface,
) -> Option<Vec<String>> {
    let state = f.state.as_ref().ok()?;
    let copy = ralph_surface::pin::store::Store::of(layout)
        .read(&loops::key(&f.path))
        .ok()
        .flatten()
        .filter(|c| c.started_at == state.started_at)?;
    let was = copy.surface.as_ref()?;
    let c = ralph_surface::surface::compare(was, now);
    Some(c.weaker.iter().map(ToString::to_string).collect())
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
            goal: None,
            run: None,
            error: Some(e.to_string()),
            weakened: None,
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
            goal: s.goal.then(|| GoalView {
                condition: s.prompt().to_string(),
                stops: s.iteration.saturating_sub(1),
                verdict: None,
            }),
            run: None,
            error: None,
            weakened: None,
        },
    }
}

/// The block cap the journal last recorded for the loop `key`, when one is known.
fn last_cap(journal: &[Line], key: &str) -> Option<u64> {
    journal.iter().rev().find_map(|l| match &l.entry {
        Entry::Stop(s) if s.loop_file == key => Some(u64::from(s.block_cap)).filter(|c| *c > 0),
        _ => None,
    })
}

/// What the journal says of the `loop run` whose loop is `key`.
fn run_view(journal: &[Line], key: &str) -> RunView {
    let done: Vec<&journal::Iteration> = journal
        .iter()
        .filter_map(|l| match &l.entry {
            Entry::Iteration(i) if i.loop_file == key => Some(i.as_ref()),
            _ => None,
        })
        .collect();
    RunView {
        iterations: done.len() as u64,
        cost_usd: done.iter().filter_map(|i| i.cost_usd).sum(),
        last: done.last().map(|i| i.why.clone()),
    }
}

/// The agent's judge's last reason the journal recorded for the goal loop `key`.
fn last_verdict(journal: &[Line], key: &str) -> Option<String> {
    journal.iter().rev().find_map(|l| match &l.entry {
        Entry::Stop(s) if s.loop_file == key => s.goal_verdict.clone(),
        _ => None,
    })
}

/// The last `n` journal lines (stop decisions and loop events) of the workspace, oldest first.
pub fn recent_stops(layout: &Layout, n: usize) -> Vec<StopView> {
    recent(&journal::read(layout), n)
}

fn recent(journal: &[Line], n: usize) -> Vec<StopView> {
    let from = journal.len().saturating_sub(n);
    journal[from..].iter().map(stop_view).collect()
}

fn stop_view(l: &Line) -> StopView {
    let (who, session, iteration, decision, outcome, failing, why, notes) = match &l.entry {
        Entry::Stop(s) => (
            String::new(),
            s.session.clone(),
            s.iteration,
            word(&s.decision),
            word(&s.outcome),
            s.failing(),
            s.why.clone(),
            s.notes.clone(),
        ),
        Entry::Iteration(i) => (
            format!("loop run ({})", i.agent),
            String::new(),
            i.iteration,
            String::new(),
            word(&i.outcome),
            i.failing.len(),
            format!(
                "{}; agent {} in {}{}",
                i.why,
                match (i.timed_out, i.exit) {
                    (true, _) => "timed out".to_string(),
                    (false, Some(c)) => format!("exited {c}"),
                    (false, None) => "ended by a signal".to_string(),
                },
                duration(Duration::from_millis(i.duration_ms)),
                i.cost_usd.map(|c| format!(", ${c:.2}")).unwrap_or_default()
            ),
            Vec::new(),
        ),
        Entry::Start(e)
        | Entry::Cancel(e)
        | Entry::Approve(e)
        | Entry::StateDeleted(e)
        | Entry::StateUnreadable(e)
        | Entry::Refused(e)
        | Entry::Restored(e)
        | Entry::GoalOver(e)
        | Entry::GoalCapped(e)
        | Entry::RunEnded(e) => (
            e.who.clone(),
            e.session.clone(),
            0,
            String::new(),
            String::new(),
            0,
            e.why.clone(),
            Vec::new(),
        ),
    };
    StopView {
        time: l.time.clone(),
        event: l.entry.name().to_string(),
        who,
        session,
        loop_file: l.entry.loop_file().to_string(),
        iteration,
        decision,
        outcome,
        failing,
        why,
        notes,
    }
}

/// A unit enum's name as the journal writes it (`block`, `promise_refused`).
fn word<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
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

/// A goal's loop, as plain text: the condition, the stops judged, the judge's last word.
fn goal_text(l: &LoopView, g: &GoalView, agent: &str) -> String {
    let mut out = format!(
        "  {}  goal held to the stop gates  {} stops judged  session {}  started {}{agent}\n    goal: {}\n",
        l.id.as_deref().unwrap_or("(main)"),
        g.stops,
        l.session.as_deref().unwrap_or("(unclaimed)"),
        l.started_at.as_deref().unwrap_or("?"),
        ralph_base::text::shorten(&g.condition.replace('\n', " "), 200),
    );
    if let Some(v) = &g.verdict {
        out.push_str(&format!(
            "    its judge last said: {}\n",
            ralph_base::text::shorten(&v.replace('\n', " "), 200)
        ));
    }
    out
}

/// The status as plain text, for people without a terminal UI and for scripts that grep.
pub fn render_text(st: &Status, now_ms: u64) -> String {
    let mut out = format!("ralph-gate status: {}\n{}\n\nLoops\n", st.root, st.config);
    if st.loops.is_empty() {
        out.push_str("  no loop\n");
    }
    for l in &st.loops {
        out.push_str(&loop_text(l));
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
        out.push_str(&stop_text(s));
    }
    out
}

/// One loop's lines: its run, its iteration or goal, and its surface.
fn loop_text(l: &LoopView) -> String {
    if let Some(e) = &l.error {
        return format!("  {}: unreadable: {e}\n", l.file);
    }
    let mut out = String::new();
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
    if let Some(r) = &l.run {
        out.push_str(&format!(
            "  loop run{agent}: {} iteration{} done{}{}\n",
            r.iterations,
            if r.iterations == 1 { "" } else { "s" },
            if r.cost_usd > 0.0 {
                format!(", ${:.2}", r.cost_usd)
            } else {
                String::new()
            },
            r.last
                .as_deref()
                .map(|w| format!("; last: {w}"))
                .unwrap_or_default()
        ));
    }
    match &l.goal {
        Some(g) => out.push_str(&goal_text(l, g, &agent)),
        None => out.push_str(&format!(
            "  {}  iteration {}/{of}  promise {}  session {}  started {}{agent}\n    {}\n",
            l.id.as_deref().unwrap_or("(main)"),
            l.iteration.unwrap_or(0),
            l.promise.as_deref().unwrap_or("(none)"),
            l.session.as_deref().unwrap_or("(unclaimed)"),
            l.started_at.as_deref().unwrap_or("?"),
            l.prompt_first_line.as_deref().unwrap_or(""),
        )),
    }
    match &l.weakened {
        Some(w) if w.is_empty() => {
            out.push_str("    surface: nothing checks less than at the start\n")
        }
        Some(w) => {
            out.push_str(
                "    surface: weakened since the start (the loop cannot end until a person runs `ralph-gate loop approve`):\n",
            );
            for f in w {
                out.push_str(&format!("      - {f}\n"));
            }
        }
        None => {}
    }
    out
}

/// One journal line of the recent stops (a stop decision or a loop event).
fn stop_text(s: &StopView) -> String {
    if s.event != "stop" {
        let file = if s.loop_file.is_empty() {
            "-"
        } else {
            &s.loop_file
        };
        return format!(
            "  {}  {} {} by {}: {}\n",
            s.time,
            s.event.replace('_', " "),
            file,
            s.who,
            s.why
        );
    }
    let mut out = format!(
        "  {}  iteration {:<4} {:<5} {:<16} {} failing  ({})\n",
        s.time, s.iteration, s.decision, s.outcome, s.failing, s.why
    );
    for n in &s.notes {
        out.push_str(&format!("    ! {n}\n"));
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
        let layout = Layout::at(dir.path());
        for i in 1..=3 {
            let stop = journal::Stop {
                agent: ralph_base::agent::Agent::Claude,
                block_cap: 8,
                session: "s".into(),
                loop_file: "ralph-loop.local.md".into(),
                iteration: i,
                promise_expected: None,
                promise_seen: None,
                promise_source: ralph_hook::hook::promise::TextSource::None,
                stop_hook_active: false,
                unchanged_stops: 0,
                blocks_in_a_row: 0,
                pin: "same".into(),
                gates: ["a", "b"]
                    .iter()
                    .map(|g| journal::Gate {
                        gate: g.to_string(),
                        status: "FAIL".into(),
                        failing: *g == "a",
                        duration_ms: 1,
                        files: 1,
                    })
                    .collect(),
                decision: journal::Decision::Block,
                outcome: ralph_hook::hook::decide::Outcome::Continue,
                why: "w".into(),
                notes: Vec::new(),
                goal_verdict: None,
            };
            journal::append(&layout, Entry::Stop(Box::new(stop))).unwrap();
            if i == 1 {
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(layout.journal())
                    .and_then(|mut f| std::io::Write::write_all(&mut f, b"not json\n"))
                    .unwrap();
            }
        }
        let stops = recent_stops(&layout, 2);
        assert_eq!(
            stops.iter().map(|s| s.iteration).collect::<Vec<_>>(),
            [2, 3]
        );
        assert_eq!(stops[0].failing, 1);
        assert_eq!(
            (stops[0].decision.as_str(), stops[0].outcome.as_str()),
            ("block", "continue")
        );
    }
}
