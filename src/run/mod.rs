//! `ralph-gate loop run`: the original Ralph loop, gated. Each iteration starts the agent's
//! non-interactive mode as a NEW process with the prompt ([`agent`], [`child`]); after it,
//! the stop gates run fresh and the iteration is judged exactly as a loop's stop is
//! ([`crate::hook::stop::judge`]: the pin, the verification surface, the promise). The run is
//! done only when the final message ends with the promise AND every stop gate passes;
//! otherwise the next iteration gets the same prompt and what this one left ([`prompt`]).
//! The run's loop file holds the session [`crate::state::RUN_SESSION`], which no agent's
//! stop selects: the driver decides, and the agent's own stop hook stands down for it.

pub mod agent;
pub mod child;
pub mod commit;
pub mod prompt;

use crate::agent::Agent;
use crate::commands::AppError;
use crate::env::Environment;
use crate::hook::decide::StopDecision;
use crate::hook::promise::TextSource;
use crate::hook::stop::{self, Stopping};
use crate::hook::Ask;
use crate::journal::{self, Entry, LoopEvent, Outcome};
use crate::loops;
use crate::project::Project;
use crate::state::{Layout, RUN_SESSION};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variable that tells an agent's hooks which run its process is an iteration of.
pub const ENV: &str = "RALPH_GATE_LOOP_RUN";

/// `loop run`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    pub agent: Option<Agent>,
    pub prompt: String,
    pub promise: String,
    /// 0: unlimited.
    pub max_iterations: u64,
    pub max_time: Option<Duration>,
    pub max_cost: Option<f64>,
    pub iteration_timeout: Duration,
    /// Iterations in a row with nothing changed that end the run (`None`: the config's
    /// `stuck_after`).
    pub stall: Option<u32>,
    /// Arguments added to every iteration's agent command.
    pub agent_args: Vec<String>,
    /// Commit each iteration's work (`--commit`).
    pub commit: bool,
}

/// Exit codes: done, ended unfinished, the agent could not run.
const DONE: u8 = 0;
const UNFINISHED: u8 = 1;
const NO_AGENT: u8 = 2;

pub fn run(
    o: &Options,
    env: &Environment,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, AppError> {
    let layout = Layout::workspace(env, cwd);
    let agent = o.agent.unwrap_or_else(|| {
        let set_up = crate::commands::init::agents::set_up(env, layout.root());
        crate::commands::loops::choose_agent(&set_up, None).0
    });
    let install = agent::supported(agent).map_err(AppError::Usage)?;
    if loops::any_open(&layout) {
        return Err(AppError::Usage(
            "a loop is running here: `loop run` drives the workspace alone. End it first (`ralph-gate loop cancel`)".into(),
        ));
    }
    let mut project = Project::open(cwd, config)?;
    let (pin, surface) = loops::held_now(&mut project, env);
    let path = loops::start(
        &layout,
        &loops::Spec {
            prompt: &o.prompt,
            max_iterations: o.max_iterations,
            promise: Some(&o.promise),
            session: RUN_SESSION,
            agent,
            pin: Some(&pin),
            surface: surface.as_ref(),
            who: "loop run".into(),
            goal: None,
        },
    )?;
    // Ctrl-C: every agent group is killed by `signals`, then the run's loop ends here.
    let (l, p) = (layout.clone(), path.clone());
    let cleanup = crate::signals::on_stop(move || {
        end(&l, &p, "interrupted (Ctrl-C or a signal)");
    });
    let driver = Driver {
        o,
        env,
        cwd,
        config,
        layout: &layout,
        path: &path,
        agent,
        install,
    };
    let result = driver.drive();
    crate::signals::forget_cleanup(cleanup);
    result
}

struct Driver<'a> {
    o: &'a Options,
    env: &'a Environment,
    cwd: &'a Path,
    config: Option<&'a Path>,
    layout: &'a Layout,
    path: &'a PathBuf,
    agent: Agent,
    install: &'static str,
}

