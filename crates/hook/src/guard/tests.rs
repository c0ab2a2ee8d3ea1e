use super::paths::{Places, Protected};
use super::*;

struct World {
    _dir: tempfile::TempDir,
    protected: Protected,
}

/// A project at `ws` with its config, state, loop file and settings; commands run in `src/`.
fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("proj");
    for d in [
        ".git/hooks",
        ".claude",
        ".ralph/cache",
        "src",
        "home/.claude/plugins",
    ] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    for f in [
        "ralph.toml",
        ".claude/ralph-loop.local.md",
        ".claude/settings.json",
        "src/app.py",
    ] {
        std::fs::write(ws.join(f), "x").unwrap();
    }
    ralph_base::platform::symlink(ws.join("ralph.toml"), ws.join("src/cfg-link")).unwrap();
    let home = ws.join("home");
    let protected = Protected::new(&Places {
        ws: &ws,
        cwd: &ws.join("src"),
        home: Some(&home),
        claude_home: Some(&home.join(".claude")),
        codex_home: Some(&home.join(".codex")),
        config: Some(&ws.join("ralph.toml")),
        git_dir: Some(&ws.join(".git")),
        git_common_dir: Some(&ws.join(".git")),
        plugin_root: None,
    });
    World {
        _dir: dir,
        protected,
    }
}

const DENIED: &[&str] = &[
    "rm ../ralph.toml",
    "rm -f ../ralph.toml",
    "rm -rf ../.ralph",
    "rm -rf ../.ralph/cache/x.json",
    "rm ../.claude/ralph-loop.local.md",
    "rm -rf ../.claude",
    "rm -- ../.claude/settings.json",
    "rm ../.claude/ralph-loop*",
    "mv ../ralph.toml /tmp/x",
    "mv /tmp/x ../ralph.toml",
    "cp /tmp/weak.toml ../ralph.toml",
    "cp -t .. /tmp/ralph.toml ../ralph.toml",
    "ln -sf /tmp/weak.toml ../ralph.toml",
    "echo 'run = \"true\"' > ../ralph.toml",
    "echo x >> ../ralph.toml",
    "printf x>../ralph.toml",
    "cat /tmp/x | tee ../ralph.toml",
    "tee -a ../.claude/settings.json < /tmp/x",
    "sed -i 's/py_compile/true/' ../ralph.toml",
    "sed -i.bak -e s/a/b/ ../ralph.toml",
    "perl -pi -e 's/a/b/' ../ralph.toml",
    "truncate -s 0 ../ralph.toml",
    "echo {} > ../.ralph/results/python.json",
    "git checkout -- ../ralph.toml",
    "git restore ../ralph.toml",
    "git rm ../ralph.toml",
    "git -C .. checkout ralph.toml",
    "git clean -fdx",
    "ralph-gate loop cancel",
    "ralph-gate loop approve",
    "/usr/local/bin/ralph-gate loop cancel abc",
    "ls && rm ../ralph.toml",
    "true; rm ../ralph.toml",
    "false || rm ../ralph.toml",
    "bash -c 'rm ../ralph.toml'",
    "sh -c \"echo x > ../ralph.toml\"",
    "eval rm ../ralph.toml",
    "echo $(rm ../ralph.toml)",
    "sudo rm ../ralph.toml",
    "FOO=1 env BAR=2 rm ../ralph.toml",
    "timeout 5 rm ../ralph.toml",
    "nice -n 5 rm ../ralph.toml",
    "timeout -s KILL 5 rm ../ralph.toml",
    "sudo -u root rm ../ralph.toml",
    "ionice -c 3 nice -n 19 rm -rf ../.ralph",
    "find .. -name x | xargs rm ../ralph.toml",
    "rm $CLAUDE_PROJECT_DIR/ralph.toml",
    "rm ../src/../ralph.toml",
    "rm cfg-link",
    "echo x > cfg-link",
    "echo '#!/bin/sh' > ../.git/hooks/pre-commit",
    "chmod 000 ../ralph.toml",
    "touch ../.ralph/x",
    "rm -rf ../.git/ralph-gate/cache",
    "dd if=/dev/null of=../ralph.toml",
    "find ../.ralph -delete",
    "rm ~/.claude/settings.json",
    // Issue 24: the records of the agents' own goals.
    "echo '{}' >> ~/.claude/projects/-proj/s.jsonl",
    "sed -i s/met/x/ ~/.claude/projects/-proj/s.jsonl",
    "rm ~/.codex/goals_1.sqlite-wal",
    "cp /tmp/x ~/.codex/goals_1.sqlite",
    "echo x >> ~/.codex/sessions/2026/11/24/rollout-1.jsonl",
    "echo {} > ~/.claude/plugins/ralph-gate/hooks/hooks.json",
    "cat > ../ralph.toml <<EOF\n[[gate]]\nEOF",
    // Issue 22: compound commands, `cd`, quoting, expansion, nesting, wrappers, other tools.
    "if true; then rm ../ralph.toml; fi",
    "for f in ../ralph.toml; do rm \"$f\"; done",
    "{ rm ../ralph.toml; }",
    "f() { rm ../ralph.toml; }; f",
    "function f { rm ../ralph.toml; }",
    "alias x='rm ../ralph.toml'",
    "while true; do rm ../ralph.toml; break; done",
    "F=../ralph.toml; rm $F",
    "F=../ralph.toml && rm ${F}",
    "cd .. && rm ralph.toml",
    "cd ..; sed -i s/a/b/ ralph.toml",
    "pushd .. && echo x > ralph.toml",
    "cd ../.claude && rm ralph-loop.local.md",
    "rm $'../ralph.toml'",
    "rm $'..\\x2fralph.toml'",
    "rm ../{ralph,other}.toml",
    "rm ../.claude/{ralph-loop.local.md,x}",
    "bash -c \"bash -c 'rm ../ralph.toml'\"",
    "sh -c \"sh -c \\\"rm ../ralph.toml\\\"\"",
    "env -S 'rm ../ralph.toml'",
    "env --split-string='rm ../ralph.toml'",
    "busybox rm ../ralph.toml",
    "nice -n 5 timeout -s KILL 5 busybox rm ../ralph.toml",
    "find .. -name ralph.toml -delete",
    "find .. -name 'ralph*' -exec rm {} +",
    "find .. -path '*ralph.toml' -delete",
    "rsync -a --delete /tmp/empty/ ../",
    "rsync -a --delete /tmp/empty/ ../.claude/",
    "ln ../ralph.toml hard-link",
    "ln -s ../ralph.toml soft-link",
    "awk -i inplace '{print}' ../ralph.toml",
    "gawk -i inplace 1 ../ralph.toml",
    "ex -sc '%s/a/b/|x' ../ralph.toml",
    "vim -es -c 'wq' ../ralph.toml",
    "cat /tmp/weak | sponge ../ralph.toml",
    "git stash -u",
    "git stash push --include-untracked",
    "git stash --all",
    "git clean -fd ..",
    "cd .. && git clean -fd",
    "git checkout -- ..",
    "cd .. && git checkout .",
    "git restore ..",
    "git reset --hard",
    "git reset --hard HEAD~1",
    "ralph-gate loop start --max-iterations 1 x",
    "ralph-gate hook stop",
    "echo '{}' | ralph-gate hook stop --agent claude",
];

