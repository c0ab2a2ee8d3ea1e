use super::configs::{is_local_source, is_release_toolchain};
use super::source::Source;
use super::*;
use ralph_plan::plan::MemFs;

fn reads() -> Reads {
    Reads {
        tsc: true,
        tests: true,
        clippy: true,
        python_lint: true,
        python_types: true,
        eslint: true,
        shellcheck: true,
        cargo: true,
        go: true,
    }
}

/// A tree held in memory, nothing outside it.
fn in_memory(files: &[(&str, &str)]) -> Source {
    let fs = MemFs::new(files);
    Source {
        files: fs.paths(),
        fs: Box::new(fs),
        outside: Vec::new(),
        absent: Vec::new(),
    }
}

/// The settings of an in-memory tree.
fn settings(files: &[(&str, &str)]) -> Vec<Setting> {
    let source = in_memory(files);
    let scripts = configs::Scripts {
        npm: ["test".to_string()].into(),
        make: ["check".to_string()].into(),
    };
    configs::settings(&source, &reads(), &scripts)
}

fn weaker(old: &[(&str, &str)], new: &[(&str, &str)]) -> Vec<String> {
    let mut c = Comparison::default();
    configs::compare(&settings(old), &settings(new), &mut c);
    c.weaker.iter().map(ToString::to_string).collect()
}

#[test]
fn tsconfig_options_that_check_less_are_weaker_and_the_rest_are_not() {
    let base = [(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"]}",
    )];
    let cases: &[(&str, bool)] = &[
        ("{\"compilerOptions\": {\"strict\": true, \"noCheck\": true}, \"include\": [\"src\"]}", true),
        ("{\"compilerOptions\": {\"strict\": true, \"noImplicitAny\": false}, \"include\": [\"src\"]}", true),
        ("{\"compilerOptions\": {}, \"include\": [\"src\"]}", true),
        ("{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"], \"exclude\": [\"src/x.ts\"]}", true),
        ("{\"compilerOptions\": {\"strict\": true}, \"include\": [\"lib\"]}", true),
        // Honest: a wider include, a stricter option, comments and trailing commas.
        ("{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\", \"lib\"]}", false),
        ("{\"compilerOptions\": {\"strict\": true, \"noUnusedLocals\": true}, \"include\": [\"src\"]}", false),
        ("// c\n{\"compilerOptions\": {\"strict\": true, \"target\": \"es2024\",}, \"include\": [\"src\"],}", false),
    ];
    for (new, weak) in cases {
        let w = weaker(&base, &[("tsconfig.json", new)]);
        assert_eq!(!w.is_empty(), *weak, "{new}: {w:?}");
    }
}

#[test]
fn a_tsconfig_weakened_through_its_extends_chain_is_seen() {
    let old = [
        (
            "tsconfig.base.json",
            "{\"compilerOptions\": {\"strict\": true}}",
        ),
        (
            "app/tsconfig.json",
            "{\"extends\": \"../tsconfig.base.json\"}",
        ),
    ];
    let new = [
        (
            "tsconfig.base.json",
            "{\"compilerOptions\": {\"strict\": true, \"skipLibCheck\": true}}",
        ),
        (
            "app/tsconfig.json",
            "{\"extends\": \"../tsconfig.base.json\", \"compilerOptions\": {\"strict\": false}}",
        ),
    ];
    let w = weaker(&old, &new);
    assert!(
        w.iter()
            .any(|f| f.starts_with("app/tsconfig.json") && f.contains("strict")),
        "{w:?}"
    );
    assert!(w.iter().any(|f| f.contains("skipLibCheck")), "{w:?}");
}

