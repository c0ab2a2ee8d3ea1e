//! Remembered shim answers as guesses, for a run that may trust nothing an earlier run left
//! (a fresh verification, `check --no-cache`).
//!
//! Such a run must ask the version manager which program a shim runs, and `pyenv which` is
//! bash starting a dozen processes: tens of milliseconds the gate used to wait for before it
//! could start. Instead the gate starts at once on the answer remembered for the same
//! settings, while the manager is asked on a thread of its own. The run's outcome counts only
//! if the manager then gives the same answer ([`Guesses::confirm`]); otherwise the job runs
//! again on the manager's answer. A forged or stale remembered answer costs one more run,
//! never a verdict.

use super::pending::Pending;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A remembered answer a tool's identity was built on before the manager confirmed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guess {
    /// The shim's memo key (see [`super::shims::memo_key`]).
    memo: String,
    target: PathBuf,
}

impl Guess {
    pub fn memo(&self) -> &str {
        &self.memo
    }

    pub fn target(&self) -> &Path {
        &self.target
    }
}

/// What to ask a version manager: `argv` run in `cwd` with `env` added.
pub struct Question {
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// The tool asked about and its manager, for the message when there is no answer.
    pub name: String,
    pub manager: &'static str,
}

/// The manager's answer: the program the shim runs, or why it cannot be told.
pub type Answer = Result<PathBuf, Unanswered>;

/// Why a version manager could not say which program its shim runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    /// The manager's command failed (`pyenv which NAME`, shown).
    #[error("cannot tell which `{name}` the {manager} shim runs here: `{command}` failed")]
    Failed {
        name: String,
        manager: &'static str,
        command: String,
    },
    /// It answered something that is not a program.
    #[error("cannot tell which `{name}` the {manager} shim runs here: it answered `{said}`")]
    NotAProgram {
        name: String,
        manager: &'static str,
        said: String,
    },
    /// The question was never answered (the thread asking it failed).
    #[error("asking the version manager failed")]
    NoAnswer,
}

pub struct Guesses {
    remembered: BTreeMap<String, PathBuf>,
    /// The managers' answers, by memo key: each asked once, on a thread of its own.
    asked: Mutex<HashMap<String, Arc<Pending<Answer>>>>,
}

impl Guesses {
    /// `remembered`: memo key -> the program an earlier run was told; nothing in it is trusted.
    pub fn new(remembered: BTreeMap<String, PathBuf>) -> Self {
        Self {
            remembered,
            asked: Mutex::new(HashMap::new()),
        }
    }

    /// The program the shim with `memo` runs: the manager's answer once it is known; before,
    /// the remembered one, else the one `computed` reads from the manager's own files (either
    /// only if `plausible`), returned with the guess to confirm; without one, the manager's
    /// answer, waited for. The manager is asked once per memo key.
    pub fn target(
        &self,
        memo: &str,
        question: impl FnOnce() -> Question,
        ask: fn(&Question) -> Answer,
        plausible: impl Fn(&Path) -> bool,
        computed: impl FnOnce() -> Option<PathBuf>,
    ) -> (Answer, Option<Guess>) {
        let asked = {
            let mut all = self.asked.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(all.entry(memo.to_string()).or_insert_with(|| {
                let question = question();
                Arc::new(Pending::start(move || ask(&question)))
            }))
        };
        if !asked.settled() {
            let hint = (self.remembered.get(memo).cloned())
                .filter(|h| plausible(h))
                .or_else(|| computed().filter(|h| plausible(h)));
            if let Some(hint) = hint {
                let guess = Guess {
                    memo: memo.to_string(),
                    target: hint.clone(),
                };
                return (Ok(hint), Some(guess));
            }
        }
        (answer(&asked), None)
    }

    /// True when the manager gave the guessed answer (waiting for it if need be).
    pub fn confirm(&self, guess: &Guess) -> bool {
        let asked = self
            .asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&guess.memo)
            .cloned();
        asked.is_some_and(|a| answer(&a).as_ref() == Ok(&guess.target))
    }
}

fn answer(asked: &Pending<Answer>) -> Answer {
    asked.get().cloned().unwrap_or(Err(Unanswered::NoAnswer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question {
            argv: Vec::new(),
            cwd: PathBuf::from("/"),
            env: Vec::new(),
            name: "py".to_string(),
            manager: "pyenv",
        }
    }

    fn says_one(_: &Question) -> Answer {
        Ok(PathBuf::from("/m/versions/1/bin/py"))
    }

    fn fails(_: &Question) -> Answer {
        Err(Unanswered::NoAnswer)
    }

    fn remembering(target: &str) -> Guesses {
        Guesses::new(BTreeMap::from([("k".to_string(), PathBuf::from(target))]))
    }

    #[test]
    fn a_remembered_answer_is_a_guess_the_manager_must_confirm() {
        let g = remembering("/m/versions/1/bin/py");
        let (answer, guess) = g.target("k", question, says_one, |_| true, || None);
        assert_eq!(answer, Ok(PathBuf::from("/m/versions/1/bin/py")));
        assert!(g.confirm(&guess.expect("a guess")));
    }

    #[test]
    fn a_wrong_guess_is_refused_and_the_manager_answers_from_then_on() {
        let g = remembering("/m/versions/2/bin/py");
        let (_, guess) = g.target("k", question, says_one, |_| true, || None);
        assert!(!g.confirm(&guess.expect("a guess")));
        let (answer, again) = g.target("k", question, says_one, |_| true, || None);
        assert_eq!(answer, Ok(PathBuf::from("/m/versions/1/bin/py")));
        assert_eq!(again, None, "no second guess once the manager answered");
    }

    #[test]
    fn a_failed_question_refutes_every_guess() {
        let g = remembering("/m/versions/1/bin/py");
        let (_, guess) = g.target("k", question, fails, |_| true, || None);
        assert!(!g.confirm(&guess.expect("a guess")));
        assert!(g.target("k", question, fails, |_| true, || None).0.is_err());
    }

    #[test]
    fn with_no_memory_the_managers_own_files_give_the_guess_it_must_confirm() {
        let none = Guesses::new(BTreeMap::new());
        let read = || Some(PathBuf::from("/m/versions/1/bin/py"));
        let (answer, guess) = none.target("k", question, says_one, |_| true, read);
        assert_eq!(answer, Ok(PathBuf::from("/m/versions/1/bin/py")));
        assert!(none.confirm(&guess.expect("a guess from the files")));
        let wrong = Guesses::new(BTreeMap::new());
        let stale = || Some(PathBuf::from("/m/versions/2/bin/py"));
        let (_, guess) = wrong.target("k", question, says_one, |_| true, stale);
        assert!(!wrong.confirm(&guess.expect("a guess")));
        let implausible = Guesses::new(BTreeMap::new());
        let (_, guess) = implausible.target("k", question, says_one, |_| false, read);
        assert_eq!(guess, None, "an implausible reading is no guess");
    }

    #[test]
    fn without_a_plausible_memory_the_manager_is_waited_for() {
        let g = remembering("/elsewhere/py");
        let (answer, guess) = g.target("k", question, says_one, |p| p.starts_with("/m"), || None);
        assert_eq!(answer, Ok(PathBuf::from("/m/versions/1/bin/py")));
        assert_eq!(guess, None);
        let none = Guesses::new(BTreeMap::new());
        assert_eq!(
            none.target("k", question, says_one, |_| true, || None).1,
            None
        );
    }
}
