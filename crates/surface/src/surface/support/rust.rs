//! Rust compiles a module declared under `#[cfg(test)]` (or `cfg(all(test, ..))`) only
//! when it builds tests (`rustc --test`), so that module's file, and every module file it
//! declares in turn, is test code, whatever it is called.

use crate::surface::source::Source;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The files of `source` (relative to the project root, as shown) that only a test build
/// compiles.
pub fn test_only(source: &Source) -> BTreeSet<String> {
    let texts: BTreeMap<&PathBuf, String> = source
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| Some((f, source.read_text(f)?)))
        .collect();
    let known = |p: &Path| texts.contains_key(&p.to_path_buf());
    let mut queue: Vec<PathBuf> = texts
        .iter()
        .flat_map(|(f, text)| {
            declared(text)
                .into_iter()
                .filter(|d| d.test)
                .filter_map(|d| resolve(f, &d, &known))
        })
        .collect();
    let mut out = BTreeSet::new();
    while let Some(f) = queue.pop() {
        if !out.insert(crate::surface::text(&f)) {
            continue;
        }
        let Some(text) = texts.get(&f) else { continue };
        queue.extend(declared(text).iter().filter_map(|d| resolve(&f, d, &known)));
    }
    out
}

/// A `mod name;` declaration: its file is elsewhere.
#[derive(Debug, PartialEq, Eq)]
struct Declared {
    name: String,
    /// Under `#[cfg(test)]`: compiled only in a test build.
    test: bool,
    /// Its `#[path = "..."]`, when it has one.
    path: Option<String>,
}

/// Pure: the module files `text` declares, with the attributes written before them (on
/// their line or the lines above, doc comments between).
fn declared(text: &str) -> Vec<Declared> {
    let mut out = Vec::new();
    let (mut test, mut path) = (false, None);
    for line in text.lines().map(str::trim) {
        let mut rest = line;
        while let Some(attr) = rest.strip_prefix("#[") {
            let Some(end) = attr.find(']') else { break };
            let inner: String = attr[..end].chars().filter(|c| !c.is_whitespace()).collect();
            test |= test_cfg(&inner);
            if let Some(p) = inner.strip_prefix("path=") {
                path = Some(p.trim_matches('"').to_string());
            }
            rest = attr[end + 1..].trim_start();
        }
        if rest.is_empty() || rest.starts_with("//") {
            continue;
        }
        if let Some(name) = module_name(rest) {
            out.push(Declared { name, test, path });
        }
        (test, path) = (false, None);
    }
    out
}

/// Pure: whether a `cfg` attribute (spaces removed) holds only in a test build.
fn test_cfg(attr: &str) -> bool {
    let Some(inner) = attr.strip_prefix("cfg(").and_then(|a| a.strip_suffix(')')) else {
        return false;
    };
    inner == "test"
        || inner
            .strip_prefix("all(")
            .and_then(|a| a.strip_suffix(')'))
            .is_some_and(|items| items.split(',').any(|i| i == "test"))
}

/// `mod name;`, `pub mod name;`, `pub(crate) mod name;`: the name.
fn module_name(line: &str) -> Option<String> {
    let rest = match line.strip_prefix("pub") {
        Some(r) if r.starts_with('(') => &r[r.find(')')? + 1..],
        Some(r) => r,
        None => line,
    };
    let name = rest.trim_start().strip_prefix("mod ")?.trim();
    let name = name.strip_suffix(';')?.trim();
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then(|| name.strip_prefix("r#").unwrap_or(name).to_string())
}

/// The file a declaration in `file` names, if the tree has it: beside it for a crate root
/// or a `mod.rs`, in a folder named after it otherwise (both tried: which files are crate
/// roots is Cargo's to say, and a guess that misses only finds nothing).
fn resolve(file: &Path, decl: &Declared, known: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new(""));
    if let Some(p) = &decl.path {
        let at = dir.join(p);
        return known(&at).then_some(at);
    }
    let stem = file.file_stem().unwrap_or_default();
    let (beside, below) = (dir.to_path_buf(), dir.join(stem));
    let order = match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => [beside, below],
        _ => [below, beside],
    };
    order
        .iter()
        .flat_map(|at| {
            [
                at.join(format!("{}.rs", decl.name)),
                at.join(&decl.name).join("mod.rs"),
            ]
        })
        .find(|p| known(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_read_with_the_attributes_before_them() {
        let text = "pub mod api;
#[cfg(test)]
mod check;
#[cfg(test)] pub(crate) mod fakes;
#[cfg(all(test, unix))]
/// Docs.
#[path = \"x/helpers.rs\"]
mod helpers;
#[cfg(any(test, feature = \"testing\"))]
mod shared;
#[cfg(test)]
mod tests {
}
mod after;
";
        let got: Vec<(String, bool, Option<String>)> = declared(text)
            .into_iter()
            .map(|d| (d.name, d.test, d.path))
            .collect();
        let d = |n: &str, t: bool, p: Option<&str>| (n.to_string(), t, p.map(String::from));
        assert_eq!(
            got,
            [
                d("api", false, None),
                d("check", true, None),
                d("fakes", true, None),
                d("helpers", true, Some("x/helpers.rs")),
                d("shared", false, None),
                d("after", false, None),
            ]
        );
    }

    #[test]
    fn a_module_file_is_found_where_rust_looks_for_it() {
        let files: BTreeSet<PathBuf> = ["src/check.rs", "src/a/b.rs", "src/a/c/mod.rs"]
            .map(PathBuf::from)
            .into();
        let known = |p: &Path| files.contains(p);
        let decl = |name: &str| Declared {
            name: name.into(),
            test: true,
            path: None,
        };
        let at = |f: &str, n: &str| resolve(Path::new(f), &decl(n), &known);
        assert_eq!(at("src/lib.rs", "check"), Some("src/check.rs".into()));
        assert_eq!(at("src/a.rs", "b"), Some("src/a/b.rs".into()));
        assert_eq!(at("src/a.rs", "c"), Some("src/a/c/mod.rs".into()));
        assert_eq!(at("src/lib.rs", "gone"), None);
    }
}
