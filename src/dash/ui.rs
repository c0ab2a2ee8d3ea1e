//! Drawing the dashboard: a pure function of the state onto a frame, so tests can render into
//! ratatui's test backend and read the screen back.

use super::app::{App, Focus};
use crate::overview::{ago, status_tag};
use ansi_to_tui::IntoText;
use ralph_base::text::{duration, strip_ansi};
use ralph_runner::runner::GateStatus;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;
use std::time::Duration;

/// Below this size the layout collapses to the gate list alone.
const MIN_FULL: (u16, u16) = (60, 16);

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    if area.width < MIN_FULL.0 || area.height < MIN_FULL.1 {
        return draw_compact(f, app, area);
    }
    let weakened = app
        .status
        .loops
        .iter()
        .filter(|l| l.weakened.as_ref().is_some_and(|w| !w.is_empty()))
        .count();
    let loops_h = ((app.status.loops.len().max(1) * 2 + weakened) as u16 + 2).min(9);
    let [loops, middle, timeline, footer] = Layout::vertical([
        Constraint::Length(loops_h),
        Constraint::Min(6),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    // "> FAIL " + name + duration + age + phase + " c" (cached), plus borders.
    let gates_w = (7 + name_width(app) as u16 + 28).clamp(24, area.width * 11 / 20);
    let [gates, output] =
        Layout::horizontal([Constraint::Length(gates_w), Constraint::Min(10)]).areas(middle);

    draw_loops(f, app, loops);
    draw_gates(f, app, gates);
    draw_output(f, app, output);
    draw_timeline(f, app, timeline);
    draw_footer(f, app, footer);
}

fn style(app: &App, s: Style) -> Style {
    if app.color {
        s
    } else {
        Style::default()
    }
}

fn status_style(app: &App, st: GateStatus) -> Style {
    style(
        app,
        match st {
            GateStatus::Pass => Style::default().fg(Color::Green),
            GateStatus::Fail | GateStatus::Timeout => {
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
            }
            GateStatus::Skipped => Style::default().fg(Color::Yellow),
            GateStatus::NoFiles => Style::default().fg(Color::DarkGray),
        },
    )
}

fn block<'a>(app: &App, title: &'a str, focused: bool) -> Block<'a> {
    let b = Block::default().borders(Borders::ALL).title(title);
    if focused {
        b.border_style(style(app, Style::default().fg(Color::Cyan)))
    } else {
        b
    }
}

fn draw_loops(f: &mut Frame, app: &App, area: Rect) {
    let mut lines = Vec::new();
    if app.status.loops.is_empty() {
        lines.push(Line::from(
            "no loop: start one with `ralph-gate loop start` or /ralph-loop",
        ));
    }
    for l in &app.status.loops {
        if let Some(e) = &l.error {
            lines.push(Line::from(format!("{}: unreadable: {e}", l.file)));
            continue;
        }
        let of = match l.max_iterations {
            Some(0) | None => "∞".to_string(),
            Some(m) => m.to_string(),
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("iteration {}/{of}", l.iteration.unwrap_or(0)),
                style(app, Style::default().add_modifier(Modifier::BOLD)),
            ),
            Span::raw(format!(
                "  promise {}{}  started {}",
                l.promise.as_deref().unwrap_or("(none)"),
                match (l.agent.as_deref(), l.block_cap) {
                    (Some(a), Some(c)) => format!("  {a}, cap {c}"),
                    (Some(a), None) => format!("  {a}"),
                    _ => String::new(),
                },
                l.started_at.as_deref().map_or("?".into(), short_time),
            )),
        ]));
        let session = session_label(l.session.as_deref());
        match (&l.goal, &l.run) {
            (_, Some(r)) => lines.push(Line::from(format!(
                "{session}loop run: {} iterations done{}: {}{}",
                r.iterations,
                if r.cost_usd > 0.0 {
                    format!(", ${:.2}", r.cost_usd)
                } else {
                    String::new()
                },
                l.prompt_first_line.as_deref().unwrap_or(""),
                r.last
                    .as_deref()
                    .map(|w| format!("  (last: {w})"))
                    .unwrap_or_default()
            ))),
            (Some(g), None) => lines.push(Line::from(format!(
                "{session}goal ({} stops judged): {}{}",
                g.stops,
                g.condition.lines().next().unwrap_or_default(),
                g.verdict
                    .as_deref()
                    .map(|v| format!("  (its judge: {v})"))
                    .unwrap_or_default()
            ))),
            (None, None) => lines.push(Line::from(format!(
                "{session}{}",
                l.prompt_first_line.as_deref().unwrap_or("")
            ))),
        }
        if let Some(w) = l.weakened.as_ref().filter(|w| !w.is_empty()) {
            lines.push(Line::from(Span::styled(
                format!(
                    "  weakened since the start ({}): {}; a person accepts it with `ralph-gate loop approve`",
                    w.len(),
                    w.join("; ")
                ),
                style(app, Style::default().fg(Color::Red)),
            )));
        }
    }
    f.render_widget(
        Paragraph::new(lines).block(block(app, " Loops ", false)),
        area,
    );
}

