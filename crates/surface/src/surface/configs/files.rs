//! Which file is which config, and the options each holds that decide what is checked.

use super::{flatten_toml, json_text, toml_text, Put, Scripts, TS_STRICT_FAMILY};
use crate::surface::{Reads, Rule};
use ralph_config::{Config, Phase};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads a file relative to the config's folder (`extends`).
pub type ReadRel<'a> = dyn Fn(&str) -> Option<String> + 'a;

const ON: Rule = Rule::Flag {
    stricter: true,
    default: true,
};
const OFF_STRICT: Rule = Rule::Flag {
    stricter: true,
    default: false,
};
/// Options that check less when true (`noCheck`, `skipLibCheck`).
const TS_LOOSE: [&str; 9] = [
    "noCheck",
    "skipLibCheck",
    "skipDefaultLibCheck",
    "allowUnreachableCode",
    "allowUnusedLabels",
    "suppressImplicitAnyIndexErrors",
    "suppressExcessPropertyErrors",
    "noStrictGenericChecks",
    "keyofStringsOnly",
];
/// Options that check more when true, besides `strict`'s family.
const TS_STRICTER: [&str; 11] = [
    "noUnusedLocals",
    "noUnusedParameters",
    "noImplicitReturns",
    "noFallthroughCasesInSwitch",
    "noUncheckedIndexedAccess",
    "exactOptionalPropertyTypes",
    "noImplicitOverride",
    "noPropertyAccessFromIndexSignature",
    "checkJs",
    "isolatedModules",
    "strictBuiltinIteratorReturn",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tsconfig,
    PackageJson,
    CargoToml,
    CargoConfig,
    Toolchain,
    ShellcheckRc,
    /// An INI file with pytest's options in this section.
    PytestIni(&'static str),
    Pyproject,
    /// A file that names one interpreter version (`.python-version`, `.nvmrc`).
    VersionFile,
    ToolVersions,
    Makefile,
    GoWork,
    GoMod,
    /// `.git/info/exclude`: untracked files it names drop out of every gate.
    GitExclude,
}

impl Kind {
    pub fn of(rel: &Path, r: &Reads) -> Option<Self> {
        let name = rel.file_name()?.to_str()?;
        let parent = rel
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|p| p.to_str());
        let top = rel.parent().is_none_or(|p| p.as_os_str().is_empty());
        Some(match name {
            n if r.tsc
                && (n.starts_with("tsconfig") || n.starts_with("jsconfig"))
                && n.ends_with(".json") =>
            {
                Kind::Tsconfig
            }
            "package.json" => Kind::PackageJson,
            "Cargo.toml" if r.cargo => Kind::CargoToml,
            "config" | "config.toml" if r.cargo && parent == Some(".cargo") => Kind::CargoConfig,
            "rust-toolchain" | "rust-toolchain.toml" if r.cargo => Kind::Toolchain,
            ".shellcheckrc" if r.shellcheck => Kind::ShellcheckRc,
            "pytest.ini" | "tox.ini" if r.tests => Kind::PytestIni("pytest"),
            "setup.cfg" if r.tests => Kind::PytestIni("tool:pytest"),
            "pyproject.toml" if r.tests => Kind::Pyproject,
            ".python-version" | ".nvmrc" | ".node-version" => Kind::VersionFile,
            ".tool-versions" => Kind::ToolVersions,
            "Makefile" | "makefile" | "GNUmakefile" if top => Kind::Makefile,
            "go.work" if r.go => Kind::GoWork,
            "go.mod" if r.go => Kind::GoMod,
            _ => return None,
        })
    }

    /// A config outside the project, by its absolute path.
    pub fn outside(path: &Path, r: &Reads) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|p| p.to_str());
        Some(match name {
            "config" | "config.toml" if r.cargo && parent == Some(".cargo") => Kind::CargoConfig,
            "config" | "config.toml" if r.cargo && parent == Some("$CARGO_HOME") => {
                Kind::CargoConfig
            }
            ".shellcheckrc" | "shellcheckrc" if r.shellcheck => Kind::ShellcheckRc,
            "exclude" if parent == Some("info") => Kind::GitExclude,
            _ => return None,
        })
    }

    pub fn extract(self, put: &mut Put<'_>, text: &str, scripts: &Scripts, read: &ReadRel<'_>) {
        match self {
            Kind::Tsconfig => tsconfig(put, text, read),
            Kind::PackageJson => package_json(put, text, scripts),
            Kind::CargoToml => cargo_toml(put, text),
            Kind::CargoConfig => cargo_config(put, text),
            Kind::Toolchain => toolchain(put, text),
            Kind::ShellcheckRc => shellcheckrc(put, text),
            Kind::PytestIni(section) => {
                let values = ini_section(text, section);
                pytest(put, &values);
            }
            Kind::Pyproject => pyproject(put, text),
            Kind::VersionFile => {
                let v = text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'));
                if let Some(v) = v {
                    put.put("version", v.to_string(), Rule::Version, v);
                }
            }
            Kind::ToolVersions => {
                for l in text.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
                    let mut w = l.split_whitespace();
                    if let (Some(tool), Some(v)) = (w.next(), w.next()) {
                        put.put(tool, v.to_string(), Rule::Version, l);
                    }
                }
            }
            Kind::Makefile => makefile(put, text, scripts),
            Kind::GoWork => {
                let uses = go_uses(text);
                put.list("use", &uses, Rule::Shrinks, "use");
            }
            Kind::GoMod => {
                if let Some(v) = text.lines().find_map(|l| l.trim().strip_prefix("go ")) {
                    put.put("go", v.trim().to_string(), Rule::Version, "go ");
                }
            }
            Kind::GitExclude => {
                let lines: Vec<String> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(String::from)
                    .collect();
                put.list("patterns", &lines, Rule::Grows, "");
            }
        }
    }
}

