use super::*;
use crate::plan::drivers::testing;
use crate::plan::MemFs;

fn jobs(fs: &MemFs, selected: &[&str]) -> Vec<Job> {
    let c = testing::config("presets = [\"typescript\"]\n");
    testing::jobs(plan, &c, fs, Some(selected))
}

fn argv(j: &Job) -> String {
    testing::shown(j)
}

const MONOREPO: &[(&str, &str)] = &[
    ("package.json", "{\"name\": \"root\", \"workspaces\": [\"packages/*\"]}"),
    ("package-lock.json", "{}"),
    ("tsconfig.base.json", "{\"compilerOptions\": {\"strict\": true, \"composite\": true}}"),
    ("packages/x/package.json", "{\"name\": \"@m/x\"}"),
    ("packages/x/tsconfig.json", "{\"extends\": \"../../tsconfig.base.json\", \"include\": [\"src\"]}"),
    ("packages/x/src/index.ts", "export const x = 1;\n"),
    ("packages/x/src/types.d.ts", "declare const v: number;\n"),
    ("packages/y/package.json", "{\"name\": \"@m/y\", \"dependencies\": {\"@m/x\": \"*\"}}"),
    ("packages/y/tsconfig.json", "{\"extends\": \"../../tsconfig.base.json\", // y\n \"references\": [{\"path\": \"../x\"},],}"),
    ("packages/y/src/main.ts", "import { x } from \"@m/x\";\nimport { u } from \"../../../shared/util\";\n"),
    ("packages/z/package.json", "{\"name\": \"@m/z\"}"),
    ("packages/z/tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}"),
    ("packages/z/src/z.ts", "export const z = 1;\n"),
    ("shared/util.ts", "export const u = 1;\n"),
    ("scripts/loose.ts", "import { u } from \"../shared/util\";\n"),
];

#[test]
fn an_edit_rechecks_its_project_and_every_project_that_depends_on_it() {
    let fs = MemFs::new(MONOREPO);
    let j = jobs(&fs, &["packages/x/src/index.ts"]);
    let shown: Vec<String> = j.iter().map(argv).collect();
    assert_eq!(shown.len(), 1, "y builds x with -b: {shown:#?}");
    assert_eq!(
        shown[0], "tsc -b packages/y/tsconfig.json --pretty false",
        "the project's own build, in place"
    );
    assert_eq!(j[0].label.as_deref(), Some("packages/y/tsconfig.json"));
    assert_eq!(j[0].tools_from, PathBuf::from("packages/y"));
    assert!(
        j[0].setup.is_empty() && j[0].clear.is_empty(),
        "edit feedback reuses its build"
    );
    for input in [
        "packages/x/src/index.ts",
        "packages/x/src/types.d.ts",
        "tsconfig.base.json",
        "shared/util.ts",
    ] {
        assert!(
            j[0].inputs.contains(&PathBuf::from(input)),
            "{input}: {:?}",
            j[0].inputs
        );
    }
    assert!(!j[0].inputs.contains(&PathBuf::from("packages/z/src/z.ts")));
}

#[test]
fn a_project_without_references_runs_tsc_p_incrementally() {
    let fs = MemFs::new(MONOREPO);
    let j = jobs(&fs, &["packages/z/src/z.ts"]);
    assert_eq!(j.len(), 1);
    let a = argv(&j[0]);
    assert!(
        a.starts_with("tsc -p packages/z/tsconfig.json --noEmit --pretty false --incremental --tsBuildInfoFile .ralph/tsc/p-"),
        "{a}"
    );
    assert!(j[0].setup.is_empty());
}

#[test]
fn shared_files_and_base_configs_reach_the_projects_that_read_them() {
    let fs = MemFs::new(MONOREPO);
    let j = jobs(&fs, &["shared/util.ts"]);
    let labels: Vec<_> = j
        .iter()
        .map(|j| j.label.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        labels,
        ["packages/y/tsconfig.json", "files under no tsconfig.json"],
        "{j:#?}"
    );
    let j = jobs(&fs, &["tsconfig.base.json"]);
    let labels: Vec<_> = j
        .iter()
        .map(|j| j.label.clone().unwrap_or_default())
        .collect();
    assert_eq!(labels, ["packages/y/tsconfig.json"], "x is built by y");
    let j = jobs(&fs, &["package-lock.json"]);
    assert_eq!(
        j.len(),
        2,
        "a lock file at the root reaches every project: {j:#?}"
    );
}

