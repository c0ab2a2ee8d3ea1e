//! `loop run --prd prd.json`: the community's story list (`userStories` with `id`, `title`,
//! `description`, `acceptanceCriteria`, `priority`, `passes`; a story may name its own
//! `gates` and a `verify` command). Each iteration is told the highest-priority story that
//! does not pass (the lowest `priority` number, then file order). ralph-gate, not the agent,
//! sets `passes`: its own record of the flags lives in `.ralph/` and wins; a flag the agent
//! flipped in the file is put back. Everything else in the file is the agent's to edit.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PrdError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a prd: {why}", path.display())]
    Shape { path: PathBuf, why: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One user story.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    pub id: String,
    pub title: String,
    pub description: String,
    pub acceptance: Vec<String>,
    pub priority: i64,
    /// Its own gates (names from the config), checked with the stop gates.
    pub gates: Vec<String>,
    /// Its own check: a shell command run in the project, passing on exit 0.
    pub verify: Option<String>,
}

/// The flags ralph-gate keeps: which stories pass.
pub type Flags = BTreeMap<String, bool>;

/// The stories of the prd at `path`, in file order, and the `passes` flags the file says.
pub fn read(path: &Path) -> Result<(Vec<Story>, Flags), PrdError> {
    let v = value(path)?;
    let shape = |why: &str| PrdError::Shape {
        path: path.to_path_buf(),
        why: why.into(),
    };
    let list = v["userStories"]
        .as_array()
        .ok_or_else(|| shape("no `userStories` list"))?;
    let mut stories = Vec::new();
    let mut flags = Flags::new();
    for (i, s) in list.iter().enumerate() {
        let id = s["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| shape(&format!("story {} has no string `id`", i + 1)))?;
        if flags.insert(id.clone(), s["passes"] == true).is_some() {
            return Err(shape(&format!("the id `{id}` is used twice")));
        }
        let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
        let strings = |k: &str| -> Vec<String> {
            match &s[k] {
                Value::Array(a) => a
                    .iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect(),
                Value::String(one) => vec![one.clone()],
                _ => Vec::new(),
            }
        };
        stories.push(Story {
            id,
            title: text("title"),
            description: text("description"),
            acceptance: strings("acceptanceCriteria"),
            priority: s["priority"].as_i64().unwrap_or(i64::MAX),
            gates: strings("gates"),
            verify: s["verify"]
                .as_str()
                .map(str::to_string)
                .filter(|c| !c.trim().is_empty()),
        });
    }
    Ok((stories, flags))
}

/// Pure: the story to work on: the highest priority (lowest number) that does not pass.
pub fn next<'a>(stories: &'a [Story], flags: &Flags) -> Option<&'a Story> {
    stories
        .iter()
        .filter(|s| !flags.get(&s.id).copied().unwrap_or(false))
        .min_by_key(|s| s.priority)
}

/// Writes `flags` into the file's `passes` (keeping everything else) and returns the ids
/// whose flag the file had otherwise.
pub fn put(path: &Path, flags: &Flags) -> Result<Vec<String>, PrdError> {
    let mut v = value(path)?;
    let mut changed = Vec::new();
    if let Some(list) = v["userStories"].as_array_mut() {
        for s in list {
            let Some(id) = s["id"].as_str().map(str::to_string) else {
                continue;
            };
            let want = flags.get(&id).copied().unwrap_or(false);
            if (s["passes"] == true) != want {
                s["passes"] = Value::Bool(want);
                changed.push(id);
            }
        }
    }
    if !changed.is_empty() {
        let text = serde_json::to_string_pretty(&v).expect("a JSON value serialises") + "\n";
        ralph_base::atomic::write(path, text.as_bytes()).map_err(|source| PrdError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(changed)
}

fn value(path: &Path) -> Result<Value, PrdError> {
    let text = std::fs::read_to_string(path).map_err(|source| PrdError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| PrdError::Shape {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

/// The story, worded for the iteration's prompt.
pub fn brief(s: &Story) -> String {
    let mut out = format!(
        "\n\n---\nYour story this iteration: {}: {}\n",
        s.id, s.title
    );
    if !s.description.trim().is_empty() {
        out.push_str(&format!("{}\n", s.description.trim()));
    }
    if !s.acceptance.is_empty() {
        out.push_str("Acceptance criteria:\n");
        for a in &s.acceptance {
            out.push_str(&format!("- {a}\n"));
        }
    }
    out.push_str("Work on this story only. ralph-gate checks it after you stop and sets `passes` itself once its checks and every stop gate pass; do not edit `passes`.\n");
    out
}

/// Appends ralph-gate's line for an iteration to `progress.txt` beside the prd.
pub fn progress(prd: &Path, line: &str) {
    use std::io::Write;
    let path = prd.with_file_name("progress.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{} ralph-gate: {line}", ralph_loop::journal::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRD: &str = r#"{"project":"x","userStories":[
      {"id":"US-2","title":"Second","priority":2,"passes":false,"acceptanceCriteria":["b"]},
      {"id":"US-1","title":"First","priority":1,"passes":false,"gates":["python"],"verify":"test -f a"},
      {"id":"US-0","title":"Done","priority":0,"passes":true}]}"#;

    #[test]
    fn the_next_story_is_the_highest_priority_that_does_not_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prd.json");
        std::fs::write(&path, PRD).unwrap();
        let (stories, flags) = read(&path).unwrap();
        let s = next(&stories, &flags).unwrap();
        assert_eq!(
            (s.id.as_str(), s.gates.clone()),
            ("US-1", vec!["python".to_string()])
        );
        assert_eq!(s.verify.as_deref(), Some("test -f a"));
        let mut done = flags.clone();
        done.insert("US-1".into(), true);
        assert_eq!(next(&stories, &done).unwrap().id, "US-2");
        done.insert("US-2".into(), true);
        assert!(next(&stories, &done).is_none());
    }

    #[test]
    fn a_flag_flipped_in_the_file_is_put_back_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prd.json");
        std::fs::write(&path, PRD).unwrap();
        let (_, mine) = read(&path).unwrap();
        let edited = PRD.replace(
            r#""priority":2,"passes":false"#,
            r#""priority":2,"passes":true,"notes":"agent""#,
        );
        std::fs::write(&path, edited).unwrap();
        assert_eq!(put(&path, &mine).unwrap(), ["US-2"]);
        let (_, now) = read(&path).unwrap();
        assert_eq!(now, mine);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"notes\": \"agent\""));
        assert!(put(&path, &mine).unwrap().is_empty());
    }

    #[test]
    fn a_file_without_stories_or_with_a_repeated_id_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prd.json");
        std::fs::write(&path, "{}").unwrap();
        assert!(matches!(read(&path), Err(PrdError::Shape { .. })));
        std::fs::write(&path, r#"{"userStories":[{"id":"a"},{"id":"a"}]}"#).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("used twice"));
    }
}
