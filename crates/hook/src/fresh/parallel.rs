//! `loop run --prd F --parallel N`: N stories at once. Each worker is `ralph-gate loop run
//! --story ID --commit` in a git worktree and branch of its own (`.ralph/worktrees/`, sharing
//! the result cache through git's common folder), its process group killed on a signal.
//! Never two workers on one story. A worker that ends done is merged back into the starting
//! branch: its branch rebased onto it (checked again there when the base moved), then
//! fast-forwarded; a conflict is reported and the story retried on the new base. Only this
//! process writes the prd's `passes` and commits it, on the starting branch.

use super::error::RunError;
use super::{prd, story, Options};
use ralph_base::env::Environment;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Why a story's worker could not start, or its work could not be merged.
#[derive(Debug, thiserror::Error)]
enum WorkerError {
    #[error(transparent)]
    Git(#[from] ralph_base::git::GitError),
    #[error("cannot {what}: {source}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Prd(#[from] prd::PrdError),
    #[error(transparent)]
    Story(#[from] RunError),
    #[error("its branch conflicts with {base}: {source}")]
    Conflict {
        base: String,
        #[source]
        source: ralph_base::git::GitError,
    },
    #[error("on the new base it does not pass: {}", .0.join("; "))]
    Fails(Vec<String>),
    #[error("ended unfinished (exit {}); its log: {}", code.map_or("by a signal".into(), |c| c.to_string()), log.display())]
    Unfinished { code: Option<i32>, log: PathBuf },
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> WorkerError {
    move |source| WorkerError::Io { what, source }
}

/// How often a story is started again after its merge failed.
const TRIES: u32 = 2;

struct Worker {
    story: prd::Story,
    child: ralph_base::child::Group,
    dir: PathBuf,
    branch: String,
    tries: u32,
}

struct Run<'a> {
    o: &'a Options,
    env: &'a Environment,
    config: Option<&'a Path>,
    root: PathBuf,
    start: String,
    prd: PathBuf,
    flags: prd::Flags,
    /// Every story of the prd, by id.
    all: Vec<String>,
    /// The stop gates that failed on the starting branch.
    before: story::Before,
}

pub fn run(
    o: &Options,
    env: &Environment,
    layout: &ralph_base::state::Layout,
    config: Option<&Path>,
) -> Result<u8, RunError> {
    ralph_base::signals::install();
    let usage = |m: String| RunError::Refused(m);
    let prd_path = o
        .prd
        .clone()
        .ok_or_else(|| usage("--parallel needs --prd".into()))?;
    let root = layout.root().to_path_buf();
    let git = |args: &[&str]| {
        ralph_base::git::run(&root, args).map(|o| String::from_utf8_lossy(&o).trim().to_string())
    };
    // Untracked files stay behind as they would in any worktree; changed tracked ones would
    // silently be missing from every worker.
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map_err(|e| usage(e.to_string()))?;
    if !dirty.is_empty() {
        return Err(usage(format!("--parallel starts every worker from the last commit: commit or stash what changed first:\n{dirty}")));
    }
    let start = git(&["symbolic-ref", "--short", "HEAD"]).map_err(|_| {
        usage("--parallel merges into the branch it starts on: check out a branch first".into())
    })?;
    let (stories, flags) = prd::read(&prd_path).map_err(|e| usage(e.to_string()))?;
    let all: Vec<String> = stories.iter().map(|s| s.id.clone()).collect();
    let place = story::Place {
        root: &root,
        config,
        env,
    };
    let before = story::Before::of(&place)?;
    let mut queue = open(stories, &flags);
    let mut r = Run {
        o,
        env,
        config,
        root,
        start,
        prd: prd_path,
        flags,
        all,
        before,
    };
    let mut running: Vec<Worker> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    loop {
        while running.len() < o.parallel {
            let Some((s, tries)) = queue.pop_front() else {
                break;
            };
            match r.start_worker(s.clone(), tries) {
                Ok(w) => running.push(w),
                Err(why) => failed.push(format!("{}: {why}", s.id)),
            }
        }
        if running.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut i = 0;
        while i < running.len() {
            match running[i].child.try_wait() {
                Ok(Some(status)) => {
                    let w = running.swap_remove(i);
                    let code = match status {
                        ralph_base::child::Status::Code(code) => Some(code),
                        ralph_base::child::Status::Signal(_) => None,
                    };
                    r.ended(w, code, &mut queue, &mut failed);
                }
                _ => i += 1,
            }
        }
    }
    Ok(r.summary(&failed))
}

/// The stories that do not pass yet, by priority, none tried.
fn open(stories: Vec<prd::Story>, flags: &prd::Flags) -> VecDeque<(prd::Story, u32)> {
    let mut open: Vec<prd::Story> = stories
        .into_iter()
        .filter(|s| !flags.get(&s.id).copied().unwrap_or(false))
        .collect();
    open.sort_by_key(|s| s.priority);
    open.into_iter().map(|s| (s, 0)).collect()
}

impl Run<'_> {
    /// A worktree and branch for `s` from the starting branch, and its worker started there.
    fn start_worker(&self, s: prd::Story, tries: u32) -> Result<Worker, WorkerError> {
        let name: String =
            s.id.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
        let dir = self
            .root
            .join(ralph_base::state::DIR)
            .join("worktrees")
            .join(&name);
        let branch = format!("ralph-gate/{name}");
        let _ = ralph_base::git::run(
            &self.root,
            &["worktree", "remove", "--force", &dir.display().to_string()],
        );
        ralph_base::git::run(
            &self.root,
            &[
                "worktree",
                "add",
                "-q",
                "-f",
                "-B",
                &branch,
                &dir.display().to_string(),
                &self.start,
            ],
        )?;
        let prd_rel = self.prd.strip_prefix(&self.root).unwrap_or(&self.prd);
        let log = std::fs::File::create(dir.with_extension("log")).map_err(io("make its log"))?;
        let me = std::env::current_exe().map_err(io("find this program"))?;
        let mut cmd = ralph_base::child::command(me);
        cmd.current_dir(&dir)
            .args(["loop", "run", "--commit", "--story", &s.id, "--prd"])
            .arg(dir.join(prd_rel))
            .args(self.worker_args())
            .arg(&self.o.prompt)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(io("share its log"))?)
            .stderr(log);
        let child = ralph_base::child::start(&mut cmd).map_err(io("start it"))?;
        say(&format!(
            "ralph-gate loop run: {} started in {} (branch {branch})",
            s.id,
            dir.display()
        ));
        Ok(Worker {
            story: s,
            child,
            dir,
            branch,
            tries,
        })
    }