#[test]
fn loose_files_are_checked_on_their_own_with_what_they_import() {
    let fs = MemFs::new(MONOREPO);
    let j = jobs(&fs, &["scripts/loose.ts"]);
    assert_eq!(j.len(), 1);
    let a = argv(&j[0]);
    assert!(a.starts_with("tsc --noEmit --pretty false --strict"), "{a}");
    assert!(a.ends_with(" scripts/loose.ts"), "{a}");
    assert!(j[0].inputs.contains(&PathBuf::from("shared/util.ts")));
}

#[test]
fn a_solution_config_at_the_root_builds_everything_in_one_run() {
    let mut files = MONOREPO.to_vec();
    files.push((
        "tsconfig.json",
        "{\"files\": [], \"references\": [{\"path\": \"packages/x\"}, {\"path\": \"packages/y\"}]}",
    ));
    let fs = MemFs::new(&files);
    let j = jobs(&fs, &["packages/x/src/index.ts"]);
    let labels: Vec<_> = j
        .iter()
        .map(|j| j.label.clone().unwrap_or_default())
        .collect();
    assert_eq!(labels, ["tsconfig.json"]);
    assert_eq!(argv(&j[0]), "tsc -b tsconfig.json --pretty false");
}

#[test]
fn a_fresh_build_removes_every_project_s_own_build_info_and_forces() {
    let mut files = MONOREPO.to_vec();
    files.retain(|(p, _)| *p != "packages/x/tsconfig.json");
    files.push((
        "packages/x/tsconfig.json",
        "{\"extends\": \"../../tsconfig.base.json\", \"compilerOptions\": {\"outDir\": \"dist\"}, \"include\": [\"src\"]}",
    ));
    files.push((
        "packages/w/tsconfig.json",
        "{\"compilerOptions\": {\"composite\": true, \"tsBuildInfoFile\": \"${configDir}/node_modules/.tmp/w.tsbuildinfo\"}, \"references\": [{\"path\": \"../x\"}]}",
    ));
    files.push(("packages/w/src/w.ts", "export const w = 1;\n"));
    let fs = MemFs::new(&files);
    let c = testing::config("presets = [\"typescript\"]\n");
    let fresh = testing::jobs_reusing(plan, &c, &fs, Some(&["packages/w/src/w.ts"]), false);
    assert_eq!(fresh.len(), 1, "{fresh:#?}");
    assert_eq!(
        argv(&fresh[0]),
        "tsc -b packages/w/tsconfig.json --pretty false --force"
    );
    assert_eq!(
        fresh[0].clear,
        [
            PathBuf::from("packages/w/node_modules/.tmp/w.tsbuildinfo"),
            PathBuf::from("packages/x/dist/tsconfig.tsbuildinfo"),
        ]
    );
}

#[test]
fn a_config_with_a_byte_order_mark_is_read_and_its_files_are_inputs() {
    let mut files = MONOREPO.to_vec();
    files.retain(|(p, _)| *p != "packages/z/tsconfig.json");
    files.push((
        "packages/z/tsconfig.json",
        "\u{feff}{\"compilerOptions\": {\"strict\": true}}",
    ));
    let fs = MemFs::new(&files);
    let j = jobs(&fs, &["packages/z/src/z.ts"]);
    assert_eq!(j.len(), 1, "tsc reads a BOM; so must the planner: {j:#?}");
    assert!(j[0].inputs.contains(&PathBuf::from("packages/z/src/z.ts")));
}

#[test]
fn a_config_ralph_gate_cannot_read_still_covers_its_folder_and_is_not_cached() {
    let mut files = MONOREPO.to_vec();
    files.retain(|(p, _)| *p != "packages/z/tsconfig.json");
    files.push((
        "packages/z/tsconfig.json",
        "{ this is not JSON tsc reads either",
    ));
    let fs = MemFs::new(&files);
    let j = jobs(&fs, &["packages/z/src/z.ts"]);
    assert_eq!(j.len(), 1, "{j:#?}");
    assert!(j[0].inputs.contains(&PathBuf::from("packages/z/src/z.ts")));
    let why = j[0].no_cache.clone().unwrap_or_default();
    assert!(why.contains("packages/z/tsconfig.json"), "{why}");
}

