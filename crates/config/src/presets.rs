//! The preset gate files in `gates/`, compiled into the binary, and the choice of presets for a
//! project that has no `ralph.toml`.

use super::raw::{GlobPattern, RawPreset};
use globset::GlobSetBuilder;

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

/// Pure but for `head`: which presets fit a project whose files (relative) are `files`. A
/// preset fits when a file outside fixture and vendored folders matches its `detect` globs,
/// or an extensionless one starts with a `#!` line naming one of its `detect_shebangs`.
pub fn detect<P: AsRef<std::path::Path>>(
    files: &[P],
    head: &dyn Fn(&std::path::Path) -> Option<Vec<u8>>,
) -> Vec<Detected> {
    let mut out = Vec::new();
    let evidence: Vec<&std::path::Path> = files
        .iter()
        .map(AsRef::as_ref)
        .filter(|f| !in_data_folder(f))
        .collect();
    for preset in PRESETS {
        let raw = parse(preset).expect("embedded presets are valid (tested)");
        let set = build_set(&raw.detect);
        let by_name = evidence.iter().find(|f| set.is_match(f));
        let by_shebang = || {
            (!raw.detect_shebangs.is_empty())
                .then(|| {
                    evidence.iter().find(|f| {
                        f.extension().is_none()
                            && head(f)
                                .and_then(|h| ralph_base::shebang::parse_shebang(&h))
                                .is_some_and(|i| super::shebang_matches(&raw.detect_shebangs, &i))
                    })
                })
                .flatten()
        };
        if let Some(hit) = by_name.or_else(by_shebang) {
            out.push(Detected {
                name: preset.name,
                because: hit.display().to_string(),
            });
        }
    }
    out
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
            assert!(!raw.detect.is_empty(), "{} detects nothing", p.name);
        }
    }

    #[test]
    fn detection_follows_project_contents() {
        let none = |_: &std::path::Path| None;
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
        let none = |_: &std::path::Path| None;
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
    fn extensionless_scripts_are_found_by_their_shebang() {
        let head = |p: &std::path::Path| {
            (p == std::path::Path::new("bin/run"))
                .then(|| b"#!/usr/bin/env bash\nset -e\n".to_vec())
        };
        let found = detect(&["README.md", "bin/run", "LICENSE"], &head);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].name, found[0].because.as_str()),
            ("shell", "bin/run")
        );
    }
}
