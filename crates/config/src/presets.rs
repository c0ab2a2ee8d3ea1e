//! The preset gate files in `gates/`, compiled into the binary, and the choice of presets for a
//! project that has no `ralph.toml`.

use super::raw::{GlobPattern, RawPreset};
use globset::GlobSetBuilder;
use std::path::Path;

pub struct Preset {
    pub name: &'static str,
    pub source: &'static str,
}

macro_rules! preset {
    ($name:literal) => {
        Preset {
            name: $name,
            source: include_str!(concat!("../../../gates/", $name, ".toml")),
        }
    };
}

/// In the order their gates are listed and reported.
pub const PRESETS: &[Preset] = &[
    preset!("rust"),
    preset!("go"),
    preset!("typescript"),
    preset!("deno"),
    preset!("javascript"),
    preset!("python"),
    preset!("pytest"),
    preset!("mypy"),
    preset!("npm-test"),
    preset!("shell"),
];

/// The word in `presets = [...]` that means "whatever fits this project".
pub const AUTO: &str = "auto";

pub fn by_name(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// The one-line description at the top of a preset file.
pub fn description(preset: &Preset) -> String {
    parse(preset).map(|r| r.description).unwrap_or_default()
}

pub fn parse(preset: &Preset) -> Result<RawPreset, toml::de::Error> {
    toml::from_str(preset.source)
}

/// A preset chosen by what the project contains, with the file that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub name: &'static str,
    pub because: String,
}

/// Folders whose files are data for tests or someone else's code, never evidence of the stack
/// a project is written in (a Python library's `tests/fixtures/x.ts` does not make it a
/// TypeScript project).
const NOT_EVIDENCE: &[&str] = &[
    "fixtures",
    "fixture",
    "__fixtures__",
    "testdata",
    "test-data",
    "test_data",
    "vendor",
    "third_party",
    "third-party",
    "node_modules",
    "__snapshots__",
];

/// True when `rel` lies in a folder whose files are no evidence (see [`NOT_EVIDENCE`]).
pub fn in_data_folder(rel: &std::path::Path) -> bool {
    rel.parent().is_some_and(|dir| {
        dir.components()
            .any(|c| NOT_EVIDENCE.iter().any(|n| c.as_os_str() == *n))
    })
}

/// What detection may read of a project's files (relative paths).
pub struct Reading<'a> {
    /// The first bytes of a file: its `#!` line.
    pub head: &'a dyn Fn(&Path) -> Option<Vec<u8>>,
    /// The text of a root config file a preset's `detect_text` or `detect_scripts` names.
    pub text: &'a dyn Fn(&Path) -> Option<String>,
}

impl Reading<'static> {
    /// Reads nothing: detection by file names alone.
    pub fn nothing() -> Self {
        Reading {
            head: &|_| None,
            text: &|_| None,
        }
    }
}

/// Which presets fit the project at `root` whose files (relative) are `files`, reading
/// its files there (see [`detect`]).
pub fn detect_in<P: AsRef<Path>>(root: &Path, files: &[P]) -> Vec<Detected> {
    let head = |rel: &Path| ralph_base::shebang::head(&root.join(rel));
    let text = |rel: &Path| std::fs::read_to_string(root.join(rel)).ok();
    detect(
        files,
        &Reading {
            head: &head,
            text: &text,
        },
    )
}

/// Pure but for `read`: which presets fit a project whose files (relative) are `files`. A
/// preset fits when a file outside fixture and vendored folders matches its `detect` globs,
/// an extensionless one starts with a `#!` line naming one of its `detect_shebangs`, a root
/// config file holds one of its `detect_text`, or the root `package.json` has one of its
/// `detect_scripts`.
pub fn detect<P: AsRef<Path>>(files: &[P], read: &Reading<'_>) -> Vec<Detected> {
    let mut out = Vec::new();
    let evidence: Vec<&Path> = files
        .iter()
        .map(AsRef::as_ref)
        .filter(|f| !in_data_folder(f))
        .collect();
    for preset in PRESETS {
        let raw = parse(preset).expect("embedded presets are valid (tested)");
        let set = build_set(&raw.detect);
        let hit = evidence
            .iter()
            .find(|f| set.is_match(f))
            .map(|f| f.display().to_string())
            .or_else(|| by_shebang(&raw, &evidence, read))
            .or_else(|| by_text(&raw, &evidence, read))
            .or_else(|| by_script(&raw, &evidence, read));
        if let Some(because) = hit {
            out.push(Detected {
                name: preset.name,
                because,
            });
        }
    }
    out
}

fn by_shebang(raw: &RawPreset, evidence: &[&Path], read: &Reading<'_>) -> Option<String> {
    if raw.detect_shebangs.is_empty() {
        return None;
    }
    evidence
        .iter()
        .find(|f| {
            f.extension().is_none()
                && (read.head)(f)
                    .and_then(|h| ralph_base::shebang::parse_shebang(&h))
                    .is_some_and(|i| super::shebang_matches(&raw.detect_shebangs, &i))
        })
        .map(|f| f.display().to_string())
}

