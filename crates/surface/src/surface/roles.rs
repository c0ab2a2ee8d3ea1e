//! What a file changed during a loop is to a differential run: checked code, whose final
//! version is what is judged, or part of the checks (tests, configs, build scripts, the
//! runner's plugins, anything no gate checks), which the differential run puts back as it
//! was when the loop started. The run, not this module, decides whether a change was
//! load-bearing: a file wrongly taken for a check only makes the run stricter, and is named
//! when it holds the loop, so a person sees it.

use super::Surface;
use std::collections::BTreeSet;

/// Why a test file is part of the checks: by its runner's naming rule (`test_*.py`,
/// `*_test.go`, `*.test.js`), or because the surface found tests defined in it. Never a
/// runner's own file, a config or anything else in a folder of tests.
pub const A_TEST: &str = "a test";
pub const DEFINES_TESTS: &str = "it defines tests";
/// Why a file is part of the checks by what the final run's test runner said of it.
pub const COLLECTED: &str = "its test runner collected tests from it";
pub const READ_BY_TESTS: &str = "its tests read it";
pub const A_PLUGIN: &str = "its test runner loaded it as a plugin";
/// Why code is part of the checks: no code but the tests' can use it (see `support`).
pub const TEST_ONLY: &str =
    "only tests can use it (a Go internal package no code of its module imports, a Rust module declared under #[cfg(test)])";
const A_CONFIG: &str = "a config its runner reads";
/// Why a file of the code is put back only in one of the differential's two runs (see
/// `Surface::after_option`).
pub const AFTER_AN_OPTION: &str =
    "a stop gate's command names it right after an option (the option's value, or the code it checks)";
/// Why a file is put back in one of the differential's two runs only, as [`AFTER_AN_OPTION`]:
/// a process the tests started read it and said nothing of it, so it may be their data or
/// the code under test. Put back for good, code would be judged as it was at the start.
pub const READ_UNHEARD: &str =
    "a process its tests started read it (their data, or the code under test: no process said which)";
/// Why a file is put back in one of the differential's two runs only, as [`READ_UNHEARD`]:
/// the tests named it without opening it (they listed its folder: the names of its files
/// may be their cases; or asked of it: its size, mode, link target, whether it is there),
/// and nothing said whether what it holds is their data or the code under test.
pub const LISTED_BY_TESTS: &str =
    "its tests listed its folder or asked of it without opening it (their cases by name, size, mode or link, or the code under test: not known)";

/// Whether a file put back for `why` is put back in one of the differential's two runs
/// only: its role is not known.
pub fn either(why: &str) -> bool {
    why == AFTER_AN_OPTION || why == READ_UNHEARD || why == LISTED_BY_TESTS
}

/// What a changed file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Checked code: its final version stays.
    Code,
    /// A declaration of dependencies whose change only adds, removes or moves dependencies:
    /// the final version stays, since new code needs what it declares (the installed packages
    /// are the same for both runs).
    Dependencies,
    /// Part of the checks, for the reason given: put back as it was at the loop's start.
    Check(&'static str),
}

/// What the surfaces at the loop's start and now say about files.
pub struct Facts {
    /// Every file a stop gate checks, at either end.
    checked: BTreeSet<String>,
    /// Every file that defines a test the project's runners find, at either end.
    tests: BTreeSet<String>,
    /// Every config file whose options the surface reads, at either end.
    configs: BTreeSet<String>,
    /// Every file a stop gate's command names, at either end.
    runners: BTreeSet<String>,
    /// Of those, the files it names only right after an option, at both ends.
    after_option: BTreeSet<String>,
    /// Code only tests could use, at either end (a helper made part of the code by the
    /// change is still judged as the tests' until a person looks).
    test_only: BTreeSet<String>,
    /// Every folder the start's tree had (empty: not known, so none is new).
    start_folders: Option<BTreeSet<String>>,
}

