//! The commands a project already runs to check itself, read from where projects keep
//! them: CI workflows' run steps, Makefile targets, package.json scripts and
//! pre-commit's local hooks. Pure: each reader takes a file's text and gives the commands
//! it holds that [`classify::checker`] knows, with where each was found.

use super::classify::{self, Checker, Scripts};
use ralph_base::shell;
use ralph_config::template::shell_quote;
use yaml_rust2::{Yaml, YamlLoader};

/// A command found in the project, recognised as a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub command: String,
    pub checker: Checker,
    /// Where it was found, as the user would look for it.
    pub source: String,
    /// The package script it runs, if it runs one in the project's root.
    pub script: Option<String>,
    /// What makes two candidates the same command (a script run through two package
    /// managers, a target named twice).
    pub identity: String,
}

/// The check commands of one line of shell. The line whole when every command in it is a
/// check (or a `cd`); else each check on its own, after the last `cd` before it. A line
/// whose failure is ignored (`|| true`) or that GitHub expands (`${{ }}`) gives none.
pub fn line_commands(
    line: &str,
    (dir, shell): (Option<&str>, Shell),
    source: &str,
    scripts: &Scripts,
) -> Vec<Candidate> {
    if unsound(line, scripts, shell) {
        return Vec::new();
    }
    let simples = shell::parse(line, 0);
    let is_cd = |w: &[String]| w.first().is_some_and(|p| p == "cd") && w.len() == 2;
    let checks: Vec<(usize, Checker)> = simples
        .iter()
        .enumerate()
        .filter_map(|(i, s)| classify::checker(&s.words, scripts).map(|c| (i, c)))
        .collect();
    let prefix = |cd: Option<&str>| {
        cd.map(|d| format!("cd {} && ", shell_quote(d)))
            .unwrap_or_default()
    };
    let whole = simples
        .iter()
        .enumerate()
        .all(|(i, s)| is_cd(&s.words) || checks.iter().any(|(j, _)| *j == i));
    // Verbatim only where ralph-gate's own `sh -c` keeps the check's failure too.
    let plain = shell == PLAIN || !unsound(line, scripts, PLAIN);
    if whole && plain && checks.len() == 1 && simples.iter().all(|s| s.writes.is_empty()) {
        let (_, checker) = checks.into_iter().next().expect("one check");
        let command = format!("{}{}", prefix(dir), line.trim());
        return vec![candidate(command, checker, source, dir)];
    }
    let mut cd = dir.map(str::to_string);
    let mut out = Vec::new();
    for (i, s) in simples.iter().enumerate() {
        if is_cd(&s.words) {
            cd = Some(s.words[1].clone());
        }
        if let Some((_, checker)) = checks.iter().find(|(j, _)| *j == i) {
            let words: Vec<String> = s.words.iter().map(|w| shell_quote(w)).collect();
            let command = format!("{}{}", prefix(cd.as_deref()), words.join(" "));
            out.push(candidate(command, checker.clone(), source, cd.as_deref()));
        }
    }
    out
}

/// How a shell runs a text: GitHub's bash step is `bash -e -o pipefail`, its sh step
/// `sh -e`; a package script, a make recipe's line and a hook's entry run plainly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shell {
    /// A failing command ends the text (`-e`): `a; b` keeps a's failure.
    pub errexit: bool,
    /// A pipeline fails when any stage does: `a | b` keeps a's failure.
    pub pipefail: bool,
}

/// `sh -c`, as npm and make run a script or a recipe's line.
pub const PLAIN: Shell = Shell {
    errexit: false,
    pipefail: false,
};

/// A command that cannot fail, or changes the tree, or that GitHub expands (`${{ }}`): a
/// failure swallowed (`|| true`, `|| echo`, `; exit 0`, a check before `;` or `|` where
/// the shell goes on), a fixer's option, or a package script it runs (through any depth of
/// scripts, each as npm runs it) that does either. Never proposed.
pub fn unsound(text: &str, scripts: &Scripts, shell: Shell) -> bool {
    if text.contains("${{") || swallows_or_writes(text, shell) {
        return true;
    }
    shell::parse(text, 1)
        .iter()
        .filter_map(|s| classify::script_of(&s.words))
        .flat_map(|name| scripts_run_by(name, scripts))
        .any(|name| {
            scripts
                .get(&name)
                .is_some_and(|b| swallows_or_writes(b, PLAIN))
        })
}

