//! Pre-commit frameworks a project may already use. ralph-gate joins them instead of taking
//! over `.git/hooks/pre-commit`: one more entry in their config, added as text so the
//! user's comments and layout stay, and never twice. Pure functions of the config's text.

/// The frameworks, each with the file that shows it is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    /// prek and pre-commit share `.pre-commit-config.yaml`.
    PreCommit,
    Lefthook,
    Husky,
}

impl Framework {
    pub fn name(self) -> &'static str {
        match self {
            Framework::PreCommit => "prek / pre-commit",
            Framework::Lefthook => "lefthook",
            Framework::Husky => "husky",
        }
    }
}

/// Config files, most specific first.
pub const FILES: &[(Framework, &str)] = &[
    (Framework::PreCommit, ".pre-commit-config.yaml"),
    (Framework::PreCommit, ".pre-commit-config.yml"),
    (Framework::Lefthook, "lefthook.yml"),
    (Framework::Lefthook, "lefthook.yaml"),
    (Framework::Lefthook, ".lefthook.yml"),
    (Framework::Lefthook, ".lefthook.yaml"),
    (Framework::Husky, ".husky/pre-commit"),
];

/// The config's text with ralph-gate's pre-commit entry added, or `None` when it is there.
pub fn add(framework: Framework, text: &str, command: &str) -> Option<String> {
    if text.contains("ralph-gate") {
        return None;
    }
    Some(match framework {
        Framework::PreCommit => add_pre_commit(text, command),
        Framework::Lefthook => add_lefthook(text, command),
        Framework::Husky => add_husky(text, command),
    })
}

fn ends_with_newline(text: &str) -> String {
    let mut t = text.to_string();
    if !t.is_empty() && !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

/// A top-level YAML key (no indentation) at the start of a line.
fn top_key(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '#' || first == '-' {
        return None;
    }
    line.split_once(':').map(|(k, _)| k.trim())
}

/// The line range (start, end) of a top-level key's block: from the key's line to just
/// before the next top-level key.
fn block(lines: &[&str], key: &str) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| top_key(l) == Some(key))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| top_key(l).is_some())
        .map_or(lines.len(), |i| start + 1 + i);
    Some((start, end))
}

/// Appends a local hook to `repos:` (before whatever top-level key follows it, such as
/// pre-commit.ci's `ci:`), indented like the entries already there.
fn add_pre_commit(text: &str, command: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let entry = |indent: &str| {
        format!(
            "{indent}- repo: local\n{indent}  hooks:\n{indent}    - id: ralph-gate\n{indent}      name: ralph-gate\n{indent}      entry: {command}\n{indent}      language: system\n{indent}      pass_filenames: false\n{indent}      always_run: true\n"
        )
    };
    let Some((start, end)) = block(&lines, "repos") else {
        return format!("{}repos:\n{}", ends_with_newline(text), entry(""));
    };
    let indent: String = lines[start + 1..end]
        .iter()
        .find(|l| l.trim_start().starts_with("- "))
        .map(|l| l.chars().take_while(|c| *c == ' ').collect())
        .unwrap_or_default();
    // Insert after the block's last non-blank line.
    let last = (start..end)
        .rev()
        .find(|i| !lines[*i].trim().is_empty())
        .unwrap_or(start);
    let mut out = String::new();
    for l in &lines[..=last] {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&entry(&indent));
    for l in &lines[last + 1..] {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Adds a `ralph-gate` command to `pre-commit:` (as a `commands:` entry, or a `jobs:` item
/// in lefthook 2 configs), or a new `pre-commit:` section.
fn add_lefthook(text: &str, command: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some((start, end)) = block(&lines, "pre-commit") else {
        return format!(
            "{}pre-commit:\n  commands:\n    ralph-gate:\n      run: {command}\n",
            ends_with_newline(text)
        );
    };
    let sub = |name: &str| {
        (start + 1..end).find(|i| {
            let l = lines[*i];
            l.trim_start().starts_with(&format!("{name}:")) && l.starts_with(' ')
        })
    };
    let indent_of = |i: usize| -> usize { lines[i].chars().take_while(|c| *c == ' ').count() };
    let (at, insert) = if let Some(i) = sub("commands") {
        let pad = " ".repeat(indent_of(i) + 2);
        (i, format!("{pad}ralph-gate:\n{pad}  run: {command}\n"))
    } else if let Some(i) = sub("jobs") {
        let pad = " ".repeat(indent_of(i) + 2);
        (
            i,
            format!("{pad}- name: ralph-gate\n{pad}  run: {command}\n"),
        )
    } else {
        (
            start,
            format!("  commands:\n    ralph-gate:\n      run: {command}\n"),
        )
    };
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        out.push('\n');
        if i == at {
            out.push_str(&insert);
        }
    }
    out
}

fn add_husky(text: &str, command: &str) -> String {
    format!("{}{command}\n", ends_with_newline(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "ralph-gate check --staged --quiet";

    #[test]
    fn pre_commit_gets_a_local_hook_inside_repos_and_only_once() {
        let text = "# my hooks\nrepos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n\nci:\n  autofix_prs: false\n";
        let out = add(Framework::PreCommit, text, CMD).unwrap();
        assert!(
            out.starts_with("# my hooks\nrepos:\n  - repo: https://github.com/psf/black"),
            "{out}"
        );
        let at = out.find("  - repo: local").expect("added");
        assert!(
            at < out.find("ci:").unwrap(),
            "inside repos, before ci: {out}"
        );
        assert!(out.contains("      - id: ralph-gate\n        name: ralph-gate\n        entry: ralph-gate check --staged --quiet\n        language: system\n        pass_filenames: false\n"), "{out}");
        assert!(out.ends_with("ci:\n  autofix_prs: false\n"));
        assert_eq!(add(Framework::PreCommit, &out, CMD), None);
        let flat = add(
            Framework::PreCommit,
            "repos:\n- repo: local\n  hooks: []\n",
            CMD,
        )
        .unwrap();
        assert!(
            flat.contains("\n- repo: local\n  hooks:\n    - id: ralph-gate"),
            "{flat}"
        );
    }

    #[test]
    fn lefthook_gets_a_command_under_pre_commit() {
        let text = "pre-push:\n  commands:\n    test:\n      run: make test\npre-commit:\n  parallel: true\n  commands:\n    lint:\n      run: make lint\n";
        let out = add(Framework::Lefthook, text, CMD).unwrap();
        assert!(
            out.contains("  commands:\n    ralph-gate:\n      run: ralph-gate check --staged --quiet\n    lint:\n"),
            "{out}"
        );
        assert!(
            out.starts_with("pre-push:\n  commands:\n    test:\n"),
            "{out}"
        );
        let jobs = add(
            Framework::Lefthook,
            "pre-commit:\n  jobs:\n    - run: make lint\n",
            CMD,
        )
        .unwrap();
        assert!(
            jobs.contains("  jobs:\n    - name: ralph-gate\n      run: ralph-gate"),
            "{jobs}"
        );
        let none = add(Framework::Lefthook, "output: [summary]", CMD).unwrap();
        assert!(none.ends_with("output: [summary]\npre-commit:\n  commands:\n    ralph-gate:\n      run: ralph-gate check --staged --quiet\n"), "{none}");
        assert_eq!(add(Framework::Lefthook, &out, CMD), None);
    }

    #[test]
    fn husky_gets_a_line() {
        let out = add(Framework::Husky, "npx lint-staged", CMD).unwrap();
        assert_eq!(out, "npx lint-staged\nralph-gate check --staged --quiet\n");
        assert_eq!(add(Framework::Husky, &out, CMD), None);
    }
}
