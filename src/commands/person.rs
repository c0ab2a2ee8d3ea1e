//! A person's commands (`loop approve`, `loop cancel`): taken only from a process no agent
//! of this project is above (`ralph_loop::person` decides from the kernel's facts), and,
//! confirmed by typing back a code shown on the command's own terminal.

use super::AppError;
use ralph_base::env::Environment;
use ralph_base::state::Layout;
use ralph_loop::journal::{self, Entry, LoopEvent};
use std::io::{BufRead, Write};
use std::time::Duration;

/// How long the confirmation waits for an answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(300);

/// Refuses `what` unless a person runs it: no agent whose hooks run here, nor a process an
/// agent's session started, is above this one (the terminal is asked for by
/// [`confirm_on_terminal`]). The refusal is journaled with the loop it was about.
pub fn only_a_person(
    layout: &Layout,
    env: &Environment,
    what: &str,
    loop_file: &str,
) -> Result<(), AppError> {
    let chain = ralph_base::process::own_ancestry();
    let known = ralph_loop::person::known(layout);
    // Where the kernel's facts cannot be read (no /proc), the variables still refuse.
    let own = env
        .in_agent
        .then(|| "it runs inside an agent's session".to_string());
    let why = own.or_else(|| {
        ralph_loop::person::judge(&chain, &known)
            .err()
            .map(|r| r.to_string())
    });
    let Some(why) = why else {
        return Ok(());
    };
    let _ = journal::append(
        layout,
        Entry::Refused(LoopEvent::new(
            journal::who(env),
            loop_file,
            format!("`{what}`: {why}"),
        )),
    );
    Err(AppError::AgentRefused(format!(
        "`{what}` is for a person, and {why}. Run it from your own terminal."
    )))
}

/// Shows `question` and a code on this process's terminal (`/dev/tty`, not its output,
/// which a program that started it reads) and waits for the code to be typed back.
pub fn confirm_on_terminal(question: &str) -> Result<(), AppError> {
    let no = |why: String| AppError::NotConfirmed(why);
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| no(format!("no terminal to confirm on ({e}); nothing was done")))?;
    let code = code();
    write!(
        tty,
        "{question}\nType {code} to confirm (anything else leaves it as it is): "
    )
    .and_then(|()| tty.flush())
    .map_err(|e| {
        no(format!(
            "cannot ask on the terminal ({e}); nothing was done"
        ))
    })?;
    let answer = read_line_within(tty, ANSWER_WITHIN)
        .ok_or_else(|| no("no answer on the terminal; nothing was done".into()))?;
    if answer.trim() == code {
        Ok(())
    } else {
        Err(no(format!(
            "the code typed was not {code}; nothing was done"
        )))
    }
}

/// Four digits, different on every call: typed back only by whoever reads the terminal.
fn code() -> String {
    use std::hash::BuildHasher;
    let seed = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
    format!("{:04}", seed % 10_000)
}

/// One line from `tty`, or `None` when none comes within `limit` (the reader is left
/// blocked; the process ends soon after).
fn read_line_within(tty: std::fs::File, limit: Duration) -> Option<String> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if std::io::BufReader::new(tty).read_line(&mut line).is_ok() {
            let _ = send.send(line);
        }
    });
    receive.recv_timeout(limit).ok()
}
