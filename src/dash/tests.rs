use super::app::{Action, App, Focus};
use super::ui::draw;
use crate::overview::{GateView, LoopView, Status, StopView, SCHEMA};
use ralph_runner::results::Record;
use ralph_runner::runner::GateStatus;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

const NOW: u64 = 1_000_000_000;

fn record(gate: &str, status: GateStatus, output: &str) -> Record {
    Record {
        gate: gate.into(),
        status,
        duration_ms: 1250,
        files: 4,
        runs: 1,
        cached: status == GateStatus::Pass,
        command: format!("{gate} --check"),
        exit_code: (status == GateStatus::Fail).then_some(2),
        reason: None,
        output: output.into(),
        phase: "stop".into(),
        finished_at_ms: NOW - 90_000,
    }
}

fn status() -> Status {
    Status {
        schema: SCHEMA,
        root: "/p".into(),
        config: "config /p/ralph.toml".into(),
        loops: vec![LoopView {
            file: "/p/.claude/ralph-loop.local.md".into(),
            id: None,
            iteration: Some(4),
            max_iterations: Some(20),
            promise: Some("DONE".into()),
            session: Some("sess-1".into()),
            started_at: Some("2026-11-22T10:00:00Z".into()),
            prompt_first_line: Some("Build the parser".into()),
            agent: Some("claude".into()),
            block_cap: Some(8),
            goal: None,
            run: None,
            error: None,
            weakened: None,
        }],
        gates: vec![
            GateView {
                gate: "tsc".into(),
                phases: vec!["edit"],
                last: Some(record(
                    "tsc",
                    GateStatus::Fail,
                    "\x1b[31merror TS2322\x1b[0m: bad type\nsecond line\n",
                )),
            },
            GateView {
                gate: "cargo-test".into(),
                phases: vec!["stop"],
                last: Some(record("cargo-test", GateStatus::Pass, "ok\n")),
            },
            GateView {
                gate: "shellcheck".into(),
                phases: vec!["check"],
                last: None,
            },
        ],
        stops: (1..=3)
            .map(|i| StopView {
                time: format!("t{i}"),
                event: "stop".into(),
                who: String::new(),
                notes: Vec::new(),
                session: "sess-1".into(),
                loop_file: "ralph-loop.local.md".into(),
                iteration: i,
                decision: "block".into(),
                outcome: "continue".into(),
                failing: 1,
                why: "no promise".into(),
            })
            .collect(),
    }
}

fn screen(app: &App, w: u16, h: u16) -> (String, ratatui::buffer::Buffer) {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let text = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    (text, buf)
}

#[test]
fn a_goals_loop_shows_its_condition_and_its_judges_last_word() {
    let mut st = status();
    st.loops[0].goal = Some(crate::overview::GoalView {
        condition: "calc.py compiles".into(),
        stops: 3,
        verdict: Some("the agent says it compiles".into()),
    });
    let app = App::new(st.clone(), true, NOW);
    let (text, _) = screen(&app, 100, 30);
    assert!(
        text.contains("goal (3 stops judged): calc.py compiles"),
        "{text}"
    );
    assert!(
        text.contains("(its judge: the agent says it compiles)"),
        "{text}"
    );
    let plain = crate::overview::render_text(&st, NOW);
    assert!(
        plain.contains("goal held to the stop gates  3 stops judged")
            && plain.contains("goal: calc.py compiles")
            && plain.contains("its judge last said: the agent says it compiles"),
        "{plain}"
    );
}

#[test]
fn a_loop_run_shows_its_iterations_and_cost() {
    let mut st = status();
    st.loops[0].session = Some(ralph_base::state::RUN_SESSION.into());
    st.loops[0].run = Some(crate::overview::RunView {
        iterations: 3,
        cost_usd: 0.42,
        last: Some("promise refused: 1 gate is still failing (tsc)".into()),
    });
    let app = App::new(st.clone(), true, NOW);
    let (text, _) = screen(&app, 120, 30);
    assert!(
        text.contains("loop run: 3 iterations done, $0.42: Build the parser"),
        "{text}"
    );
    let plain = crate::overview::render_text(&st, NOW);
    assert!(
        plain.contains("loop run  agent claude (ends its turn after 8 refusals in a row): 3 iterations done, $0.42; last: promise refused"),
        "{plain}"
    );
}

#[test]
fn full_screen_shows_loop_gates_output_and_timeline_at_80x24() {
    let app = App::new(status(), true, NOW);
    let (text, buf) = screen(&app, 80, 24);
    assert!(
        text.contains("iteration 4/20  promise DONE  claude, cap 8  started 11-22 10:00"),
        "{text}"
    );
    assert!(text.contains("Build the parser"), "{text}");
    assert!(text.contains("> FAIL tsc"), "{text}");
    assert!(
        text.contains("PASS cargo-test  1.25s  1m ago stop  c")
            && text.contains("Gates (c: cached)"),
        "cached and phase in the list: {text}"
    );
    assert!(
        text.contains("> FAIL tsc         1.25s  1m ago stop"),
        "{text}"
    );
    assert!(
        text.contains("---- shellcheck") && text.contains("not run yet"),
        "{text}"
    );
    assert!(
        text.contains("Output: tsc") && text.contains("FAIL by stop, 1m ago"),
        "{text}"
    );
    assert!(
        text.contains("$ tsc --check") && text.contains("error TS2322: bad type"),
        "{text}"
    );
    assert!(text.contains("1✗1 2✗1 3✗1"), "{text}");
    assert!(text.contains("q quit"), "{text}");
    // The compiler's red survives into the output pane.
    let (x, y) = find(&text, "error TS2322");
    assert_eq!(
        buf[(x, y)].fg,
        ratatui::style::Color::Red,
        "colour kept from the gate's output"
    );
}