/// A tsconfig's options as tsc resolves them: its own over its `extends` chain (relative
/// ones; a package's name is kept as a setting, since the package decides).
fn tsconfig(put: &mut Put<'_>, text: &str, read: &ReadRel<'_>) {
    let Some(own) = parse_jsonc(text) else { return };
    let chain = extends_chain(put, own, read);
    compiler_flags(put, &chain);
    let list = |k: &str| -> Option<Vec<String>> {
        chain
            .iter()
            .find_map(|c| c.get(k))
            .and_then(Json::as_array)
            .map(|a| a.iter().map(json_text).collect())
    };
    for (k, rule) in [
        ("include", Rule::Shrinks),
        ("files", Rule::Shrinks),
        ("exclude", Rule::Grows),
    ] {
        if let Some(v) = list(k) {
            put.list(k, &v, rule, &format!("\"{k}\""));
        }
    }
    if let Some(refs) = chain[0].get("references").and_then(Json::as_array) {
        let paths: Vec<String> = refs
            .iter()
            .filter_map(|r| r.get("path"))
            .map(json_text)
            .collect();
        put.list("references", &paths, Rule::Shrinks, "\"references\"");
    }
}

/// The tsconfig `own` and the configs it extends, nearest first (at most 8 deep). A package
/// named in `extends` ends the chain, kept as a setting.
fn extends_chain(put: &mut Put<'_>, own: Json, read: &ReadRel<'_>) -> Vec<Json> {
    let mut chain = vec![own];
    let mut dir = std::path::PathBuf::new();
    for _ in 0..8 {
        let Some(ext) = chain[chain.len() - 1]
            .get("extends")
            .and_then(Json::as_str)
            .map(String::from)
        else {
            break;
        };
        if !(ext.starts_with("./") || ext.starts_with("../")) {
            put.put("extends", ext.clone(), Rule::Fixed, "\"extends\"");
            break;
        }
        let rel = dir.join(&ext);
        let rel = if rel.extension().is_none() {
            rel.with_extension("json")
        } else {
            rel
        };
        let Some(base) = read(&rel.to_string_lossy()).and_then(|t| parse_jsonc(&t)) else {
            break;
        };
        dir = rel.parent().map(Path::to_path_buf).unwrap_or_default();
        chain.push(base);
    }
    chain
}

/// The strictness flags of the chain's `compilerOptions`, the nearest config winning.
fn compiler_flags(put: &mut Put<'_>, chain: &[Json]) {
    let mut options = serde_json::Map::new();
    for cfg in chain.iter().rev() {
        if let Some(o) = cfg.get("compilerOptions").and_then(Json::as_object) {
            options.extend(o.clone());
        }
    }
    let flag = |k: &str| options.get(k).map(|v| v == &Json::Bool(true));
    let strict = flag("strict").unwrap_or(false);
    let mut set = |k: &str, v: Option<bool>, rule: Rule| {
        if let Some(v) = v {
            put.put(
                &format!("compilerOptions.{k}"),
                v.to_string(),
                rule,
                &format!("\"{k}\""),
            );
        }
    };
    set("strict", Some(strict), OFF_STRICT);
    let family = Rule::Flag {
        stricter: true,
        default: strict,
    };
    for k in TS_STRICT_FAMILY {
        set(k, flag(k), family);
    }
    for k in TS_STRICTER {
        set(k, flag(k), OFF_STRICT);
    }
    let loose = Rule::Flag {
        stricter: false,
        default: false,
    };
    for k in TS_LOOSE {
        set(k, flag(k), loose);
    }
}

