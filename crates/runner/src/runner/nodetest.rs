//! What node's test runner (`node --test`, and whatever starts it: `npm test`, a script)
//! says it ran. Every run of a gate gets ralph-gate's reporter through `NODE_OPTIONS`
//! (`--test-reporter=<run folder>/ralph_gate_reporter.mjs`): it writes the runner's output as
//! node's default reporter would (TAP when the output is not a terminal, spec on one or from
//! node 23), and on the side each test that ran, by file and name path. A node that is not
//! running tests only parses the option.
//!
//! Where the command chose reporters itself (`--test-reporter` on its command line), node
//! refuses the mix before any test runs; the run is then made again as it was given, and
//! what it ran is not known. Known by effect: the reporter was never loaded.

use ralph_base::env::Environment;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const REPORTER: &str = include_str!("ralph_gate_reporter.mjs");
const FILE: &str = "ralph_gate_reporter.mjs";

/// One run's reporter: a folder (the module, and `told/` for what it writes) under an
/// unguessable name in the temporary folder, removed when dropped.
pub struct Listening {
    dir: PathBuf,
}

/// A line the reporter writes: that it was loaded, or a test that ran.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(default)]
    loaded: bool,
    #[serde(default)]
    file: String,
    #[serde(default)]
    path: Vec<String>,
}

impl Listening {
    /// A new reporter, or `None` when it cannot be made or named in `NODE_OPTIONS` (which
    /// splits on white space and reads quotes and backslashes): the run goes on unheard.
    pub fn open() -> Option<Self> {
        let dir = super::job::unguessable(&std::env::temp_dir().join("ralph-gate-nodetest"));
        let name = dir.to_str()?;
        if name.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
            return None;
        }
        std::fs::create_dir_all(dir.join("told")).ok()?;
        std::fs::write(dir.join(FILE), REPORTER).ok()?;
        Some(Self { dir })
    }

    /// `NODE_OPTIONS` with the reporter added, unless it names reporters already (the
    /// gate's own `env`, else the environment's).
    pub fn vars(
        &self,
        gate_env: &BTreeMap<String, String>,
        env: &Environment,
    ) -> Vec<(OsString, OsString)> {
        let given = super::given_var(gate_env, env, "NODE_OPTIONS").unwrap_or_default();
        if given.to_string_lossy().contains("--test-reporter") {
            return Vec::new();
        }
        let mut value = given;
        if !value.is_empty() {
            value.push(" ");
        }
        value.push("--test-reporter=");
        value.push(self.dir.join(FILE));
        vec![("NODE_OPTIONS".into(), value)]
    }

    fn lines(&self) -> Vec<Line> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("told")) else {
            return Vec::new();
        };
        let mut found: Vec<(OsString, String)> = entries
            .flatten()
            .filter_map(|e| Some((e.file_name(), std::fs::read_to_string(e.path()).ok()?)))
            .collect();
        found.sort();
        found
            .iter()
            .flat_map(|(_, text)| text.lines())
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The run failed because node would not take the reporter beside the command's own
    /// (`output` names the option, and the reporter never loaded): make it again without.
    pub fn refused(&self, output: &str) -> bool {
        output.contains("test-reporter") && !self.lines().iter().any(|l| l.loaded)
    }

    /// The tests node's runner said it ran, each `<file relative to root>: <name path>`;
    /// `None` when no runner loaded the reporter.
    pub fn ran(&self, root: &Path) -> Option<Vec<String>> {
        ids(&self.lines(), root)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Pure: the test IDs in the reporter's lines; `None` when it was never loaded.
fn ids(lines: &[Line], root: &Path) -> Option<Vec<String>> {
    if !lines.iter().any(|l| l.loaded) {
        return None;
    }
    let mut ran: Vec<String> = lines
        .iter()
        .filter(|l| !l.loaded && !l.path.is_empty())
        .map(|l| {
            let file = Path::new(&l.file);
            let file = file.strip_prefix(root).unwrap_or(file).display();
            // A file whose tests never reported is one test named by its full path, which
            // differs between checkouts: named by the file alone.
            match l.path.as_slice() {
                [only] if *only == l.file => format!("{file}: {file}"),
                path => format!("{file}: {}", path.join(" > ")),
            }
        })
        .collect();
    ran.sort();
    ran.dedup();
    Some(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Line {
        serde_json::from_str(text).expect("a line")
    }

    #[test]
    fn tests_are_named_by_file_under_the_root_and_name_path() {
        let lines = [
            line(r#"{"loaded":true}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["adds"]}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["group","inner"]}"#),
            line(r#"{"file":"/elsewhere/b.mjs","path":["b"]}"#),
            line(r#"{"file":"/p/test/a.test.js","path":["adds"]}"#),
            line(r#"{"file":"/p/c.mjs","path":["/p/c.mjs"]}"#),
        ];
        assert_eq!(
            ids(&lines, Path::new("/p")).expect("heard"),
            [
                "/elsewhere/b.mjs: b",
                "c.mjs: c.mjs",
                "test/a.test.js: adds",
                "test/a.test.js: group > inner"
            ]
        );
    }

    #[test]
    fn a_reporter_never_loaded_heard_nothing_and_one_loaded_may_have_run_none() {
        assert_eq!(ids(&[], Path::new("/p")), None);
        assert_eq!(
            ids(&[line(r#"{"loaded":true}"#)], Path::new("/p")),
            Some(Vec::new())
        );
    }
}