const ALLOWED: &[&str] = &[
    // Reading an agent's records is not changing them.
    "tail -5 ~/.claude/projects/-proj/s.jsonl",
    "ls -la",
    "cat ../ralph.toml",
    "grep -r gate ../ralph.toml",
    "python3 -m py_compile app.py",
    "rm app.py",
    "rm -rf build dist",
    "echo x > out.txt",
    "echo ralph.toml > names.txt",
    "sed 's/a/b/' ../ralph.toml",
    "sed -n 1,5p ../ralph.toml",
    "cp ../ralph.toml /tmp/backup.toml",
    "mv app.py main.py",
    "git status",
    "git diff ../ralph.toml",
    "git checkout -b feature",
    "git clean -fd",
    "git add -A && git commit -m 'fix: rm ralph.toml notes'",
    "ralph-gate check",
    "ralph-gate loop status",
    "cat > notes.md <<'EOF'\nrm -rf ../.ralph\nEOF",
    "echo 'rm ../ralph.toml'",
    "ls # rm ../ralph.toml",
    "find . -name '*.pyc' -delete",
    "cat ../.claude/ralph-loop.local.md",
    "touch new_module.py",
    "bash -c 'pytest -q'",
    "tee log.txt < /dev/null",
    "echo x 2>&1 >&2",
    "npx tsc --noEmit",
    "cargo test",
    // The honest ones beside the forms above.
    "cd .. && ls",
    "cd ../src && rm app.py",
    "if [ -f app.py ]; then python3 app.py; fi",
    "for f in *.py; do python3 -m py_compile \"$f\"; done",
    "git stash",
    "git stash pop",
    "git stash push -- app.py",
    "git checkout -- app.py",
    "git checkout main",
    "git restore --staged app.py",
    "git reset HEAD app.py",
    "git reset --soft HEAD~1",
    "find . -name '*.pyc' -exec rm {} +",
    "find .. -name '*.pyc' -delete",
    "ln -s app.py main.py",
    "awk '{print}' ../ralph.toml",
    "rsync -a ../src/ /tmp/backup/",
    "echo {a,b}.txt",
    "ralph-gate status",
];

#[test]
fn the_guard_table() {
    let w = world();
    assert!(DENIED.len() + ALLOWED.len() >= 40);
    let mut wrong = Vec::new();
    for cmd in DENIED {
        if judge(&Call::Bash((*cmd).into()), &w.protected).is_none() {
            wrong.push(format!("allowed but must be denied: {cmd}"));
        }
    }
    for cmd in ALLOWED {
        if let Some(d) = judge(&Call::Bash((*cmd).into()), &w.protected) {
            wrong.push(format!("denied but must be allowed: {cmd} ({})", d.what));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn edits_of_protected_files_are_denied_by_any_spelling() {
    let w = world();
    for path in [
        "../ralph.toml",
        "../src/../ralph.toml",
        "cfg-link",
        "../.claude/settings.local.json",
        "../.claude/ralph-loop-abc.local.md",
        "../.ralph/cache/files.tsv",
    ] {
        let d = judge(&Call::Edit(path.into()), &w.protected);
        assert!(d.is_some(), "{path}");
    }
    let d = judge(&Call::Edit("../ralph.toml".into()), &w.protected).unwrap();
    assert_eq!(d.what, "editing ralph.toml");
    for path in ["app.py", "../README.md", "../.claude/commands/x.md"] {
        assert!(
            judge(&Call::Edit(path.into()), &w.protected).is_none(),
            "{path}"
        );
    }
}