fn parse_jsonc(text: &str) -> Option<Json> {
    ralph_base::jsonc::parse(text)
}

/// The scripts the gates run, and where the TypeScript checker comes from.
fn package_json(put: &mut Put<'_>, text: &str, scripts: &Scripts) {
    let Some(v) = parse_jsonc(text) else { return };
    if let Some(s) = v.get("scripts").and_then(Json::as_object) {
        for (name, body) in s {
            if scripts.npm.contains(name) {
                put.put(
                    &format!("scripts.{name}"),
                    json_text(body),
                    Rule::Command,
                    &format!("\"{name}\""),
                );
            }
        }
    }
    for field in [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "overrides",
        "resolutions",
    ] {
        if let Some(spec) = v.get(field).and_then(|d| d.get("typescript")) {
            put.put(
                &format!("{field}.typescript"),
                json_text(spec),
                Rule::Dependency,
                "\"typescript\"",
            );
        }
    }
}

/// Lint levels, ranked: lowering one is a weakening.
fn lint_rank(v: &toml::Value) -> Option<u8> {
    let level = match v {
        toml::Value::String(s) => s.as_str(),
        toml::Value::Table(t) => t.get("level")?.as_str()?,
        _ => return None,
    };
    Some(match level {
        "allow" => 0,
        "warn" | "expect" => 1,
        "deny" => 2,
        "forbid" => 3,
        _ => return None,
    })
}

fn cargo_toml(put: &mut Put<'_>, text: &str) {
    let Ok(v) = parse_toml(text) else { return };
    let get = |path: &str| path.split('.').try_fold(&v, |v, k| v.get(k));
    for k in [
        "lib.test",
        "lib.doctest",
        "lib.harness",
        "package.autotests",
        "package.autolib",
        "package.autobins",
    ] {
        if let Some(b) = get(k).and_then(toml::Value::as_bool) {
            let last = k.rsplit('.').next().unwrap_or(k);
            put.put(k, b.to_string(), ON, last);
        }
    }
    for table in ["test", "bin", "bench", "example"] {
        targets(put, table, v.get(table).and_then(toml::Value::as_array));
    }
    for root in ["lints", "workspace.lints"] {
        let Some(tools) = get(root).and_then(toml::Value::as_table) else {
            continue;
        };
        for (tool, lints) in tools {
            for (lint, level) in lints.as_table().into_iter().flatten() {
                if let Some(rank) = lint_rank(level) {
                    put.put(
                        &format!("{root}.{tool}.{lint}"),
                        rank.to_string(),
                        Rule::Level { default: 1 },
                        lint,
                    );
                }
            }
        }
    }
    for (k, rule) in [
        ("workspace.members", Rule::Shrinks),
        ("workspace.default-members", Rule::Shrinks),
        ("workspace.exclude", Rule::Grows),
    ] {
        if let Some(a) = get(k).and_then(toml::Value::as_array) {
            let entries: Vec<String> = a.iter().map(toml_text).collect();
            put.list(k, &entries, rule, k.rsplit('.').next().unwrap_or(k));
        }
    }
    for profile in ["dev", "test"] {
        for opt in ["debug-assertions", "overflow-checks"] {
            let k = format!("profile.{profile}.{opt}");
            if let Some(b) = get(&k).and_then(toml::Value::as_bool) {
                put.put(&k, b.to_string(), ON, opt);
            }
        }
    }
}

