//! A cached verdict is never stale: whatever changes a gate's result changes its key. Each
//! test changes one thing a real project changes (the tool, another package's types, a
//! hand-written declaration file, a lock file, a declared input) and checks that the old
//! result is not served.

use crate::common::{typescript_repo, write_exe, Repo, Run};
use serde_json::json;

fn check(repo: &Repo, path: &std::ffi::OsStr) -> Run {
    repo.run_env(
        ["check", "--format", "json"],
        &[("PATH", path.to_str().expect("utf-8 PATH"))],
    )
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_tool_replaced_in_place_or_relinked_is_not_served_its_old_verdict() {
    let repo = Repo::git();
    let bin = tempfile::tempdir().unwrap();
    let path = Repo::path_with(bin.path());
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nrequires = [\"lint\"]\nrun = \"lint {files}\"\n",
    );
    write_exe(&bin.path().join("lint"), "#!/bin/sh\nexit 0\n");
    assert_eq!(check(&repo, &path).gate("lint")["status"], "pass");
    assert_eq!(check(&repo, &path).gate("lint")["cached"], true);

    // The same path on PATH, new content (an upgrade installed over the old binary).
    write_exe(
        &bin.path().join("lint"),
        "#!/bin/sh\necho 'lint 2.0: a.txt is wrong'; exit 1\n",
    );
    let run = check(&repo, &path);
    assert_eq!(
        (
            run.gate("lint")["status"].clone(),
            run.gate("lint")["cached"].clone()
        ),
        (json!("fail"), json!(false)),
        "{run:?}"
    );

    // A symlink retargeted from one installed version to another.
    let versions = tempfile::tempdir().unwrap();
    write_exe(&versions.path().join("1/lint"), "#!/bin/sh\nexit 0\n");
    write_exe(
        &versions.path().join("2/lint"),
        "#!/bin/sh\necho 'v2 says no'; exit 1\n",
    );
    std::fs::remove_file(bin.path().join("lint")).unwrap();
    std::os::unix::fs::symlink(versions.path().join("1/lint"), bin.path().join("lint")).unwrap();
    assert_eq!(check(&repo, &path).gate("lint")["status"], "pass");
    std::fs::remove_file(bin.path().join("lint")).unwrap();
    std::os::unix::fs::symlink(versions.path().join("2/lint"), bin.path().join("lint")).unwrap();
    let run = check(&repo, &path);
    assert_eq!(run.gate("lint")["status"], "fail", "{run:?}");
    assert!(run.gate("lint")["output"]
        .as_str()
        .unwrap()
        .contains("v2 says no"));
}

#[test]
fn a_program_the_command_names_is_part_of_the_key_even_unlisted() {
    let repo = Repo::git();
    let bin = tempfile::tempdir().unwrap();
    let path = Repo::path_with(bin.path());
    repo.write("a.txt", "x\n");
    // No `requires`: the key still finds `mylint` in command position.
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nrun = \"FLAG=1 mylint --strict {files} 2>&1\"\n",
    );
    write_exe(&bin.path().join("mylint"), "#!/bin/sh\nexit 0\n");
    assert_eq!(check(&repo, &path).gate("lint")["status"], "pass");
    write_exe(&bin.path().join("mylint"), "#!/bin/sh\nexit 3\n");
    assert_eq!(check(&repo, &path).gate("lint")["status"], "fail");
}

