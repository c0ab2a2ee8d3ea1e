use super::*;

fn heard(lines: &[&str]) -> Heard {
    let mut h = Heard::default();
    for l in lines {
        h.line(&format!("{l}\n"));
    }
    h
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

const GO_BIN: &str = "/tmp/go-build1/b001/gox.test";
const GO_ARGS: &[&str] = &["-test.paniconexit0", "-test.timeout=10m0s"];

#[test]
fn a_go_binary_that_printed_fail_and_exited_0_is_named() {
    let h = heard(&[
        "    a_test.go:10: wrong",
        "--- FAIL: TestAdd (0.00s)",
        "FAIL",
    ]);
    let why = judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &h).unwrap();
    assert!(
        why.contains("gox.test reported a failure (TestAdd)"),
        "{why}"
    );
    // -json (go 1.20+) marks the binary's lines with a SYN byte.
    let h = heard(&["\u{16}--- FAIL: TestAdd (0.00s)", "\u{16}FAIL"]);
    assert!(judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &h).is_some());
}

#[test]
fn go_subtests_are_heard_apart_from_tests() {
    let h = heard(&[
        "=== RUN   TestToml",
        "=== RUN   TestToml/valid/key",
        "    --- PASS: TestToml/valid/key (0.00s)",
        "        --- FAIL: TestToml/valid/key/deep (0.00s)",
        "    p_test.go:9: --- PASS: TestLog/x",
        "--- PASS: TestToml (0.01s)",
        "PASS",
    ]);
    assert_eq!(h.ran, ["TestToml"]);
    assert_eq!(
        h.subtests,
        ["TestToml/valid/key", "TestToml/valid/key/deep"]
    );
}

#[test]
fn go_results_count_only_for_tests_the_binary_holds() {
    let mut h = heard(&[
        "--- PASS: TestGone (0.00s)",
        "    --- PASS: TestGone/case (0.00s)",
        "    --- PASS: TestAdd/big (0.00s)",
        "--- PASS: TestAdd (0.00s)",
        "PASS",
    ]);
    assert_eq!(
        h.top_names(),
        BTreeSet::from(["TestAdd".to_string(), "TestGone".to_string()])
    );
    h.only_defined(&BTreeSet::from(["TestAdd".to_string()]));
    assert_eq!(h.ran, ["TestAdd"]);
    assert_eq!(h.subtests, ["TestAdd/big"]);
}

#[test]
fn a_go_binarys_functions_are_read_from_its_table_and_another_file_has_none() {
    let names = BTreeSet::from(["main".to_string(), "TestNoSuch".to_string()]);
    // ralph-gate itself is no Go binary: no table, so nothing is known.
    let me = std::env::current_exe().unwrap();
    assert_eq!(go_functions(&me, &names), None);
    assert_eq!(go_functions(&me, &BTreeSet::new()), None);
}

#[test]
fn a_programs_own_fail_line_before_the_summary_is_output() {
    // The package's code prints FAIL; its test passes and the testing package says PASS last.
    let h = heard(&["FAIL", "    p_test.go:9: --- FAIL: looks like one", "PASS"]);
    assert_eq!(
        judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &h),
        None
    );
    // A TestMain that prints PASS after m.Run failed is still caught by the test's line.
    let h = heard(&["--- FAIL: TestAdd (0.00s)", "FAIL", "PASS"]);
    assert!(judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &h).is_some());
}

#[test]
fn a_go_binary_must_reach_pass() {
    let h = heard(&["testing: warning: no tests to run", "PASS"]);
    assert_eq!(
        judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &h),
        None
    );
    let why = judge(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS), &heard(&[])).unwrap();
    assert!(why.contains("without the testing package's PASS"), "{why}");
}

#[test]
fn go_run_and_listing_are_not_judged() {
    // `go run` shares the -exec: its program is not a test binary.
    let run = judge(
        Harness::Go,
        Path::new("/tmp/go-build1/b001/exe/app"),
        &[],
        &heard(&["FAIL"]),
    );
    assert_eq!(run, None);
    let listed = os(&["-test.list", "."]);
    assert_eq!(
        judge(
            Harness::Go,
            Path::new(GO_BIN),
            &listed,
            &heard(&["TestAdd"])
        ),
        None
    );
}

