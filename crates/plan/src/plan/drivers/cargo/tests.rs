use super::*;
use crate::plan::drivers::testing;
use crate::plan::MemFs;

fn jobs(fs: &MemFs, selected: &[&str]) -> Vec<Job> {
    let c = testing::config("[[gate]]\nname = \"cargo\"\ndriver = \"cargo\"\nglobs = [\"**/*.rs\", \"**/Cargo.toml\"]\nrun = \"cargo check --workspace\"\n");
    testing::jobs(plan, &c, fs, Some(selected))
}

const WORKSPACE: &[(&str, &str)] = &[
    ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/skip\"]\n"),
    ("Cargo.lock", ""),
    ("crates/a/Cargo.toml", "[package]\nname = \"a\"\n"),
    ("crates/a/src/lib.rs", ""),
    ("crates/b/Cargo.toml", "[package]\nname = \"b\"\n[dependencies]\na = { path = \"../a\" }\nshared = { path = \"../../shared\" }\n"),
    ("crates/b/src/lib.rs", ""),
    ("crates/b/tests/data/input.json", ""),
    ("crates/skip/Cargo.toml", "[package]\nname = \"skip\"\n"),
    ("crates/skip/src/lib.rs", ""),
    ("shared/Cargo.toml", "[package]\nname = \"shared\"\n"),
    ("shared/src/lib.rs", ""),
    ("fuzz/Cargo.toml", "[package]\nname = \"fuzz\"\n[workspace]\nmembers = [\".\"]\n[dependencies]\na = { path = \"../crates/a\" }\n"),
    ("fuzz/src/main.rs", ""),
    ("README.md", ""),
];

#[test]
fn members_of_one_workspace_share_one_run_at_its_root() {
    let fs = MemFs::new(WORKSPACE);
    let j = jobs(&fs, &["crates/a/src/lib.rs", "crates/b/src/lib.rs"]);
    assert_eq!(j.len(), 1, "{j:?}");
    assert_eq!(j[0].dir, PathBuf::new());
    assert_eq!(j[0].tools_from, PathBuf::new());
}

#[test]
fn a_nested_workspace_and_an_excluded_package_run_on_their_own() {
    let fs = MemFs::new(WORKSPACE);
    let j = jobs(
        &fs,
        &[
            "fuzz/src/main.rs",
            "crates/skip/src/lib.rs",
            "crates/a/src/lib.rs",
        ],
    );
    let dirs: Vec<&Path> = j.iter().map(|j| j.dir.as_path()).collect();
    assert_eq!(
        dirs,
        [Path::new(""), Path::new("crates/skip"), Path::new("fuzz")]
    );
}

#[test]
fn inputs_are_the_workspace_and_path_dependencies_outside_it() {
    let fs = MemFs::new(WORKSPACE);
    let fuzz = jobs(&fs, &["fuzz/src/main.rs"]);
    let inputs: Vec<String> = fuzz[0]
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        inputs.contains(&"fuzz/src/main.rs".to_string()),
        "{inputs:?}"
    );
    assert!(
        inputs.contains(&"crates/a/src/lib.rs".to_string()),
        "the path dependency: {inputs:?}"
    );
    assert!(
        !inputs.contains(&"crates/b/src/lib.rs".to_string()),
        "{inputs:?}"
    );
    assert!(fuzz[0].no_cache.is_none());
    let ws = jobs(&fs, &["crates/b/src/lib.rs"]);
    assert!(
        ws[0]
            .inputs
            .contains(&PathBuf::from("crates/b/tests/data/input.json")),
        "test data is an input of cargo test"
    );
}

#[test]
fn a_path_dependency_outside_the_project_turns_the_cache_off() {
    let mut files = WORKSPACE.to_vec();
    files.push((
        "crates/c/Cargo.toml",
        "[package]\nname = \"c\"\n[dependencies]\nx = { path = \"../../../elsewhere\" }\n",
    ));
    files.push(("crates/c/src/lib.rs", ""));
    let fs = MemFs::new(&files);
    let j = jobs(&fs, &["crates/c/src/lib.rs"]);
    let why = j[0].no_cache.clone().unwrap_or_default();
    assert!(
        why.contains("crates/c/Cargo.toml") && why.contains("outside the project"),
        "{why}"
    );
}

#[test]
fn a_package_under_a_workspace_that_does_not_list_it_is_its_own_root() {
    let fs = MemFs::new(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n"),
        (
            "a/Cargo.toml",
            "[package]\nname = \"a\"\n[dependencies]\nhelper = { path = \"../helper\" }\n",
        ),
        ("a/src/lib.rs", ""),
        ("helper/Cargo.toml", "[package]\nname = \"helper\"\n"),
        ("helper/src/lib.rs", ""),
        ("loner/Cargo.toml", "[package]\nname = \"loner\"\n"),
        ("loner/src/lib.rs", ""),
    ]);
    let j = jobs(&fs, &["helper/src/lib.rs", "loner/src/lib.rs"]);
    let dirs: Vec<&Path> = j.iter().map(|j| j.dir.as_path()).collect();
    assert_eq!(
        dirs,
        [Path::new(""), Path::new("loner")],
        "helper is a member by path"
    );
}