#[test]
fn no_cache_runs_fresh_and_no_older_verdict_is_served_after_it() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n").write("flag.cfg", "ok\n");
    // flag.cfg is read by the command but declared nowhere, and runs are not observed: the
    // key cannot see it (tests/integration/observed.rs has what observation sees).
    let gate = "[cache]\nobserve = false\n\n[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = '! grep -q BAD {files} flag.cfg'\n";
    repo.config(gate);
    let path = std::env::var_os("PATH").unwrap();
    assert_eq!(check(&repo, &path).gate("g")["status"], "pass");
    repo.write("flag.cfg", "BAD\n");
    assert_eq!(
        check(&repo, &path).gate("g")["cached"],
        true,
        "an undeclared input is invisible to the key"
    );
    let fresh = repo.run(["check", "--no-cache", "--format", "json"]);
    assert_eq!(
        (
            fresh.gate("g")["status"].clone(),
            fresh.gate("g")["cached"].clone()
        ),
        (json!("fail"), json!(false))
    );
    let after = check(&repo, &path);
    assert_eq!(
        after.gate("g")["status"],
        "fail",
        "the next plain check serves the fresh verdict, not the old pass: {after:?}"
    );
    let hook = crate::hooks::post_tool_use(
        &repo,
        "Edit",
        json!({"file_path": repo.path().join("a.txt"), "old_string": "x", "new_string": "x"}),
    );
    assert!(hook.stdout.contains("[g]"), "the edit hook too: {hook:?}");

    // Declared, the file is part of the key.
    repo.config(&format!("{gate}inputs = [\"flag.cfg\"]\n"));
    assert_eq!(check(&repo, &path).gate("g")["status"], "fail");
    repo.write("flag.cfg", "ok\n");
    let run = check(&repo, &path);
    assert_eq!(
        (
            run.gate("g")["status"].clone(),
            run.gate("g")["cached"].clone()
        ),
        (json!("pass"), json!(false))
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn a_lock_file_or_tool_config_change_misses() {
    let repo = Repo::git();
    repo.write("src/a.txt", "x\n");
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = 'cat {files} >/dev/null'\n");
    let path = std::env::var_os("PATH").unwrap();
    check(&repo, &path);
    assert_eq!(check(&repo, &path).gate("g")["cached"], true);
    for (file, text) in [
        ("package-lock.json", "{\"lockfileVersion\": 3}\n"),
        ("src/.shellcheckrc", "disable=SC2086\n"),
        ("requirements-dev.txt", "pytest==8\n"),
        ("Cargo.lock", "version = 4\n"),
    ] {
        repo.write(file, text);
        assert_eq!(check(&repo, &path).gate("g")["cached"], false, "{file}");
        assert_eq!(
            check(&repo, &path).gate("g")["cached"],
            true,
            "{file}, again"
        );
    }
}

/// Costs learned from noisy runs may favour another split of a batch; the stored results of
/// the split they were run in still hold for files that did not change, so a re-split must not
/// run the gate again (seen in CI: a cached check after a check of the same tree missed).
#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn costs_that_favour_another_split_do_not_cost_a_stored_verdict() {
    let repo = Repo::git();
    for f in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        repo.write(f, "x\n");
    }
    repo.config("[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrun = 'cat {files} >/dev/null'\n");
    let path = std::env::var_os("PATH").unwrap();
    let first = check(&repo, &path);
    assert_eq!(first.gate("g")["cached"], false, "{first:?}");
    let costs = repo.path().join(".ralph/costs.json");
    let learned: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&costs).expect("the first run learned its costs"))
            .unwrap();
    let before = learned["gates"]["g"]["split"].as_u64().expect("a split");
    // Runs of two sizes, the larger ones slow: a line whose work is all per file, which
    // splits four files as far as the cores allow; and one that is all start-up, which keeps
    // them whole. One of the two differs from the split the results were stored under.
    for samples in [
        json!([[1.0, 1.0], [1.0, 1.0], [4.0, 800.0], [4.0, 800.0]]),
        json!([[1.0, 400.0], [1.0, 400.0], [4.0, 400.0], [4.0, 400.0]]),
    ] {
        let forged = json!({"gates": {"g": {"samples": samples, "split": before}}});
        std::fs::write(&costs, forged.to_string()).unwrap();
        let again = check(&repo, &path);
        assert_eq!(
            (
                again.gate("g")["status"].clone(),
                again.gate("g")["cached"].clone()
            ),
            (json!("pass"), json!(true)),
            "split {before} stored, costs {samples}: {again:?}"
        );
    }
    // A changed file is run in whatever split the costs favour, and that verdict is true.
    repo.write("b.txt", "y\n");
    let changed = check(&repo, &path);
    assert_eq!(changed.gate("g")["cached"], false, "{changed:?}");
    assert_eq!(check(&repo, &path).gate("g")["cached"], true);
}

