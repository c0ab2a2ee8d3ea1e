use super::*;

fn load(text: &str) -> Result<ConfigFile, ConfigError> {
    parse(Path::new("ralph.toml"), text.to_string())
}

fn err(text: &str) -> String {
    load(text)
        .expect_err("config should be rejected")
        .to_string()
}

fn resolved(text: &str, files: &[&str]) -> Config {
    let file = load(text).unwrap();
    let listing: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    resolve(PathBuf::from("/p"), Some(file), &mut || listing.clone()).unwrap()
}

const GATE: &str =
    "[[gate]]\nname = \"py\"\nglobs = [\"*.py\"]\nrun = \"python3 -m py_compile {files}\"\n";

#[test]
fn minimal_gate_gets_defaults() {
    let c = resolved(GATE, &[]);
    let g = &c.gates[0];
    assert_eq!(g.name, "py");
    assert_eq!(g.scope, Scope::Batch);
    assert_eq!(g.phases, Phase::ALL.to_vec());
    assert_eq!(g.timeout, DEFAULT_TIMEOUT);
    assert_eq!(
        g.origin,
        Origin::File {
            path: "ralph.toml".into(),
            line: 2
        }
    );
    assert!(g.matches(Path::new("a/b.py")));
    assert!(c.presets.is_empty(), "no presets key means no presets");
}

#[test]
fn defaults_apply_to_gates_without_their_own() {
    let c = resolved(
        &format!("[defaults]\ntimeout = \"7s\"\njobs = 3\noutput_limit = 900\n{GATE}[[gate]]\nname = \"b\"\nglobs = [\"*\"]\nrun = \"true\"\ntimeout = \"1m\"\n"),
        &[],
    );
    assert_eq!(c.settings.jobs, 3);
    assert_eq!(c.settings.output_limit, 900);
    assert_eq!(c.gates[0].timeout, Duration::from_secs(7));
    assert_eq!(c.gates[1].timeout, Duration::from_secs(60));
}

#[test]
fn invalid_toml_names_file_and_line() {
    let e = err("[defaults]\njobs = = 2\n");
    assert!(e.starts_with("ralph.toml:2:"), "{e}");
}

#[test]
fn unknown_key_names_its_path() {
    let e = err(&format!("{GATE}globz = [\"x\"]\n"));
    assert!(e.starts_with("ralph.toml:5:"), "{e}");
    assert!(e.contains("gate[0].globz"), "{e}");
    assert!(e.contains("unknown field"), "{e}");
}

#[test]
fn bad_glob_names_line_and_glob() {
    let e = err("[[gate]]\nname = \"x\"\nglobs = [\"src/[a.py\"]\nrun = \"true {files}\"\n");
    assert!(e.starts_with("ralph.toml:3:"), "{e}");
    assert!(e.contains("gate[0].globs"), "{e}");
    assert!(e.contains("src/[a.py"), "{e}");
}

#[test]
fn bad_duration_names_line_and_key() {
    let e = err(&format!("{GATE}timeout = \"30 parsecs\"\n"));
    assert!(e.starts_with("ralph.toml:5:"), "{e}");
    assert!(e.contains("gate[0].timeout"), "{e}");
    assert!(e.contains("invalid duration"), "{e}");
    let e = err("[defaults]\ntimeout = 30\n");
    assert!(
        e.contains("defaults.timeout") && e.contains("\"30s\""),
        "{e}"
    );
}

#[test]
fn unknown_preset_is_named_with_the_known_ones() {
    let e = err("presets = [\"rust\", \"cobol\"]\n");
    assert!(e.starts_with("ralph.toml:1:"), "{e}");
    assert!(e.contains("`cobol`") && e.contains("python"), "{e}");
}

#[test]
fn unknown_placeholder_names_line() {
    let e = err("[[gate]]\nname = \"x\"\nglobs = [\"*\"]\nrun = \"lint {staged_files}\"\n");
    assert!(e.starts_with("ralph.toml:4:"), "{e}");
    assert!(e.contains("{staged_files}"), "{e}");
}

#[test]
fn scope_and_placeholder_must_agree() {
    let e = err("[[gate]]\nname = \"x\"\nglobs = [\"*\"]\nrun = \"lint {file}\"\n");
    assert!(e.contains("scope = \"batch\""), "{e}");
    let e = err("[[gate]]\nname = \"x\"\nglobs = [\"*\"]\nrun = \"lint\"\nscope = \"file\"\n");
    assert!(e.contains("never uses {file}"), "{e}");
}

#[test]
fn duplicate_gate_names_are_rejected_at_the_second() {
    let e = err(&format!("{GATE}{GATE}"));
    assert!(e.starts_with("ralph.toml:6:"), "{e}");
    assert!(e.contains("used twice"), "{e}");
}

