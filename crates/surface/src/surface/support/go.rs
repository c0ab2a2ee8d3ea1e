//! Go forbids importing a package below an `internal/` folder from outside the tree that
//! holds that folder, so an internal package that no non-test file of its module imports
//! (directly or through other packages) is compiled into nothing but test binaries.

use crate::surface::source::Source;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The files of `source` (relative to the project root, as shown) that only tests use.
pub fn test_only(source: &Source) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (root, module) in modules(source) {
        let files = module_files(source, &root);
        // Nothing to read in a module without an internal package (most of them).
        if !files.iter().any(|f| is_internal(&package_of(f, &root))) {
            continue;
        }
        let packages = packages(source, &root, &files, &module);
        for dir in unreached(&packages) {
            out.extend(packages[&dir].files.iter().map(|f| crate::surface::text(f)));
        }
    }
    out
}

/// Each module: the folder of a `go.mod` (relative to the project root) and its path.
fn modules(source: &Source) -> Vec<(PathBuf, String)> {
    source
        .files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "go.mod"))
        .filter_map(|f| {
            let text = source.read_text(f)?;
            let path = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("module "))?
                .trim()
                .trim_matches('"')
                .to_string();
            Some((f.parent().unwrap_or(Path::new("")).to_path_buf(), path))
        })
        .collect()
}

/// The non-test `.go` files of the module at `root`, without those of modules inside it.
fn module_files(source: &Source, root: &Path) -> Vec<PathBuf> {
    let nested: Vec<&Path> = source
        .files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "go.mod"))
        .filter_map(|f| f.parent())
        .filter(|d| *d != root && d.starts_with(root))
        .collect();
    source
        .files
        .iter()
        .filter(|f| f.starts_with(root) && !nested.iter().any(|n| f.starts_with(n)))
        .filter(|f| {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".go") && !name.ends_with("_test.go")
        })
        .cloned()
        .collect()
}

/// A package of the module: its files and what they import of the module (as folders
/// relative to its root); `main`: a command, built on its own.
#[derive(Default)]
struct Package {
    files: Vec<PathBuf>,
    imports: BTreeSet<String>,
    main: bool,
}

fn package_of(file: &Path, root: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap_or(file);
    crate::surface::text(rel.parent().unwrap_or(Path::new("")))
}

fn is_internal(dir: &str) -> bool {
    dir.split('/').any(|c| c == "internal")
}

fn packages(
    source: &Source,
    root: &Path,
    files: &[PathBuf],
    module: &str,
) -> BTreeMap<String, Package> {
    let mut out: BTreeMap<String, Package> = BTreeMap::new();
    for f in files {
        let p = out.entry(package_of(f, root)).or_default();
        p.files.push(f.clone());
        // A file that cannot be read imports nothing known: its package is not reached
        // through it, which only makes the run stricter.
        let Some(text) = source.read_text(f) else {
            continue;
        };
        let (package, imports) = header(&text);
        p.main |= package == "main";
        p.imports.extend(imports.iter().filter_map(|i| {
            let rest = i.strip_prefix(module)?;
            match rest {
                "" => Some(String::new()),
                _ => rest.strip_prefix('/').map(str::to_string),
            }
        }));
    }
    out
}

/// Pure: the internal packages no package that code outside the tests can use imports:
/// every non-internal package (a library's API) and every command is a start.
fn unreached(packages: &BTreeMap<String, Package>) -> BTreeSet<String> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut queue: VecDeque<&str> = packages
        .iter()
        .filter(|(dir, p)| !is_internal(dir) || p.main)
        .map(|(dir, _)| dir.as_str())
        .collect();
    while let Some(dir) = queue.pop_front() {
        if !seen.insert(dir) {
            continue;
        }
        if let Some(p) = packages.get(dir) {
            queue.extend(p.imports.iter().map(String::as_str));
        }
    }
    packages
        .keys()
        .filter(|d| !seen.contains(d.as_str()))
        .cloned()
        .collect()
}

/// Pure: a Go file's package name and the paths it imports, read up to its first
/// declaration (comments and strings in the code after are never taken for imports).
fn header(text: &str) -> (String, Vec<String>) {
    let code = without_comments(text);
    let mut package = String::new();
    let mut imports = Vec::new();
    let mut in_block = false;
    for line in code.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(name) = line.strip_prefix("package ") {
            package = name.trim().trim_end_matches(';').to_string();
            continue;
        }
        if in_block {
            if line.starts_with(')') {
                in_block = false;
            } else {
                imports.extend(quoted(line));
            }
            continue;
        }
        match line.strip_prefix("import") {
            Some(rest) if rest.trim_start().starts_with('(') => {
                let inner = rest.trim_start()[1..].trim();
                imports.extend(quoted(inner));
                in_block = !inner.contains(')');
            }
            Some(rest) if rest.starts_with([' ', '\t', '"']) => imports.extend(quoted(rest)),
            _ if package.is_empty() => {}
            _ => break,
        }
    }
    (package, imports)
}

/// The string literals of an import line (`name "path"`, `_ "path"`, `` `path` ``).
fn quoted(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(['"', '`']) {
        let quote = rest[start..].chars().next().unwrap_or('"');
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else { break };
        out.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

/// Pure: `text` with its `//` and `/* */` comments blanked, strings kept.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && q != '`' {
                out.extend(chars.next());
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            ('"' | '`' | '\'', _) => {
                quote = Some(c);
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_read_in_every_spelling_go_allows() {
        let text = "// Package x.\npackage x // a comment\n\nimport \"fmt\"\nimport alias \"example.com/m/internal/a\"\nimport (\n\t\"os\"\n\t_ \"example.com/m/internal/b\" // why\n\t/* \"example.com/m/internal/gone\" */\n\tc `example.com/m/internal/c`\n)\nimport (\"example.com/m/internal/d\"; \"strings\")\n\nvar s = \"import \\\"example.com/m/internal/e\\\"\"\n";
        let (package, imports) = header(text);
        assert_eq!(package, "x");
        assert_eq!(
            imports,
            [
                "fmt",
                "example.com/m/internal/a",
                "os",
                "example.com/m/internal/b",
                "example.com/m/internal/c",
                "example.com/m/internal/d",
                "strings"
            ]
        );
    }

    #[test]
    fn an_internal_package_reached_only_from_tests_is_unreached() {
        let pkg = |imports: &[&str], main: bool| Package {
            files: Vec::new(),
            imports: imports.iter().map(|s| s.to_string()).collect(),
            main,
        };
        let packages = BTreeMap::from([
            (String::new(), pkg(&["internal/used"], false)),
            ("internal/used".into(), pkg(&["internal/deep"], false)),
            ("internal/deep".into(), pkg(&[], false)),
            ("internal/check".into(), pkg(&["internal/fake"], false)),
            ("internal/fake".into(), pkg(&[], false)),
            ("internal/cmd/gen".into(), pkg(&["internal/genlib"], true)),
            ("internal/genlib".into(), pkg(&[], false)),
        ]);
        assert_eq!(
            unreached(&packages),
            BTreeSet::from(["internal/check".to_string(), "internal/fake".to_string()])
        );
    }
}