#[test]
fn an_import_of_a_local_package_counts_even_when_package_json_does_not_declare_it() {
    let mut files = MONOREPO.to_vec();
    // Hoisted node_modules make an undeclared workspace import work; it must count.
    files.push(("packages/w/package.json", "{\"name\": \"@m/w\"}"));
    files.push((
        "packages/w/tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}}",
    ));
    files.push((
        "packages/w/src/w.ts",
        "import { x } from '@m/x/src/index';\nexport const w = x;\n",
    ));
    let fs = MemFs::new(&files);
    let j = jobs(&fs, &["packages/x/src/index.ts"]);
    let labels: Vec<_> = j
        .iter()
        .map(|j| j.label.clone().unwrap_or_default())
        .collect();
    assert!(
        labels.contains(&"packages/w/tsconfig.json".to_string()),
        "{labels:?}"
    );
}

#[test]
fn verdicts_that_can_end_a_loop_start_from_no_build_state() {
    let fs = MemFs::new(MONOREPO);
    let c = testing::config("presets = [\"typescript\"]\n");
    let fresh = testing::jobs_reusing(
        plan,
        &c,
        &fs,
        Some(&[
            "packages/z/src/z.ts",
            "packages/y/src/main.ts",
            "scripts/loose.ts",
        ]),
        false,
    );
    assert_eq!(fresh.len(), 3, "{fresh:#?}");
    for j in &fresh {
        let a = argv(j);
        if a.starts_with("tsc -b") {
            assert!(a.ends_with("--force") && !j.clear.is_empty(), "{a}");
            continue;
        }
        let private = j.private.as_ref().expect("a private folder");
        let private = private.to_string_lossy().into_owned();
        assert!(
            a.contains(&private),
            "the run's build state is in its private folder: {a} / {private}"
        );
        assert!(private.ends_with("-fresh"), "{private}");
    }
    let reused = jobs(
        &fs,
        &[
            "packages/z/src/z.ts",
            "packages/y/src/main.ts",
            "scripts/loose.ts",
        ],
    );
    assert!(reused
        .iter()
        .all(|j| j.private.is_none() && j.clear.is_empty()));
    assert!(reused
        .iter()
        .all(|j| !argv(j).contains("fresh") && !argv(j).contains("--force")));
}

#[test]
fn the_compiler_is_the_typescript_package_installed_for_the_project() {
    let fs = MemFs::new(&[
        (
            "node_modules/typescript/package.json",
            "{\"name\": \"typescript\", \"version\": \"5.9.3\", \"bin\": {\"tsc\": \"./bin/tsc\"}}",
        ),
        (
            "node_modules/@tsd/typescript/package.json",
            "{\"name\": \"@tsd/typescript\"}",
        ),
        ("package.json", "{\"workspaces\": [\"packages/*\"]}"),
        (
            "packages/a/package.json",
            "{\"devDependencies\": {\"typescript\": \"5.9.3\"}}",
        ),
        (
            "examples/app/package.json",
            "{\"dependencies\": {\"react\": \"19\"}}",
        ),
        ("examples/app/src/package.json", "{\"type\": \"module\"}"),
    ]);
    let program = |argv: &[&str]| Compiler {
        argv: argv.iter().map(OsString::from).collect(),
        missing_note: None,
    };
    assert_eq!(
        compiler(&fs, Path::new("packages/a")),
        program(&["node_modules/typescript/bin/tsc"]),
        "hoisted to the workspace root"
    );
    // A package of its own, no workspace, its dependencies not installed: not compiled
    // with the root's TypeScript against modules it lacks (an example app).
    let app = compiler(&fs, Path::new("examples/app/src"));
    let note = app.missing_note.unwrap_or_default();
    assert!(
        note.contains("dependencies of examples/app/package.json")
            && note.ends_with("in examples/app"),
        "{note}"
    );
    let mut installed = fs;
    installed.0.insert(
        "examples/app/node_modules/react/package.json".into(),
        b"{}".to_vec(),
    );
    assert_eq!(
        compiler(&installed, Path::new("examples/app/src")),
        program(&["node_modules/typescript/bin/tsc"]),
        "its own dependencies installed, node finds the rest above"
    );
    let none = MemFs::new(&[("package.json", "{\"devDependencies\": {\"tsd\": \"*\"}}")]);
    assert_eq!(compiler(&none, Path::new("")), program(&["tsc"]));
    let pinned = MemFs::new(&[(
        "package.json",
        "{\"devDependencies\": {\"typescript\": \"5.9.3\"}}",
    )]);
    let Compiler { argv, missing_note } = compiler(&pinned, Path::new(""));
    assert_eq!(argv, [OsString::from("node_modules/typescript/bin/tsc")]);
    assert!(missing_note
        .unwrap()
        .contains("typescript 5.9.3 in package.json) is not installed"));
    // The note names the package.json that declares it, not the root's.
    let nested = MemFs::new(&[(
        "examples/app/package.json",
        "{\"devDependencies\": {\"typescript\": \"^4.9.5\"}}",
    )]);
    let note = compiler(&nested, Path::new("examples/app/src"))
        .missing_note
        .unwrap();
    assert!(
        note.contains("typescript ^4.9.5 in examples/app/package.json"),
        "{note}"
    );
}

