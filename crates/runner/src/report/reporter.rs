//! The reporter of a `check` run: it hears the runner's events as gates start and finish and
//! writes the report in the chosen format. The human format streams (each gate as soon as the
//! ones before it are done, live progress on a terminal); the machine formats render once,
//! from the results, at the end.

use super::{github, human, human::Human, json, junit, progress::Progress, Format, RunInfo};
use crate::runner::{Event, GateResult};
use std::io::Write;

/// How the report is to look, settled before the run.
pub struct Style {
    pub format: Format,
    pub color: bool,
    pub quiet: bool,
    /// Live progress on stderr (a person at a terminal).
    pub progress: bool,
    /// Config indices of the planned gates, in report order.
    pub order: Vec<usize>,
    /// Which config and files are in play, printed first.
    pub preamble: String,
    pub strict: bool,
    pub output_limit: usize,
    pub columns: Option<usize>,
}

pub enum Reporter {
    Stream {
        human: Human<std::io::Stdout>,
        progress: Option<Progress>,
    },
    Batch {
        format: Format,
        order: Vec<usize>,
        quiet: bool,
        preamble: String,
    },
}

impl Reporter {
    /// Starts the report of a run of `gates` gates with something to check.
    pub fn start(style: Style, gates: usize) -> Self {
        if style.format != Format::Human {
            return Reporter::Batch {
                format: style.format,
                order: style.order,
                quiet: style.quiet,
                preamble: style.preamble,
            };
        }
        let human = Human::new(
            std::io::stdout(),
            style.order,
            style.color,
            style.quiet,
            style.strict,
            style.output_limit,
        );
        if !style.quiet {
            human.preamble(&style.preamble);
        }
        Reporter::Stream {
            human,
            progress: style
                .progress
                .then(|| Progress::start(gates, style.columns)),
        }
    }

    /// One runner event, from any worker thread.
    pub fn event(&self, e: &Event<'_>, gate_name: &dyn Fn(usize) -> String) {
        let Reporter::Stream { human, progress } = self else {
            return;
        };
        match e {
            Event::Started(gate) => {
                if let Some(p) = progress {
                    p.started(&gate_name(*gate));
                }
            }
            Event::Finished(r) => {
                if let Some(p) = progress {
                    if r.runs > 0 {
                        p.finished(&r.name);
                    }
                    p.quiet_while(|| human.gate_finished(r));
                } else {
                    human.gate_finished(r);
                }
            }
        }
    }

    /// Ends live progress, before anything else is said on the terminal.
    pub fn pause(&mut self) {
        if let Reporter::Stream { progress, .. } = self {
            if let Some(p) = progress.take() {
                p.finish();
            }
        }
    }

    /// The end of the report: the summary, or the whole of a machine format.
    pub fn finish(mut self, results: &[GateResult], info: &RunInfo) -> std::io::Result<()> {
        self.pause();
        match self {
            Reporter::Stream { human, .. } => {
                human.finish(results, info);
                Ok(())
            }
            Reporter::Batch {
                format,
                order,
                quiet,
                preamble,
            } => {
                let text = match format {
                    Format::Junit => junit::render(results, info),
                    Format::Github => github::render(
                        results,
                        info,
                        &human::render(&preamble, results, &order, quiet, info),
                    ),
                    Format::Json | Format::Human => json::render(results, info),
                };
                std::io::stdout().lock().write_all(text.as_bytes())
            }
        }
    }
}