fn by_text(raw: &RawPreset, evidence: &[&Path], read: &Reading<'_>) -> Option<String> {
    raw.detect_text.iter().find_map(|d| {
        let file = Path::new(&d.file);
        (evidence.contains(&file) && (read.text)(file)?.contains(&d.contains))
            .then(|| format!("{} naming {}", d.file, d.contains))
    })
}

/// npm writes this test script into every new package.json: it only fails.
const NPM_PLACEHOLDER: &str = "no test specified";

fn by_script(raw: &RawPreset, evidence: &[&Path], read: &Reading<'_>) -> Option<String> {
    let manifest = Path::new("package.json");
    if raw.detect_scripts.is_empty() || !evidence.contains(&manifest) {
        return None;
    }
    let json: serde_json::Value = serde_json::from_str(&(read.text)(manifest)?).ok()?;
    raw.detect_scripts.iter().find_map(|name| {
        let script = json.get("scripts")?.get(name)?.as_str()?;
        (!script.trim().is_empty() && !script.contains(NPM_PLACEHOLDER))
            .then(|| format!("package.json script \"{name}\""))
    })
}

fn build_set(globs: &[GlobPattern]) -> globset::GlobSet {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(g.glob.clone());
    }
    b.build().expect("globs were validated when parsed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_preset_parses_and_compiles() {
        for p in PRESETS {
            let raw = parse(p).unwrap_or_else(|e| panic!("gates/{}.toml: {e}", p.name));
            assert!(!raw.gate.is_empty(), "{} has no gates", p.name);
            let detects = raw.detect.len()
                + raw.detect_shebangs.len()
                + raw.detect_text.len()
                + raw.detect_scripts.len();
            assert!(detects > 0, "{} detects nothing", p.name);
        }
    }

    #[test]
    fn detection_follows_project_contents() {
        let none = Reading::nothing();
        let found = detect(
            &["Cargo.toml", "src/main.rs", "scripts/x.sh", "README.md"],
            &none,
        );
        let names: Vec<_> = found.iter().map(|d| d.name).collect();
        assert_eq!(names, ["rust", "shell"]);
        assert_eq!(found[1].because, "scripts/x.sh");
        assert!(detect(&["README.md"], &none).is_empty());
    }

    #[test]
    fn fixtures_and_vendored_code_are_no_evidence() {
        let none = Reading::nothing();
        let found = detect(
            &[
                "pyproject.toml",
                "tests/fixtures/deep/x.ts",
                "vendor/lib/y.sh",
                "pkg/testdata/Cargo.toml",
            ],
            &none,
        );
        let names: Vec<_> = found.iter().map(|d| d.name).collect();
        assert_eq!(names, ["python"]);
    }

    #[test]
    fn test_runners_are_found_where_the_project_configures_them() {
        let texts = |p: &Path| match p.to_str() {
            Some("pyproject.toml") => Some("[tool.pytest.ini_options]\naddopts = \"-q\"\n".into()),
            Some("package.json") => Some(r#"{"scripts": {"test": "vitest run"}}"#.into()),
            _ => None,
        };
        let read = Reading {
            head: &|_| None,
            text: &texts,
        };
        let found = detect(&["pyproject.toml", "src/a.py", "package.json"], &read);
        let names: Vec<_> = found.iter().map(|d| (d.name, d.because.as_str())).collect();
        assert_eq!(
            names,
            [
                ("python", "pyproject.toml"),
                ("pytest", "pyproject.toml naming pytest"),
                ("npm-test", "package.json script \"test\"")
            ]
        );
        // npm's placeholder test script, a pyproject naming no pytest, test files alone.
        let bare = |p: &Path| match p.to_str() {
            Some("pyproject.toml") => Some("[project]\nname = \"x\"\n".into()),
            Some("package.json") => Some(
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#.into(),
            ),
            _ => None,
        };
        let read = Reading {
            head: &|_| None,
            text: &bare,
        };
        let found = detect(
            &["pyproject.toml", "tests/test_a.py", "package.json"],
            &read,
        );
        let names: Vec<_> = found.iter().map(|d| d.name).collect();
        assert_eq!(names, ["python"]);
    }

    #[test]
    fn extensionless_scripts_are_found_by_their_shebang() {
        let head = |p: &std::path::Path| {
            (p == std::path::Path::new("bin/run"))
                .then(|| b"#!/usr/bin/env bash\nset -e\n".to_vec())
        };
        let read = Reading {
            head: &head,
            text: &|_| None,
        };
        let found = detect(&["README.md", "bin/run", "LICENSE"], &read);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].name, found[0].because.as_str()),
            ("shell", "bin/run")
        );
    }
}
