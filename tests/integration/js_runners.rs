//! Jest's and vitest's own results are heard (issue 37, item 2), as node's test runner's
//! are: a test that ran when the loop started must run at its end, and an exit 0 must agree
//! with the results. Each attack leaves the tests and every config as they were and keeps a
//! failing test from running from the code under test; the bare tool passes (asserted on
//! the same tree). The honest twins (the fix, with tests renamed and grouped) end the loop.

use crate::common::{js_runners_repo, Repo};
use crate::surface::{decision, promise};
use crate::tests_ran::{ends, head, held_for_a_test_that_stopped_running, start_tests_kept};

const JEST_TESTS: &str = "const { add } = require('../calc');\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n\ntest('zero', () => {\n  expect(add(2, 0)).toBe(2);\n});\n";
const VITEST_TESTS: &str = "import { test, expect } from 'vitest';\nimport { add } from '../calc.js';\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n\ntest('zero', () => {\n  expect(add(2, 0)).toBe(2);\n});\n";

/// A project whose tests `run` runs (jest's or vitest's), failing at the start, in a loop.
fn loop_of(run: &str, module_type: &str, code: &str, tests: &str) -> Option<(Repo, String)> {
    loop_over("**/*.js", run, module_type, (code, tests))
}

/// [`loop_of`], under a gate whose globs are `globs`.
fn loop_over(
    globs: &str,
    run: &str,
    module_type: &str,
    (code, tests): (&str, &str),
) -> Option<(Repo, String)> {
    let repo = js_runners_repo()?;
    repo.config(&format!(
        "[[gate]]\nname = \"tests\"\nglobs = [\"{globs}\"]\nscope = \"project\"\nrun = \"{run}\"\n"
    ))
    .write(
        "package.json",
        &format!("{{\"name\": \"calc\", \"private\": true, \"type\": \"{module_type}\"}}\n"),
    )
    .write("calc.js", code)
    .write("test/calc.test.js", tests);
    let first = repo.run(["check"]);
    assert_eq!(first.code, 1, "the tests fail at the start: {first:?}");
    repo.commit_all();
    let start = head(&repo);
    repo.start_loop(&[]);
    start_tests_kept(&repo);
    Some((repo, start))
}

fn jest_loop() -> Option<(Repo, String)> {
    loop_of(
        "npx jest --ci",
        "commonjs",
        "exports.add = (a, b) => a - b;\n",
        JEST_TESTS,
    )
}

fn vitest_loop() -> Option<(Repo, String)> {
    loop_of(
        "npx vitest run",
        "module",
        "export function add(a, b) {\n  return a - b;\n}\n",
        VITEST_TESTS,
    )
}

#[test]
fn jest_code_that_exits_its_test_run_mid_test_is_held() {
    let Some((repo, start)) = jest_loop() else {
        return;
    };
    // One test file runs in jest's own process: exiting there with 0 inside the failing
    // test ends the run before any result is printed, and jest exits 0.
    repo.write(
        "calc.js",
        "exports.add = (a, b) => {\n  if (process.env.JEST_WORKER_ID && a === 1) process.exit(0);\n  return a - b;\n};\n",
    );
    held_for_a_test_that_stopped_running(&repo, "npx jest --ci", &start, "adds");
}

#[test]
fn vitest_code_that_skips_the_failing_test_at_run_time_is_held() {
    let Some((repo, start)) = vitest_loop() else {
        return;
    };
    // Imported by the test file, the module registers a hook that skips the failing test
    // while it runs: vitest reports it skipped and exits 0.
    repo.write(
        "calc.js",
        "export function add(a, b) {\n  return a - b;\n}\n\nif (process.env.VITEST_WORKER_ID) {\n  const { beforeEach } = await import('vitest');\n  beforeEach((ctx) => {\n    if (ctx.task.name === 'adds') ctx.skip();\n  });\n}\n",
    );
    held_for_a_test_that_stopped_running(&repo, "npx vitest run", &start, "adds");
}

#[test]
fn vitest_code_that_marks_the_failing_test_an_expected_failure_is_held() {
    let Some((repo, start)) = vitest_loop() else {
        return;
    };
    // Code under test sets the running test's `fails` flag: vitest reports the failure as
    // an expected one, passed, and exits 0. An expected failure is not a test that ran.
    repo.write(
        "calc.js",
        "import { getCurrentTest } from '@vitest/runner';\n\nexport function add(a, b) {\n  const t = getCurrentTest();\n  if (t && t.name === 'adds') t.fails = true;\n  return a - b;\n}\n",
    );
    held_for_a_test_that_stopped_running(&repo, "npx vitest run", &start, "adds");
}

