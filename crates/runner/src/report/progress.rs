//! Live progress on a terminal while `check` runs: one line on stderr naming the gates running
//! and how long each has run, and how many are done, redrawn every 250 ms and erased before
//! the report. Nothing of it when stderr is not a terminal, with `--quiet`, or for machine
//! formats (the caller decides).

use ralph_base::text::duration;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_millis(250);

#[derive(Default)]
struct State {
    /// Gate name and when it started, in start order.
    running: Vec<(String, Instant)>,
    done: usize,
    stop: bool,
}

pub struct Progress {
    state: Arc<Mutex<State>>,
    total: usize,
    drawer: Option<std::thread::JoinHandle<()>>,
}

/// Pure: the progress line (no colour, no cursor codes).
pub fn line(running: &[(String, Duration)], done: usize, total: usize, width: usize) -> String {
    let mut out = format!("ralph-gate: {done}/{total} done");
    if !running.is_empty() {
        out.push_str(", running ");
        let parts: Vec<String> = running
            .iter()
            .map(|(n, d)| format!("{n} {}", duration(*d)))
            .collect();
        out.push_str(&parts.join(", "));
    }
    if out.chars().count() > width {
        out = out
            .chars()
            .take(width.saturating_sub(1))
            .collect::<String>()
            + "…";
    }
    out
}

impl Progress {
    /// Starts drawing, `columns` wide when the shell says (`COLUMNS`), else as wide as the
    /// terminal.
    pub fn start(total: usize, columns: Option<usize>) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let drawer = std::thread::spawn(move || {
            let width = columns.unwrap_or_else(terminal_width);
            loop {
                std::thread::sleep(TICK);
                // Drawn under the lock, so it never lands in the middle of report lines
                // printed inside `quiet_while`.
                let st = shared.lock().unwrap_or_else(|e| e.into_inner());
                if st.stop {
                    break;
                }
                let running: Vec<(String, Duration)> = st
                    .running
                    .iter()
                    .map(|(n, t)| (n.clone(), t.elapsed()))
                    .collect();
                let text = line(&running, st.done, total, width);
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{text}");
                let _ = err.flush();
            }
        });
        Self {
            state,
            total,
            drawer: Some(drawer),
        }
    }

    pub fn started(&self, name: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.running.push((name.to_string(), Instant::now()));
    }

    pub fn finished(&self, name: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.running.retain(|(n, _)| n != name);
        st.done = (st.done + 1).min(self.total);
    }

    /// Runs `print` (which writes report lines to the terminal) with the progress line erased
    /// and not redrawn until it is done.
    pub fn quiet_while(&self, print: impl FnOnce()) {
        let _st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
        print();
    }

    /// Stops drawing and erases the line, so the report starts on a clean line.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        if let Some(h) = self.drawer.take() {
            let _ = h.join();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The terminal's columns (the window size of stderr, else 80).
fn terminal_width() -> usize {
    ralph_base::platform::terminal_columns().unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_running_gates_with_their_time_and_fits() {
        let running = [
            ("tsc".to_string(), Duration::from_millis(2500)),
            ("shellcheck".to_string(), Duration::from_millis(300)),
        ];
        assert_eq!(
            line(&running, 1, 4, 120),
            "ralph-gate: 1/4 done, running tsc 2.50s, shellcheck 300ms"
        );
        assert_eq!(line(&[], 4, 4, 120), "ralph-gate: 4/4 done");
        let narrow = line(&running, 1, 4, 20);
        assert_eq!(narrow.chars().count(), 20);
        assert!(narrow.ends_with('…'));
    }
}