/// [`unsound`] for one text, its scripts not followed.
fn swallows_or_writes(text: &str, sh: Shell) -> bool {
    let simples = shell::parse(text, 1);
    let succeeds = |w: &[String]| match w {
        [only] => only == "true" || only == ":",
        [exit, code] => exit == "exit" && code == "0",
        _ => false,
    };
    if simples
        .iter()
        .any(|s| succeeds(&s.words) || classify::writes(&s.words))
    {
        return true;
    }
    let first = |t: &str| shell::parse(t, 0).into_iter().next().unwrap_or_default();
    let checks = |t: &str| {
        shell::parse(t, 0)
            .iter()
            .any(|s| classify::checker(&s.words, &Scripts::new()).is_some())
    };
    // What runs after `||` decides the exit: only a check or a failing exit keeps it.
    let or = text.split("||").skip(1).any(|rest| {
        let first = first(rest);
        let fails = matches!(first.words.as_slice(), [e, c] if e == "exit" && c != "0");
        !fails && classify::checker(&first.words, &Scripts::new()).is_none()
    });
    // Where the shell goes on, a check before `;`, a newline or a pipe's `|` does not
    // decide the exit: what comes last does.
    let hides =
        |parts: Vec<&str>| parts.len() > 1 && parts[..parts.len() - 1].iter().any(|p| checks(p));
    let errexit = sh.errexit || text.trim_start().starts_with("set -e");
    let sequence = !errexit && hides(text.split([';', '\n']).collect());
    let piped = text.replace("||", "\u{0}");
    let pipe = !sh.pipefail
        && piped
            .split([';', '\n'])
            .any(|c| hides(c.split('|').collect()));
    or || sequence || pipe
}

fn candidate(command: String, checker: Checker, source: &str, dir: Option<&str>) -> Candidate {
    let words = shell::parse(&command, 0)
        .into_iter()
        .last()
        .map(|s| s.words)
        .unwrap_or_default();
    let what = match (classify::script_of(&words), words.first()) {
        (Some(script), _) => format!("script {script}"),
        (None, Some(p)) if p == "make" || p == "gmake" => checker.name.clone(),
        // `bats test/` and `bats test` are one command.
        _ => words
            .iter()
            .map(|w| w.trim_end_matches('/'))
            .collect::<Vec<_>>()
            .join(" "),
    };
    let script = classify::script_of(&words)
        .filter(|_| dir.is_none())
        .map(str::to_string);
    Candidate {
        script,
        identity: format!("{}:{what}", dir.unwrap_or(".")),
        command,
        checker,
        source: source.to_string(),
    }
}

/// The lines of a `run:` block as the shell reads them: continuations joined, comments and
/// blank lines out.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim_end();
        let line = if current.is_empty() {
            line
        } else {
            line.trim_start()
        };
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head.trim_end());
            current.push(' ');
            continue;
        }
        current.push_str(line);
        let whole = std::mem::take(&mut current);
        let trimmed = whole.trim();
        if !trimmed.is_empty() && !trimmed.starts_with('#') {
            out.push(trimmed.to_string());
        }
    }
    out
}