#[test]
fn cargo_tables_that_run_fewer_tests_are_weaker_and_dependencies_are_not() {
    let base = "[package]\nname = \"a\"\n\n[dependencies]\n";
    let cases: &[(&str, &str)] = &[
        ("[lib]\ntest = false\n", "lib.test"),
        ("[[test]]\nname = \"it\"\nharness = false\n", "harness"),
        ("[lints.clippy]\nunwrap_used = \"allow\"\n", "unwrap_used"),
        (
            "[profile.test]\ndebug-assertions = false\n",
            "debug-assertions",
        ),
    ];
    for (extra, says) in cases {
        let new = format!("{base}{extra}");
        let w = weaker(&[("Cargo.toml", base)], &[("Cargo.toml", &new)]);
        assert!(w.iter().any(|f| f.contains(says)), "{extra}: {w:?}");
    }
    let auto = base.replace("name = \"a\"\n", "name = \"a\"\nautotests = false\n");
    let w = weaker(&[("Cargo.toml", base)], &[("Cargo.toml", &auto)]);
    assert!(w.iter().any(|f| f.contains("package.autotests")), "{w:?}");
    let honest = format!(
        "{base}serde = \"1\"\n\n[features]\nx = []\n\n[lints.clippy]\nunwrap_used = \"deny\"\n"
    );
    assert_eq!(
        weaker(&[("Cargo.toml", base)], &[("Cargo.toml", &honest)]),
        Vec::<String>::new()
    );
}

#[test]
fn cargo_config_runners_toolchains_and_shellcheckrc_are_weaker() {
    let w = weaker(
        &[],
        &[(
            ".cargo/config.toml",
            "[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n",
        )],
    );
    assert!(
        w[0].contains(".cargo/config.toml:2") && w[0].contains("runner"),
        "{w:?}"
    );
    let w = weaker(&[], &[(".cargo/config.toml", "[net]\noffline = true\n")]);
    assert!(w.is_empty(), "an unrelated setting: {w:?}");
    let old = [("rust-toolchain.toml", "[toolchain]\nchannel = \"1.85\"\n")];
    assert!(weaker(
        &old,
        &[("rust-toolchain.toml", "[toolchain]\nchannel = \"1.86.0\"\n")]
    )
    .is_empty());
    assert!(!weaker(
        &old,
        &[("rust-toolchain.toml", "[toolchain]\nchannel = \"fake\"\n")]
    )
    .is_empty());
    let w = weaker(
        &[(".shellcheckrc", "disable=SC1091\n")],
        &[(".shellcheckrc", "disable=SC1091,SC2086\n")],
    );
    assert!(w[0].contains("`SC2086` added"), "{w:?}");
    assert!(weaker(
        &[(".shellcheckrc", "disable=SC1091,SC2086\n")],
        &[(".shellcheckrc", "disable=SC1091\n")]
    )
    .is_empty());
}

#[test]
fn scripts_pytest_options_and_versions() {
    let pkg = |test: &str, ts: &str| {
        format!("{{\"scripts\": {{\"test\": \"{test}\", \"dev\": \"vite\"}}, \"devDependencies\": {{\"typescript\": \"{ts}\"}}}}")
    };
    let old = pkg("node --test", "^5.9.0");
    assert!(!weaker(
        &[("package.json", &old)],
        &[("package.json", &pkg("exit 0", "^5.9.0"))]
    )
    .is_empty());
    assert!(!weaker(
        &[("package.json", &old)],
        &[("package.json", &pkg("node --test", "file:./fake"))]
    )
    .is_empty());
    assert!(weaker(
        &[("package.json", &old)],
        &[("package.json", &pkg("node --test", "^5.9.3"))]
    )
    .is_empty());
    let ini = |opts: &str| format!("[pytest]\naddopts = {opts}\ntestpaths = tests\n");
    assert!(!weaker(
        &[("pytest.ini", &ini("-q"))],
        &[("pytest.ini", &ini("-q -k 'not slow'"))]
    )
    .is_empty());
    assert!(!weaker(
        &[("pytest.ini", &ini("-q"))],
        &[("pytest.ini", &ini("-q --deselect tests/t.py::x"))]
    )
    .is_empty());
    assert!(weaker(
        &[("pytest.ini", &ini("-q"))],
        &[("pytest.ini", &ini("-q -v --tb=short"))]
    )
    .is_empty());
    assert!(!weaker(
        &[(".python-version", "3.12\n")],
        &[(".python-version", "3.8\n")]
    )
    .is_empty());
    assert!(weaker(
        &[(".python-version", "3.12\n")],
        &[(".python-version", "3.13\n")]
    )
    .is_empty());
    let make = |recipe: &str| format!("check:\n\t{recipe}\n\nother:\n\techo hi\n");
    assert!(!weaker(
        &[("Makefile", &make("cargo test"))],
        &[("Makefile", &make("true"))]
    )
    .is_empty());
}

