//! Gate command templates: `run = "python3 -m py_compile {files}"`.
//!
//! File names never reach a shell parser. A template is rendered into a fixed shell script in
//! which `{file}` becomes `"$1"`, `{files}` becomes `"$@"` and `{root}` becomes
//! `"$RALPH_GATE_ROOT"`; the paths themselves travel as separate argv entries of
//! `sh -c SCRIPT ralph-gate PATH...`. A file called `$(touch pwned).py` is therefore one
//! argument, not shell code, whatever it contains.

use serde::de::{self, Deserializer};
use std::fmt;

pub const ROOT_ENV: &str = "RALPH_GATE_ROOT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    File,
    Files,
    Root,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Text(String),
    Slot(Placeholder),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTemplate {
    source: String,
    segments: Vec<Segment>,
}

impl CommandTemplate {
    /// Placeholders are `{name}` with a lowercase identifier, not preceded by `$` (so `${HOME}`
    /// stays shell) and not containing spaces or commas (so `awk '{print $1}'` and brace
    /// expansion `{a,b}` stay shell). `{{` and `}}` write a literal brace.
    pub fn parse(source: &str) -> Result<Self, String> {
        if source.trim().is_empty() {
            return Err("empty command".into());
        }
        let mut segments = Vec::new();
        let mut text = String::new();
        let mut rest = source;
        while let Some(ch) = rest.chars().next() {
            if rest.starts_with("{{") || rest.starts_with("}}") {
                text.push(ch);
                rest = &rest[2..];
                continue;
            }
            if ch == '{' && !text.ends_with('$') {
                if let Some(name) = placeholder_name(&rest[1..]) {
                    let slot = match name {
                        "file" => Placeholder::File,
                        "files" => Placeholder::Files,
                        "root" => Placeholder::Root,
                        other => {
                            return Err(format!(
                                "unknown placeholder `{{{other}}}` in command `{source}`: \
                                 use {{file}}, {{files}} or {{root}} (write `{{{{` for a literal brace)"
                            ))
                        }
                    };
                    if !text.is_empty() {
                        segments.push(Segment::Text(std::mem::take(&mut text)));
                    }
                    segments.push(Segment::Slot(slot));
                    rest = &rest[name.len() + 2..];
                    continue;
                }
            }
            text.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
        if !text.is_empty() {
            segments.push(Segment::Text(text));
        }
        Ok(Self {
            source: source.to_string(),
            segments,
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn uses(&self, p: Placeholder) -> bool {
        self.segments.contains(&Segment::Slot(p))
    }

    /// The script given to `sh -c`; the files follow as positional parameters.
    pub fn shell_script(&self) -> String {
        let mut out = String::new();
        for seg in &self.segments {
            match seg {
                Segment::Text(t) => out.push_str(t),
                Segment::Slot(Placeholder::File) => out.push_str("\"$1\""),
                Segment::Slot(Placeholder::Files) => out.push_str("\"$@\""),
                Segment::Slot(Placeholder::Root) => out.push_str(&format!("\"${ROOT_ENV}\"")),
            }
        }
        out
    }

    /// What the command looks like with its arguments filled in, quoted so a person can paste it
    /// into a shell. For display only: execution never goes through this string.
    pub fn display_with(&self, files: &[String], root: &str) -> String {
        let mut out = String::new();
        for seg in &self.segments {
            match seg {
                Segment::Text(t) => out.push_str(t),
                Segment::Slot(Placeholder::File) => {
                    out.push_str(&files.first().map(|f| shell_quote(f)).unwrap_or_default())
                }
                Segment::Slot(Placeholder::Files) => {
                    let quoted: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
                    out.push_str(&quoted.join(" "))
                }
                Segment::Slot(Placeholder::Root) => out.push_str(&shell_quote(root)),
            }
        }
        out
    }
}

fn placeholder_name(after_brace: &str) -> Option<&str> {
    let end = after_brace.find('}')?;
    let name = &after_brace[..end];
    let is_ident = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && name.as_bytes()[0].is_ascii_lowercase();
    is_ident.then_some(name)
}

/// POSIX single-quote quoting, for display.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

impl fmt::Display for CommandTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl<'de> serde::Deserialize<'de> for CommandTemplate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CommandTemplate::parse(&s).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_positional_parameters() {
        let t = CommandTemplate::parse("tsc --noEmit {files} && echo {root} {file}").unwrap();
        assert_eq!(
            t.shell_script(),
            "tsc --noEmit \"$@\" && echo \"$RALPH_GATE_ROOT\" \"$1\""
        );
    }

    #[test]
    fn shell_syntax_that_looks_like_braces_is_left_alone() {
        let src = "awk '{print $1}' x && echo ${HOME} {a,b} {{file}}";
        let t = CommandTemplate::parse(src).unwrap();
        assert_eq!(
            t.shell_script(),
            "awk '{print $1}' x && echo ${HOME} {a,b} {file}"
        );
        assert!(!t.uses(Placeholder::File));
    }

    #[test]
    fn unknown_placeholder_is_named() {
        let err = CommandTemplate::parse("lint {staged_files}").unwrap_err();
        assert!(err.contains("{staged_files}"), "{err}");
    }

    #[test]
    fn display_quotes_hostile_names() {
        let t = CommandTemplate::parse("cat {files}").unwrap();
        let shown = t.display_with(&["a b".into(), "$(x)".into(), "it's".into()], ".");
        assert_eq!(shown, "cat 'a b' '$(x)' 'it'\\''s'");
    }
}
