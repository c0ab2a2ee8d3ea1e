//! The loop state file, in the exact format of the official ralph-loop plugin, so a loop
//! started with `/ralph-loop` is gated by ralph-gate (`/cancel-ralph` removes the file; the
//! pin then holds the loop until a person cancels it):
//!
//! ```text
//! ---
//! active: true
//! iteration: 1
//! session_id: abc123
//! max_iterations: 20
//! completion_promise: "DONE"
//! started_at: "2026-11-21T10:00:00Z"
//! ---
//!
//! The prompt text, any number of lines.
//! ```
//!
//! `.claude/ralph-loop.local.md` holds one loop; `.claude/ralph-loop-<id>.local.md` (with a
//! `loop_id` field) holds each further one. Loops of other agents use the same format in
//! their own folder (`.codex/`, `.gemini/`, ...) with an `agent:` field, so a repository
//! driven by Codex never gets a `.claude/`, and one agent's stop never captures another's
//! loop. Updates rewrite single lines, as the plugin's
//! `sed` does, so fields ralph-gate does not know and the prompt survive byte for byte.

use ralph_base::agent::Agent;
use ralph_base::state::Layout;
pub use ralph_base::state::{session_key, ANY_SESSION};
use std::path::{Path, PathBuf};

pub use ralph_base::state::{is_state_name, MAIN_FILE};

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StateError {
    #[error("does not start with a `---` front-matter line")]
    NoFrontMatter,
    #[error("the front matter is never closed with a `---` line")]
    Unclosed,
    #[error("`{field}` must be a whole number, not `{value}`")]
    NotANumber { field: &'static str, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopState {
    /// The front-matter lines as read, for faithful rewriting.
    lines: Vec<String>,
    /// Everything after the closing `---` line, untouched.
    body: String,
    pub active: bool,
    pub iteration: u64,
    /// Empty: not yet claimed by a session.
    pub session_id: String,
    /// 0 = unlimited.
    pub max_iterations: u64,
    pub completion_promise: Option<String>,
    pub started_at: Option<String>,
    pub loop_id: Option<String>,
    /// The digest of the stop gates pinned at loop start (see [`ralph_surface::pin`]).
    pub gates_pin: Option<String>,
    /// The agent whose stops this loop holds (`None`: Claude Code, as the plugin writes it).
    pub agent: Option<String>,
    /// The loop holds the session's own goal (`/goal`) to the gates; the prompt is the
    /// goal's condition, and no promise is needed ([`crate::goals`]).
    pub goal: bool,
    /// How far a goal's record was read at its last held stop ([`crate::goals::Goal::mark`]):
    /// a record of its end from before then is not honoured.
    pub goal_seen: u64,
    /// The file's front matter ends its lines with CRLF: updates keep it so.
    crlf: bool,
}

impl LoopState {
    pub fn new(
        prompt: &str,
        max_iterations: u64,
        promise: Option<&str>,
        session: &str,
        loop_id: Option<&str>,
        now: &str,
        agent: Agent,
    ) -> Self {
        let mut text = String::from("---\nactive: true\niteration: 1\n");
        text.push_str(&format!("session_id: {}\n", session_key(session)));
        text.push_str(&format!("max_iterations: {max_iterations}\n"));
        match promise {
            Some(p) => text.push_str(&format!("completion_promise: \"{p}\"\n")),
            None => text.push_str("completion_promise: null\n"),
        }
        text.push_str(&format!("started_at: \"{now}\"\n"));
        if let Some(id) = loop_id {
            text.push_str(&format!("loop_id: {id}\n"));
        }
        if agent != Agent::Claude {
            text.push_str(&format!("agent: {agent}\n"));
        }
        text.push_str(&format!("---\n\n{}\n", prompt.trim_end()));
        Self::parse(&text).expect("a freshly rendered state parses")
    }

    pub fn parse(text: &str) -> Result<Self, StateError> {
        let crlf = text.starts_with("---\r\n");
        let mut rest = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
            .ok_or(StateError::NoFrontMatter)?;
        let mut lines = Vec::new();
        let body = loop {
            let (line, after) = match rest.find('\n') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, ""),
            };
            let line = line.trim_end_matches('\r');
            if line == "---" {
                break after.to_string();
            }
            if rest.is_empty() {
                return Err(StateError::Unclosed);
            }
            lines.push(line.to_string());
            rest = after;
        };
        let field = |key: &str| -> Option<String> {
            lines.iter().find_map(|l| {
                l.strip_prefix(key)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|v| v.trim().to_string())
            })
        };
        let number = |key: &'static str, default: u64| -> Result<u64, StateError> {
            match field(key) {
                None => Ok(default),
                Some(v) => v.parse().map_err(|_| StateError::NotANumber {
                    field: key,
                    value: v,
                }),
            }
        };
        let unquote = |v: String| -> String {
            if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
                v[1..v.len() - 1].to_string()
            } else {
                v
            }
        };
        Ok(Self {
            active: field("active").is_none_or(|v| v != "false"),
            iteration: number("iteration", 1)?,
            session_id: field("session_id").map(unquote).unwrap_or_default(),
            max_iterations: number("max_iterations", 0)?,
            completion_promise: field("completion_promise")
                .filter(|v| v != "null" && !v.is_empty())
                .map(unquote),
            started_at: field("started_at").map(unquote),
            loop_id: field("loop_id").map(unquote),
            gates_pin: field("gates_pin").map(unquote).filter(|v| !v.is_empty()),
            agent: field("agent").map(unquote).filter(|v| !v.is_empty()),
            goal: field("goal").is_some_and(|v| v == "true"),
            goal_seen: number("goal_seen", 0)?,
            crlf,
            lines,
            body,
        })
    }

    pub fn render(&self) -> String {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut out = format!("---{eol}");
        for l in &self.lines {
            out.push_str(l);
            out.push_str(eol);
        }
        out.push_str("---");
        out.push_str(eol);
        out.push_str(&self.body);
        out
    }

    /// The prompt: the body without the blank lines around it.
    pub fn prompt(&self) -> &str {
        self.body.trim_matches(['\n', '\r'])
    }

    pub fn set_iteration(&mut self, n: u64) {
        self.iteration = n;
        self.set_line("iteration", &n.to_string());
    }

    pub fn claim(&mut self, session: &str) {
        self.session_id = session_key(session);
        self.set_line("session_id", &self.session_id.clone());
    }

    /// Makes this a goal's loop (see [`LoopState::goal`]).
    pub fn mark_goal(&mut self) {
        self.goal = true;
        self.set_line("goal", "true");
    }

    pub fn set_goal_seen(&mut self, mark: u64) {
        self.goal_seen = mark;
        self.set_line("goal_seen", &mark.to_string());
    }

    pub fn set_pin(&mut self, digest: &str) {
        self.gates_pin = Some(digest.to_string());
        self.set_line("gates_pin", digest);
    }

    /// The agent this loop belongs to; an unknown name is nobody's.
    pub fn agent(&self) -> Option<Agent> {
        match &self.agent {
            None => Some(Agent::Claude),
            Some(name) => Agent::from_name(name),
        }
    }

    pub fn limit_reached(&self) -> bool {
        self.max_iterations > 0 && self.iteration >= self.max_iterations
    }

    fn set_line(&mut self, key: &str, value: &str) {
        let new = format!("{key}: {value}");
        match self
            .lines
            .iter_mut()
            .find(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
        {
            Some(line) => *line = new,
            None => {
                // Keep the plugin's field order: session_id goes after iteration; fields of
                // ralph-gate's own go last.
                let at = if key == "session_id" {
                    self.lines
                        .iter()
                        .position(|l| l.starts_with("iteration:"))
                        .map_or(self.lines.len(), |i| i + 1)
                } else {
                    self.lines.len()
                };
                self.lines.insert(at, new);
            }
        }
    }
}