#[test]
fn under_plug_n_play_tsc_is_resolved_from_the_package_that_declares_it() {
    let fs = MemFs::new(&[
        (".pnp.cjs", "// runtime"),
        ("package.json", "{\"workspaces\": [\"packages/*\"]}"),
        (
            "packages/a/package.json",
            "{\"devDependencies\": {\"typescript\": \"5.9.3\"}}",
        ),
    ]);
    let Compiler { argv, missing_note } = compiler(&fs, Path::new("packages/a/src"));
    let argv: Vec<_> = argv.iter().map(|a| a.to_string_lossy()).collect();
    assert_eq!(argv[..4], ["node", "--require", "./.pnp.cjs", "-e"]);
    assert_eq!(argv[5], "packages/a", "{argv:?}");
    assert!(missing_note.unwrap().contains("Plug'n'Play"));
    // Installed packages win: a `node_modules` linker writes no `.pnp.cjs` to fall back on.
    let root = MemFs::new(&[
        (".pnp.cjs", "// runtime"),
        (
            "package.json",
            "{\"devDependencies\": {\"typescript\": \"5.9.3\"}}",
        ),
    ]);
    assert_eq!(compiler(&root, Path::new("")).argv[5], ".");
}

#[test]
fn config_dir_in_a_shared_base_names_the_project_s_own_folder() {
    let fs = MemFs::new(&[
        (
            "configs/base.json",
            "{\"compilerOptions\": {\"strict\": true, \"composite\": true, \"outDir\": \"${configDir}/dist\", \"tsBuildInfoFile\": \"${configDir}/dist/.tsbuildinfo\"}, \"include\": [\"${configDir}/src\"]}",
        ),
        ("packages/a/tsconfig.json", "{\"extends\": \"../../configs/base.json\"}"),
        ("packages/a/src/index.ts", "export const a = 1;\n"),
        ("packages/b/tsconfig.json", "{\"files\": [], \"references\": [{\"path\": \"../a\"}]}"),
    ]);
    let c = testing::config("presets = [\"typescript\"]\n");
    let fresh = testing::jobs_reusing(plan, &c, &fs, Some(&["packages/a/src/index.ts"]), false);
    let labels: Vec<String> = fresh.iter().filter_map(|j| j.label.clone()).collect();
    assert_eq!(
        labels,
        ["packages/b/tsconfig.json"],
        "a's own include covers its src: {fresh:#?}"
    );
    assert!(fresh[0]
        .inputs
        .contains(&PathBuf::from("packages/a/src/index.ts")));
    assert!(
        fresh[0]
            .clear
            .contains(&PathBuf::from("packages/a/dist/.tsbuildinfo")),
        "{:?}",
        fresh[0].clear
    );
}