#[test]
fn toolchain_and_source_words() {
    for ok in [
        "stable",
        "nightly-2025-01-01",
        "1.85",
        "1.85.0-x86_64-unknown-linux-gnu",
        "beta",
    ] {
        assert!(is_release_toolchain(ok), "{ok}");
    }
    for bad in ["fake", "my-toolchain", "/opt/rust"] {
        assert!(!is_release_toolchain(bad), "{bad}");
    }
    assert!(
        is_local_source("file:../ts") && is_local_source("link:x") && !is_local_source("^5.9.0")
    );
}

fn markers(files: &[(&str, &str)]) -> Surface {
    let source = in_memory(files);
    let (markers, tests) = markers::scan(&source, source.files.iter(), &reads());
    Surface {
        markers,
        tests,
        ..Surface::default()
    }
}

#[test]
fn suppressions_added_are_named_where_they_are_and_moving_code_is_not() {
    let old = markers(&[
        ("a.py", "def f():  # noqa\n    pass\n"),
        ("t.test.ts", "it('x', () => {});\n"),
    ]);
    let new = markers(&[
        ("b.py", "def f():  # noqa\n    pass\n"),
        (
            "t.test.ts",
            "it.skip('x', () => {});\n// @ts-ignore\nconst y: number = 'a';\n",
        ),
    ]);
    let c = compare(&old, &new);
    let w: Vec<String> = c.weaker.iter().map(ToString::to_string).collect();
    assert!(
        w.iter().any(|f| f == "t.test.ts:1: `it.skip` added to `x`"),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|f| f.starts_with("t.test.ts:2: `@ts-ignore` added")),
        "{w:?}"
    );
    assert!(
        !w.iter().any(|f| f.contains("noqa")),
        "a moved marker is the same marker: {w:?}"
    );
    assert!(
        w.iter().any(|f| f.contains("1 tests no longer run")),
        "it.skip is not a test run: {w:?}"
    );
}

#[test]
fn tests_renamed_keep_the_count_and_tests_gone_are_listed() {
    let rust = |body: &str| markers(&[("src/lib.rs", body)]);
    let two = rust("#[test]\nfn a() {}\n#[tokio::test]\nasync fn b() {}\n");
    let renamed = rust("#[test]\nfn a2() {}\n#[tokio::test]\nasync fn b() {}\n");
    assert!(compare(&two, &renamed).weaker.is_empty());
    let one = rust("#[test]\nfn a() {}\nfn b() {}\n");
    let w = compare(&two, &one).weaker;
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].what.contains("src/lib.rs:3 `b`"), "{w:?}");
    let cfg = rust("#[test]\nfn a() {}\n#[cfg(windows)]\n#[tokio::test]\nasync fn b() {}\n");
    let w = compare(&two, &cfg).weaker;
    assert!(
        w.iter().any(|f| f.what.contains("#[cfg(windows)]")),
        "a cfg on a test: {w:?}"
    );
    let py = |body: &str| markers(&[("tests/test_x.py", body)]);
    let w = compare(
        &py("def test_a():\n    pass\n"),
        &py("def check_a():\n    pass\n"),
    )
    .weaker;
    assert!(w[0].what.contains("`test_a`"), "{w:?}");
}

#[test]
fn a_file_that_leaves_its_gate_is_weaker_unless_it_is_gone() {
    let mut old = Surface::default();
    old.checked
        .insert("sh".into(), ["a.sh".to_string(), "b.sh".to_string()].into());
    let mut new = Surface::default();
    new.checked.insert("sh".into(), ["a.sh".to_string()].into());
    new.present = ["a.sh".to_string()].into();
    assert!(compare(&old, &new).weaker.is_empty(), "b.sh was deleted");
    new.present.insert("b.sh".into());
    let w = compare(&old, &new).weaker;
    assert_eq!(w[0].to_string(), "b.sh: no longer checked by gate `sh`");
}

#[test]
fn a_surface_survives_its_record_and_its_digest_is_stable() {
    let s = markers(&[("t.ts", "it.skip('x', () => {});\n")]);
    let text = serde_json::to_string(&s).unwrap();
    let back: Surface = serde_json::from_str(&text).unwrap();
    assert_eq!(back.digest(), s.digest());
    assert_eq!(back.markers, s.markers);
}