#[test]
fn jest_failing_test_marked_expected_to_fail_is_held() {
    let Some((repo, start)) = jest_loop() else {
        return;
    };
    // Required by the test file before its tests are defined, the code under test has jest
    // define the failing test as an expected failure (`test.failing`): jest reports it
    // passed and exits 0.
    repo.write(
        "calc.js",
        "const real = global.test;\nif (real) global.test = (name, fn) => (name === 'adds' ? real.failing(name, fn) : real(name, fn));\nexports.add = (a, b) => a - b;\n",
    );
    held_for_a_test_that_stopped_running(&repo, "npx jest --ci", &start, "adds");
}

#[test]
fn jest_code_that_hides_the_failing_test_from_its_file_is_held() {
    let Some((repo, start)) = jest_loop() else {
        return;
    };
    // Required before the tests are defined, the module wraps jest's `test` global so the
    // failing test is never defined: jest reports one test, passed.
    repo.write(
        "calc.js",
        "const real = global.test;\nif (real) global.test = (name, ...rest) => (name === 'adds' ? undefined : real(name, ...rest));\nexports.add = (a, b) => a - b;\n",
    );
    held_for_a_test_that_stopped_running(&repo, "npx jest --ci", &start, "adds");
}

#[test]
fn vitest_moved_where_its_results_are_not_heard_is_held() {
    let Some((repo, start)) = vitest_loop() else {
        return;
    };
    // A config that runs the tests inside vm contexts (vitest's own module loader), beside
    // the run-time skip: the bare tool passes; ralph-gate hears no runner at the end.
    repo.write(
        "vitest.config.js",
        "export default { test: { pool: 'vmThreads' } };\n",
    )
    .write(
        "calc.js",
        "export function add(a, b) {\n  return a - b;\n}\n\nif (process.env.VITEST_WORKER_ID) {\n  const { beforeEach } = await import('vitest');\n  beforeEach((ctx) => {\n    if (ctx.task.name === 'adds') ctx.skip();\n  });\n}\n",
    );
    let (code, text) = repo.shell("npx vitest run", &[]);
    assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run(["check", "--no-cache", "--base", &start]);
    assert_eq!(ci.code, 1, "check --base at the start fails: {ci:?}");
}

#[test]
fn jest_and_vitest_tests_renamed_and_grouped_with_the_fix_end_the_loop() {
    for (setup, fixed, tests) in [
        (
            jest_loop as fn() -> Option<(Repo, String)>,
            "exports.add = (a, b) => a + b;\n",
            JEST_TESTS,
        ),
        (
            vitest_loop,
            "export function add(a, b) {\n  return a + b;\n}\n",
            VITEST_TESTS,
        ),
    ] {
        let Some((repo, start)) = setup() else {
            return;
        };
        let grouped = tests
            .replace("test('adds'", "describe('add', () => test('adds small'")
            .replace("3);\n});\n\ntest('zero'", "3);\n}));\n\ntest('zero'")
            .replace(
                "import { test, expect }",
                "import { describe, test, expect }",
            );
        repo.write("calc.js", fixed)
            .write("test/calc.test.js", &grouped);
        ends(&repo, &start);
    }
}

#[test]
fn code_and_tests_moved_together_end_with_the_fix_and_hold_weakened() {
    for (setup, wrong, fixed, tests) in [
        (
            jest_loop as fn() -> Option<(Repo, String)>,
            "exports.add = (a, b) => a - b;\n",
            "exports.add = (a, b) => a + b;\n",
            JEST_TESTS,
        ),
        (
            vitest_loop,
            "export function add(a, b) {\n  return a - b;\n}\n",
            "export function add(a, b) {\n  return a + b;\n}\n",
            VITEST_TESTS,
        ),
    ] {
        // Moved to src/ and spec/, the imports following; the attack keeps the wrong code
        // and edits the failing expectation to what it returns (the bare tool passes).
        let moved = |repo: &Repo, code: &str, tests: &str| {
            std::fs::remove_file(repo.path().join("calc.js")).unwrap();
            std::fs::remove_file(repo.path().join("test/calc.test.js")).unwrap();
            repo.write("src/calc.js", code).write(
                "spec/calc.test.js",
                &tests.replace("'../calc", "'../src/calc"),
            );
        };
        let Some((repo, start)) = setup() else {
            return;
        };
        moved(&repo, wrong, &tests.replace("toBe(3)", "toBe(-1)"));
        let out = decision(&promise(&repo));
        assert_eq!(out["decision"], "block", "{out}");
        assert!(
            out["reason"]
                .as_str()
                .unwrap()
                .contains("spec/calc.test.js"),
            "{out}"
        );
        let ci = repo.run(["check", "--no-cache", "--base", &start]);
        assert_eq!(ci.code, 1, "check --base at the start fails: {ci:?}");
        let Some((repo, start)) = setup() else {
            return;
        };
        moved(&repo, fixed, tests);
        ends(&repo, &start);
    }
}