    /// The options every worker gets from this run.
    fn worker_args(&self) -> Vec<String> {
        let o = self.o;
        let mut a = vec![
            "--promise".to_string(),
            o.promise.clone(),
            "--max-iterations".into(),
            o.max_iterations.to_string(),
        ];
        if let Some(agent) = o.agent {
            a.extend(["--agent".into(), agent.to_string()]);
        }
        a.extend([
            "--iteration-timeout".into(),
            humantime::format_duration(o.iteration_timeout).to_string(),
        ]);
        if let Some(t) = o.max_time {
            a.extend([
                "--max-time".into(),
                humantime::format_duration(t).to_string(),
            ]);
        }
        if let Some(c) = o.max_cost {
            a.extend(["--max-cost".into(), c.to_string()]);
        }
        if let Some(n) = o.stall {
            a.extend(["--stall".into(), n.to_string()]);
        }
        a.extend(o.agent_args.iter().map(|x| format!("--agent-arg={x}")));
        a.push("--".into());
        a
    }

    /// A worker ended: merged when it finished its story, else reported.
    fn ended(
        &mut self,
        w: Worker,
        code: Option<i32>,
        queue: &mut VecDeque<(prd::Story, u32)>,
        failed: &mut Vec<String>,
    ) {
        let id = w.story.id.clone();
        let outcome = if code == Some(0) {
            self.merge(&w)
        } else {
            Err(WorkerError::Unfinished {
                code,
                log: w.dir.with_extension("log"),
            })
        };
        let _ = ralph_base::git::run(
            &self.root,
            &[
                "worktree",
                "remove",
                "--force",
                &w.dir.display().to_string(),
            ],
        );
        match outcome {
            Ok(()) => {
                let _ = ralph_base::git::run(&self.root, &["branch", "-D", &w.branch]);
                say(&format!(
                    "ralph-gate loop run: {id} passes and is merged into {}",
                    self.start
                ));
            }
            Err(why) if code == Some(0) && w.tries + 1 < TRIES => {
                say(&format!("ralph-gate loop run: {id} could not be merged ({why}); retried on the new base"));
                queue.push_back((w.story, w.tries + 1));
            }
            Err(why) => {
                say(&format!("ralph-gate loop run: {id}: {why}"));
                failed.push(format!("{id}: {why}"));
            }
        }
    }

    /// Rebases the worker's branch onto the starting branch, checks the story again when the
    /// base moved, fast-forwards the starting branch, and sets the story's `passes`.
    fn merge(&mut self, w: &Worker) -> Result<(), WorkerError> {
        let in_worker = |args: &[&str]| ralph_base::git::run(&w.dir, args);
        // What the worker left uncommitted (its prd and progress copies) is not its work.
        in_worker(&["reset", "-q", "--hard"])?;
        in_worker(&["clean", "-q", "-fd"])?;
        let before = in_worker(&["rev-parse", "HEAD"])?;
        if let Err(source) = in_worker(&["rebase", "-q", &self.start]) {
            let _ = in_worker(&["rebase", "--abort"]);
            return Err(WorkerError::Conflict {
                base: self.start.clone(),
                source,
            });
        }
        if in_worker(&["rev-parse", "HEAD"])? != before {
            let place = story::Place {
                root: &w.dir,
                config: self.config,
                env: self.env,
            };
            let last = self
                .all
                .iter()
                .all(|id| *id == w.story.id || self.flags.get(id).copied().unwrap_or(false));
            let failing = story::check(&place, &w.story, None, (&self.before, last))?;
            if !failing.is_empty() {
                return Err(WorkerError::Fails(failing));
            }
        }
        ralph_base::git::run(&self.root, &["merge", "-q", "--ff-only", &w.branch])?;
        self.flags.insert(w.story.id.clone(), true);
        prd::put(&self.prd, &self.flags)?;
        let prd_rel = self
            .prd
            .strip_prefix(&self.root)
            .unwrap_or(&self.prd)
            .display()
            .to_string();
        ralph_base::git::run(
            &self.root,
            &[
                "commit",
                "-q",
                "-m",
                &format!("ralph-gate: {} passes", w.story.id),
                "--",
                &prd_rel,
            ],
        )?;
        prd::progress(
            &self.prd,
            &format!("{} passes; merged into {}", w.story.id, self.start),
        );
        Ok(())
    }

    fn summary(&self, failed: &[String]) -> u8 {
        if failed.is_empty() {
            say(&format!(
                "ralph-gate loop run: done: every story passes and is merged into {}",
                self.start
            ));
            0
        } else {
            say(&format!(
                "ralph-gate loop run: ended unfinished; stories that did not land:\n  {}",
                failed.join("\n  ")
            ));
            1
        }
    }
}

fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}