const RS_BIN: &str = "/p/target/debug/deps/demo-0123abcd";

#[test]
fn libtest_must_reach_its_summary_and_agree_with_it() {
    let ok = heard(&[
        "",
        "running 2 tests",
        "..",
        "test result: ok. 2 passed; 0 failed",
    ]);
    assert_eq!(judge(Harness::Libtest, Path::new(RS_BIN), &[], &ok), None);
    let cut = heard(&["", "running 2 tests", "."]);
    let why = judge(Harness::Libtest, Path::new(RS_BIN), &[], &cut).unwrap();
    assert!(
        why.contains("before libtest's `test result:` line"),
        "{why}"
    );
    let failed = heard(&["running 1 test", "test result: FAILED. 0 passed; 1 failed"]);
    let why = judge(Harness::Libtest, Path::new(RS_BIN), &[], &failed).unwrap();
    assert!(why.contains("said `test result: FAILED`"), "{why}");
}

#[test]
fn programs_that_are_not_libtest_tests_are_not_judged() {
    // `cargo run` shares the runner; a harness = false test prints what it likes.
    let cut = heard(&["running 2 tests"]);
    let run = judge(
        Harness::Libtest,
        Path::new("/p/target/debug/app"),
        &[],
        &cut,
    );
    assert_eq!(run, None);
    assert_eq!(
        judge(Harness::Libtest, Path::new(RS_BIN), &[], &heard(&["hello"])),
        None
    );
    let listed = os(&["--list"]);
    assert_eq!(
        judge(Harness::Libtest, Path::new(RS_BIN), &listed, &cut),
        None
    );
}

#[test]
fn a_project_runner_is_seen_outside_comments() {
    assert!(names_a_runner(
        "[target.x86_64-unknown-linux-gnu]\nrunner = \"qemu\"\n"
    ));
    assert!(names_a_runner(
        "target.x86_64-unknown-linux-gnu.runner = \"qemu\"\n"
    ));
    assert!(!names_a_runner("# runner = \"qemu\"\n[build]\njobs = 2\n"));
    assert!(!names_a_runner(
        "[build]\nrustflags = [\"-C\", \"runner\"]\n"
    ));
}

#[test]
fn the_runner_variable_names_this_host() {
    let v = cargo_runner_var();
    assert!(
        v.starts_with("CARGO_TARGET_") && v.ends_with("_RUNNER"),
        "{v}"
    );
    assert_eq!(v, v.to_uppercase());
    assert!(!v.contains('-'), "{v}");
}

#[test]
fn the_tests_a_binary_ran_are_named_and_skips_are_not() {
    let h = heard(&[
        "=== RUN   TestAdd",
        "=== RUN   TestAdd/zero",
        "    --- PASS: TestAdd/zero (0.00s)",
        "--- PASS: TestAdd (0.00s)",
        "--- SKIP: TestLater (0.00s)",
        "\u{16}--- FAIL: TestSub (0.00s)",
        "FAIL",
    ]);
    assert_eq!(h.ran, ["TestAdd", "TestSub"]);
    let h = heard(&[
        "running 4 tests",
        "test tests::adds ... ok",
        "test tests::boom - should panic ... ok",
        "test tests::later ... ignored, not yet",
        "test tests::sub ... FAILED",
        "test result: FAILED. 2 passed; 1 failed; 1 ignored",
    ]);
    assert_eq!(h.ran, ["tests::adds", "tests::boom", "tests::sub"]);
}

#[test]
fn go_verbose_output_is_shown_as_the_quiet_binary_shows_it() {
    let verbose = [
        "=== RUN   TestAdd",
        "    a_test.go:3: hello",
        "=== RUN   TestAdd/zero",
        "    --- PASS: TestAdd/zero (0.00s)",
        "=== RUN   TestAdd/one",
        "        a_test.go:9: one is wrong",
        "    --- FAIL: TestAdd/one (0.00s)",
        "--- FAIL: TestAdd (0.00s)",
        "=== RUN   TestLater",
        "    a_test.go:20: later",
        "--- SKIP: TestLater (0.00s)",
        "=== RUN   TestOk",
        "printed by the code",
        "    a_test.go:30: quiet when passing",
        "--- PASS: TestOk (0.00s)",
        "FAIL",
    ];
    let mut q = report::Quiet::default();
    let mut shown: Vec<String> = verbose
        .iter()
        .flat_map(|l| q.line(format!("{l}\n").as_bytes()))
        .map(|l| String::from_utf8(l).unwrap())
        .collect();
    shown.extend(q.rest().into_iter().map(|l| String::from_utf8(l).unwrap()));
    assert_eq!(
        shown.concat(),
        "--- FAIL: TestAdd (0.00s)\n    a_test.go:3: hello\n    --- FAIL: TestAdd/one (0.00s)\n        a_test.go:9: one is wrong\nprinted by the code\nFAIL\n"
    );
}

