//! This repository as a hook source for prek and pre-commit (`.pre-commit-hooks.yaml`),
//! checked with the real prek from PyPI: the manifest validates, and `prek try-repo` builds
//! ralph-gate from this repository's HEAD and fails a commit of a broken Python file, naming it.

use crate::common::{require_tool, which, Repo};
use std::path::Path;
use std::process::Command;

fn prek(cwd: &Path, args: &[&str]) -> (i32, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(which("prek").expect("checked"))
        .args(args)
        .current_dir(cwd)
        // Kept between runs: prek builds ralph-gate (cargo install) once per commit.
        .env("PREK_HOME", root.join("target/test-tools/prek-home"))
        // prek's `cargo install` builds the release profile: thin LTO and optimisation took
        // 12 of CI's 25 minutes for a build whose speed this test does not look at. The same
        // sources, manifest and install path, built without them; the target folder is kept
        // so a second run rebuilds only ralph-gate.
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env(
            "CARGO_TARGET_DIR",
            root.join("target/test-tools/prek-build"),
        )
        .env("NO_COLOR", "1")
        .output()
        .expect("prek runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn the_manifest_validates_and_a_broken_file_fails_the_hook() {
    if !require_tool("prek") || !require_tool("python3") || !require_tool("cargo") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, out) = prek(root, &["validate-manifest", ".pre-commit-hooks.yaml"]);
    assert_eq!(code, 0, "{out}");

    let repo = Repo::git();
    repo.write("pkg/bad.py", "def f(:\n    return 1\n");
    repo.git_cmd(&["add", "-A"]);
    let (code, out) = prek(
        repo.path(),
        &["try-repo", root.to_str().unwrap(), "ralph-gate"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("ralph-gate") && out.contains("Failed"),
        "{out}"
    );
    assert!(
        out.contains("pkg/bad.py") && out.contains("SyntaxError"),
        "{out}"
    );

    repo.write("pkg/bad.py", "def f():\n    return 1\n");
    repo.git_cmd(&["add", "-A"]);
    let (code, out) = prek(
        repo.path(),
        &["try-repo", root.to_str().unwrap(), "ralph-gate"],
    );
    assert_eq!(code, 0, "a fixed file passes: {out}");
}