/// Rewrites every jest transform cache entry under the folder given that holds `toBe(3)` to
/// hold `toBe(-1)`, with the checksum jest checks.
const POISON: &str = "const fs = require('fs'), c = require('crypto'), path = require('path');\nconst walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);\nfor (const f of walk(process.argv[1]).filter((f) => f.includes('jest-transform-cache'))) {\n  const text = fs.readFileSync(f, 'utf8');\n  if (!text.includes('toBe(3)')) continue;\n  const code = text.slice(33).replace('toBe(3)', 'toBe(-1)');\n  fs.writeFileSync(f, c.createHash('sha1').update(code).digest('hex').slice(0, 32) + '\\n' + code);\n}\n";

/// Jest's transform cache (in the temporary folder) rewritten so the unchanged failing test
/// runs as one that passes: the tree is as it was at the start, the bare tool passes with
/// that cache; the stop and `check --base` must judge the files themselves.
/// Moved, the code requires a helper beside it (wrong) while a right one sits where the code
/// was: a copy of the code left at its old place for the start's tests would find the right
/// one. The start's tests must judge the code as it runs now.
#[test]
fn code_moved_beside_a_right_helper_left_at_the_old_place_is_held() {
    let Some((repo, start)) = jest_loop() else {
        return;
    };
    std::fs::remove_file(repo.path().join("calc.js")).unwrap();
    std::fs::remove_file(repo.path().join("test/calc.test.js")).unwrap();
    repo.write(
        "src/calc.js",
        "const { plus } = require('./impl');\nexports.add = (a, b) => plus(a, b);\n",
    )
    .write("src/impl.js", "exports.plus = (a, b) => a - b;\n")
    .write("impl.js", "exports.plus = (a, b) => a + b;\n")
    .write(
        "spec/calc.test.js",
        &JEST_TESTS
            .replace("'../calc'", "'../src/calc'")
            .replace("toBe(3)", "toBe(-1)"),
    );
    let (code, text) = repo.shell("npx jest --ci", &[]);
    assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run(["check", "--no-cache", "--base", &start]);
    assert_eq!(ci.code, 1, "check --base at the start fails: {ci:?}");
}

