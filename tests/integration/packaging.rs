//! Installed as the people who run coding agents install their tools (issue 39): the npm
//! package and the Python wheel `scripts/package` makes from a built binary install with
//! npm, pip and uv from the files alone, and the installed command checks a project.

use crate::common::{require_tool, Repo};
use std::path::Path;
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?}: {said}");
    said
}

/// The installed `ralph-gate` at `bin` says its version and checks a broken file.
fn works(bin: &Path) {
    let said = run(Command::new(bin).arg("--version"));
    assert!(said.starts_with("ralph-gate "), "{said}");
    let repo = Repo::git();
    repo.write("a.py", "def f(:\n");
    let out = Command::new(bin)
        .arg("check")
        .current_dir(repo.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("FAIL  python-compile"),
        "{out:?}"
    );
}

#[test]
fn the_npm_package_and_the_wheel_install_and_run() {
    for tool in ["npm", "python3", "strip", "objdump", "uv"] {
        if !require_tool(tool) {
            return;
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // The test binary, stripped as a release build ships (the package is the same either way).
    let bin = dir.path().join("ralph-gate");
    std::fs::copy(env!("CARGO_BIN_EXE_ralph-gate"), &bin).expect("copy");
    run(Command::new("strip").arg(&bin));
    let out = dir.path().join("dist");
    let made = run(
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/package"))
            .arg(&bin)
            .arg(&out),
    );
    let made: Vec<&str> = made.lines().collect();
    let (wheel, tgz) = (made[0], made[1]);
    assert!(wheel.contains("-py3-none-manylinux_2_"), "{wheel}");

    let npm = dir.path().join("npm");
    run(Command::new("npm")
        .args([
            "install",
            "-g",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&npm)
        .arg(tgz));
    works(&npm.join("bin/ralph-gate"));

    let venv = dir.path().join("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--no-index"])
        .arg(wheel));
    works(&venv.join("bin/ralph-gate"));

    let tools = dir.path().join("uv-tools");
    run(Command::new("uv")
        .args(["tool", "install", "--offline"])
        .arg(wheel)
        .env("UV_TOOL_DIR", tools.join("envs"))
        .env("UV_TOOL_BIN_DIR", tools.join("bin")));
    works(&tools.join("bin/ralph-gate"));
}