/// A GitHub Actions workflow's check steps. A step or job that may fail without failing
/// the workflow (`continue-on-error`) is not a check of it.
pub fn workflow(path: &str, text: &str, scripts: &Scripts) -> Vec<Candidate> {
    let Ok(docs) = YamlLoader::load_from_str(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in &docs {
        let Some(jobs) = doc["jobs"].as_hash() else {
            continue;
        };
        for (name, job) in jobs {
            if job["continue-on-error"].as_bool() == Some(true) {
                continue;
            }
            let job_dir = job["defaults"]["run"]["working-directory"].as_str();
            let job_name = name.as_str().unwrap_or("job");
            for step in job["steps"].as_vec().into_iter().flatten() {
                out.extend(step_commands(path, (job_name, job_dir), step, scripts));
            }
        }
    }
    out
}

fn step_commands(
    path: &str,
    (job, job_dir): (&str, Option<&str>),
    step: &Yaml,
    scripts: &Scripts,
) -> Vec<Candidate> {
    let Some(run) = step["run"].as_str() else {
        return Vec::new();
    };
    if step["continue-on-error"].as_bool() == Some(true) {
        return Vec::new();
    }
    // A step in another shell (`pwsh`, `python {0}`) or a folder only GitHub knows is not
    // a command to run here. GitHub runs `bash` as `bash -e -o pipefail`, `sh` as `sh -e`.
    let name = step["shell"].as_str().unwrap_or("bash");
    let dir = step["working-directory"].as_str().or(job_dir);
    let posix = ["bash", "sh"].contains(&name.split_whitespace().next().unwrap_or_default());
    if !posix || dir.is_some_and(|d| d.contains("${{")) {
        return Vec::new();
    }
    let shell = Shell {
        errexit: name == "bash" || name == "sh",
        pipefail: name == "bash",
    };
    let dir = dir.filter(|d| *d != "." && *d != "./");
    let source = match step["name"].as_str() {
        Some(name) => format!("{path}, job {job}, step \"{name}\""),
        None => format!("{path}, job {job}"),
    };
    logical_lines(run)
        .iter()
        .flat_map(|line| line_commands(line, (dir, shell), &source, scripts))
        .collect()
}

/// A Makefile's rule: its targets and its recipe's lines.
struct Rule<'a> {
    targets: Vec<&'a str>,
    recipe: Vec<&'a str>,
}

/// The rules of a Makefile (`.PHONY`'s names as its recipe).
fn rules(text: &str) -> Vec<Rule<'_>> {
    let mut out: Vec<Rule<'_>> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix('\t') {
            if let Some(rule) = out.last_mut() {
                rule.recipe.push(command);
            }
            continue;
        }
        let Some((targets, rest)) = line.split_once(':') else {
            continue;
        };
        let assignment = rest.starts_with('=') || rest.starts_with(":=");
        if line.starts_with([' ', '#']) || targets.contains(['=', '$', '%']) || assignment {
            continue;
        }
        let targets: Vec<&str> = targets.split_whitespace().collect();
        let recipe = match targets.as_slice() {
            [".PHONY"] => rest.split_whitespace().collect(),
            _ => Vec::new(),
        };
        out.push(Rule { targets, recipe });
    }
    out
}

/// A Makefile's targets whose names say they check, as `make TARGET`. A target named like a
/// file or folder that is there (`test/`) and not `.PHONY` is "up to date" to make and
/// checks nothing: none. A one-line recipe is the command it runs (so CI's `bats test/` and
/// a `test:` target running it are one gate).
pub fn makefile(text: &str, exists: &dyn Fn(&str) -> bool, scripts: &Scripts) -> Vec<Candidate> {
    let rules = rules(text);
    let phony: Vec<&str> = rules
        .iter()
        .filter(|r| r.targets == [".PHONY"])
        .flat_map(|r| r.recipe.iter().copied())
        .collect();
    let mut out = Vec::new();
    for rule in rules.iter().filter(|r| r.targets != [".PHONY"]) {
        // make's `-` runs on past a failure: such a target cannot fail.
        let lines: Vec<&str> = rule
            .recipe
            .iter()
            .map(|l| l.trim_start_matches(['@', '+']))
            .collect();
        let ignored = lines.iter().any(|l| l.starts_with('-'));
        if ignored || lines.iter().any(|l| unsound(l, scripts, PLAIN)) {
            continue;
        }
        for target in &rule.targets {
            if exists(target) && !phony.contains(target) {
                continue;
            }
            let line = format!("make {target}");
            let source = format!("Makefile target {target}");
            for mut c in line_commands(&line, (None, PLAIN), &source, scripts) {
                if let [only] = lines.as_slice() {
                    if let Some(same) = line_commands(only, (None, PLAIN), &source, scripts).first()
                    {
                        c.identity.clone_from(&same.identity);
                    }
                }
                out.push(c);
            }
        }
    }
    out
}

