//! Which files a check looks at: --all, --staged, --changed, paths, and outside git.

use crate::common::Repo;

// serial: one run lists every selected file, whatever the number of cores.
const GATE: &str =
    "[[gate]]\nname = \"list\"\nglobs = [\"*.txt\"]\nserial = true\nrun = 'printf \"%s\\n\" {files}'\n";

fn checked(run: &crate::common::Run) -> Vec<String> {
    let gate = run.gate("list");
    let mut files: Vec<String> = gate["output"]
        .as_str()
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    files.sort();
    files
}

fn repo() -> Repo {
    let repo = Repo::git();
    repo.config(GATE);
    repo.write(".gitignore", "ignored.txt\n");
    repo.write("committed.txt", "1\n")
        .write("changed.txt", "1\n")
        .write("ignored.txt", "1\n");
    repo.commit_all();
    repo.write("changed.txt", "2\n")
        .write("untracked.txt", "1\n");
    repo
}

#[test]
fn all_is_tracked_plus_untracked_not_ignored() {
    let run = repo().run(["check", "--all", "--format", "json"]);
    assert_eq!(
        checked(&run),
        ["changed.txt", "committed.txt", "untracked.txt"]
    );
}

#[test]
fn staged_is_only_what_is_staged() {
    let repo = repo();
    let run = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(run.gate("list")["status"], "no_files", "{run:?}");
    repo.git_cmd(&["add", "untracked.txt"]);
    let run = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(checked(&run), ["untracked.txt"]);
}

#[test]
fn staged_deletions_are_not_checked() {
    let repo = repo();
    repo.git_cmd(&["rm", "-q", "committed.txt"]);
    repo.git_cmd(&["add", "changed.txt"]);
    let run = repo.run(["check", "--staged", "--format", "json"]);
    assert_eq!(checked(&run), ["changed.txt"]);
}

#[test]
fn changed_is_the_working_tree_against_a_revision() {
    let repo = repo();
    let run = repo.run(["check", "--changed", "--format", "json"]);
    assert_eq!(checked(&run), ["changed.txt", "untracked.txt"]);
    repo.commit_all();
    repo.write("later.txt", "x\n");
    let run = repo.run(["check", "--changed", "HEAD~1", "--format", "json"]);
    assert_eq!(checked(&run), ["changed.txt", "later.txt", "untracked.txt"]);
}

#[test]
fn changed_in_a_repository_without_commits_is_everything() {
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("a.txt", "1\n");
    let run = repo.run(["check", "--changed", "--format", "json"]);
    assert_eq!(checked(&run), ["a.txt"]);
}

#[test]
fn bad_revision_is_a_clear_error() {
    let repo = repo();
    let run = repo.run(["check", "--changed", "no-such-branch"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("bad revision `no-such-branch`"),
        "{run:?}"
    );
    let run = repo.run(["check", "--changed=--output=/tmp/x"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn paths_and_folders_on_the_command_line() {
    let repo = repo();
    repo.write("sub/deep/x.txt", "1\n");
    let run = repo.run(["check", "committed.txt", "sub", "--format", "json"]);
    assert_eq!(checked(&run), ["committed.txt", "sub/deep/x.txt"]);
}

#[test]
fn a_path_outside_the_project_is_refused() {
    let repo = repo();
    let outside = tempfile::NamedTempFile::new().unwrap();
    let run = repo.run(["check".as_ref(), outside.path().as_os_str()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("is outside the project root"),
        "{run:?}"
    );
    let run = repo.run(["check", "../../etc/passwd"]);
    assert_eq!(run.code, 2, "{run:?}");
    let run = repo.run(["check", "missing.txt"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("no such file or folder: missing.txt"),
        "{run:?}"
    );
}

#[test]
fn outside_git_a_walk_honours_gitignore() {
    let repo = Repo::plain();
    repo.config(GATE);
    repo.write(".gitignore", "build/\n")
        .write("a.txt", "1\n")
        .write("build/out.txt", "1\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(checked(&run), ["a.txt"]);
    let run = repo.run(["check", "--staged"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--staged needs a git repository"),
        "{run:?}"
    );
}

#[test]
fn ralph_gates_own_state_is_never_a_project_file() {
    let repo = Repo::git();
    repo.config(GATE);
    repo.write("a.txt", "1\n")
        .write(".ralph/journal.txt", "x\n");
    let run = repo.run(["check", "--format", "json"]);
    assert_eq!(checked(&run), ["a.txt"]);
}
