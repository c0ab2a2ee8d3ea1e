//! The tool configs of a surface: which options of which files decide what a tool checks,
//! and in which direction each moves. Only those options are read, so a config edit that
//! checks nothing less (a new dependency, a wider `include`, a script no gate runs) is not
//! a weakening; any edit of an option that is one is named with its file and line.

use super::source::Source;
use super::{Comparison, Finding, Reads, Rule, Setting};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod files;

pub use files::scripts_run;

/// The scripts and targets the gates run by name: `npm test`, `pnpm run lint`, `make check`.
#[derive(Debug, Default, Clone)]
pub struct Scripts {
    pub npm: BTreeSet<String>,
    pub make: BTreeSet<String>,
}

/// Every setting of `source` that can change a verdict of gates that read `reads`.
pub fn settings(source: &Source, reads: &Reads, scripts: &Scripts) -> Vec<Setting> {
    let mut out = Vec::new();
    for rel in &source.files {
        if rel.components().any(|c| c.as_os_str() == "node_modules") {
            continue;
        }
        let Some(kind) = files::Kind::of(rel, reads) else {
            continue;
        };
        let Some(text) = source.read_text(rel) else {
            continue;
        };
        let name = super::text(rel);
        let mut put = Put::new(&name, &text, &mut out);
        let dir = rel.parent().unwrap_or(Path::new(""));
        kind.extract(&mut put, &text, scripts, &|p: &str| {
            source.read_text(&ralph_plan::plan::drivers::join_inside(dir, p)?)
        });
    }
    for (name, bytes) in &source.outside {
        let text = String::from_utf8_lossy(bytes);
        let Some(kind) = files::Kind::outside(Path::new(name), reads) else {
            continue;
        };
        let mut put = Put::new(name, &text, &mut out);
        kind.extract(&mut put, &text, scripts, &|_: &str| None);
    }
    out
}

/// Collects one file's settings, finding each one's line.
pub struct Put<'a> {
    file: &'a str,
    text: &'a str,
    out: &'a mut Vec<Setting>,
}

impl<'a> Put<'a> {
    fn new(file: &'a str, text: &'a str, out: &'a mut Vec<Setting>) -> Self {
        Self { file, text, out }
    }

    /// `key` with `value`; its line is the first that names `needle`.
    pub fn put(&mut self, key: &str, value: String, rule: Rule, needle: &str) {
        self.out.push(Setting {
            file: self.file.to_string(),
            key: key.to_string(),
            value,
            line: line_of(self.text, needle),
            rule,
        });
    }

    pub fn list(&mut self, key: &str, entries: &[String], rule: Rule, needle: &str) {
        self.put(key, entries.join("\n"), rule, needle);
    }
}

fn line_of(text: &str, needle: &str) -> u32 {
    if needle.is_empty() {
        return 0;
    }
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(0, |i| i as u32 + 1)
}