fn name_width(app: &App) -> usize {
    app.status
        .gates
        .iter()
        .map(|g| g.gate.chars().count())
        .max()
        .unwrap_or(4)
        .min(20)
}

fn gate_line<'a>(app: &App, i: usize) -> Line<'a> {
    let w = name_width(app);
    let g = &app.status.gates[i];
    let mut spans = vec![Span::raw(if i == app.selected { "> " } else { "  " })];
    match &g.last {
        None => {
            spans.push(Span::styled(
                "----",
                style(app, Style::default().fg(Color::DarkGray)),
            ));
            spans.push(Span::raw(format!(" {:<w$} not run yet", g.gate)));
        }
        Some(r) => {
            spans.push(Span::styled(
                status_tag(r.status),
                status_style(app, r.status),
            ));
            spans.push(Span::raw(format!(
                " {:<w$} {:>6} {:>7} {:<5}{}",
                g.gate,
                duration(Duration::from_millis(r.duration_ms)),
                ago(app.now_ms, r.finished_at_ms),
                r.phase,
                if r.cached { " c" } else { "" },
            )));
        }
    }
    let line = Line::from(spans);
    if i == app.selected {
        line.style(style(
            app,
            Style::default().add_modifier(Modifier::REVERSED),
        ))
    } else {
        line
    }
}

fn draw_gates(f: &mut Frame, app: &App, area: Rect) {
    let lines: Vec<Line> = (0..app.status.gates.len())
        .map(|i| gate_line(app, i))
        .collect();
    let inner = area.height.saturating_sub(2) as usize;
    let skip = app.selected.saturating_sub(inner.saturating_sub(1));
    let lines: Vec<Line> = lines.into_iter().skip(skip).collect();
    f.render_widget(
        // The title explains the one mark a line may end with.
        Paragraph::new(lines).block(block(app, " Gates (c: cached) ", app.focus == Focus::Gates)),
        area,
    );
}

fn draw_output(f: &mut Frame, app: &App, area: Rect) {
    let selected = app.status.gates.get(app.selected);
    let title = format!(" Output: {} ", selected.map_or("", |g| g.gate.as_str()));
    let text: Text = match selected.and_then(|g| g.last.as_ref()) {
        None => Text::from("no result recorded yet: press r to run the check gates"),
        Some(r) => {
            let mut head = format!(
                "{} by {}, {}{}\n",
                status_tag(r.status),
                r.phase,
                ago(app.now_ms, r.finished_at_ms),
                if r.cached { ", cached" } else { "" },
            );
            if !ralph_runner::runner::names_its_commands(&r.command, &strip_ansi(&r.output)) {
                head.push_str(&format!("$ {}\n", r.command));
            }
            if let Some(reason) = &r.reason {
                head.push_str(&format!("{reason}\n"));
            }
            let body = if r.output.trim().is_empty() {
                "(no output)\n".to_string()
            } else {
                r.output.clone()
            };
            let raw = format!("{head}{body}");
            if app.color {
                raw.into_text()
                    .unwrap_or_else(|_| Text::from(strip_ansi(&raw)))
            } else {
                Text::from(strip_ansi(&raw))
            }
        }
    };
    f.render_widget(
        Paragraph::new(text)
            .block(block(app, &title, app.focus == Focus::Output))
            .wrap(Wrap { trim: false })
            .scroll((app.scroll, 0)),
        area,
    );
}

