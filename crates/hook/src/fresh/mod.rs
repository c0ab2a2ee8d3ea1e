//! `ralph-gate loop run`: the original Ralph loop, gated. Each iteration starts the agent's
//! non-interactive mode as a NEW process with the prompt ([`agent`], [`child`]); after it,
//! the stop gates run fresh and the iteration is judged exactly as a loop's stop is
//! ([`crate::hook::stop::judge`]: the pin, the verification surface, the promise). The run is
//! done only when the final message ends with the promise AND every stop gate passes;
//! otherwise the next iteration gets the same prompt and what this one left ([`prompt`]).
//! The run's loop file holds the session [`ralph_base::state::RUN_SESSION`], which no agent's
//! stop selects: the driver decides, and the agent's own stop hook stands down for it.

pub mod child;
pub mod cli;
pub mod commit;
pub mod error;
mod parallel;
pub mod prd;
pub mod prompt;
mod story;

use crate::hook::promise::TextSource;
use crate::hook::stop::{self, Stopping};
use crate::hook::Ask;
use error::RunError;
use ralph_base::agent::Agent;
use ralph_base::env::Environment;
use ralph_base::state::{Layout, RUN_SESSION};
use ralph_loop::journal::{self, Entry, LoopEvent, Outcome};
use ralph_loop::loops;
use ralph_plan::project::Project;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The variable that tells an agent's hooks which run its process is an iteration of.
pub use ralph_base::env::LOOP_RUN as ENV;

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
    /// `--prd`: the stories file (absolute).
    pub prd: Option<PathBuf>,
    /// Work on this story only (a `--parallel` worker).
    pub story: Option<String>,
    /// `--parallel N`: stories at once, each in a worktree of its own (1: one after another).
    pub parallel: usize,
}

/// Exit codes: done, ended unfinished, the agent could not run.
const DONE: u8 = 0;
const UNFINISHED: u8 = 1;
const NO_AGENT: u8 = 2;