/// Every scalar leaf of a TOML table, by dotted key.
pub fn flatten_toml(v: &toml::Value, prefix: &str, out: &mut BTreeMap<String, toml::Value>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_toml(v, &key, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

pub fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn json_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `strict` and the options it turns on, then the other options that check more when true.
pub const TS_STRICT_FAMILY: [&str; 8] = [
    "noImplicitAny",
    "strictNullChecks",
    "strictFunctionTypes",
    "strictBindCallApply",
    "strictPropertyInitialization",
    "noImplicitThis",
    "alwaysStrict",
    "useUnknownInCatchVariables",
];

/// Every weakening and strengthening between two lists of settings.
pub fn compare(old: &[Setting], new: &[Setting], out: &mut Comparison) {
    let index = |s: &[Setting]| -> BTreeMap<(String, String), Setting> {
        s.iter()
            .map(|x| ((x.file.clone(), x.key.clone()), x.clone()))
            .collect()
    };
    let (o, n) = (index(old), index(new));
    let keys: BTreeSet<&(String, String)> = o.keys().chain(n.keys()).collect();
    for k in keys {
        judge(o.get(k), n.get(k), out);
    }
}

/// The packages whose dependency entry (`devDependencies.typescript`) is new or changed:
/// installing them in the project is the change's own doing.
pub fn dependencies_changed(old: &[Setting], new: &[Setting]) -> BTreeSet<String> {
    new.iter()
        .filter(|s| s.rule == Rule::Dependency)
        .filter(|s| {
            !old.iter()
                .any(|o| o.file == s.file && o.key == s.key && o.value == s.value)
        })
        .filter_map(|s| s.key.rsplit('.').next().map(str::to_string))
        .collect()
}

fn judge(old: Option<&Setting>, new: Option<&Setting>, out: &mut Comparison) {
    let Some(any) = new.or(old) else { return };
    let at = |s: &Setting, what: String| Finding {
        file: s.file.clone(),
        line: s.line,
        what,
    };
    let shown = |s: Option<&Setting>| s.map_or("(unset)".to_string(), |s| format!("`{}`", s.value));
    let key = &any.key;
    match direction(
        any.rule,
        old.map(|s| s.value.as_str()),
        new.map(|s| s.value.as_str()),
    ) {
        Direction::Same => {}
        Direction::Weaker(detail) => {
            let what = match detail {
                Some(d) => format!("{key}: {d}"),
                None => format!("{key}: {} -> {} (checks less)", shown(old), shown(new)),
            };
            out.weaker.push(at(any, what));
        }
        Direction::Stronger => {
            out.stronger
                .push(at(any, format!("{key}: {} -> {}", shown(old), shown(new))));
        }
    }
}

enum Direction {
    Same,
    /// With the words to say it when the plain "from -> to" would not.
    Weaker(Option<String>),
    Stronger,
}

fn entries(v: Option<&str>) -> BTreeSet<&str> {
    v.map(|v| v.lines().filter(|l| !l.is_empty()).collect())
        .unwrap_or_default()
}

/// Which way `old` -> `new` moves under `rule`; `None` is an absent setting.
fn direction(rule: Rule, old: Option<&str>, new: Option<&str>) -> Direction {
    use Direction::*;
    let ordered = |a: bool, b: bool| match (a, b) {
        (true, false) => Weaker(None),
        (false, true) => Stronger,
        _ => Same,
    };
    match rule {
        Rule::Flag { stricter, default } => {
            let eff = |v: Option<&str>| v.map_or(default, |v| v == "true") == stricter;
            ordered(eff(old), eff(new))
        }
        Rule::Level { default } => {
            let rank = |v: Option<&str>| v.and_then(|v| v.parse::<u8>().ok()).unwrap_or(default);
            match rank(new).cmp(&rank(old)) {
                std::cmp::Ordering::Less => Weaker(None),
                std::cmp::Ordering::Greater => Stronger,
                std::cmp::Ordering::Equal => Same,
            }
        }
        // An absent list is the tool's default, never narrower than a written one.
        Rule::Shrinks if old.is_none() || new.is_none() => Same,
        Rule::Shrinks => losing(entries(old), entries(new), "removed"),
        Rule::Grows => losing(entries(new), entries(old), "added"),
        Rule::Fixed => match (old, new) {
            (a, Some(b)) if a != Some(b) => Weaker(None),
            (Some(_), None) => Stronger,
            _ => Same,
        },
        Rule::Command => match (old, new) {
            (Some(a), Some(b)) if a != b => match command_loss(a, b) {
                Some(why) => Weaker(Some(why)),
                None => Same,
            },
            (None, Some(_)) => Weaker(None),
            (Some(_), None) => Stronger,
            _ => Same,
        },
        Rule::Version => match (old, new) {
            (Some(a), Some(b)) if version_key(b) < version_key(a) => Weaker(None),
            (Some(a), Some(b)) if version_key(b) > version_key(a) => Stronger,
            (None, Some(_)) => Weaker(None),
            _ => Same,
        },
        Rule::Toolchain => match new {
            Some(b) if old != Some(b) && !is_release_toolchain(b) => Weaker(None),
            _ => Same,
        },
        Rule::Dependency => match new {
            Some(b) if old != Some(b) && is_local_source(b) => Weaker(None),
            _ => Same,
        },
    }
}

/// What a command lost from `old` to `new`, if anything that lets a failure through.
fn command_loss(old: &str, new: &str) -> Option<String> {
    let programs = |t: &str| -> BTreeSet<String> {
        ralph_base::shell::parse(t, 4)
            .iter()
            .filter_map(|s| {
                ralph_base::shell::unwrap(&s.words)
                    .1
                    .first()
                    .map(|w| ralph_base::shell::base(w).to_string())
            })
            .collect()
    };
    let words = |t: &str| -> BTreeSet<String> {
        ralph_base::shell::parse(t, 4)
            .into_iter()
            .flat_map(|s| s.words)
            .collect()
    };
    let (was, is) = (programs(old), programs(new));
    let gone: Vec<&str> = was.difference(&is).map(String::as_str).collect();
    if !gone.is_empty() {
        return Some(format!(
            "`{}` no longer run (`{old}` -> `{new}`)",
            gone.join("`, `")
        ));
    }
    let swallows = |t: &str| t.matches("||").count() + t.matches("exit 0").count();
    let passes = ["true", ":"]
        .iter()
        .any(|p| is.contains(*p) && !was.contains(*p));
    if swallows(new) > swallows(old) || passes {
        return Some(format!("a failure is let through (`{old}` -> `{new}`)"));
    }
    let narrowing = [
        "--ignore",
        "--exclude",
        "-k",
        "--deselect",
        "--testPathIgnorePatterns",
        "--skip",
        "--filter",
        "--grep",
        "--passWithNoTests",
        "--bail=0",
        "-m",
    ];
    let (a, b) = (words(old), words(new));
    let added: Vec<&String> = b
        .difference(&a)
        .filter(|w| {
            narrowing
                .iter()
                .any(|n| w == n || w.starts_with(&format!("{n}=")))
        })
        .collect();
    (!added.is_empty()).then(|| {
        format!(
            "runs less: {} added (`{old}` -> `{new}`)",
            added
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// A list whose entries in `from` but not in `to` weaken (`what`: how they moved); with none
/// lost, `to` holding more entries is stronger.
fn losing(from: BTreeSet<&str>, to: BTreeSet<&str>, what: &str) -> Direction {
    let lost: Vec<&str> = from.difference(&to).copied().collect();
    if !lost.is_empty() {
        Direction::Weaker(Some(format!("{} {what}", quote_all(&lost))))
    } else if to.len() > from.len() {
        Direction::Stronger
    } else {
        Direction::Same
    }
}

fn quote_all(v: &[&str]) -> String {
    v.iter()
        .map(|e| format!("`{e}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn version_key(v: &str) -> Vec<u64> {
    v.trim()
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(['.', '-'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// `stable`, `nightly-2025-01-01`, `1.85`, `1.85.0-x86_64-unknown-linux-gnu`: what rustup
/// installs. Anything else names a toolchain linked by hand, which can be any program.
pub fn is_release_toolchain(v: &str) -> bool {
    let v = v.trim();
    let head = v.split('-').next().unwrap_or("");
    matches!(head, "stable" | "beta" | "nightly")
        || (head.split('.').count() >= 2 && head.split('.').all(|p| p.parse::<u32>().is_ok()))
}

/// A dependency spec that takes the package from a folder or a repository, not a registry.
pub fn is_local_source(v: &str) -> bool {
    let v = v.trim();
    [
        "file:", "link:", "portal:", "git+", "git:", "github:", "http:", "https:", "./", "../",
        "/", "~/",
    ]
    .iter()
    .any(|p| v.starts_with(p))
}