#[test]
fn a_script_is_weaker_when_it_runs_less_not_when_it_changes() {
    let pkg = |test: &str| format!("{{\"scripts\": {{\"test\": \"{test}\"}}}}");
    let old = pkg("xo && npm run build && ava --timeout=10m --serial");
    let judge = |new: &str| weaker(&[("package.json", &old)], &[("package.json", &pkg(new))]);
    assert!(
        judge("xo && npm run build && ava").is_empty(),
        "options that run no less"
    );
    assert!(
        judge("xo && npm run build && ava --verbose && tsc").is_empty(),
        "more"
    );
    for bad in [
        "exit 0",
        "xo && npm run build",
        "xo && npm run build && ava || true",
        "xo && npm run build && ava --match=foo --passWithNoTests",
        "true",
    ] {
        assert!(!judge(bad).is_empty(), "{bad}");
    }
}

#[test]
fn a_skip_on_a_new_test_is_not_a_weakening_but_on_a_renamed_one_it_is() {
    let py = |body: &str| markers(&[("tests/test_x.py", body)]);
    let old = py("def test_a():\n    pass\n");
    let added = py("def test_a():\n    pass\n\n@pytest.mark.skipif(sys.platform == 'win32', reason='posix')\ndef test_b():\n    pass\n");
    assert!(
        compare(&old, &added).weaker.is_empty(),
        "{:?}",
        compare(&old, &added).weaker
    );
    let renamed = py("@pytest.mark.skip\ndef test_a2():\n    pass\n");
    assert!(
        !compare(&old, &renamed).weaker.is_empty(),
        "renamed and skipped"
    );
    let renamed_beside_a_new_one =
        py("@pytest.mark.skip\ndef test_a2():\n    pass\n\ndef test_dummy():\n    pass\n");
    assert!(
        !compare(&old, &renamed_beside_a_new_one).weaker.is_empty(),
        "renamed and skipped, with a test added to make the count"
    );
    let existing = py("@pytest.mark.skipif(True, reason='x')\ndef test_a():\n    pass\n\ndef test_c():\n    pass\n");
    assert!(
        !compare(&old, &existing).weaker.is_empty(),
        "a skip on a test that ran before"
    );
}

/// A skip made inside a test's body belongs to that test, not to the one after it: a skip
/// put in an existing test just above a new one is not a skip on a new test.
#[test]
fn a_skip_in_a_body_belongs_to_the_test_around_it() {
    let go = |body: &str| markers(&[("calc_test.go", body)]);
    let old = go("func TestA(t *testing.T) {\n\tcheck(t)\n}\n");
    let skipped = go("func TestA(t *testing.T) {\n\tt.Skip(\"later\")\n\tcheck(t)\n}\n\nfunc TestB(t *testing.T) {\n}\n");
    let w = compare(&old, &skipped).weaker;
    assert!(
        w.iter().any(|f| f.what == "`t.Skip(` added to `TestA`"),
        "{w:?}"
    );
    let py = |body: &str| markers(&[("tests/test_x.py", body)]);
    let old = py("class T:\n    def test_a(self):\n        pass\n");
    let skipped = py("class T:\n    def test_a(self):\n        pytest.skip('later')\n\n    def test_b(self):\n        pass\n");
    let w = compare(&old, &skipped).weaker;
    assert!(
        w.iter()
            .any(|f| f.what == "`pytest.skip(` added to `test_a`"),
        "{w:?}"
    );
    // A directive on a line of its own still applies to what follows it.
    let sh = |body: &str| markers(&[("run.sh", body)]);
    let w = compare(
        &sh("f() {\n  echo $1\n}\n"),
        &sh("f() {\n  # shellcheck disable=SC2086\n  echo $1\n}\n"),
    )
    .weaker;
    assert_eq!(w.len(), 1, "{w:?}");
}