impl Facts {
    pub fn of(start: Option<&Surface>, now: Option<&Surface>) -> Self {
        let both = || start.into_iter().chain(now);
        Self {
            checked: both()
                .flat_map(|s| s.checked.values().flatten().cloned())
                .collect(),
            tests: both()
                .flat_map(|s| s.tests.iter().map(|t| t.file.clone()))
                .collect(),
            configs: both()
                .flat_map(|s| s.settings.iter().map(|s| s.file.clone()))
                .collect(),
            runners: both().flat_map(|s| s.runners.iter().cloned()).collect(),
            after_option: both()
                .flat_map(|s| s.after_option.iter().cloned())
                .filter(|f| both().all(|s| !s.runners.contains(f) || s.after_option.contains(f)))
                .collect(),
            test_only: both().flat_map(|s| s.test_only.iter().cloned()).collect(),
            start_folders: None,
        }
    }

    /// The folders the start's tree had, relative to the project root: a manifest in a
    /// folder that is new declares a new package, which takes nothing from the old ones.
    pub fn with_start_folders(mut self, folders: BTreeSet<String>) -> Self {
        self.start_folders = Some(folders);
        self
    }

    fn new_folder(&self, rel: &str) -> bool {
        let parent = rel.rsplit_once('/').map_or("", |(p, _)| p);
        !parent.is_empty()
            && self
                .start_folders
                .as_ref()
                .is_some_and(|f| !f.contains(parent))
    }

    /// True when a stop gate checks `rel`, at either end.
    pub fn checked(&self, rel: &str) -> bool {
        self.checked.contains(rel)
    }

    /// True when `rel`, a file of the checks, is data the tests read: not code a gate checks,
    /// a config, a file a runner loads or a gate's command names, and either the tests were
    /// seen reading it (`read_by_tests`: their code opened or listed it, by what the run
    /// did) or it is the tests' by Go's rule ([`Self::go_tests_data`]). For `check --base`'s
    /// reading of a change of behaviour, where such data is read as the tests are.
    pub fn tests_data(&self, rel: &str, read_by_tests: bool) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let code_or_settings = self.checked.contains(rel)
            || self.configs.contains(rel)
            || self.runners.contains(rel)
            || self.test_only.contains(rel)
            || runner_file(name);
        !code_or_settings && (read_by_tests || self.go_tests_data(rel))
    }

    /// Go's rule: a file in a `testdata` folder of a package (the go tool leaves those to
    /// the tests), or in the folder of a package only tests can use, or below it where no
    /// other package is: only that package can embed it (`//go:embed` takes no `..`).
    fn go_tests_data(&self, rel: &str) -> bool {
        fn parent(f: &str) -> (&str, &str) {
            f.rsplit_once('/').unwrap_or(("", f))
        }
        fn folder(f: &str) -> Option<&str> {
            f.ends_with(".go").then(|| parent(f).0)
        }
        let packages: BTreeSet<&str> = self.checked.iter().filter_map(|f| folder(f)).collect();
        let test_only: BTreeSet<&str> = self.test_only.iter().filter_map(|f| folder(f)).collect();
        let mut at = parent(rel).0;
        loop {
            if test_only.contains(at) {
                return true;
            }
            if packages.contains(at) {
                return false;
            }
            let (up, name) = parent(at);
            if name == "testdata" && packages.contains(up) {
                return true;
            }
            if at.is_empty() {
                return false;
            }
            at = up;
        }
    }

    /// True when a stop gate or a runner reads `rel` as code, a test, a config or a runner's
    /// own file: a change there changes what a run judges. A gate's own outputs (a coverage
    /// file, a report) are none of these.
    pub fn read_by_gates(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.checked.contains(rel)
            || self.tests.contains(rel)
            || self.configs.contains(rel)
            || runner_file(name)
            || test_named(name)
    }
}

/// Folders runners and build tools keep tests, fixtures and benchmarks in.
const TEST_FOLDERS: &[&str] = &[
    "tests",
    "test",
    "__tests__",
    "testdata",
    "testing",
    "spec",
    "specs",
    "benches",
    "fixtures",
    "e2e",
];

/// Files a runner or a build loads around the code: its plugins and build scripts.
const RUNNER_FILES: &[&str] = &["conftest.py", "build.rs", "setup.py", "noxfile.py"];