#[test]
fn explain_says_what_a_key_holds_and_why_a_run_is_not_cached() {
    let repo = Repo::git();
    repo.write("a.txt", "x\n");
    repo.config(
        "[[gate]]\nname = \"net\"\nglobs = [\"*.txt\"]\ncache = false\nrun = 'cat {files}'\n\n[[gate]]\nname = \"pinned\"\nglobs = [\"*.txt\"]\nrun = 'cat {files}'\n",
    );
    let run = repo.run(["gates", "--explain", "a.txt"]);
    assert!(
        run.stdout
            .contains("cache:  off, the gate has cache = false"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("cache:  on; the key holds 1 input file and the identity of cat"),
        "{run:?}"
    );
}

const STRICT: &str = r#"{ "compilerOptions": { "strict": true, "target": "es2022", "module": "commonjs", "moduleResolution": "node" }, "include": ["src"] }"#;

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn another_packages_exported_signature_change_reaches_the_cached_dependent() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write(
        "package.json",
        r#"{"name": "mono", "private": true, "workspaces": ["packages/*"]}"#,
    );
    repo.write(
        "packages/x/package.json",
        r#"{"name": "@m/x", "main": "src/index.ts", "types": "src/index.ts"}"#,
    );
    repo.write("packages/x/tsconfig.json", STRICT);
    repo.write(
        "packages/x/src/index.ts",
        "export function greet(name: string): string { return `hi ${name}`; }\n",
    );
    repo.write(
        "packages/y/package.json",
        r#"{"name": "@m/y", "dependencies": {"@m/x": "*"}}"#,
    );
    repo.write("packages/y/tsconfig.json", STRICT);
    repo.write(
        "packages/y/src/main.ts",
        "import { greet } from \"@m/x\";\nconst s: string = greet(\"a\");\nconsole.log(s);\n",
    );
    repo.link("node_modules/@m/x", "../../packages/x");
    repo.link("node_modules/@m/y", "../../packages/y");
    let path = std::env::var_os("PATH").unwrap();
    let first = check(&repo, &path);
    assert_eq!(first.gate("tsc")["status"], "pass", "{first:?}");
    assert_eq!(check(&repo, &path).gate("tsc")["cached"], true);

    repo.write(
        "packages/x/src/index.ts",
        "export function greet(name: number): number { return name; }\n",
    );
    let run = check(&repo, &path);
    let tsc = run.gate("tsc");
    assert_eq!(tsc["status"], "fail", "{run:?}");
    let y = tsc["run_details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "packages/y/tsconfig.json")
        .expect("a run for y");
    assert_eq!(
        (y["status"].clone(), y["cached"].clone()),
        (json!("fail"), json!(false))
    );
    assert!(
        tsc["output"]
            .as_str()
            .unwrap()
            .contains("packages/y/src/main.ts(2,"),
        "{run:?}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "observe"),
    ignore = "needs the observer: the portable build stores no result and sees no read"
)]
fn an_edited_hand_written_declaration_file_rechecks_its_users() {
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write("tsconfig.json", STRICT);
    repo.write("src/env.d.ts", "declare const API_URL: string;\n");
    repo.write("src/main.ts", "export const url: string = API_URL;\n");
    let path = std::env::var_os("PATH").unwrap();
    assert_eq!(check(&repo, &path).gate("tsc")["status"], "pass");
    assert_eq!(check(&repo, &path).gate("tsc")["cached"], true);
    repo.write("src/env.d.ts", "declare const API_URL: number;\n");
    let run = check(&repo, &path);
    assert_eq!(run.gate("tsc")["status"], "fail", "{run:?}");
    assert!(run.gate("tsc")["output"]
        .as_str()
        .unwrap()
        .contains("src/main.ts(1,"));
    // The declaration file itself is checked: a broken one fails on its own.
    repo.write(
        "src/env.d.ts",
        "declare const API_URL: string\ndeclare function (: void;\n",
    );
    repo.write("src/main.ts", "export const url: string = API_URL;\n");
    let run = check(&repo, &path);
    assert!(
        run.gate("tsc")["output"]
            .as_str()
            .unwrap()
            .contains("src/env.d.ts("),
        "{run:?}"
    );
}

#[test]
fn explain_never_runs_a_tool_the_project_controls() {
    let repo = Repo::git();
    // Tools outside the repository, named by the project's config: by a relative path, and
    // through an absolute `path` entry.
    let outside = tempfile::tempdir().unwrap();
    let ran = outside.path().join("ran");
    let script = format!("#!/bin/sh\ntouch '{}'\necho 'lint 1.0'\n", ran.display());
    write_exe(&outside.path().join("lint"), &script);
    write_exe(&outside.path().join("bin/fmt"), &script);
    repo.write("a.txt", "x\n");
    let relative = format!(
        "../{}/lint",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    assert!(repo.path().join(&relative).is_file(), "{relative}");
    repo.config(&format!(
        "[[gate]]\nname = \"g\"\nglobs = [\"*.txt\"]\nrequires = [\"{relative}\", \"fmt\"]\npath = [\"{}\"]\nrun = 'fmt {{files}}'\n",
        outside.path().join("bin").display()
    ));
    let run = repo.run(["gates", "--explain", "a.txt"]);
    assert!(run.stdout.contains("tool:   fmt = "), "{run:?}");
    assert!(
        !ran.exists(),
        "asking a version ran a script the config named: {run:?}"
    );
}

/// Rewrites every tsc build-info file under `.ralph/tsc` so it says the current `src/a.ts`
/// was checked clean: what an agent with a shell could do to fake a pass.
fn forge_build_info(repo: &Repo) {
    let forge = r#"
import hashlib, json, pathlib, sys
root = pathlib.Path(sys.argv[1])
digest = hashlib.sha256((root / "src/a.ts").read_bytes()).hexdigest()
for info in root.glob(".ralph/tsc/**/*.tsbuildinfo"):
    data = json.loads(info.read_text())
    for i, name in enumerate(data.get("fileNames", [])):
        if name.endswith("src/a.ts"):
            entry = data["fileInfos"][i]
            if isinstance(entry, dict):
                entry["version"] = digest
                entry.pop("signature", None)
            else:
                data["fileInfos"][i] = digest
    for key in ("semanticDiagnosticsPerFile", "emitDiagnosticsPerFile", "errors", "checkPending"):
        data.pop(key, None)
    info.write_text(json.dumps(data))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", forge])
        .arg(repo.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_forged_build_info_file_cannot_make_check_or_a_stop_pass() {
    if !crate::common::require_tool("python3") {
        return;
    }
    let Some(repo) = typescript_repo() else {
        return;
    };
    repo.write("tsconfig.json", STRICT);
    repo.write("src/a.ts", "export const a: number = 1;\n");
    let edit = || {
        crate::hooks::post_tool_use(
            &repo,
            "Write",
            json!({"file_path": repo.path().join("src/a.ts"), "content": ""}),
        )
    };
    // The edit hook and check each leave build info behind on good code.
    assert_eq!(edit().stdout, "", "good code: no feedback");
    assert_eq!(
        repo.run(["check", "--format", "json"]).gate("tsc")["status"],
        "pass"
    );
    repo.write("src/a.ts", "export const a: number = \"broken\";\n");
    forge_build_info(&repo);
    let run = repo.run(["check", "--no-cache", "--format", "json"]);
    assert_eq!(
        run.gate("tsc")["status"],
        "fail",
        "check read forged state: {run:?}"
    );
    forge_build_info(&repo);
    repo.config("presets = [\"typescript\"]\n[hooks]\ngate_every_stop = true\n");
    let stop = repo.run_stdin(
        &["hook", "stop"],
        json!({"session_id": "s", "cwd": repo.path(), "hook_event_name": "Stop",
               "stop_hook_active": false, "last_assistant_message": "done"})
        .to_string()
        .as_bytes(),
        &[("RALPH_GATE_NO_CACHE", "1")],
    );
    assert!(
        stop.stdout.contains("\"decision\":\"block\""),
        "a stop read forged state: {stop:?}"
    );
}

/// A version manager laid out as pyenv is, in a folder of its own: a shim that runs
/// `pyenv exec lint`, the manager's `which` naming the program under its own folder (version
/// 1 unless `$home/chosen` names another), and each version's `lint` as given. `which`
/// waits (up to 5 s) for `$home/gate-started` while `$home/wait-for-gate` exists, and notes
/// in `$home/asked` whether the gate had started by then.
fn fake_pyenv(versions: &[(&str, &str)]) -> tempfile::TempDir {
    let manager = tempfile::tempdir().unwrap();
    let home = manager.path();
    write_exe(
        &home.join("shims/lint"),
        &format!(
            "#!/bin/sh\n# pyenv shim\necho \"$@\" >> '{0}/shim-calls'\nexec '{0}/bin/pyenv' exec lint \"$@\"\n",
            home.display()
        ),
    );
    let which = r#"v=$(cat "$H/chosen" 2>/dev/null || echo 1)
if [ -e "$H/wait-for-gate" ]; then
  i=0; while [ ! -e "$H/gate-started" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  if [ -e "$H/gate-started" ]; then echo started >> "$H/asked"; else echo waited >> "$H/asked"; fi
fi
echo "$H/versions/$v/bin/lint""#;
    write_exe(
        &home.join("bin/pyenv"),
        &format!(
            "#!/bin/sh\nH='{}'\ncase \"$1\" in\n  which)\n{which} ;;\n  exec) shift 2; exec \"$H/versions/$(cat \"$H/chosen\" 2>/dev/null || echo 1)/bin/lint\" \"$@\" ;;\nesac\n",
            home.display()
        ),
    );
    for (version, script) in versions {
        write_exe(&home.join(format!("versions/{version}/bin/lint")), script);
    }
    manager
}

/// A repository whose `lint` gate (`lint {files}` on `a.txt`) runs through `manager`'s shim,
/// checked once so the shim's answer is remembered; and the PATH it runs with.
fn shim_repo(manager: &tempfile::TempDir) -> (Repo, std::ffi::OsString) {
    let path = Repo::path_with(&manager.path().join("shims"));
    let repo = Repo::git();
    repo.write("a.txt", "fine\n");
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nrequires = [\"lint\"]\nrun = \"lint {files}\"\n",
    );
    assert_eq!(check(&repo, &path).gate("lint")["status"], "pass");
    (repo, path)
}

/// Points every remembered shim answer in `repo` at `target`, as an agent could.
fn forge_shim_answers(repo: &Repo, target: &std::path::Path) {
    let store = repo.path().join(".ralph/cache/tools.json");
    let mut tools: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    let shims = tools["shims"]
        .as_object_mut()
        .expect("the shim's answer was remembered");
    assert!(!shims.is_empty());
    for answer in shims.values_mut() {
        *answer = json!(target);
    }
    std::fs::write(&store, serde_json::to_vec(&tools).unwrap()).unwrap();
}

/// Version 1 strict, version 2 (also the manager's) passing everything and noting that it
/// ran; the manager runs version 1.
fn strict_1_lenient_2() -> tempfile::TempDir {
    fake_pyenv(&[
        ("1", STRICT_LINT),
        (
            "2",
            "#!/bin/sh\ntouch \"$(dirname \"$0\")/../../../v2-ran\"\nexit 0\n",
        ),
    ])
}

/// [`STRICT_LINT`], noting in the manager's folder (`gate-started`) that a gate started it.
fn strict_noting_its_start() -> String {
    format!(
        "#!/bin/sh\n[ \"$1\" = --version ] || touch \"$(dirname \"$0\")/../../../gate-started\"\n{}",
        STRICT_LINT.trim_start_matches("#!/bin/sh\n")
    )
}

/// The run started on version 2 (a remembered or guessed answer), and version 1, the
/// manager's answer, gave the verdict on `a.txt` = `BAD`.
fn the_managers_program_decided(manager: &tempfile::TempDir, run: &Run) {
    assert!(
        manager.path().join("v2-ran").exists(),
        "the gate did not start on the guess"
    );
    assert_eq!(
        run.gate("lint")["status"],
        "fail",
        "the guess decided: {run:?}"
    );
    assert!(
        run.gate("lint")["output"].as_str().unwrap().contains("BAD"),
        "version 1 gave the verdict: {run:?}"
    );
}

const STRICT_LINT: &str =
    "#!/bin/sh\n[ \"$1\" = --version ] && echo 'lint 1.2.3' && exit 0\n! grep -n BAD \"$@\"\n";

fn fresh_check(repo: &Repo, path: &std::ffi::OsStr) -> Run {
    repo.run_env(
        ["check", "--no-cache", "--format", "json"],
        &[("PATH", path.to_str().unwrap())],
    )
}

#[test]
fn a_forged_shim_answer_cannot_choose_the_program_a_gate_runs() {
    let manager = fake_pyenv(&[("1", STRICT_LINT)]);
    let (repo, path) = shim_repo(&manager);
    // The agent breaks the file and points the remembered shim answer at a program that
    // always passes.
    repo.write("a.txt", "BAD\n");
    let evil = tempfile::tempdir().unwrap();
    write_exe(&evil.path().join("lint"), "#!/bin/sh\nexit 0\n");
    forge_shim_answers(&repo, &evil.path().join("lint"));
    let run = fresh_check(&repo, &path);
    assert_eq!(
        run.gate("lint")["status"],
        "fail",
        "the forged answer ran: {run:?}"
    );
}

#[test]
fn a_fresh_run_counts_only_a_shim_answer_the_manager_gives_again() {
    // Version 2, also the manager's, passes everything; the manager runs version 1 here.
    let manager = strict_1_lenient_2();
    let (repo, path) = shim_repo(&manager);
    repo.write("a.txt", "BAD\n");
    forge_shim_answers(&repo, &manager.path().join("versions/2/bin/lint"));
    let run = fresh_check(&repo, &path);
    // The fresh run started on the remembered answer, and ran again on the manager's.
    the_managers_program_decided(&manager, &run);
}

#[test]
fn a_fresh_run_does_not_wait_for_the_version_manager_to_start_a_gate() {
    let manager = fake_pyenv(&[("1", &strict_noting_its_start())]);
    let (repo, path) = shim_repo(&manager);
    std::fs::remove_file(manager.path().join("gate-started")).unwrap();
    std::fs::write(manager.path().join("wait-for-gate"), "").unwrap();
    repo.write("a.txt", "BAD\n");
    let run = fresh_check(&repo, &path);
    assert_eq!(run.gate("lint")["status"], "fail", "{run:?}");
    assert_eq!(
        std::fs::read_to_string(manager.path().join("asked")).unwrap(),
        "started\n",
        "the gate waited for the manager's answer"
    );
    // Its version, asked while it ran, of the program the shim runs, not of the shim.
    assert_eq!(
        run.gate("lint")["tools"][0]["version"],
        "lint 1.2.3",
        "{run:?}"
    );
    let shim_calls = std::fs::read_to_string(manager.path().join("shim-calls")).unwrap_or_default();
    assert!(!shim_calls.contains("--version"), "{shim_calls}");
}

/// A new clone's first `check`: nothing is remembered, and the gate starts on what the
/// manager's own files choose (its global `version` file) while the manager is asked.
fn first_check(manager: &tempfile::TempDir, global: &str) -> (Repo, Run) {
    std::fs::write(manager.path().join("version"), global).unwrap();
    let path = Repo::path_with(&manager.path().join("shims"));
    let repo = Repo::git();
    repo.write("a.txt", "BAD\n");
    repo.config(
        "[[gate]]\nname = \"lint\"\nglobs = [\"*.txt\"]\nrequires = [\"lint\"]\nrun = \"lint {files}\"\n",
    );
    let run = repo.run_env(
        ["check", "--format", "json"],
        &[("PATH", path.to_str().unwrap())],
    );
    (repo, run)
}

#[test]
fn a_new_clones_first_check_does_not_wait_for_the_version_manager() {
    let manager = fake_pyenv(&[("1", &strict_noting_its_start())]);
    std::fs::write(manager.path().join("wait-for-gate"), "").unwrap();
    let (repo, run) = first_check(&manager, "1\n");
    assert_eq!(run.gate("lint")["status"], "fail", "{run:?}");
    assert_eq!(
        std::fs::read_to_string(manager.path().join("asked")).unwrap(),
        "started\n",
        "the first check waited for the manager's answer"
    );
    // The manager's answer is kept: the next check asks it nothing.
    std::fs::remove_file(manager.path().join("asked")).unwrap();
    repo.write("a.txt", "BAD again\n");
    let path = Repo::path_with(&manager.path().join("shims"));
    let again = check(&repo, &path);
    assert_eq!(again.gate("lint")["status"], "fail", "{again:?}");
    assert!(
        !manager.path().join("asked").exists(),
        "the manager was asked again"
    );
}

#[test]
fn a_first_check_started_on_a_wrong_guess_counts_only_the_managers_program() {
    // The global version file says 2 (which passes everything); the manager runs 1 here (as a
    // pyenv hook or a version file the guess does not read could make it).
    let manager = strict_1_lenient_2();
    let (_repo, run) = first_check(&manager, "2\n");
    the_managers_program_decided(&manager, &run);
}