/// Every suppression and skip the issue names, added to a file a gate checks, is a weakening
/// with its line (on a test that ran before, for a skip).
#[test]
fn every_listed_suppression_is_seen_where_a_gate_reads_it() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("src/a.ts", "", "// @ts-nocheck\n", "@ts-nocheck"),
        ("src/a.ts", "", "// @ts-ignore\n", "@ts-ignore"),
        (
            "src/a.ts",
            "",
            "// eslint-disable-next-line\n",
            "eslint-disable-next-line",
        ),
        (
            "test/a.test.ts",
            "it('x', () => {});\n",
            "it.skip('x', () => {});\n",
            "it.skip",
        ),
        (
            "test/a.test.ts",
            "it('x', () => {});\n",
            "xit('x', () => {});\n",
            "xit",
        ),
        (
            "test/a.test.ts",
            "describe('x', () => {});\n",
            "describe.skip('x', () => {});\n",
            "describe.skip",
        ),
        (
            "tests/test_a.py",
            "def test_x():\n    pass\n",
            "@pytest.mark.skip\ndef test_x():\n    pass\n",
            "@pytest.mark.skip",
        ),
        (
            "tests/test_a.py",
            "def test_x():\n    pass\n",
            "@pytest.mark.xfail\ndef test_x():\n    pass\n",
            "@pytest.mark.xfail",
        ),
        (
            "tests/test_a.py",
            "def test_x(self):\n    pass\n",
            "@unittest.skip('x')\ndef test_x(self):\n    pass\n",
            "@unittest.skip",
        ),
        (
            "a.py",
            "x = f()\n",
            "x = f()  # type: ignore\n",
            "# type: ignore",
        ),
        ("a.py", "import os\n", "import os  # noqa\n", "# noqa"),
        (
            "src/lib.rs",
            "#[test]\nfn x() {}\n",
            "#[test]\n#[ignore]\nfn x() {}\n",
            "#[ignore]",
        ),
        (
            "src/lib.rs",
            "#[test]\nfn x() {}\n",
            "#[cfg(any())]\n#[test]\nfn x() {}\n",
            "#[cfg(any())]",
        ),
        (
            "x_test.go",
            "func TestX(t *testing.T) {\n}\n",
            "func TestX(t *testing.T) {\n\tt.Skip()\n}\n",
            "t.Skip(",
        ),
        (
            "run.sh",
            "echo $1\n",
            "# shellcheck disable=all\necho $1\n",
            "# shellcheck disable=all",
        ),
    ];
    for (file, before, after, kind) in cases {
        let w = compare(&markers(&[(file, before)]), &markers(&[(file, after)])).weaker;
        assert!(
            w.iter()
                .any(|f| f.file == *file && f.line > 0 && f.what.contains(kind)),
            "{file}: {kind}: {w:?}"
        );
    }
}

#[test]
fn a_test_replaced_by_another_is_gone_though_the_count_holds() {
    let py = |body: &str| markers(&[("test_calc.py", body)]);
    let old = py("def test_adds():\n    assert add(1, 2) == 4\n\ndef test_subs():\n    assert sub(2, 1) == 1\n");
    // The failing test deleted, a trivial one in its place: as many tests run.
    let swapped =
        py("def test_trivial():\n    assert True\n\ndef test_subs():\n    assert sub(2, 1) == 1\n");
    let w = compare(&old, &swapped).weaker;
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].what.contains("1 tests are gone") && w[0].what.contains("test_calc.py:1 `test_adds`"),
        "{w:?}"
    );
    // Renamed with its code unchanged (spacing aside), and moved below another: honest.
    let renamed = py("def test_subs():\n    assert sub(2, 1) == 1\n\ndef test_adds_small():\n    assert  add(1, 2) == 4\n");
    assert!(
        compare(&old, &renamed).weaker.is_empty(),
        "{:?}",
        compare(&old, &renamed).weaker
    );
    // Renamed and edited a little (most of its words kept) is still that test.
    let changed = py("def test_adds_small():\n    assert add(1, 2) == 3\n\ndef test_subs():\n    assert sub(2, 1) == 1\n");
    assert!(compare(&old, &changed).weaker.is_empty());
}

