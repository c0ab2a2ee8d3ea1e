//! Which files a tsconfig makes root files of its program, as tsc decides it: `files`, and
//! what `include` matches less what `exclude` matches, each taken whole from the nearest
//! config of the `extends` chain that sets it, with paths relative to that config.
//!
//! A file a tsconfig does not include is in no program (unless something imports it), so
//! tsc never checks it: such a file under a tsconfig is checked on its own (issue 21), and
//! only one that a config's own `exclude` names is left out, on purpose.

use super::super::normalize;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};

/// Excluded when a config sets no `exclude` (with its `outDir`s).
const DEFAULT_EXCLUDE: [&str; 3] = ["node_modules", "bower_components", "jspm_packages"];

/// One config's root-file rules, root-relative.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    files: Vec<PathBuf>,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// The config set `exclude` itself: what it matches is left out on purpose.
    pub explicit_exclude: bool,
}

/// The rules as the chain's layers give them: each `Some` from the nearest layer setting it,
/// patterns already joined to that layer's folder.
#[derive(Debug, Clone, Default)]
pub struct Patterns {
    pub files: Option<Vec<PathBuf>>,
    pub include: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
}

impl Patterns {
    /// `pattern` of a config in `dir`, root-relative; `None` when it leaves the project.
    pub fn at(dir: &Path, pattern: &str) -> Option<String> {
        let (fixed, rest) = split_wildcard(pattern);
        let base = normalize(&dir.join(fixed))?;
        let base = base.to_string_lossy().into_owned();
        Some(match (base.is_empty(), rest.is_empty()) {
            (true, _) => rest.to_string(),
            (false, true) => base,
            (false, false) => format!("{base}/{rest}"),
        })
    }
}

impl Roots {
    /// `config_dir`: the project's folder; `out_dirs`: its output folders, excluded by
    /// default as tsc does.
    pub fn new(p: &Patterns, config_dir: &Path, out_dirs: &[PathBuf]) -> Self {
        let dir = config_dir.to_string_lossy();
        let at_dir = |s: &str| match dir.is_empty() {
            true => s.to_string(),
            false => format!("{dir}/{s}"),
        };
        let include = match (&p.include, &p.files) {
            (Some(list), _) => Some(list.clone()),
            // `files` alone includes nothing else.
            (None, Some(_)) => None,
            (None, None) => Some(vec![at_dir("**/*")]),
        };
        let exclude: Vec<String> = match &p.exclude {
            Some(list) => list.clone(),
            None => DEFAULT_EXCLUDE
                .iter()
                .map(|d| at_dir(d))
                .chain(out_dirs.iter().map(|d| d.to_string_lossy().into_owned()))
                .collect(),
        };
        Self {
            files: p.files.clone().unwrap_or_default(),
            include: include.map(|l| set(l.iter().map(|s| as_directory(s)))),
            exclude: Some(set(exclude.iter().map(String::as_str))),
            explicit_exclude: p.exclude.is_some(),
        }
    }

    /// `file` is a root file of the program.
    pub fn includes(&self, file: &Path) -> bool {
        if self.files.iter().any(|f| f == file) {
            return true;
        }
        let Some(include) = &self.include else {
            return false;
        };
        include.is_match(file) && !self.excludes(file)
    }

    /// An `exclude` pattern matches `file` or a folder above it.
    pub fn excludes(&self, file: &Path) -> bool {
        self.exclude.as_ref().is_some_and(|ex| {
            file.ancestors()
                .any(|a| !a.as_os_str().is_empty() && ex.is_match(a))
        })
    }
}

/// An include pattern whose last part has neither wildcard nor extension names a folder:
/// everything under it.
fn as_directory(pattern: &str) -> String {
    let last = pattern.rsplit('/').next().unwrap_or(pattern);
    if last.contains(['*', '?']) || last.contains('.') {
        pattern.to_string()
    } else {
        format!("{}/**/*", pattern.trim_end_matches('/'))
    }
}

/// tsc's wildcards: `*` and `?` within one folder name, `**/` any folders. Braces and
/// classes are literal for tsc, so they are escaped here.
fn set<'a>(patterns: impl Iterator<Item = impl AsRef<str> + 'a>) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let escaped: String = p
            .as_ref()
            .chars()
            .flat_map(|c| match c {
                '{' | '}' | '[' | ']' => vec!['[', c, ']'],
                c => vec![c],
            })
            .collect();
        if let Ok(g) = GlobBuilder::new(&escaped).literal_separator(true).build() {
            b.add(g);
        }
    }
    b.build().unwrap_or_else(|_| GlobSet::empty())
}

/// The fixed folder part of a pattern and what follows it (`src/**/*.ts` -> `src`,
/// `**/*.ts`).
fn split_wildcard(pattern: &str) -> (&str, &str) {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    match pattern.find(['*', '?']) {
        None => (pattern, ""),
        Some(cut) => match pattern[..cut].rfind('/') {
            Some(i) => (&pattern[..i], &pattern[i + 1..]),
            None => ("", pattern),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(include: Option<&[&str]>, exclude: Option<&[&str]>, files: Option<&[&str]>) -> Roots {
        let dir = Path::new("app");
        let p = Patterns {
            include: include.map(|l| l.iter().filter_map(|s| Patterns::at(dir, s)).collect()),
            exclude: exclude.map(|l| l.iter().filter_map(|s| Patterns::at(dir, s)).collect()),
            files: files.map(|l| l.iter().map(|s| dir.join(s)).collect()),
        };
        Roots::new(&p, dir, &[PathBuf::from("app/dist")])
    }

    #[test]
    fn include_exclude_and_files_as_tsc_reads_them() {
        let r = roots(None, None, None);
        assert!(r.includes(Path::new("app/src/a.ts")));
        assert!(r.includes(Path::new("app/a.ts")));
        assert!(!r.includes(Path::new("app/node_modules/x/a.ts")));
        assert!(
            !r.includes(Path::new("app/dist/a.ts")),
            "outDir is excluded by default"
        );
        assert!(!r.includes(Path::new("other/a.ts")));

        let r = roots(Some(&["src"]), None, None);
        assert!(r.includes(Path::new("app/src/deep/a.ts")));
        assert!(!r.includes(Path::new("app/lib/a.ts")));

        let r = roots(
            Some(&["src/*.ts", "./test/**/*.ts"]),
            Some(&["src/gen", "**/*.spec.ts"]),
            None,
        );
        assert!(r.includes(Path::new("app/src/a.ts")));
        assert!(
            !r.includes(Path::new("app/src/deep/a.ts")),
            "* stays in one folder"
        );
        assert!(r.includes(Path::new("app/test/x/a.ts")));
        assert!(!r.includes(Path::new("app/test/x/a.spec.ts")));
        assert!(r.excludes(Path::new("app/src/gen/x.ts")));
        assert!(r.explicit_exclude);

        let r = roots(None, None, Some(&["main.ts"]));
        assert!(r.includes(Path::new("app/main.ts")));
        assert!(
            !r.includes(Path::new("app/other.ts")),
            "files alone includes nothing else"
        );

        let r = roots(Some(&["../shared"]), None, None);
        assert!(r.includes(Path::new("shared/a.ts")));
        assert_eq!(Patterns::at(Path::new("app"), "../../x"), None);
    }
}