/// `[[test]]` and the other target tables: a target that stops being tested, or needs a
/// feature to be built at all, runs fewer tests.
fn targets(put: &mut Put<'_>, table: &str, list: Option<&Vec<toml::Value>>) {
    let Some(list) = list else { return };
    let mut names = Vec::new();
    for t in list {
        let Some(name) = t.get("name").or_else(|| t.get("path")).map(toml_text) else {
            continue;
        };
        for opt in ["test", "harness"] {
            if let Some(b) = t.get(opt).and_then(toml::Value::as_bool) {
                put.put(
                    &format!("{table}.{name}.{opt}"),
                    b.to_string(),
                    ON,
                    &format!("{opt} ="),
                );
            }
        }
        if let Some(f) = t.get("required-features") {
            put.put(
                &format!("{table}.{name}.required-features"),
                f.to_string(),
                Rule::Fixed,
                "required-features",
            );
        }
        names.push(name);
    }
    if table == "test" {
        put.list("[[test]]", &names, Rule::Shrinks, "[[test]]");
    }
}

/// Cargo's own config: a runner, wrapper, flag, alias or environment variable there can
/// make `cargo test` run anything.
fn cargo_config(put: &mut Put<'_>, text: &str) {
    let Ok(v) = parse_toml(text) else { return };
    let mut flat = BTreeMap::new();
    flatten_toml(&v, "", &mut flat);
    for (k, v) in flat {
        let head = k.split('.').next().unwrap_or("");
        if matches!(
            head,
            "target" | "build" | "alias" | "env" | "paths" | "source" | "unstable" | "profile"
        ) {
            let last = k.rsplit('.').next().unwrap_or(&k).to_string();
            put.put(&k, toml_text(&v), Rule::Fixed, &last);
        }
    }
}

fn toolchain(put: &mut Put<'_>, text: &str) {
    match parse_toml(text) {
        Ok(v) if v.get("toolchain").is_some() => {
            let t = &v["toolchain"];
            if let Some(c) = t.get("channel").and_then(toml::Value::as_str) {
                put.put(
                    "toolchain.channel",
                    c.to_string(),
                    Rule::Toolchain,
                    "channel",
                );
            }
            if let Some(p) = t.get("path").and_then(toml::Value::as_str) {
                put.put("toolchain.path", p.to_string(), Rule::Fixed, "path");
            }
        }
        _ => {
            if let Some(l) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
                put.put("toolchain", l.to_string(), Rule::Toolchain, l);
            }
        }
    }
}

fn shellcheckrc(put: &mut Put<'_>, text: &str) {
    let mut disabled = Vec::new();
    let mut enabled = Vec::new();
    for l in text.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let values = v.split(',').map(|s| s.trim().to_string());
        match k.trim() {
            "disable" => disabled.extend(values),
            "enable" => enabled.extend(values),
            "shell" => put.put("shell", v.trim().to_string(), Rule::Fixed, l),
            "severity" => {
                let rank = match v.trim() {
                    "error" => 0,
                    "warning" => 1,
                    "info" => 2,
                    _ => 3,
                };
                put.put("severity", rank.to_string(), Rule::Level { default: 3 }, l);
            }
            _ => {}
        }
    }
    put.list("disable", &disabled, Rule::Grows, "disable");
    put.list("enable", &enabled, Rule::Shrinks, "enable");
}