#[test]
fn a_test_that_never_reported_keeps_its_lines() {
    let mut q = report::Quiet::default();
    assert!(q.line(b"=== RUN   TestExit\n").is_empty());
    assert!(q.line(b"    a_test.go:3: before exit\n").is_empty());
    assert_eq!(q.rest(), [b"    a_test.go:3: before exit\n".to_vec()]);
}

#[test]
fn a_binarys_tests_are_named_by_package_folder_and_binary() {
    let told = |harness, binary: &str, cwd: &str| Told {
        harness,
        binary: binary.into(),
        cwd: cwd.into(),
        reason: None,
        ran: vec!["t".into()],
        counted: 0,
        tested: true,
        pid: None,
        subtests: vec!["t/case".into()],
    };
    let root = Path::new("/p");
    assert_eq!(
        told(Harness::Go, GO_BIN, "/p/calc").named(root, &["t/case".into()]),
        ["calc: t/case"]
    );
    assert_eq!(told(Harness::Go, GO_BIN, "/p/calc").ids(root), ["calc: t"]);
    assert_eq!(told(Harness::Go, GO_BIN, "/p").ids(root), [".: t"]);
    assert_eq!(
        told(Harness::Libtest, RS_BIN, "/p/crates/demo").ids(root),
        ["crates/demo: demo t"]
    );
}

#[test]
fn libtest_terse_output_is_rebuilt_from_the_pretty_one() {
    let pretty = [
        "",
        "running 3 tests",
        "test a ... ok",
        "test b - should panic ... ok",
        "test c ... FAILED",
        "",
        "failures:",
        "",
        "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
    ];
    let mut t = report::Terse::default();
    let shown: Vec<u8> = pretty
        .iter()
        .flat_map(|l| t.line(format!("{l}\n").as_bytes()))
        .collect();
    assert_eq!(
        String::from_utf8(shown).unwrap(),
        "\nrunning 3 tests\n.. 2/3\nc --- FAILED\n\nfailures:\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
    );
    // Every 88 results, the count.
    let mut t = report::Terse::default();
    t.line(b"running 100 tests\n");
    let dots: Vec<u8> = (0..87).flat_map(|_| t.line(b"test x ... ok\n")).collect();
    assert!(String::from_utf8(dots).unwrap().ends_with(". 87/100\n"));
}

#[test]
fn a_binary_is_run_so_that_it_names_its_tests() {
    let (args, how) = Rewrite::of(Harness::Go, Path::new(GO_BIN), &os(GO_ARGS));
    assert_eq!(
        args[0], "-test.v=true",
        "first, before any argument that is not a flag"
    );
    assert!(matches!(how, Rewrite::GoQuiet(_)));
    let verbose = os(&["-test.v=true", "-test.timeout=10m0s"]);
    assert!(matches!(
        Rewrite::of(Harness::Go, Path::new(GO_BIN), &verbose).1,
        Rewrite::AsItCame
    ));
    let (args, how) = Rewrite::of(
        Harness::Libtest,
        Path::new(RS_BIN),
        &os(&["--quiet", "adds"]),
    );
    assert_eq!(args, os(&["adds"]));
    assert!(matches!(how, Rewrite::Terse(_)));
    for kept in [
        &["adds"][..],
        &["--quiet", "--format", "json"],
        &["--list", "--quiet"],
    ] {
        let (args, how) = Rewrite::of(Harness::Libtest, Path::new(RS_BIN), &os(kept));
        assert_eq!(args, os(kept));
        assert!(matches!(how, Rewrite::AsItCame));
    }
}