/// package.json's scripts (none when it is not JSON or has none).
pub fn scripts_of(package_json: &str) -> Scripts {
    let json = serde_json::from_str::<serde_json::Value>(package_json).unwrap_or_default();
    json["scripts"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

/// The scripts `name` runs, itself included, through `npm run` and the like in its body.
pub fn scripts_run_by(name: &str, scripts: &Scripts) -> Vec<String> {
    let mut out = vec![name.to_string()];
    let mut i = 0;
    while let Some(next) = out.get(i).cloned() {
        i += 1;
        let body = scripts.get(&next).map(String::as_str).unwrap_or_default();
        for s in shell::parse(body, 1) {
            if let Some(called) = classify::script_of(&s.words) {
                if !out.iter().any(|o| o == called) {
                    out.push(called.to_string());
                }
            }
        }
    }
    out
}

/// npm's placeholder `test` script, which only fails.
const NPM_PLACEHOLDER: &str = "no test specified";

/// package.json's scripts whose names say they check, run by the project's package manager.
pub fn package_scripts(scripts: &Scripts, manager: &str) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (name, body) in scripts {
        if body.contains(NPM_PLACEHOLDER) || unsound(body, scripts, PLAIN) {
            continue;
        }
        let line = format!("{manager} run {}", shell_quote(name));
        out.extend(line_commands(
            &line,
            (None, PLAIN),
            &format!("package.json script {name}"),
            scripts,
        ));
    }
    out
}

/// pre-commit's (and prek's) local hooks that run a system command over the whole project
/// (`pass_filenames: false`); a hook given file names checks only those, no gate here.
pub fn pre_commit_local(path: &str, text: &str, scripts: &Scripts) -> Vec<Candidate> {
    let Ok(docs) = YamlLoader::load_from_str(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for doc in &docs {
        for repo in doc["repos"].as_vec().into_iter().flatten() {
            if repo["repo"].as_str() != Some("local") {
                continue;
            }
            for hook in repo["hooks"].as_vec().into_iter().flatten() {
                let system = matches!(hook["language"].as_str(), Some("system" | "script"));
                let whole = hook["pass_filenames"].as_bool() == Some(false);
                let (Some(entry), true, true) = (hook["entry"].as_str(), system, whole) else {
                    continue;
                };
                let args: Vec<String> = hook["args"]
                    .as_vec()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a.as_str().map(shell_quote))
                    .collect();
                let line = [entry.to_string()]
                    .into_iter()
                    .chain(args)
                    .collect::<Vec<_>>();
                let id = hook["id"].as_str().unwrap_or("?");
                let source = format!("{path}, local hook {id}");
                out.extend(line_commands(
                    &line.join(" "),
                    (None, PLAIN),
                    &source,
                    scripts,
                ));
            }
        }
    }
    out
}

/// Python checkers a project configures without a command: `[tool.ruff]` (or `ruff.toml`)
/// is `ruff check .`, `[tool.pyright]` (or `pyrightconfig.json`) is `pyright`.
pub fn python_configs(pyproject: Option<&str>, exists: &dyn Fn(&str) -> bool) -> Vec<Candidate> {
    let tool = pyproject
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("tool").and_then(|v| v.as_table()).cloned())
        .unwrap_or_default();
    let mut out = Vec::new();
    let configured: [(&str, &[&str], &str); 2] = [
        ("ruff", &["ruff.toml", ".ruff.toml"], "ruff check ."),
        ("pyright", &["pyrightconfig.json"], "pyright"),
    ];
    for (name, files, command) in configured {
        let source = match (tool.contains_key(name), files.iter().find(|f| exists(f))) {
            (true, _) => format!("pyproject.toml [tool.{name}]"),
            (false, Some(file)) => (*file).to_string(),
            (false, None) => continue,
        };
        out.extend(line_commands(
            command,
            (None, PLAIN),
            &source,
            &Scripts::new(),
        ));
    }
    out
}