/// `key = value` pairs of one INI section, with indented continuation lines joined.
fn ini_section(text: &str, section: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut inside = false;
    for raw in text.lines() {
        let l = raw.trim();
        if l.starts_with('[') {
            inside = l.trim_matches(['[', ']']).trim() == section;
            continue;
        }
        if !inside || l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            if let Some(last) = out.last_mut() {
                last.1.push('\n');
                last.1.push_str(l);
            }
        } else if let Some((k, v)) = l.split_once(['=', ':']) {
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    out
}

/// pytest's options that choose what is collected and run.
fn pytest(put: &mut Put<'_>, values: &[(String, String)]) {
    for (k, v) in values {
        let words = || v.split_whitespace().map(String::from).collect::<Vec<_>>();
        // addopts is split as a shell would (`-m 'not slow'` is two words).
        let shell_words = || -> Vec<String> {
            ralph_base::shell::parse(v, 1)
                .into_iter()
                .flat_map(|s| s.words)
                .collect()
        };
        match k.as_str() {
            "addopts" => put.list(k, &narrowing(&shell_words()), Rule::Grows, k),
            "testpaths" | "python_files" | "python_classes" | "python_functions" => {
                put.list(k, &words(), Rule::Shrinks, k)
            }
            "norecursedirs" | "collect_ignore" => put.list(k, &words(), Rule::Grows, k),
            "xfail_strict" => put.put(k, (v == "true" || v == "True").to_string(), OFF_STRICT, k),
            _ => {}
        }
    }
}

/// The options of a pytest command line that run fewer tests (`-k`, `--deselect`, `-p no:`),
/// each with its value.
fn narrowing(words: &[String]) -> Vec<String> {
    let narrows = |w: &str| {
        [
            "-k",
            "-m",
            "--deselect",
            "--ignore",
            "--ignore-glob",
            "-p",
            "--continue-on-collection-errors",
        ]
        .iter()
        .any(|o| {
            w == *o
                || w.starts_with(&format!("{o}="))
                || (o.len() == 2 && w.starts_with(o) && w.len() > 2)
        })
    };
    let mut out = Vec::new();
    let mut it = words.iter().peekable();
    while let Some(w) = it.next() {
        if narrows(w) {
            let takes_value = !w.contains('=') && w.len() == 2
                || matches!(w.as_str(), "--deselect" | "--ignore" | "--ignore-glob");
            match it.next_if(|v| takes_value && !v.starts_with('-')) {
                Some(v) => out.push(format!("{w} {v}")),
                None => out.push(w.clone()),
            }
        }
    }
    out
}

fn pyproject(put: &mut Put<'_>, text: &str) {
    let Ok(v) = parse_toml(text) else { return };
    let Some(opts) = v
        .get("tool")
        .and_then(|t| t.get("pytest"))
        .and_then(|p| p.get("ini_options"))
        .and_then(toml::Value::as_table)
    else {
        return;
    };
    let values: Vec<(String, String)> = opts
        .iter()
        .map(|(k, v)| {
            let text = match v {
                toml::Value::Array(a) => a.iter().map(toml_text).collect::<Vec<_>>().join(" "),
                other => toml_text(other),
            };
            (k.clone(), text)
        })
        .collect();
    pytest(put, &values);
}

/// The recipe of each target a gate runs with `make`.
fn makefile(put: &mut Put<'_>, text: &str, scripts: &Scripts) {
    let lines: Vec<&str> = text.lines().collect();
    for target in &scripts.make {
        let head = format!("{target}:");
        let Some(at) = lines
            .iter()
            .position(|l| l.starts_with(&head) && !l.starts_with(&format!("{head}=")))
        else {
            continue;
        };
        let mut recipe = vec![lines[at][head.len()..].trim().to_string()];
        recipe.extend(
            lines[at + 1..]
                .iter()
                .take_while(|l| l.starts_with('\t') || l.trim().is_empty())
                .map(|l| l.trim().to_string()),
        );
        put.put(
            &format!("target {target}"),
            recipe.join("\n").trim().to_string(),
            Rule::Command,
            &head,
        );
    }
}

fn go_uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block = false;
    for l in text.lines().map(str::trim) {
        if block {
            if l == ")" {
                block = false;
            } else if !l.is_empty() && !l.starts_with("//") {
                out.push(l.to_string());
            }
        } else if l == "use (" {
            block = true;
        } else if let Some(d) = l.strip_prefix("use ") {
            out.push(d.trim().to_string());
        }
    }
    out
}

/// The npm scripts and make targets the gates of `phase` run by name.
pub fn scripts_run(config: &Config, phase: Phase) -> Scripts {
    let mut s = Scripts::default();
    for g in config.gates.iter().filter(|g| g.runs_in(phase)) {
        for simple in ralph_base::shell::parse(&g.command_text(), 16) {
            let (_, rest) = ralph_base::shell::unwrap(&simple.words);
            note_script(&mut s, rest);
        }
    }
    s
}

fn note_script(s: &mut Scripts, words: &[String]) {
    let word = |i: usize| words.get(i).map(String::as_str);
    let Some(program) = word(0).map(ralph_base::shell::base) else {
        return;
    };
    match (program, word(1)) {
        ("npm" | "pnpm" | "yarn" | "bun", Some("test" | "t")) => {
            s.npm.insert("test".into());
        }
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "run-script")) => {
            if let Some(a) = word(2) {
                s.npm.insert(a.to_string());
            }
        }
        ("pnpm" | "yarn", Some(n))
            if !n.starts_with('-') && !["install", "exec", "dlx", "add"].contains(&n) =>
        {
            s.npm.insert(n.to_string());
        }
        ("make" | "gmake", Some(t)) if !t.starts_with('-') => {
            s.make.insert(t.to_string());
        }
        _ => {}
    }
}

/// A TOML document as one table value.
fn parse_toml(text: &str) -> Result<toml::Value, toml::de::Error> {
    text.parse::<toml::Table>().map(toml::Value::Table)
}