fn draw_timeline(f: &mut Frame, app: &App, area: Rect) {
    let mut spans = Vec::new();
    for s in &app.status.stops {
        if s.event != "stop" {
            spans.push(Span::styled(
                format!("[{}] ", s.event.replace('_', " ")),
                style(app, Style::default().fg(Color::Magenta)),
            ));
            continue;
        }
        if !s.notes.is_empty() {
            spans.push(Span::styled(
                "!",
                style(app, Style::default().fg(Color::Magenta)),
            ));
        }
        let (mark, st) = match (s.decision.as_str(), s.failing) {
            ("allow", _) => ("✓", Style::default().fg(Color::Green)),
            (_, 0) => ("·", Style::default().fg(Color::Yellow)),
            _ => ("✗", Style::default().fg(Color::Red)),
        };
        spans.push(Span::styled(
            format!("{}{mark}{} ", s.iteration, s.failing),
            style(app, st),
        ));
    }
    if spans.is_empty() {
        spans.push(Span::raw("no stop decision yet"));
    }
    let title = " Stops: iteration, ✓ allowed / ✗ blocked, failing gates; ! noted, [events] ";
    f.render_widget(
        Paragraph::new(Line::from(spans)).block(block(app, title, false)),
        area,
    );
}

/// The session beside what it works on, on the loop's second line: the first fits 80
/// columns.
fn session_label(session: Option<&str>) -> String {
    format!(
        "  session {}: ",
        session.map_or("(unclaimed)".into(), short_id)
    )
}

/// A session id as far as a person tells sessions apart (Claude Code's are UUIDs): the whole
/// line must fit 80 columns.
fn short_id(id: &str) -> String {
    match id.char_indices().nth(9) {
        Some((cut, _)) => format!("{}…", &id[..cut]),
        None => id.to_string(),
    }
}

/// `2026-11-27T11:38:08Z` as `11-27 11:38`; anything else as it is.
fn short_time(iso: &str) -> String {
    match (iso.get(5..10), iso.get(10..11), iso.get(11..16)) {
        (Some(day), Some("T"), Some(time)) => format!("{day} {time}"),
        _ => iso.to_string(),
    }
}

fn footer_text(app: &App) -> String {
    if app.confirm_cancel {
        // The file's name: its folder is the project's, and the whole path ran past 80
        // columns, cutting the answer off.
        let name = app.status.loops.first().map_or(String::new(), |l| {
            std::path::Path::new(&l.file)
                .file_name()
                .map_or(l.file.clone(), |n| n.to_string_lossy().into_owned())
        });
        return format!("Cancel the loop {name}? y = yes, any other key = no");
    }
    if let Some(r) = &app.rerun {
        if let Ok(r) = r.lock() {
            let state = if r.finished {
                "re-run finished"
            } else {
                "re-running check gates"
            };
            let err = r
                .error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            return format!(
                "{state}: {}/{} done, {} failing{err}",
                r.done, r.total, r.failed
            );
        }
    }
    if let Some(m) = &app.message {
        return m.clone();
    }
    "q quit  j/k select  Enter/Tab output  r re-run  c cancel loop".into()
}

fn draw_footer(f: &mut Frame, app: &App, area: Rect) {
    f.render_widget(Paragraph::new(footer_text(app)), area);
}

fn draw_compact(f: &mut Frame, app: &App, area: Rect) {
    let mut lines = Vec::new();
    if let Some(l) = app.status.loops.first() {
        lines.push(Line::from(format!(
            "loop {}/{}",
            l.iteration.unwrap_or(0),
            l.max_iterations.unwrap_or(0)
        )));
    }
    lines.extend((0..app.status.gates.len()).map(|i| gate_line(app, i)));
    lines.push(Line::from(footer_text(app)));
    f.render_widget(Paragraph::new(lines), area);
}