/// Why a state file could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[source] std::sync::Arc<std::io::Error>),
    #[error(transparent)]
    Format(#[from] StateError),
}

/// A state file on disk, or one that could not be read.
#[derive(Debug)]
pub struct LoopFile {
    pub path: PathBuf,
    pub state: Result<LoopState, ReadError>,
}

impl LoopFile {
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Whether a loop may exist, judged without the stop lock. A directory listing races with a
/// concurrent write-then-rename and can miss the renamed entry altogether, so this errs on
/// the side of "maybe": the main file is looked up by path (a path always resolves to the
/// old or the new file), and a temporary file from a write in flight counts too. Under the
/// lock, where every writer that replaces a loop file also holds it, `list` is exact.
pub fn maybe_any(layout: &Layout) -> bool {
    Agent::ALL.iter().any(|a| {
        let dir = layout.loop_dir(*a);
        if dir.join(MAIN_FILE).exists() {
            return true;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("ralph-loop") || name.starts_with(".ralph-gate-")
        })
    })
}

/// The name a loop's progress record, pin and lock are kept under: the file name, prefixed
/// with the agent for loops outside `.claude/` (`codex-ralph-loop.local.md`), so loops of two
/// agents never share one.
pub fn key(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    match Agent::ALL.iter().find(|a| a.state_dir() == dir) {
        Some(Agent::Claude) | None => name,
        Some(a) => format!("{a}-{name}"),
    }
}