#[test]
fn empty_globs_and_phases_are_rejected() {
    assert!(err("[[gate]]\nname = \"x\"\nglobs = []\nrun = \"true\"\n").contains("no globs"));
    assert!(err(&format!("{GATE}phases = []\n")).contains("empty phases"));
    assert!(err(&format!("{GATE}phases = [\"commit\"]\n")).contains("gate[0].phases"));
}

#[test]
fn small_output_limit_is_rejected() {
    assert!(err("[defaults]\noutput_limit = 10\n").contains("output_limit"));
}

#[test]
fn named_presets_are_merged_and_a_file_gate_overrides_by_name() {
    let c = resolved(
        "presets = [\"python\", \"shell\"]\n[[gate]]\nname = \"shellcheck\"\nglobs = [\"*.sh\"]\nrun = \"shellcheck -S error {files}\"\n",
        &[],
    );
    let names: Vec<&str> = c.gates.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["python-compile", "shellcheck"]);
    assert_eq!(c.gates[0].origin, Origin::Preset("python"));
    assert!(matches!(c.gates[1].origin, Origin::File { .. }));
    assert!(c.gates[1].command_text().contains("-S error"));
}

#[test]
fn auto_preset_detects_from_the_listing() {
    let c = resolved("presets = [\"auto\"]\n", &["web/app.ts", "tools/x.py"]);
    let names: Vec<&str> = c.presets.iter().map(|p| p.name).collect();
    assert_eq!(names, ["typescript", "python"]);
    assert_eq!(c.presets[0].detected_by.as_deref(), Some("web/app.ts"));
}

#[test]
fn no_config_file_means_detected_presets() {
    let listing = vec![PathBuf::from("Cargo.toml"), PathBuf::from("src/lib.rs")];
    let c = resolve(PathBuf::from("/p"), None, &mut || listing.clone()).unwrap();
    let names: Vec<&str> = c.gates.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["cargo-check", "cargo-test"]);
    assert!(c.gates[0].runs_in(Phase::Edit) && !c.gates[0].runs_in(Phase::Check));
    assert!(c.gates[1].runs_in(Phase::Check) && !c.gates[1].runs_in(Phase::Edit));
}

#[test]
fn example_config_in_the_repo_is_valid() {
    let text = include_str!("../../../ralph.toml.example");
    let file =
        parse(Path::new("ralph.toml.example"), text.to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!file.raw.gate.is_empty());
    // Every option is shown (and so documented) in the example.
    for key in [
        "presets",
        "timeout",
        "jobs",
        "output_limit",
        "cache_limit_mb",
        "edit_budget",
        "stop_budget",
        "gate_every_stop",
        "stuck_after",
        "goals",
        "name",
        "globs",
        "exclude",
        "run",
        "driver",
        "scope",
        "serial",
        "shebangs",
        "root_markers",
        "roots_only",
        "requires",
        "path",
        "install",
        "phases",
        "env",
        "optional",
        "cache",
        "inputs",
        "fail_on",
        "require_files",
        "on_weakening",
    ] {
        assert!(
            text.contains(&format!("\n{key} = ")),
            "ralph.toml.example does not show `{key}`"
        );
    }
}

/// Issue 39, item 8: copied as it is, the example must not stall every run on a remote
/// cache nobody runs, nor fail on findings stricter than a project's own CI.
#[test]
fn the_example_config_is_safe_to_copy() {
    let text = include_str!("../../../ralph.toml.example");
    let file = parse(Path::new("ralph.toml.example"), text.to_string()).unwrap();
    let c = resolve(PathBuf::from("/p"), Some(file), &mut Vec::new).unwrap();
    assert_eq!(c.settings.remote_cache, None);
    for g in &c.gates {
        let severity = g
            .pinned_fields()
            .get("severity")
            .cloned()
            .unwrap_or_default();
        assert!(
            !severity.contains("Info") && !severity.contains("Style"),
            "{}: fails at {severity}",
            g.name
        );
    }
}

#[test]
fn drivers_fix_the_scope_and_own_their_command() {
    let c = resolved(
        "[[gate]]\nname = \"tsc\"\nglobs = [\"*.ts\"]\ndriver = \"typescript\"\n",
        &[],
    );
    assert_eq!(c.gates[0].scope, Scope::Project);
    assert!(c.gates[0].run.is_none());
    let e = err(
        "[[gate]]\nname = \"tsc\"\nglobs = [\"*.ts\"]\ndriver = \"typescript\"\nrun = \"tsc\"\n",
    );
    assert!(
        e.starts_with("ralph.toml:5:") && e.contains("builds its own command"),
        "{e}"
    );
    let e = err("[[gate]]\nname = \"c\"\nglobs = [\"*.rs\"]\ndriver = \"cargo\"\n");
    assert!(e.contains("has no `run` command"), "{e}");
    let e = err(
        "[[gate]]\nname = \"s\"\nglobs = [\"*.sh\"]\ndriver = \"shellcheck\"\nscope = \"batch\"\n",
    );
    assert!(
        e.starts_with("ralph.toml:5:") && e.contains("remove `scope`"),
        "{e}"
    );
    let e = err("[[gate]]\nname = \"s\"\nglobs = [\"*.sh\"]\ndriver = \"shellcheckk\"\n");
    assert!(
        e.starts_with("ralph.toml:4:") && e.contains("gate[0].driver"),
        "{e}"
    );
}

