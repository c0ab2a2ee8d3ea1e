//! Config errors always say where: file, line, column and the key path (`gate[2].timeout`).

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}", at.render(message))]
    Invalid { at: Location, message: String },
    #[error("{0}")]
    Other(String),
}

/// A place in a config file (or an embedded preset).
#[derive(Debug, Clone)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub key: Option<String>,
    pub snippet: Option<String>,
}

impl Location {
    fn render(&self, message: &str) -> String {
        let mut out = format!("{}:{}:{}: ", self.file, self.line, self.column);
        if let Some(key) = &self.key {
            out.push_str(&format!("`{key}`: "));
        }
        out.push_str(message);
        if let Some(snippet) = &self.snippet {
            out.push_str(&format!("\n  {:>4} | {}", self.line, snippet));
        }
        out
    }
}

impl ConfigError {
    /// An error at byte `offset` of `source`, read from `file`.
    pub fn at(file: &Path, source: &str, offset: usize, message: impl Into<String>) -> Self {
        ConfigError::Invalid {
            at: locate(&file.display().to_string(), source, offset),
            message: message.into(),
        }
    }

    pub fn from_toml(file: &Path, source: &str, err: &toml::de::Error) -> Self {
        let offset = err.span().map(|s| s.start).unwrap_or(0);
        let message = err.message().trim().to_string();
        ConfigError::at(file, source, offset, message)
    }
}

fn locate(file: &str, source: &str, offset: usize) -> Location {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..offset].chars().count() + 1;
    let snippet = source[line_start..]
        .lines()
        .next()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty());
    Location {
        file: file.to_string(),
        line,
        column,
        key: key_path_at(source, offset),
        snippet,
    }
}

/// The dotted key that the byte at `offset` belongs to, e.g. `gate[1].timeout` (gates counted
/// from 0 as in the file) or `defaults.jobs`. Good enough for hand-written config: it follows
/// table headers and `key =` lines, not every corner of TOML syntax.
fn key_path_at(source: &str, offset: usize) -> Option<String> {
    let mut table: Option<String> = None;
    let mut gate_index: Option<usize> = None;
    let mut key: Option<String> = None;
    let mut pos = 0;
    for line in source.split_inclusive('\n') {
        if pos > offset {
            break;
        }
        let t = line.trim();
        if t.starts_with("[[") {
            let name = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            if name == "gate" {
                gate_index = Some(gate_index.map_or(0, |i| i + 1));
            }
            table = Some(name.to_string());
            key = None;
        } else if t.starts_with('[') {
            table = Some(
                t.trim_start_matches('[')
                    .split(']')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string(),
            );
            key = None;
        } else if let Some((k, _)) = t.split_once('=') {
            let k = k.trim();
            if !k.is_empty() && !k.starts_with('#') && !k.contains(['"', '{', ',']) {
                key = Some(k.to_string());
            }
        }
        pos += line.len();
    }
    let table = match (table.as_deref(), gate_index) {
        (Some("gate"), Some(i)) => Some(format!("gate[{i}]")),
        (Some(t), _) => Some(t.to_string()),
        (None, _) => None,
    };
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (Some(t), None) => Some(t),
        (None, k) => k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_path_follows_gate_tables() {
        let src = "presets = []\n[defaults]\njobs = 2\n[[gate]]\nname = \"a\"\n[[gate]]\nname = \"b\"\ntimeout = \"x\"\n";
        let off = src.find("\"x\"").unwrap();
        assert_eq!(key_path_at(src, off).as_deref(), Some("gate[1].timeout"));
        let off = src.find("2\n").unwrap();
        assert_eq!(key_path_at(src, off).as_deref(), Some("defaults.jobs"));
    }

    #[test]
    fn location_has_line_and_column() {
        let src = "a = 1\nbb = oops\n";
        let loc = locate("ralph.toml", src, src.find("oops").unwrap());
        assert_eq!((loc.line, loc.column), (2, 6));
        assert_eq!(loc.snippet.as_deref(), Some("bb = oops"));
    }
}