/// The agent and the state file's name a key (see [`key`]) stands for.
fn split_key(key_: &str) -> (Agent, &str) {
    Agent::ALL
        .iter()
        .copied()
        .filter(|a| *a != Agent::Claude)
        .find_map(|a| key_.strip_prefix(&format!("{a}-")).map(|name| (a, name)))
        .unwrap_or((Agent::Claude, key_))
}

/// The agent whose loop `key` (see [`key`]) names.
pub fn agent_of(key_: &str) -> Agent {
    split_key(key_).0
}

/// True when `key` (see [`key`]) names a loop state file that exists in the workspace.
pub fn exists(layout: &Layout, key_: &str) -> bool {
    let (agent, name) = split_key(key_);
    is_state_name(name) && layout.loop_dir(agent).join(name).exists()
}

/// Every loop state file of every agent in the workspace, Claude's main one first.
pub fn list(layout: &Layout) -> Vec<LoopFile> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for agent in Agent::ALL {
        let Ok(entries) = std::fs::read_dir(layout.loop_dir(agent)) else {
            continue;
        };
        paths.extend(
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(is_state_name)
                }),
        );
    }
    let main = layout.loop_dir(Agent::Claude).join(MAIN_FILE);
    paths.sort_by_key(|p| (*p != main, p.clone()));
    paths
        .into_iter()
        .map(|path| LoopFile {
            state: read(&path),
            path,
        })
        .collect()
}

pub fn read(path: &Path) -> Result<LoopState, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReadError::Io(e.into()))?;
    Ok(LoopState::parse(&text)?)
}

/// Which loop a session's stop belongs to: its own, else an unclaimed one (to be claimed).
/// Loops owned by other sessions, and loops of other agents, are never ours.
pub fn select<'a>(files: &'a [LoopFile], session: &str, agent: Agent) -> Option<&'a LoopFile> {
    let session = session_key(session);
    let active = |f: &&LoopFile| {
        f.state
            .as_ref()
            .is_ok_and(|s| s.active && s.agent() == Some(agent))
    };
    files
        .iter()
        .filter(active)
        .find(|f| {
            f.state.as_ref().is_ok_and(|s| {
                (!session.is_empty() && s.session_id == session) || s.session_id == ANY_SESSION
            })
        })
        .or_else(|| {
            files
                .iter()
                .filter(active)
                .find(|f| f.state.as_ref().is_ok_and(|s| s.session_id.is_empty()))
        })
}