#[test]
fn fail_on_takes_patterns_or_a_severity_where_one_is_understood() {
    let c = resolved(
        "[[gate]]\nname = \"s\"\nglobs = [\"*.sh\"]\ndriver = \"shellcheck\"\nfail_on = \"error\"\n",
        &[],
    );
    assert_eq!(c.gates[0].severity, Some(Severity::Error));
    let e = err(&format!("{GATE}fail_on = \"warning\"\n"));
    assert!(
        e.starts_with("ralph.toml:5:") && e.contains("only a driver that reports severities"),
        "{e}"
    );
    let e = err(
        "[[gate]]\nname = \"s\"\nglobs = [\"*.sh\"]\ndriver = \"shellcheck\"\nfail_on = \"loud\"\n",
    );
    assert!(e.contains("unknown severity `loud`"), "{e}");
    let c = resolved(&format!("{GATE}fail_on = ['^0 tests$']\n"), &[]);
    assert_eq!(c.gates[0].fail_on.len(), 1);
}

#[test]
fn inputs_and_shebangs_are_checked() {
    let e = err(&format!("{GATE}inputs = [\"schema/[x\"]\n"));
    assert!(
        e.starts_with("ralph.toml:5:") && e.contains("gate[0].inputs"),
        "{e}"
    );
    let e = err(&format!("{GATE}shebangs = [\"/bin/bash\"]\n"));
    assert!(e.contains("invalid shebangs entry `/bin/bash`"), "{e}");
    let c = resolved(&format!("{GATE}inputs = [\"schema/*.json\"]\n"), &[]);
    assert!(c.gates[0].is_input(Path::new("schema/a.json")));
    assert!(!c.gates[0].is_input(Path::new("other/a.json")));
    assert!(c.gates[0].needs_listing());
}

#[test]
fn shebang_names_allow_version_suffixes_only() {
    let names = vec!["python".to_string(), "sh".to_string()];
    assert!(shebang_matches(&names, "/usr/bin/python3.11"));
    assert!(shebang_matches(&names, "sh"));
    assert!(!shebang_matches(&names, "/bin/shellcheck"));
    assert!(!shebang_matches(&names, "bash"));
}

#[test]
fn a_gate_named_like_a_presets_without_globs_changes_only_the_fields_it_gives() {
    let text =
        "presets = [\"typescript\"]\n[[gate]]\nname = \"tsc\"\nexclude = [\"examples/**\"]\n";
    let c = resolved(text, &["a.ts"]);
    let preset = ralph_config_preset_tsc();
    let tsc = c.gates.iter().find(|g| g.name == "tsc").expect("tsc");
    assert_eq!(tsc.exclude, ["examples/**"]);
    assert_eq!(tsc.globs, preset.globs);
    assert_eq!(tsc.driver, preset.driver);
    assert_eq!(tsc.timeout, preset.timeout);
    assert!(
        matches!(tsc.origin, Origin::File { .. }),
        "{:?}",
        tsc.origin
    );
    // Only the fields given change: the pin names exclude alone.
    let (a, b) = (preset.pinned_fields(), tsc.pinned_fields());
    let differ: Vec<&String> = a.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
    assert_eq!(differ, ["exclude"]);
    // A gate of no preset still needs its globs, and says so.
    let e = err("[[gate]]\nname = \"mine\"\nrun = \"true\"\n");
    assert!(e.contains("gate `mine` has no `globs`"), "{e}");
}

fn ralph_config_preset_tsc() -> Gate {
    preset_gate("tsc", DEFAULT_TIMEOUT).expect("the typescript preset's gate")
}

#[test]
fn baseline_marks_the_gates_it_names_and_pins_them() {
    let c = resolved(&format!("baseline = [\"py\"]\n{GATE}"), &[]);
    assert!(c.gates[0].baseline);
    assert_eq!(
        c.gates[0]
            .pinned_fields()
            .get("baseline")
            .map(String::as_str),
        Some("true")
    );
    let plain = resolved(GATE, &[]);
    assert!(!plain.gates[0].pinned_fields().contains_key("baseline"));
}