pub fn run(
    o: &Options,
    env: &Environment,
    layout: &Layout,
    cwd: &Path,
    config: Option<&Path>,
) -> Result<u8, RunError> {
    let o = &Options {
        prd: o.prd.as_ref().map(|p| cwd.join(p)),
        ..o.clone()
    };
    if let Some(p) = &o.prd {
        let (stories, _) = prd::read(p)?;
        if let Some(id) = o
            .story
            .as_ref()
            .filter(|id| !stories.iter().any(|s| &s.id == *id))
        {
            return Err(RunError::Refused(format!(
                "{} has no story `{id}`",
                p.display()
            )));
        }
    }
    if o.parallel > 1 {
        return parallel::run(o, env, layout, config);
    }
    // The command resolves the agent the project is set up for; Claude Code otherwise.
    let agent = o.agent.unwrap_or(Agent::Claude);
    let install = cli::supported(agent)?;
    if loops::any_open(layout) {
        return Err(RunError::Refused(
            "a loop is running here: `loop run` drives the workspace alone. End it first (`ralph-gate loop cancel`)".into(),
        ));
    }
    let mut project = Project::open(cwd, config)?;
    let (pin, surface) = loops::held_now(&mut project, env);
    let path = loops::start(
        layout,
        &loops::Spec {
            prompt: &o.prompt,
            max_iterations: o.max_iterations,
            promise: o.prd.is_none().then_some(o.promise.as_str()),
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
    let cleanup = ralph_base::signals::on_stop(move || {
        end(&l, &p, "interrupted (Ctrl-C or a signal)");
    });
    let driver = Driver {
        o,
        env,
        cwd,
        config,
        layout,
        path: &path,
        agent,
        install,
    };
    let result = driver.drive();
    ralph_base::signals::forget_cleanup(cleanup);
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

/// What a run carries from one iteration to the next.
struct Carried {
    started: Instant,
    cost: f64,
    left: Option<prompt::Left>,
    /// `--prd`: the stories, and which pass as ralph-gate knows it (never read back from the
    /// file, which the agent can write).
    stories: Vec<prd::Story>,
    flags: prd::Flags,
    /// `--prd`: every story of the prd (a `--story` run's others too), by id.
    all: Vec<String>,
    /// `--prd`: the stop gates that failed when the run began.
    before: story::Before,
}

impl Driver<'_> {
    fn place(&self) -> story::Place<'_> {
        story::Place {
            root: self.layout.root(),
            config: self.config,
            env: self.env,
        }
    }

    fn drive(&self) -> Result<u8, RunError> {
        let work = tempfile::tempdir()?;
        let (mut stories, flags) = match &self.o.prd {
            Some(p) => prd::read(p)?,
            None => Default::default(),
        };
        let all = stories.iter().map(|s| s.id.clone()).collect();
        if let Some(id) = &self.o.story {
            stories.retain(|s| &s.id == id);
        }
        let before = match &self.o.prd {
            Some(_) => story::Before::of(&self.place())?,
            None => story::Before::default(),
        };
        let mut c = Carried {
            started: Instant::now(),
            cost: 0.0,
            left: None,
            stories,
            flags,
            all,
            before,
        };
        for n in 1.. {
            if let Some(code) = self.step(n, &mut c, work.path())? {
                return Ok(code);
            }
        }
        unreachable!("the iterations are unbounded")
    }

    /// One iteration: the agent, then the judgement. `Some(exit code)` when the run ends.
    fn step(&self, n: u64, c: &mut Carried, work: &Path) -> Result<Option<u8>, RunError> {
        if let Some(why) = self.spent(c.started.elapsed(), c.cost) {
            end(self.layout, self.path, &why);
            return Ok(Some(self.say_end(&why, c.left.as_ref())));
        }
        let story = prd::next(&c.stories, &c.flags).cloned();
        if self.o.prd.is_some() && story.is_none() {
            return Ok(Some(self.finish(n - 1, c, "every story passes")));
        }
        let mut ask = self.o.prompt.clone();
        if let Some(s) = &story {
            ask.push_str(&prd::brief(s));
        }
        let tree_before = self.o.commit.then(|| self.tree());
        let timeout = self.timeout(c.started.elapsed());
        let began = journal::now();
        err(&format!(
            "ralph-gate loop run: iteration {n}{} starts{}  ({}{})",
            match self.o.max_iterations {
                0 => String::new(),
                m => format!("/{m}"),
            },
            story
                .as_ref()
                .map(|s| format!(" on {}", s.id))
                .unwrap_or_default(),
            ralph_base::text::duration(c.started.elapsed()),
            money(c.cost)
        ));
        let ended = match self.iterate(&prompt::next(&ask, c.left.as_ref()), timeout, work) {
            Ok(e) => e,
            Err(e @ child::StartError::Missing { .. }) => {
                return Ok(Some(
                    self.no_agent(&format!("{e}; install it: {}", self.install)),
                ))
            }
            Err(e) => return Ok(Some(self.no_agent(&e.to_string()))),
        };
        let last = std::fs::read_to_string(work.join("last-message")).ok();
        let said = cli::said(self.agent, &ended.stdout, last.as_deref());
        if n == 1 && ended.code.is_some_and(|code| code != 0) && said.final_text.is_none() {
            return Ok(Some(self.no_agent(&format!(
                "`{}` failed to start its first iteration (exit {}): {}",
                self.agent,
                ended.code.unwrap_or(-1),
                ralph_base::text::shorten(ended.stderr.trim(), 600)
            ))));
        }
        c.cost += said.cost_usd.unwrap_or(0.0);
        let flipped = self.put_back(&c.flags)?;
        let Some(mut judged) = self.judge(&said)? else {
            err("ralph-gate loop run: the run's loop was cancelled");
            return Ok(Some(UNFINISHED));
        };
        if let Some(s) = &story {
            self.story(n, s, c, &mut judged, &flipped)?;
        }
        self.journal((n, began), &ended, &said, &judged);
        self.progress(n, c, &judged);
        if tree_before.is_some_and(|t| t != self.tree()) {
            self.commit(n, story.as_ref(), &judged);
        }
        match judged.decision.outcome {
            Outcome::Completed if self.o.prd.is_none() => Ok(Some(self.finish(
                n,
                c,
                "the promise was made and every stop gate passes",
            ))),
            Outcome::LimitReached | Outcome::Stuck => {
                let why = judged.decision.why.clone();
                Ok(Some(self.say_end(&why, Some(&self.left(n, &judged)))))
            }
            _ => {
                c.left = Some(self.left(n, &judged));
                Ok(None)
            }
        }
    }

    /// The run is done.
    fn finish(&self, n: u64, c: &Carried, why: &str) -> u8 {
        end_as(self.layout, self.path, why, "done");
        out(&format!(
            "ralph-gate loop run: done after {n} iteration{}: {why} ({}{})",
            if n == 1 { "" } else { "s" },
            ralph_base::text::duration(c.started.elapsed()),
            money(c.cost)
        ));
        DONE
    }

    fn no_agent(&self, why: &str) -> u8 {
        end(self.layout, self.path, why);
        err(&format!("ralph-gate loop run: {why}"));
        NO_AGENT
    }

    /// `--prd`: the `passes` flags the agent changed in the file, put back and journaled.
    fn put_back(&self, flags: &prd::Flags) -> Result<Vec<String>, RunError> {
        let Some(path) = &self.o.prd else {
            return Ok(Vec::new());
        };
        let flipped = prd::put(path, flags).map_err(|e| {
            RunError::Refused(format!(
                "{e}: the agent damaged or removed the prd; the run ends"
            ))
        })?;
        if !flipped.is_empty() {
            let _ = journal::append(
                self.layout,
                Entry::Restored(LoopEvent::new(
                    "loop run",
                    &loops::key(self.path),
                    format!(
                        "the agent set `passes` of {} in {}: only ralph-gate sets it; put back",
                        flipped.join(", "),
                        path.display()
                    ),
                )),
            );
        }
        Ok(flipped)
    }

    /// `--prd`: checks the iteration's story (its gates, its `verify`, every stop gate, run
    /// afresh) and, when all pass, sets its `passes`. The verdict goes into `judged`.
    fn story(
        &self,
        n: u64,
        s: &prd::Story,
        c: &mut Carried,
        judged: &mut stop::Judged,
        flipped: &[String],
    ) -> Result<(), RunError> {
        let last = c
            .all
            .iter()
            .all(|id| *id == s.id || c.flags.get(id).copied().unwrap_or(false));
        let mut failing =
            story::check(&self.place(), s, judged.hold.as_deref(), (&c.before, last))?;
        if !flipped.is_empty() {
            failing.push(format!(
                "you set `passes` of {} yourself; ralph-gate put it back (only ralph-gate sets it)",
                flipped.join(", ")
            ));
        }
        let path = self.o.prd.as_deref().expect("a story comes from a prd");
        if failing.is_empty() {
            c.flags.insert(s.id.clone(), true);
            prd::put(path, &c.flags)?;
            judged.decision.why = format!("{} passes", s.id);
            if prd::next(&c.stories, &c.flags).is_none() {
                judged.decision.outcome = Outcome::Completed;
            }
        } else {
            judged.decision.why = format!("{} does not pass yet: {}", s.id, failing.join("; "));
        }
        prd::progress(path, &format!("iteration {n}, {}", judged.decision.why));
        Ok(())
    }

    /// Starts the iteration's agent process and waits for it.
    fn iterate(
        &self,
        prompt: &str,
        timeout: Duration,
        work: &Path,
    ) -> Result<child::Ended, child::StartError> {
        let last = work.join("last-message");
        let _ = std::fs::remove_file(&last);
        let inv = cli::invocation(self.agent, prompt, &self.o.agent_args, &last);
        let key = loops::key(self.path);
        child::run(&inv, self.cwd, &[(ENV, key)], timeout, work)
    }

    /// The iteration judged as the loop's stop.
    fn judge(&self, said: &cli::Said) -> Result<Option<stop::Judged>, RunError> {
        let state = loops::read(self.path).map_err(|e| {
            RunError::Refused(format!(
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
            .map_err(|e| RunError::Refused(format!("the iteration could not be judged: {e}")))
    }

    fn left(&self, n: u64, j: &stop::Judged) -> prompt::Left {
        prompt::Left {
            iteration: n,
            outcome: j.decision.why.clone(),
            errors: j.errors.clone(),
            promise: self.o.promise.clone(),
        }
    }

    /// Which budget is spent, if one is.
    fn spent(&self, elapsed: Duration, cost: f64) -> Option<String> {
        if let Some(max) = self.o.max_time.filter(|m| elapsed >= *m) {
            return Some(format!(
                "the time budget of {} is spent",
                ralph_base::text::duration(max)
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

    fn journal(
        &self,
        (n, began): (u64, String),
        ended: &child::Ended,
        said: &cli::Said,
        j: &stop::Judged,
    ) {
        let _ = journal::append(
            self.layout,
            Entry::Iteration(Box::new(journal::Iteration {
                agent: self.agent,
                loop_file: loops::key(self.path),
                iteration: n,
                started: began,
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
    fn progress(&self, n: u64, c: &Carried, j: &stop::Judged) {
        let (elapsed, cost) = (c.started.elapsed(), c.cost);
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
            ralph_base::text::duration(elapsed),
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
    fn commit(&self, n: u64, story: Option<&prd::Story>, j: &stop::Judged) {
        let message = format!(
            "ralph-gate loop run: iteration {n}{}: {}\n\n{}",
            story.map(|s| format!(", {}", s.id)).unwrap_or_default(),
            ralph_base::text::shorten(&j.decision.why, 120),
            if j.failing.is_empty() {
                "Every stop gate passes.".to_string()
            } else {
                format!("Failing stop gates: {}.", j.failing.join(", "))
            }
        );
        // A worker's prd and progress are its parent's to write and commit.
        let own: Vec<PathBuf> = match (&self.o.story, &self.o.prd) {
            (Some(_), Some(p)) => vec![p.clone(), p.with_file_name("progress.txt")],
            _ => Vec::new(),
        };
        match commit::iteration(self.layout.root(), &message, &own) {
            commit::Committed::Nothing => {}
            commit::Committed::Made(id) => err(&format!(
                "ralph-gate loop run: iteration {n} committed as {id}"
            )),
            commit::Committed::Refused(why) => err(&format!(
                "ralph-gate loop run: iteration {n} not committed: {}",
                ralph_base::text::shorten(&why, 400)
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
    end_as(layout, path, why, "unfinished");
}

fn end_as(layout: &Layout, path: &Path, why: &str, how: &str) {
    if path.exists() && loops::settle(layout, path, loops::Change::End).unwrap_or(false) {
        let _ = journal::append(
            layout,
            Entry::RunEnded(LoopEvent::new(
                "loop run",
                &loops::key(path),
                format!("{how}: {why}"),
            )),
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
