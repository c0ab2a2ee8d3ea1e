//! The terminal report: one line per gate in config order, failures' output under it, and a
//! summary line. Gates are printed as soon as every gate before them has finished, so output
//! streams without ever interleaving.

use super::{RunInfo, Summary};
use crate::runner::{GateResult, GateStatus, RunDetail};
use ralph_base::text::{duration, plural, strip_ansi};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Mutex;

/// The whole report of a finished run at once, uncoloured: for logs that are no terminal
/// (GitHub's groups), rendered from the results as the stream would have printed them.
pub fn render(
    preamble: &str,
    results: &[GateResult],
    order: &[usize],
    quiet: bool,
    info: &RunInfo,
) -> String {
    let h = Human::new(
        Vec::new(),
        order.to_vec(),
        false,
        quiet,
        info.ci,
        info.output_limit,
    );
    h.preamble(preamble);
    for r in results {
        h.gate_finished(r);
    }
    String::from_utf8_lossy(&h.finish(results, info)).into_owned()
}

pub struct Human<W: Write + Send> {
    color: bool,
    quiet: bool,
    ci: bool,
    output_limit: usize,
    state: Mutex<State<W>>,
}

struct State<W> {
    out: W,
    /// Config indices of the planned gates, in print order.
    order: Vec<usize>,
    next: usize,
    pending: BTreeMap<usize, GateResult>,
}

impl<W: Write + Send> Human<W> {
    pub fn new(
        out: W,
        order: Vec<usize>,
        color: bool,
        quiet: bool,
        ci: bool,
        output_limit: usize,
    ) -> Self {
        Self {
            color,
            quiet,
            ci,
            output_limit,
            state: Mutex::new(State {
                out,
                order,
                next: 0,
                pending: BTreeMap::new(),
            }),
        }
    }

    /// Text printed before any gate result (which config and files are in play).
    pub fn preamble(&self, text: &str) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let _ = st.out.write_all(text.as_bytes());
    }

    /// Called from worker threads as each gate finishes.
    pub fn gate_finished(&self, result: &GateResult) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.pending.insert(result.gate, result.clone());
        while let Some(&want) = st.order.get(st.next) {
            let Some(r) = st.pending.remove(&want) else {
                break;
            };
            st.next += 1;
            let block = self.render_gate(&r);
            let _ = st.out.write_all(block.as_bytes());
            let _ = st.out.flush();
        }
    }

    pub fn finish(self, results: &[GateResult], info: &RunInfo) -> W {
        let mut st = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        let summary = Summary::of(results, info.ci);
        if !self.quiet {
            if let Some(line) = tools_line(results) {
                let _ = writeln!(st.out, "{}", paint(self.color, "2", &line));
            }
        }
        if !(self.quiet && summary.ok()) {
            let line = summary_line(&summary, results.len(), info);
            let painted = if summary.ok() {
                paint(self.color, "32", &line)
            } else {
                paint(self.color, "1;31", &line)
            };
            let _ = writeln!(st.out, "{painted}");
        }
        let _ = st.out.flush();
        st.out
    }

    fn render_gate(&self, r: &GateResult) -> String {
        let failing = r.counts_as_failure(self.ci);
        if self.quiet && !failing {
            return String::new();
        }
        let (tag, code) = match r.status {
            GateStatus::Pass => ("PASS", "32"),
            GateStatus::Fail => ("FAIL", "1;31"),
            GateStatus::Timeout => ("TIME", "1;31"),
            GateStatus::Skipped if failing => ("SKIP", "1;31"),
            GateStatus::Skipped => ("SKIP", "33"),
            GateStatus::NoFiles => ("----", "2"),
        };
        let time = if matches!(r.status, GateStatus::NoFiles | GateStatus::Skipped) {
            String::new()
        } else {
            duration(r.duration)
        };
        let files = match r.status {
            GateStatus::NoFiles => "no files".to_string(),
            _ => plural(r.files, "file", "files"),
        };
        let mut line = format!(
            " {}  {:<20} {:>8}  {}",
            paint(self.color, code, tag),
            r.name,
            time,
            files
        );
        if r.runs > 1 {
            line.push_str(&format!(
                " in {} runs (total {})",
                r.runs,
                duration(r.total)
            ));
        }
        if r.cached {
            line.push_str(" (cached)");
        }
        if let Some(reason) = &r.reason {
            line.push_str(&format!("  {reason}"));
        } else if let Some(code) = r.exit_code {
            line.push_str(&format!("  exit {code}"));
        }
        if let Some(install) = &r.install {
            line.push_str(&format!("; install: {install}"));
        }
        if r.status == GateStatus::Skipped && failing {
            line.push_str(
                " (a failure in strict mode: --strict, CI=true or RALPH_GATE_STRICT; mark the gate `optional = true` to allow it)",
            );
        }
        line.push('\n');
        if r.runs > 1 {
            line.push_str(&self.run_lines(r));
        }
        if r.failed() {
            if r.runs == 1 {
                line.push_str(&format!(
                    "    {} {}\n",
                    paint(self.color, "2", "$"),
                    shorten(&r.command, COMMAND_WIDTH)
                ));
            }
            let body = if self.color {
                r.output.clone()
            } else {
                strip_ansi(&r.output)
            };
            let body = super::diagnostics::within(body.trim_end(), self.output_limit);
            for l in body.lines() {
                line.push_str(&format!("    {} {l}\n", paint(self.color, "2", "│")));
            }
        }
        line
    }
}