/// A short id for a further loop's file name.
pub fn new_id() -> String {
    let seed = format!(
        "{:?}{}{:?}",
        std::time::SystemTime::now(),
        std::process::id(),
        std::thread::current().id()
    );
    blake3::hash(seed.as_bytes()).to_hex()[..8].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLUGIN: &str = "---\nactive: true\niteration: 1\nsession_id: abc123\nmax_iterations: 20\ncompletion_promise: \"DONE\"\nstarted_at: \"2026-11-21T10:00:00Z\"\n---\n\nThe prompt text, any number of lines.\n--- a rule inside the prompt\nlast line\n";

    #[test]
    fn reads_the_plugins_format() {
        let s = LoopState::parse(PLUGIN).unwrap();
        assert!(s.active);
        assert_eq!(s.iteration, 1);
        assert_eq!(s.session_id, "abc123");
        assert_eq!(s.max_iterations, 20);
        assert_eq!(s.completion_promise.as_deref(), Some("DONE"));
        assert_eq!(s.started_at.as_deref(), Some("2026-11-21T10:00:00Z"));
        assert_eq!(
            s.prompt(),
            "The prompt text, any number of lines.\n--- a rule inside the prompt\nlast line"
        );
        assert_eq!(
            s.render(),
            PLUGIN,
            "an untouched state renders byte for byte"
        );
    }

    #[test]
    fn updates_touch_only_their_line() {
        let mut s = LoopState::parse(PLUGIN).unwrap();
        s.set_iteration(2);
        assert_eq!(s.render(), PLUGIN.replace("iteration: 1", "iteration: 2"));
        let unclaimed = PLUGIN.replace("session_id: abc123\n", "");
        let mut s = LoopState::parse(&unclaimed).unwrap();
        assert_eq!(s.session_id, "");
        s.claim("s2");
        assert_eq!(s.render(), PLUGIN.replace("abc123", "s2"));
    }

    #[test]
    fn crlf_files_stay_crlf_and_the_pin_goes_last() {
        let dos = PLUGIN.replace('\n', "\r\n");
        let mut s = LoopState::parse(&dos).unwrap();
        assert_eq!(s.render(), dos);
        s.set_iteration(3);
        s.set_pin("abc");
        let text = s.render();
        assert!(text.contains("iteration: 3\r\n"), "{text:?}");
        assert!(
            text.contains("started_at: \"2026-11-21T10:00:00Z\"\r\ngates_pin: abc\r\n---\r\n"),
            "{text:?}"
        );
        assert!(
            !text.replace("\r\n", "").contains('\n'),
            "no bare LF: {text:?}"
        );
        assert_eq!(
            LoopState::parse(&text).unwrap().gates_pin.as_deref(),
            Some("abc")
        );
    }

    #[test]
    fn null_promise_and_unlimited_iterations() {
        let s = LoopState::parse(
            &PLUGIN
                .replace("\"DONE\"", "null")
                .replace("max_iterations: 20", "max_iterations: 0"),
        )
        .unwrap();
        assert_eq!(s.completion_promise, None);
        assert!(!s.limit_reached());
    }

    #[test]
    fn new_state_round_trips() {
        let s = LoopState::new(
            "Fix it.\nAll of it.",
            5,
            Some("ALL DONE"),
            "",
            Some("a1b2c3d4"),
            "2026-11-22T10:00:00Z",
            Agent::Claude,
        );
        let again = LoopState::parse(&s.render()).unwrap();
        assert_eq!(again, s);
        assert_eq!(again.prompt(), "Fix it.\nAll of it.");
        assert_eq!(again.loop_id.as_deref(), Some("a1b2c3d4"));
        assert_eq!(again.completion_promise.as_deref(), Some("ALL DONE"));
    }

    #[test]
    fn corrupt_files_are_named_not_guessed() {
        assert_eq!(
            LoopState::parse("no front matter"),
            Err(StateError::NoFrontMatter)
        );
        assert_eq!(
            LoopState::parse("---\niteration: 1\n"),
            Err(StateError::Unclosed)
        );
        assert!(matches!(
            LoopState::parse("---\niteration: two\n---\nx\n"),
            Err(StateError::NotANumber {
                field: "iteration",
                ..
            })
        ));
    }

    #[test]
    fn a_key_names_its_agent_and_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path());
        for agent in Agent::ALL {
            let path = layout.loop_dir(agent).join("ralph-loop-ab12.local.md");
            let k = key(&path);
            assert_eq!(agent_of(&k), agent, "{k}");
            assert!(!exists(&layout, &k));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
            assert!(exists(&layout, &k), "{k}");
        }
    }

    #[test]
    fn selection_prefers_own_then_unclaimed_never_foreign() {
        let mk = |name: &str, session: &str| LoopFile {
            path: PathBuf::from(name),
            state: Ok(LoopState::new(
                "p",
                0,
                None,
                session,
                None,
                "t",
                Agent::Claude,
            )),
        };
        let files = vec![mk("a", "other"), mk("b", ""), mk("c", "me")];
        assert_eq!(
            select(&files, "me", Agent::Claude).unwrap().path,
            PathBuf::from("c")
        );
        assert_eq!(
            select(&files, "new", Agent::Claude).unwrap().path,
            PathBuf::from("b")
        );
        assert!(
            select(&files[..1], "me", Agent::Claude).is_none(),
            "another session's loop is not ours"
        );
        assert!(
            select(&files, "new", Agent::Codex).is_none(),
            "a Claude loop never captures a Codex stop"
        );
        let codex = vec![LoopFile {
            path: PathBuf::from("x"),
            state: Ok(LoopState::new("p", 0, None, "", None, "t", Agent::Codex)),
        }];
        assert_eq!(codex[0].state.as_ref().unwrap().agent(), Some(Agent::Codex));
        assert!(select(&codex, "s", Agent::Claude).is_none());
        assert!(select(&codex, "s", Agent::Codex).is_some());
        let shared = vec![LoopFile {
            path: PathBuf::from("y"),
            state: Ok(LoopState::new(
                "p",
                0,
                None,
                ANY_SESSION,
                None,
                "t",
                Agent::Opencode,
            )),
        }];
        assert_eq!(shared[0].state.as_ref().unwrap().session_id, "*");
        for session in ["run-1", "run-2"] {
            assert!(
                select(&shared, session, Agent::Opencode).is_some(),
                "any session of the agent stops a shared loop"
            );
        }
    }

    #[test]
    fn a_hostile_session_id_changes_no_other_field_and_still_selects() {
        let hostile = "s\n---\nmax_iterations: 0\niteration: 99 \"q\"";
        let mut s = LoopState::parse(PLUGIN).unwrap();
        s.claim(hostile);
        let back = LoopState::parse(&s.render()).unwrap();
        assert_eq!(back.max_iterations, 20);
        assert_eq!(back.iteration, 1);
        assert_eq!(back.prompt(), s.prompt());
        assert_eq!(back.session_id, s.session_id);
        assert!(!back.session_id.contains('\n'));
        let files = vec![LoopFile {
            path: PathBuf::from("a"),
            state: Ok(back),
        }];
        assert!(
            select(&files, hostile, Agent::Claude).is_some(),
            "the same session finds its loop"
        );
        assert!(
            select(&files, "s", Agent::Claude).is_none(),
            "a prefix of it does not"
        );
        assert_eq!(
            session_key("0f8fad5b-d9cb-469f-a165-70867728950e"),
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            "Claude Code's UUIDs are stored as the plugin stores them"
        );
    }
}