fn find(text: &str, needle: &str) -> (u16, u16) {
    for (y, line) in text.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return (line[..byte].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle} not on screen:\n{text}");
}

#[test]
fn no_color_renders_without_styles() {
    let app = App::new(status(), false, NOW);
    let (text, buf) = screen(&app, 80, 24);
    let (x, y) = find(&text, "error TS2322");
    assert_eq!(buf[(x, y)].fg, ratatui::style::Color::Reset);
    let (x, y) = find(&text, "FAIL tsc");
    assert_eq!(buf[(x, y)].fg, ratatui::style::Color::Reset);
}

#[test]
fn small_terminals_degrade_to_the_gate_list() {
    let app = App::new(status(), true, NOW);
    let (text, _) = screen(&app, 40, 8);
    assert!(text.contains("loop 4/20"), "{text}");
    assert!(text.contains("FAIL tsc"), "{text}");
    for (w, h) in [(1, 1), (10, 3), (59, 15), (200, 60)] {
        screen(&app, w, h); // never panics
    }
}

#[test]
fn keys_select_focus_scroll_and_confirm_a_cancel() {
    let mut app = App::new(status(), true, NOW);
    assert_eq!(app.key('j', false), Action::None);
    assert_eq!(app.selected, 1);
    app.key('j', false);
    app.key('j', false);
    assert_eq!(app.selected, 2, "stops at the last gate");
    app.key('k', false);
    assert_eq!(app.selected, 1);
    app.key('\t', false);
    assert_eq!(app.focus, Focus::Output);
    app.key('j', false);
    assert_eq!(
        (app.selected, app.scroll),
        (1, 1),
        "in the output pane j scrolls"
    );
    assert_eq!(app.key('r', false), Action::Rerun);

    assert_eq!(app.key('c', false), Action::None);
    assert!(app.confirm_cancel);
    let (text, _) = screen(&app, 80, 24);
    assert!(
        text.contains("Cancel the loop ralph-loop.local.md? y = yes, any other key = no"),
        "{text}"
    );
    assert_eq!(
        app.key('n', false),
        Action::None,
        "anything but y keeps the loop"
    );
    app.key('c', false);
    assert_eq!(
        app.key('y', false),
        Action::CancelLoop("/p/.claude/ralph-loop.local.md".into())
    );

    app.key('q', false);
    assert!(app.quit);
    let mut app = App::new(status(), true, NOW);
    app.key('c', true);
    assert!(app.quit, "Ctrl-C quits (raw mode delivers it as a key)");
}

#[test]
fn no_loop_means_nothing_to_cancel() {
    let mut st = status();
    st.loops.clear();
    let mut app = App::new(st, true, NOW);
    app.key('c', false);
    assert!(!app.confirm_cancel);
    let (text, _) = screen(&app, 80, 24);
    assert!(
        text.contains("no loop to cancel") && text.contains("no loop: start one"),
        "{text}"
    );
}

#[test]
fn a_weakened_loop_says_so_in_red() {
    let mut st = status();
    st.loops[0].weakened = Some(vec!["src/lib.rs:9: `#[ignore]` added to `adds`".into()]);
    let app = App::new(st, true, NOW);
    let (text, buf) = screen(&app, 120, 24);
    let y = text
        .lines()
        .position(|l| {
            l.contains("weakened since the start (1): src/lib.rs:9: `#[ignore]` added to `adds`")
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        text.contains("Build the parser"),
        "the prompt stays: {text}"
    );
    let x = text.lines().nth(y).unwrap().find("weakened").unwrap() as u16;
    assert_eq!(buf[(x, y as u16)].fg, ratatui::style::Color::Red);
}

#[test]
fn at_80_columns_the_loop_line_is_whole_and_a_command_is_shown_once() {
    let mut st = status();
    st.loops[0].session = Some("1f0e2a3b-9c8d-4e5f-a6b7-c8d9e0f1a2b3".into());
    st.gates[0].last = Some(record(
        "tsc",
        GateStatus::Fail,
        "$ tsc --check\nbad a\n\n$ tsc --check b\nbad b\n",
    ));
    let app = App::new(st, false, NOW);
    let (text, _) = screen(&app, 80, 24);
    assert!(
        text.contains("promise DONE  claude, cap 8  started 11-22 10:00    ")
            && text.contains("session 1f0e2a3b-…: Build the parser"),
        "{text}"
    );
    assert_eq!(text.matches("$ tsc --check").count(), 2, "{text}");
}