impl<W: Write + Send> Human<W> {
    /// One line per run of a gate with several: its time, status, folder and what it
    /// checks. Past [`LISTED_RUNS`], only the failing runs and a count of the rest.
    fn run_lines(&self, r: &GateResult) -> String {
        let failing: Vec<&RunDetail> = r
            .run_details
            .iter()
            .filter(|d| matches!(d.status, GateStatus::Fail | GateStatus::Timeout))
            .collect();
        let listed: Vec<&RunDetail> = if r.run_details.len() <= LISTED_RUNS {
            r.run_details.iter().collect()
        } else {
            failing.iter().take(LISTED_RUNS).copied().collect()
        };
        let mut out = String::new();
        for d in &listed {
            let (mark, code) = match d.status {
                GateStatus::Pass => ("ok  ", "32"),
                GateStatus::Fail => ("FAIL", "31"),
                GateStatus::Timeout => ("TIME", "31"),
                GateStatus::Skipped => ("SKIP", "33"),
                GateStatus::NoFiles => ("----", "2"),
            };
            let what = d.label.clone().unwrap_or_else(|| d.command.clone());
            out.push_str(&format!(
                "    {} {:>7}  {}{}\n",
                paint(self.color, code, mark),
                duration(d.duration),
                shorten(&what, COMMAND_WIDTH),
                if d.cached { " (cached)" } else { "" }
            ));
            // Under a gate whose headline is another run's failure, a skip says why itself.
            if let Some(why) = d.skipped.as_ref().filter(|w| Some(*w) != r.reason.as_ref()) {
                out.push_str(&format!("    {} {why}\n", paint(self.color, "2", "│")));
            }
        }
        let rest = r.run_details.len() - listed.len();
        if rest > 0 {
            let count =
                |want: GateStatus| r.run_details.iter().filter(|d| d.status == want).count();
            let mut parts = vec![format!("{} passed", count(GateStatus::Pass))];
            for (status, word) in [
                (GateStatus::Fail, "failed"),
                (GateStatus::Timeout, "timed out"),
                (GateStatus::Skipped, "skipped"),
            ] {
                if count(status) > 0 {
                    parts.push(format!("{} {word}", count(status)));
                }
            }
            let cached = r.run_details.iter().filter(|d| d.cached).count();
            parts.push(format!("{cached} from the cache"));
            let longest = r.run_details.iter().max_by_key(|d| d.duration);
            out.push_str(&format!(
                "    {} runs: {}{}\n",
                r.run_details.len(),
                parts.join(", "),
                longest
                    .map(|d| format!(
                        "; longest {} {}",
                        duration(d.duration),
                        shorten(&d.label.clone().unwrap_or_else(|| d.command.clone()), 120)
                    ))
                    .unwrap_or_default()
            ));
        }
        out
    }
}

/// Runs listed one by one under a gate; past this, only the failing ones.
const LISTED_RUNS: usize = 8;

/// Which binary each tool was and its version: `tools: tsc = node_modules/.bin/tsc
/// (typescript 5.9.3), ...`.
fn tools_line(results: &[GateResult]) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for t in results.iter().flat_map(|r| r.tools.iter()) {
        let text = t.to_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    (!seen.is_empty()).then(|| format!("ralph-gate: tools: {}", seen.join(", ")))
}

fn summary_line(s: &Summary, gates: usize, info: &RunInfo) -> String {
    let mut parts = vec![
        format!("{} passed", s.passed),
        format!("{} failed", s.failed),
    ];
    if s.timed_out > 0 {
        parts.push(format!("{} timed out", s.timed_out));
    }
    if s.skipped > 0 {
        parts.push(format!("{} skipped", s.skipped));
    }
    if s.no_files > 0 {
        parts.push(format!("{} with no files", s.no_files));
    }
    format!(
        "ralph-gate: {} ({}, {})",
        parts.join(", "),
        plural(gates, "gate", "gates"),
        duration(info.duration)
    )
}

/// Characters of a command shown in the terminal; a long file list is cut (JSON keeps it whole).
const COMMAND_WIDTH: usize = 300;

fn shorten(command: &str, width: usize) -> String {
    if command.chars().count() <= width {
        return command.to_string();
    }
    let kept = ralph_base::text::at_word(command, width).trim_end();
    format!(
        "{kept} ... [{} more characters]",
        command.chars().count() - kept.chars().count()
    )
}

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