/// The starts of the names of the files JavaScript's runners and the transforms they apply
/// load as their configuration (`jest.config.js`, `vitest.config.mts`, `.babelrc.json`):
/// code by their extension, and so matched by any gate over `*.js`, but what they change is
/// what a test run does.
const JS_RUNNER_CONFIGS: &[&str] = &[
    "jest.config.",
    "jest.setup.",
    "vitest.config.",
    "vitest.workspace.",
    "vitest.setup.",
    "vite.config.",
    "babel.config.",
    ".babelrc",
    ".swcrc",
    ".mocharc.",
    "ava.config.",
    "playwright.config.",
    "karma.conf.",
    // The package managers' hooks, loaded by every command they run (`pnpm test`).
    ".pnpmfile.",
    ".yarnrc",
];

/// True when a runner (or a build) loads `name` around the code rather than as code.
fn runner_file(name: &str) -> bool {
    RUNNER_FILES.contains(&name) || JS_RUNNER_CONFIGS.iter().any(|p| name.starts_with(p))
}

/// Files that declare a package: one in a new folder is a new package.
const MANIFESTS: &[&str] = &["Cargo.toml", "package.json", "go.mod", "pyproject.toml"];

/// Files that only pin the versions of what is installed.
const LOCKS: &[&str] = &[
    "Cargo.lock",
    "go.sum",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    "uv.lock",
    "poetry.lock",
    "Pipfile.lock",
    "pdm.lock",
];