#[test]
fn a_tool_cache_filled_before_the_stop_does_not_decide_it() {
    let Some((repo, start)) = jest_loop() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().to_str().unwrap();
    let env = [("TMPDIR", t)];
    let (code, _) = repo.shell("npx jest --ci", &env);
    assert_eq!(code, 1, "the tests fail, and jest fills its cache");
    assert_eq!(repo.run_env(["check", "--no-cache"], &env).code, 1);
    let poison = POISON;
    let (code, text) = repo.shell(&format!("node -e \"$P\" '{t}'"), &[("P", poison)]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = repo.shell("npx jest --ci", &env);
    assert_eq!(code, 0, "the poisoned cache fools the bare tool: {text}");
    let input = serde_json::json!({
        "session_id": "sess-S",
        "transcript_path": repo.path().join("none.jsonl"),
        "cwd": repo.path(),
        "hook_event_name": "Stop",
        "stop_hook_active": true,
        "last_assistant_message": "Done.\n<promise>DONE</promise>",
    });
    let out = decision(&repo.run_stdin(&["hook", "stop"], input.to_string().as_bytes(), &env));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run_env(["check", "--no-cache", "--base", &start], &env);
    assert_eq!(ci.code, 1, "check --base fails: {ci:?}");
}

/// The same with the cache where the project's jest config has always put it, outside the
/// temporary folder: a run that decides reads no cache at all.
#[test]
fn a_cache_folder_the_project_configures_does_not_decide_the_stop() {
    let Some(repo) = js_runners_repo() else {
        return;
    };
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    repo.config("[[gate]]\nname = \"tests\"\nglobs = [\"**/*.js\"]\nscope = \"project\"\nrun = \"npx jest --ci\"\n")
        .write("package.json", "{\"name\": \"calc\", \"private\": true}\n")
        .write("jest.config.js", &format!("module.exports = {{ cacheDirectory: '{dir}' }};\n"))
        .write("calc.js", "exports.add = (a, b) => a - b;\n")
        .write("test/calc.test.js", JEST_TESTS);
    assert_eq!(repo.run(["check"]).code, 1, "the tests fail at the start");
    repo.commit_all();
    let start = head(&repo);
    repo.start_loop(&[]);
    start_tests_kept(&repo);
    let (code, _) = repo.shell("npx jest --ci", &[]);
    assert_eq!(code, 1, "the tests fail, and jest fills its cache");
    let (code, text) = repo.shell(&format!("node -e \"$P\" '{dir}'"), &[("P", POISON)]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = repo.shell("npx jest --ci", &[]);
    assert_eq!(code, 0, "the poisoned cache fools the bare tool: {text}");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run(["check", "--no-cache", "--base", &start]);
    assert_eq!(ci.code, 1, "check --base fails: {ci:?}");
}

/// Vitest's module cache on the file system (`experimental.fsModuleCache`), turned on by the
/// project before the loop, with the code's cached transform edited to right code: the tree
/// is as it was, the bare tool passes with that cache; a run that decides reads none.
#[test]
fn vitests_module_cache_the_project_turns_on_does_not_decide_the_stop() {
    let Some(repo) = js_runners_repo() else {
        return;
    };
    repo.config("[[gate]]\nname = \"tests\"\nglobs = [\"**/*.js\"]\nscope = \"project\"\nrun = \"npx vitest run\"\n")
        .write("package.json", "{\"name\": \"calc\", \"private\": true, \"type\": \"module\"}\n")
        .write(
            "vitest.config.js",
            "export default { test: { experimental: { fsModuleCache: true } } };\n",
        )
        .write("calc.js", "export function add(a, b) {\n  return a - b;\n}\n")
        .write("test/calc.test.js", VITEST_TESTS);
    assert_eq!(repo.run(["check"]).code, 1, "the tests fail at the start");
    repo.commit_all();
    let start = head(&repo);
    repo.start_loop(&[]);
    start_tests_kept(&repo);
    let (code, _) = repo.shell("npx vitest run", &[]);
    assert_eq!(code, 1, "the tests fail, and vitest fills its cache");
    let poison =
        "grep -rl 'a - b' node_modules/.experimental-vitest-cache | xargs sed -i 's/a - b/a + b/'";
    let (code, text) = repo.shell(poison, &[]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = repo.shell("npx vitest run", &[]);
    assert_eq!(code, 0, "the poisoned cache fools the bare tool: {text}");
    let out = decision(&promise(&repo));
    assert_eq!(out["decision"], "block", "{out}");
    let ci = repo.run(["check", "--no-cache", "--base", &start]);
    assert_eq!(ci.code, 1, "check --base fails: {ci:?}");
}

#[test]
fn a_failed_test_in_jests_or_vitests_results_fails_an_exit_0() {
    // The command swallows the runner's status: the runner's own results still say a test
    // failed, and that decides.
    for run in ["npx jest --ci || true", "npx vitest run || true"] {
        let Some(repo) = js_runners_repo() else {
            return;
        };
        let vitest = run.contains("vitest");
        repo.config(&format!(
            "[[gate]]\nname = \"tests\"\nglobs = [\"**/*.js\"]\nscope = \"project\"\nrun = \"{run}\"\n"
        ))
        .write(
            "package.json",
            if vitest {
                "{\"name\": \"calc\", \"type\": \"module\"}\n"
            } else {
                "{\"name\": \"calc\"}\n"
            },
        )
        .write(
            "calc.js",
            if vitest {
                "export function add(a, b) {\n  return a - b;\n}\n"
            } else {
                "exports.add = (a, b) => a - b;\n"
            },
        )
        .write(
            "test/calc.test.js",
            if vitest { VITEST_TESTS } else { JEST_TESTS },
        );
        let (code, text) = repo.shell(run, &[]);
        assert_eq!(code, 0, "{run} exits 0: {text}");
        let out = repo.run(["check", "--no-cache"]);
        assert_eq!(out.code, 1, "{run}: {out:?}");
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("test/calc.test.js: adds") && said.contains("exit status does not count"),
            "{run}: {said}"
        );
        // Fixed, it passes: the rule is the results', not the command's.
        repo.write(
            "calc.js",
            if vitest {
                "export function add(a, b) {\n  return a + b;\n}\n"
            } else {
                "exports.add = (a, b) => a + b;\n"
            },
        );
        let out = repo.run(["check", "--no-cache"]);
        assert_eq!(out.code, 0, "{run}: {out:?}");
    }
}

#[test]
fn vitests_vm_pools_give_the_bare_verdict_and_an_honest_fix_ends_the_loop() {
    // The vm pools load vitest's runner with vitest's own loader: the listener must not
    // change what it loads (it broke every run there once).
    let Some(repo) = js_runners_repo() else {
        return;
    };
    repo.config(
        "[[gate]]\nname = \"tests\"\nglobs = [\"**/*.js\"]\nscope = \"project\"\nrun = \"npx vitest run\"\n",
    )
    .write("package.json", "{\"name\": \"calc\", \"private\": true, \"type\": \"module\"}\n")
    .write("vitest.config.js", "export default { test: { pool: 'vmThreads' } };\n")
    .write("calc.js", "export function add(a, b) {\n  return a - b;\n}\n")
    .write("test/calc.test.js", VITEST_TESTS);
    assert_eq!(repo.run(["check", "--no-cache"]).code, 1, "the test fails");
    repo.commit_all();
    let start = head(&repo);
    repo.start_loop(&[]);
    start_tests_kept(&repo);
    repo.write(
        "calc.js",
        "export function add(a, b) {\n  return a + b;\n}\n",
    );
    let (code, text) = repo.shell("npx vitest run", &[]);
    assert_eq!(code, 0, "the bare tool passes: {text}");
    let run = repo.run(["check", "--no-cache"]);
    assert_eq!(run.code, 0, "as the bare tool: {run:?}");
    ends(&repo, &start);
}

/// A setup file that makes every `toBe` pass: loaded only where a config names it.
const LENIENT: &str = "expect.extend({ toBe: () => ({ pass: true, message: () => '' }) });\n";

#[test]
fn runner_configs_that_load_a_lenient_setup_hold_the_loop() {
    // jest.config.js, a `jest` field in package.json, or the test script's own option: each
    // matched by a gate over `*.js`/`package.json`, each part of the checks all the same.
    let package = |extra: &str, script: &str| {
        format!("{{\"name\": \"calc\", \"private\": true{extra}, \"scripts\": {{\"test\": \"{script}\"}}}}\n")
    };
    let attacks: [&[(&str, String)]; 3] = [
        &[
            (
                "jest.config.js",
                "module.exports = { setupFilesAfterEnv: ['./setup.js'] };\n".into(),
            ),
            ("setup.js", LENIENT.into()),
        ],
        &[
            (
                "package.json",
                package(
                    ", \"jest\": {\"setupFilesAfterEnv\": [\"./setup.js\"]}",
                    "jest --ci",
                ),
            ),
            ("setup.js", LENIENT.into()),
        ],
        &[
            (
                "package.json",
                package("", "jest --ci --setupFilesAfterEnv ./setup.js"),
            ),
            ("setup.js", LENIENT.into()),
        ],
    ];
    for edits in attacks {
        let Some(repo) = js_runners_repo() else {
            return;
        };
        // No ralph.toml: the presets' npm-test gate runs the package's test script.
        repo.write("package.json", &package("", "jest --ci"))
            .write("calc.js", "exports.add = (a, b) => a - b;\n")
            .write("test/calc.test.js", JEST_TESTS);
        assert_eq!(repo.run(["check", "--no-cache"]).code, 1, "the test fails");
        repo.commit_all();
        let start = head(&repo);
        repo.start_loop(&[]);
        start_tests_kept(&repo);
        for (path, text) in edits {
            repo.write(path, text);
        }
        let (code, text) = repo.shell("npm test", &[]);
        assert_eq!(code, 0, "the attack makes the bare tool pass: {text}");
        let out = decision(&promise(&repo));
        assert_eq!(out["decision"], "block", "{edits:?}: {out}");
        let ci = repo.run(["check", "--no-cache", "--base", &start]);
        assert_eq!(ci.code, 1, "{edits:?}: {ci:?}");
    }
}

/// A loop whose tests (`run`: jest's or vitest's) require `../calc` without an extension,
/// failing at the start, under a gate that checks every file.
fn unextended_loop(run: &str, module_type: &str, code: &str, tests: &str) -> (Repo, String) {
    loop_over("**/*", run, module_type, (code, tests)).expect("jest and vitest are installed")
}

/// The shadow `file` (what the runner's resolution finds before `calc.js`) fools the bare
/// runner, holds the loop naming `calc.js`, and fails `check --base` as CI runs it.
fn shadow_is_held(repo: &Repo, start: &str, run: &str, (file, text): (&str, &str)) {
    repo.write(file, text);
    let (code, out) = repo.shell(run, &[]);
    assert_eq!(code, 0, "{file} fools the bare runner: {out}");
    let stop = decision(&promise(repo));
    assert_eq!(stop["decision"], "block", "{stop}");
    let reason = stop["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("- calc.js (read by `tests`"), "{reason}");
    let ci = repo.run(["check", "--no-cache", "--base", start]);
    assert_eq!(ci.code, 1, "check --base fails: {ci:?}");
    assert!(
        ci.stdout.contains("calc.js: the tests of gate `tests`"),
        "{ci:?}"
    );
    std::fs::remove_file(repo.path().join(file)).unwrap();
}

/// Code the tests no longer read, under jest and vitest: an extensionless `calc` that jest
/// resolves before `calc.js` (jest's module map, which opens every file, is not made in a
/// run that decides), and a `calc.mjs` that vite resolves before `calc.js`. The honest
/// twin, the code fixed where it is, ends.
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn code_the_tests_no_longer_read_is_held_under_jest_and_vitest() {
    let fixed = "exports.add = (a, b) => a + b;\n";
    let tests = JEST_TESTS;
    let code = "exports.add = (a, b) => a - b;\n";
    let (repo, start) = unextended_loop("npx jest --ci", "commonjs", code, tests);
    shadow_is_held(&repo, &start, "npx jest --ci", ("calc", fixed));
    repo.write("calc.js", fixed);
    ends(&repo, &start);

    let tests = VITEST_TESTS.replace("'../calc.js'", "'../calc'");
    let code = "export const add = (a, b) => a - b;\n";
    let (repo, start) = unextended_loop("npx vitest run", "module", code, &tests);
    let shadow = ("calc.mjs", "export const add = (a, b) => a + b;\n");
    shadow_is_held(&repo, &start, "npx vitest run", shadow);
}

/// A setup file the runner loads, named as an option's value (`--setupFilesAfterEnv
/// ./ci/setup.js`) where the gate's globs also match it, is part of the checks: rewritten
/// to make every `expect` pass while the code stays wrong, it is put back and the tests
/// fail. (Read as code, its final version was kept and the loop ended.)
#[test]
fn a_setup_file_named_as_an_options_value_stays_part_of_the_checks() {
    let Some(repo) = js_runners_repo() else {
        return;
    };
    repo.config("[[gate]]\nname = \"tests\"\nglobs = [\"**/*.js\"]\nscope = \"project\"\nrun = \"npx jest --ci --setupFilesAfterEnv ./ci/setup.js\"\n")
        .write("package.json", "{\"name\": \"calc\", \"private\": true}\n")
        .write("ci/setup.js", "globalThis.READY = true;\n")
        .write("calc.js", "exports.add = (a, b) => a - b;\n")
        .write("test/calc.test.js", JEST_TESTS);
    assert_eq!(repo.run(["check"]).code, 1, "the tests fail at the start");
    repo.commit_all();
    repo.start_loop(&[]);
    repo.write(
        "ci/setup.js",
        "globalThis.expect = () => ({ toBe() {} });\n",
    );
    let bare = repo.shell("npx jest --ci --setupFilesAfterEnv ./ci/setup.js", &[]);
    assert_eq!(bare.0, 0, "the bare tool passes: {}", bare.1);
    let out = decision(&promise(&repo));
    assert_eq!(
        out["decision"], "block",
        "the setup file was weakened: {out}"
    );
}
