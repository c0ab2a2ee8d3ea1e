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
            source: include_str!(concat!("../../gates/", $name, ".toml")),
        }
    };
}

/// In the order their gates are listed and reported.
pub const PRESETS: &[Preset] = &[
    preset!("rust"),
    preset!("go"),
    preset!("typescript"),
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

/// Pure: which presets fit a project whose files (relative, `/`-separated) are `files`.
pub fn detect<P: AsRef<std::path::Path>>(files: &[P]) -> Vec<Detected> {
    let mut out = Vec::new();
    for preset in PRESETS {
        let raw = parse(preset).expect("embedded presets are valid (tested)");
        let set = build_set(&raw.detect);
        if let Some(hit) = files.iter().find(|f| set.is_match(f.as_ref())) {
            out.push(Detected {
                name: preset.name,
                because: hit.as_ref().display().to_string(),
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
        let found = detect(&["Cargo.toml", "src/main.rs", "scripts/x.sh", "README.md"]);
        let names: Vec<_> = found.iter().map(|d| d.name).collect();
        assert_eq!(names, ["rust", "shell"]);
        assert_eq!(found[1].because, "scripts/x.sh");
        assert!(detect(&["README.md"]).is_empty());
    }
}