impl Driver<'_> {
    fn drive(&self) -> Result<u8, AppError> {
        let started = Instant::now();
        let work = tempfile::tempdir()?;
        let mut cost = 0.0;
        let mut left: Option<prompt::Left> = None;
        for n in 1.. {
            if let Some(why) = self.spent(started.elapsed(), cost) {
                end(self.layout, self.path, &why);
                return Ok(self.say_end(&why, left.as_ref()));
            }
            let timeout = self.timeout(started.elapsed());
            let tree_before = self.o.commit.then(|| self.tree());
            let ended = match self.iterate(
                &prompt::next(&self.o.prompt, left.as_ref()),
                timeout,
                work.path(),
            ) {
                Ok(e) => e,
                Err(why) => {
                    end(self.layout, self.path, &why);
                    err(&format!("ralph-gate loop run: {why}"));
                    return Ok(NO_AGENT);
                }
            };
            let said = agent::said(
                self.agent,
                &ended.stdout,
                std::fs::read_to_string(work.path().join("last-message"))
                    .ok()
                    .as_deref(),
            );
            if n == 1 && ended.code.is_some_and(|c| c != 0) && said.final_text.is_none() {
                let why = format!(
                    "`{}` failed to start its first iteration (exit {}): {}",
                    self.agent,
                    ended.code.unwrap_or(-1),
                    crate::text::shorten(ended.stderr.trim(), 600)
                );
                end(self.layout, self.path, &why);
                err(&format!("ralph-gate loop run: {why}"));
                return Ok(NO_AGENT);
            }
            cost += said.cost_usd.unwrap_or(0.0);
            let Some(judged) = self.judge(&said)? else {
                let why = "the run's loop was cancelled";
                err(&format!("ralph-gate loop run: {why}"));
                return Ok(UNFINISHED);
            };
            self.journal(n, &ended, &said, &judged);
            self.progress(n, started.elapsed(), cost, &judged);
            if tree_before.is_some_and(|t| t != self.tree()) {
                self.commit(n, &judged);
            }
            match judged.decision.outcome {
                Outcome::Completed => {
                    out(&format!(
                        "ralph-gate loop run: done after {n} iteration{}: the promise was made and every stop gate passes ({}{})",
                        if n == 1 { "" } else { "s" },
                        crate::text::duration(started.elapsed()),
                        money(cost)
                    ));
                    return Ok(DONE);
                }
                Outcome::LimitReached | Outcome::Stuck => {
                    let why = judged.decision.why.clone();
                    return Ok(
                        self.say_end(&why, Some(&self.left(n, &judged.decision, &judged.errors)))
                    );
                }
                _ => left = Some(self.left(n, &judged.decision, &judged.errors)),
            }
        }
        unreachable!("the iterations are unbounded")
    }

    /// Starts the iteration's agent process and waits for it.
    fn iterate(
        &self,
        prompt: &str,
        timeout: Duration,
        work: &Path,
    ) -> Result<child::Ended, String> {
        let last = work.join("last-message");
        let _ = std::fs::remove_file(&last);
        let inv = agent::invocation(self.agent, prompt, &self.o.agent_args, &last);
        let key = loops::key(self.path);
        child::run(&inv, self.cwd, &[(ENV, key)], timeout, work).map_err(|e| match e {
            child::StartError::Missing { .. } => format!("{e}; install it: {}", self.install),
            e => e.to_string(),
        })
    }

    /// The iteration judged as the loop's stop.
    fn judge(&self, said: &agent::Said) -> Result<Option<stop::Judged>, AppError> {
        let state = loops::read(self.path).map_err(|e| {
            AppError::Usage(format!(
                "the run's state file {} was removed or damaged during the iteration ({e}); the run ends unfinished",
                self.path.display()
            ))
        })?;
        let ask = Ask {
            agent: self.agent,
            session: RUN_SESSION.into(),
            cwd: Some(self.cwd.to_path_buf()),
            final_text: said.final_text.clone(),
            text_source: TextSource::LastAssistantMessage,
            ..Ask::default()
        };
        let at = Stopping {
            ask: &ask,
            env: self.env,
            layout: self.layout,
            config: self.config,
            stuck_after: self.o.stall,
        };
        stop::judge(&at, self.path, &state, Instant::now(), None)
            .map_err(|e| AppError::Usage(format!("the iteration could not be judged: {e}")))
    }

    fn left(&self, n: u64, d: &StopDecision, errors: &str) -> prompt::Left {
        prompt::Left {
            iteration: n,
            outcome: d.why.clone(),
            errors: errors.to_string(),
            promise: self.o.promise.clone(),
        }
    }

    /// Which budget is spent, if one is.
    fn spent(&self, elapsed: Duration, cost: f64) -> Option<String> {
        if let Some(max) = self.o.max_time.filter(|m| elapsed >= *m) {
            return Some(format!(
                "the time budget of {} is spent",
                crate::text::duration(max)
            ));
        }
        self.o
            .max_cost
            .filter(|m| cost >= *m)
            .map(|m| format!("the cost budget of ${m} is spent (${cost:.4} reported)"))
    }

    /// The iteration's time: its own timeout, within what is left of the run's.
    fn timeout(&self, elapsed: Duration) -> Duration {
        match self.o.max_time {
            Some(max) => self.o.iteration_timeout.min(max.saturating_sub(elapsed)),
            None => self.o.iteration_timeout,
        }
    }

    fn journal(&self, n: u64, ended: &child::Ended, said: &agent::Said, j: &stop::Judged) {
        let _ = journal::append(
            self.layout,
            Entry::Iteration(Box::new(journal::Iteration {
                agent: self.agent,
                loop_file: loops::key(self.path),
                iteration: n,
                duration_ms: ended.took.as_millis() as u64,
                cost_usd: said.cost_usd,
                tokens: said.tokens,
                exit: ended.code,
                timed_out: ended.timed_out,
                outcome: j.decision.outcome,
                failing: j.failing.clone(),
                why: j.decision.why.clone(),
            })),
        );
    }

    /// One line per iteration on stderr: the iteration, elapsed time, cost and gate state.
    fn progress(&self, n: u64, elapsed: Duration, cost: f64, j: &stop::Judged) {
        let of = match self.o.max_iterations {
            0 => String::new(),
            m => format!("/{m}"),
        };
        let gates = if j.failing.is_empty() {
            "every stop gate passes".to_string()
        } else {
            format!("failing: {}", j.failing.join(", "))
        };
        err(&format!(
            "ralph-gate loop run: iteration {n}{of}  {}{}  {gates}  ({})",
            crate::text::duration(elapsed),
            money(cost),
            j.decision.why
        ));
    }

    /// The working tree's state (ralph-gate's own files left out), to tell whether an
    /// iteration changed it.
    fn tree(&self) -> String {
        loops::progress::fingerprint(self.layout.root(), &[], false)
    }

    /// `--commit`: the iteration's work, committed with the hooks the project has.
    fn commit(&self, n: u64, j: &stop::Judged) {
        let message = format!(
            "ralph-gate loop run: iteration {n}: {}\n\n{}",
            crate::text::shorten(&j.decision.why, 120),
            if j.failing.is_empty() {
                "Every stop gate passes.".to_string()
            } else {
                format!("Failing stop gates: {}.", j.failing.join(", "))
            }
        );
        match commit::iteration(self.layout.root(), &message) {
            commit::Committed::Nothing => {}
            commit::Committed::Made(id) => err(&format!(
                "ralph-gate loop run: iteration {n} committed as {id}"
            )),
            commit::Committed::Refused(why) => err(&format!(
                "ralph-gate loop run: iteration {n} not committed: {}",
                crate::text::shorten(&why, 400)
            )),
        }
    }

    /// Says why the run ended unfinished and what still fails.
    fn say_end(&self, why: &str, left: Option<&prompt::Left>) -> u8 {
        out(&format!("ralph-gate loop run: ended unfinished: {why}"));
        if let Some(l) = left {
            out(&format!("  after iteration {}: {}", l.iteration, l.outcome));
        }
        UNFINISHED
    }
}

fn money(cost: f64) -> String {
    if cost > 0.0 {
        format!("  ${cost:.2}")
    } else {
        String::new()
    }
}

/// Ends the run's loop unfinished and says why in the journal.
fn end(layout: &Layout, path: &Path, why: &str) {
    if path.exists() && loops::settle(layout, path, loops::Change::End).unwrap_or(false) {
        let _ = journal::append(
            layout,
            Entry::RunEnded(LoopEvent::new("loop run", &loops::key(path), why)),
        );
    }
}

/// A line for the person on stdout (the run's result) or stderr (its progress); a closed
/// stream only loses the words.
fn out(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

fn err(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