/// True when the role of `rel` can depend on its text: a manifest or a requirements file,
/// whose change may only declare dependencies. Only those are read.
pub fn reads_text(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    MANIFESTS.contains(&name) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// The role of `rel` (relative to the project root), whose text was `old` at the start and
/// is `new` now (`None`: absent, or not text). The texts are needed only where
/// [`reads_text`] says so; for any other file, `None` is as good.
pub fn role(rel: &str, facts: &Facts, (old, new): (Option<&str>, Option<&str>)) -> Role {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let folders: Vec<&str> = rel.split('/').collect();
    let folders = &folders[..folders.len() - 1];
    if LOCKS.contains(&name) {
        return Role::Dependencies;
    }
    if runner_file(name) {
        return Role::Check("a file its runner or build loads");
    }
    if facts.runners.contains(rel) {
        return Role::Check(match facts.after_option.contains(rel) {
            true => AFTER_AN_OPTION,
            false => "a stop gate's command runs it",
        });
    }
    let config = facts.configs.contains(rel);
    if test_named(name) {
        return Role::Check(if config { A_CONFIG } else { A_TEST });
    }
    if folders.iter().any(|f| TEST_FOLDERS.contains(f)) {
        return Role::Check("it is in a folder of tests");
    }
    // A Rust file of a crate's code keeps its tests beside the code: it is code, unless
    // only a test build compiles it (`#[cfg(test)] mod tests;`).
    let test_only = facts.test_only.contains(rel);
    let inline = name.ends_with(".rs") && folders.contains(&"src") && !test_only;
    if facts.tests.contains(rel) && !inline {
        return Role::Check(if config { A_CONFIG } else { DEFINES_TESTS });
    }
    if test_only {
        return Role::Check(TEST_ONLY);
    }
    // A manifest the surface also reads as a config (go.mod's language version, a
    // package.json's scripts) whose change only declares dependencies is one still.
    if MANIFESTS.contains(&name) && dependencies_only(name, old, new) {
        return Role::Dependencies;
    }
    // A config whose options the surface reads, or a manifest (its scripts, its runners'
    // fields), is part of the checks even where a gate's globs match it (a test gate over
    // `**/package.json`, `**/pyproject.toml`, which it lists to run again when they change).
    if config {
        return Role::Check(A_CONFIG);
    }
    // Its change declares more than dependencies (see above), unless it is new.
    if MANIFESTS.contains(&name) {
        return match old.is_none() && facts.new_folder(rel) {
            true => Role::Code,
            false => Role::Check("a manifest: more than its dependencies changed"),
        };
    }
    if facts.checked.contains(rel) {
        return Role::Code;
    }
    if dependencies_only(name, old, new) {
        return Role::Dependencies;
    }
    Role::Check("no stop gate checks it")
}

fn test_named(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    (name.starts_with("test_") && name.ends_with(".py"))
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// True when `old` and `new` differ only in the dependencies they declare.
fn dependencies_only(name: &str, old: Option<&str>, new: Option<&str>) -> bool {
    let (Some(old), Some(new)) = (old, new) else {
        return false;
    };
    if name.starts_with("requirements") && name.ends_with(".txt") {
        return true;
    }
    match name {
        "Cargo.toml" | "pyproject.toml" => {
            let strip = |t: &str| toml::from_str::<toml::Table>(t).ok().map(toml_rest);
            strip(old).is_some_and(|o| Some(o) == strip(new))
        }
        "package.json" => {
            let strip = |t: &str| {
                serde_json::from_str::<serde_json::Value>(t)
                    .ok()
                    .map(json_rest)
            };
            strip(old).is_some_and(|o| Some(o) == strip(new))
        }
        "go.mod" => go_rest(old) == go_rest(new) && go_version(new) >= go_version(old),
        _ => false,
    }
}

const DEPENDENCY_TABLES: &[&str] = &[
    "dependencies",
    "dev-dependencies",
    "build-dependencies",
    "optional-dependencies",
    "dependency-groups",
];

/// A TOML manifest without its dependency tables, at any depth (`[workspace.dependencies]`,
/// `[target.'cfg(unix)'.dependencies]`, `[project] dependencies`,
/// `[tool.poetry.group.dev.dependencies]`). A table left empty goes too: a new
/// `[target.'cfg(unix)'.dependencies]` adds nothing else.
fn toml_rest(table: toml::Table) -> toml::Table {
    table
        .into_iter()
        .filter(|(k, _)| !DEPENDENCY_TABLES.contains(&k.as_ref()))
        .filter_map(|(k, v)| match v {
            toml::Value::Table(inner) => {
                let rest = toml_rest(inner);
                (!rest.is_empty()).then_some((k, toml::Value::Table(rest)))
            }
            v => Some((k, v)),
        })
        .collect()
}

fn json_rest(mut value: serde_json::Value) -> serde_json::Value {
    if let Some(map) = value.as_object_mut() {
        for k in [
            "dependencies",
            "devDependencies",
            "peerDependencies",
            "optionalDependencies",
        ] {
            map.remove(k);
        }
    }
    value
}

/// A `go.mod` without its `require` directives (one-line or blocks), its `go` line and its
/// `toolchain` line: a raised language version is what new code needs, as a new
/// dependency is (`min`, `max`, range over an int), and takes away no check; a lowered one
/// is not dependencies only ([`go_version`]).
fn go_rest(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if in_block {
            in_block = line != ")";
        } else if line == "require (" {
            in_block = true;
        } else if !["require ", "go ", "toolchain "]
            .iter()
            .any(|d| line.starts_with(d))
        {
            out.push(line);
        }
    }
    out
}

/// The language version a `go.mod` declares, as numbers; Go reads a file without a `go`
/// line as 1.16.
fn go_version(text: &str) -> Vec<u64> {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("go "))
        .map(|v| v.trim().split('.').map_while(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(checked: &[&str], tests: &[&str]) -> Facts {
        Facts {
            checked: checked.iter().map(ToString::to_string).collect(),
            tests: tests.iter().map(ToString::to_string).collect(),
            configs: BTreeSet::new(),
            runners: ["ci/test.sh".to_string(), "calc.py".to_string()].into(),
            after_option: ["calc.py".to_string()].into(),
            test_only: ["internal/check/check.go".to_string()].into(),
            start_folders: Some(["src", "pkg", "tests"].map(String::from).into()),
        }
    }

    #[test]
    fn code_only_tests_can_use_is_part_of_the_checks() {
        let mut f = facts(
            &["src/tests.rs", "src/lib.rs"],
            &["src/tests.rs", "src/lib.rs"],
        );
        f.test_only.insert("src/tests.rs".into());
        // The unit tests' own file is tests (a change of behaviour may take them along);
        // a file of code with tests beside them is code.
        assert_eq!(
            role("src/tests.rs", &f, (None, None)),
            Role::Check(DEFINES_TESTS)
        );
        assert_eq!(role("src/lib.rs", &f, (None, None)), Role::Code);
        let f = facts(&["internal/check/check.go", "calc.go"], &[]);
        assert_eq!(
            role("internal/check/check.go", &f, (None, None)),
            Role::Check(TEST_ONLY)
        );
        assert_eq!(role("calc.go", &f, (None, None)), Role::Code);
    }

    #[test]
    fn data_is_the_tests_when_they_read_it_or_by_gos_rule() {
        let f = facts(
            &["internal/check/check.go", "calc.go", "cmd/tool/main.go"],
            &[],
        );
        // Embedded by a package only tests use, at any depth below it.
        assert!(f.tests_data("internal/check/cases/valid/a.toml", false));
        assert!(f.tests_data("internal/check/want.json", false));
        // Its Go files are code of the tests, not data.
        assert!(!f.tests_data("internal/check/check.go", false));
        // A package's testdata; not another package's folder, nor the root package's files.
        assert!(f.tests_data("cmd/tool/testdata/in.txt", false));
        assert!(!f.tests_data("cmd/tool/config.json", false));
        assert!(!f.tests_data("cases.json", false));
        // Read by the tests (by what the run did): data, unless code, a config or a runner's.
        assert!(f.tests_data("cases.json", true));
        assert!(!f.tests_data("calc.go", true));
        assert!(!f.tests_data("ci/test.sh", true));
        assert!(!f.tests_data("conftest.py", true));
    }

    #[test]
    fn code_named_only_after_an_option_is_put_back_for_one_run_of_two() {
        let f = facts(&["calc.py"], &[]);
        assert_eq!(
            role("calc.py", &f, (None, None)),
            Role::Check(AFTER_AN_OPTION)
        );
        assert_eq!(
            role("ci/test.sh", &f, (None, None)),
            Role::Check("a stop gate's command runs it")
        );
    }

    #[test]
    fn a_file_a_gates_command_runs_is_a_check_even_where_a_gate_checks_it() {
        let f = facts(&["ci/test.sh", "ci/lint.sh"], &[]);
        assert_eq!(
            role("ci/test.sh", &f, (None, None)),
            Role::Check("a stop gate's command runs it")
        );
        assert_eq!(role("ci/lint.sh", &f, (None, None)), Role::Code);
    }

    #[test]
    fn tests_their_folders_and_their_runners_files_are_checks_and_code_is_code() {
        let f = facts(
            &[
                "src/app.py",
                "src/lib.rs",
                "tests/test_app.py",
                "pkg/helpers.py",
            ],
            &["src/lib.rs", "pkg/helpers.py"],
        );
        let of = |rel| role(rel, &f, (Some("x"), Some("y")));
        assert_eq!(of("src/app.py"), Role::Code);
        assert_eq!(
            of("src/lib.rs"),
            Role::Code,
            "inline Rust tests live in code"
        );
        assert!(matches!(of("tests/test_app.py"), Role::Check(_)));
        assert!(matches!(of("tests/util/data.json"), Role::Check(_)));
        assert!(matches!(of("conftest.py"), Role::Check(_)));
        assert!(matches!(of("crate/build.rs"), Role::Check(_)));
        assert!(
            matches!(of("pkg/helpers.py"), Role::Check(_)),
            "it defines tests"
        );
        assert!(matches!(of("src/a.test.ts"), Role::Check(_)));
        assert!(matches!(of("pkg/x_test.go"), Role::Check(_)));
        assert!(matches!(of("pytest.toml"), Role::Check(_)));
        assert!(matches!(of(".cargo/config.toml"), Role::Check(_)));
        assert_eq!(of("Cargo.lock"), Role::Dependencies);
    }

    #[test]
    fn runner_configs_and_manifests_are_checks_even_where_a_gate_matches_them() {
        let mut f = facts(
            &[
                "jest.config.js",
                "babel.config.cjs",
                "src/a.js",
                "package.json",
                "pyproject.toml",
            ],
            &[],
        );
        f.configs = ["pyproject.toml".to_string()].into();
        let of = |rel| role(rel, &f, (Some("{}"), Some("{\"jest\": {}}")));
        assert!(matches!(of("jest.config.js"), Role::Check(_)));
        assert!(matches!(of("babel.config.cjs"), Role::Check(_)));
        assert!(matches!(of(".pnpmfile.cjs"), Role::Check(_)));
        assert!(matches!(of("pyproject.toml"), Role::Check(A_CONFIG)));
        assert!(
            matches!(of("package.json"), Role::Check(_)),
            "a field besides the dependencies"
        );
        assert_eq!(of("src/a.js"), Role::Code);
        let deps = role(
            "package.json",
            &f,
            (
                Some("{\"dependencies\": {}}"),
                Some("{\"dependencies\": {\"x\": \"1\"}}"),
            ),
        );
        assert_eq!(deps, Role::Dependencies);
    }

    #[test]
    fn a_manifest_is_dependencies_only_when_nothing_else_in_it_moved() {
        let f = facts(&[], &[]);
        let cargo = "[package]\nname = \"a\"\n\n[dependencies]\nserde = \"1\"\n";
        let more =
            format!("{cargo}regex = \"1\"\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n");
        let lint = format!("{cargo}\n[lints.rust]\nwarnings = \"allow\"\n");
        let of = |a: &str, b: &str, n: &str| role(n, &f, (Some(a), Some(b)));
        assert_eq!(of(cargo, &more, "Cargo.toml"), Role::Dependencies);
        assert!(matches!(of(cargo, &lint, "Cargo.toml"), Role::Check(_)));
        let pkg = r#"{"scripts": {"test": "node --test"}, "dependencies": {}}"#;
        let added = r#"{"scripts": {"test": "node --test"}, "dependencies": {"a": "1"}}"#;
        let script = r#"{"scripts": {"test": "true"}, "dependencies": {"a": "1"}}"#;
        assert_eq!(of(pkg, added, "package.json"), Role::Dependencies);
        assert!(matches!(of(pkg, script, "package.json"), Role::Check(_)));
        let go = "module m\n\ngo 1.22\n";
        let go_req = "module m\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/mod v0.1.0\n)\n";
        let go_down = "module m\n\ngo 1.18\n";
        assert_eq!(of(go, go_req, "go.mod"), Role::Dependencies);
        assert!(matches!(of(go, go_down, "go.mod"), Role::Check(_)));
        let go_up = "module m\n\ngo 1.23.0\n\ntoolchain go1.24.1\n";
        assert_eq!(of(go, go_up, "go.mod"), Role::Dependencies);
        assert_eq!(of("module m\n", go, "go.mod"), Role::Dependencies);
        let go_debug = "module m\n\ngo 1.23\n\ngodebug panicnil=1\n";
        assert!(matches!(of(go, go_debug, "go.mod"), Role::Check(_)));
        assert!(matches!(of(go, "module m\n", "go.mod"), Role::Check(_)));
        let mut read = facts(&[], &[]);
        read.configs.insert("go.mod".into());
        let of_read = |a: &str, b: &str| role("go.mod", &read, (Some(a), Some(b)));
        assert_eq!(of_read(go, go_up), Role::Dependencies, "a config read too");
        assert!(matches!(of_read(go, go_down), Role::Check(_)));
        assert!(matches!(of("", "", "README.md"), Role::Check(_)));
        assert!(
            matches!(role("Cargo.toml", &f, (None, Some(cargo))), Role::Check(_)),
            "a new manifest where the start had files is part of the checks"
        );
        assert!(
            matches!(
                role("src/Cargo.toml", &f, (None, Some(cargo))),
                Role::Check(_)
            ),
            "a new manifest in an old folder is part of the checks"
        );
        assert_eq!(
            role("helper/Cargo.toml", &f, (None, Some(cargo))),
            Role::Code,
            "a new folder's manifest is a new package"
        );
    }
}