#[test]
fn a_tool_running_a_file_of_the_project_is_judged_and_one_outside_it_is_not() {
    use super::tools::ToolFact;
    let global = ToolFact {
        runs: "/usr/lib/node_modules/typescript/bin/tsc".into(),
        inside: false,
        package: Some("typescript 5.9.3".into()),
        digest: String::new(),
    };
    let local = |runs: &str, package: Option<&str>, digest: &str| ToolFact {
        runs: runs.into(),
        inside: true,
        package: package.map(str::to_string),
        digest: digest.into(),
    };
    let pkg = local(
        "node_modules/typescript/bin/tsc",
        Some("typescript 5.9.3"),
        "aa",
    );
    let weaker = |old: &ToolFact, new: &ToolFact, added: &[&str]| {
        let mut c = Comparison::default();
        let one = |t: &ToolFact| [("tsc".to_string(), t.clone())].into();
        let added = added.iter().map(|s| s.to_string()).collect();
        tools::compare(&one(old), &one(new), &added, &mut c);
        c.weaker.len()
    };
    let script = local("node_modules/.bin/tsc", None, "bb");
    assert_eq!(
        weaker(&global, &script, &[]),
        1,
        "a script where a package ran"
    );
    assert_eq!(weaker(&global, &pkg, &[]), 1, "a package nothing installed");
    assert_eq!(
        weaker(&global, &pkg, &["typescript"]),
        0,
        "a dependency added"
    );
    let edited = local(
        "node_modules/typescript/bin/tsc",
        Some("typescript 5.9.3"),
        "cc",
    );
    assert_eq!(weaker(&pkg, &edited, &[]), 1, "edited, same version");
    let upgraded = local(
        "node_modules/.pnpm/typescript@5.9.4/node_modules/typescript/bin/tsc",
        Some("typescript 5.9.4"),
        "dd",
    );
    assert_eq!(weaker(&pkg, &upgraded, &[]), 0, "another version");
    assert_eq!(weaker(&pkg, &script, &[]), 1, "another file, no package");
    let other_global = ToolFact {
        runs: "/opt/ts/bin/tsc".into(),
        ..global.clone()
    };
    assert_eq!(
        weaker(&global, &other_global, &[]),
        0,
        "the machine's business"
    );
}

/// A gate added to run a script the project already had records the script on the new
/// side only: that is the new gate's, not a change to a check. A script the old gates ran,
/// gone unset to set or changed, is compared as ever.
#[test]
fn a_script_newly_run_by_an_added_gate_is_no_change_to_the_checks() {
    let setting = |body: &str| Setting {
        file: "package.json".into(),
        key: "scripts.check".into(),
        value: body.into(),
        line: 3,
        rule: Rule::Command,
    };
    let surface = |settings: Vec<Setting>, ran: &[&str]| Surface {
        settings,
        markers: Vec::new(),
        tests: Vec::new(),
        checked: BTreeMap::new(),
        absent: BTreeSet::new(),
        tools: BTreeMap::new(),
        runners: BTreeSet::new(),
        after_option: BTreeSet::new(),
        ran: ran.iter().map(|s| s.to_string()).collect(),
        test_only: BTreeSet::new(),
        present: BTreeSet::new(),
    };
    let weaker = |old: &Surface, new: &Surface| compare(old, new).weaker.len();
    let now = surface(vec![setting("tsc --noEmit")], &["scripts.check"]);
    assert_eq!(weaker(&surface(Vec::new(), &[]), &now), 0);
    // Run before and missing then (the gate failed): the script's coming is compared.
    assert_eq!(weaker(&surface(Vec::new(), &["scripts.check"]), &now), 1);
    // Run before with another body that ran more.
    let before = surface(
        vec![setting("tsc --noEmit && eslint .")],
        &["scripts.check"],
    );
    assert_eq!(weaker(&before, &now), 1);
}

#[test]
fn an_options_value_inside_its_word_names_a_project_file() {
    let files: BTreeSet<String> = [".env", "cfg.ini", "calc.py"].map(String::from).into();
    assert_eq!(option_value("--env-file=.env", &files), Some(".env"));
    assert_eq!(option_value("--env-file=./.env", &files), Some(".env"));
    assert_eq!(option_value("-ccfg.ini", &files), Some("cfg.ini"));
    assert_eq!(option_value("-Werror", &files), None, "not a file");
    assert_eq!(option_value("--strict", &files), None);
    assert_eq!(option_value("calc.py", &files), None, "a plain word");
    assert_eq!(option_value("X=calc.py", &files), None, "an assignment");
}
