use super::classify::Scripts;
use super::*;

fn commands(found: &[Candidate]) -> Vec<&str> {
    found.iter().map(|c| c.command.as_str()).collect()
}

#[test]
fn a_workflows_check_steps_are_read_and_the_rest_left() {
    let yaml = "on: push\njobs:\n  lint:\n    defaults:\n      run:\n        working-directory: web\n    steps:\n      - run: npm ci\n      - run: npm run lint\n  test:\n    runs-on: ${{ matrix.os }}\n    steps:\n      - name: Tests\n        run: |\n          # the suite\n          pytest -q \\\n            tests/\n          go test ./... || true\n          ruff check . && mypy src | tee log\n      - run: cargo test --features ${{ matrix.f }}\n      - run: bats test/\n        continue-on-error: true\n      - run: make -C sub test\n        working-directory: ./pkg\n";
    let found = sources::workflow("ci.yml", yaml, &Scripts::new());
    assert_eq!(
        commands(&found),
        [
            "cd web && npm run lint",
            "pytest -q tests/",
            "ruff check .",
            "mypy src",
            "cd ./pkg && make -C sub test"
        ]
    );
    assert_eq!(found[1].source, "ci.yml, job test, step \"Tests\"");
    assert!(sources::workflow("x.yml", "jobs: [unclosed", &Scripts::new()).is_empty());
}

#[test]
fn makefile_targets_that_check_and_would_run() {
    let text = ".PHONY: lint\nCC := gcc\nlint:\n\tshellcheck *.sh\ntest: build\n\t@bats test/\ncheck:\n\t$(MAKE) lint\ninstall:\n\tcp x /usr/bin\n%.o: %.c\n\tcc $<\n";
    let none = |_: &str| false;
    let found = sources::makefile(text, &none, &Scripts::new());
    assert_eq!(commands(&found), ["make lint", "make test", "make check"]);
    // `make test` is the same gate as `bats test`: its one-line recipe.
    let bats = sources::line_commands("bats test", (None, sources::PLAIN), "ci", &Scripts::new());
    assert_eq!(found[1].identity, bats[0].identity);
    // `test` is a folder and not phony: make would call it up to date.
    let folder = |name: &str| name == "test" || name == "lint";
    assert_eq!(
        commands(&sources::makefile(text, &folder, &Scripts::new())),
        ["make lint", "make check"]
    );
}

#[test]
fn pre_commit_local_hooks_over_the_whole_project_only() {
    let yaml = "repos:\n  - repo: https://github.com/x/y\n    rev: v1\n    hooks: [{id: ruff}]\n  - repo: local\n    hooks:\n      - id: mypy\n        name: mypy\n        entry: mypy\n        args: [src, --strict]\n        language: system\n        pass_filenames: false\n      - id: eslint\n        entry: eslint\n        language: system\n      - id: tests\n        entry: python -m pytest\n        language: python\n        pass_filenames: false\n";
    let found = sources::pre_commit_local(".pre-commit-config.yaml", yaml, &Scripts::new());
    assert_eq!(commands(&found), ["mypy src --strict"]);
}

#[test]
fn proposals_are_once_each_and_not_what_a_preset_runs() {
    let sources = Sources {
        workflows: vec![(
            "ci.yml".into(),
            "jobs:\n  t:\n    steps:\n      - run: pytest\n      - run: npm run lint\n      - run: bats test/\n".into(),
        )],
        makefile: Some(".PHONY: test\ntest:\n\tbats test\n".into()),
        entries: vec!["test".into()],
        package_json: Some(r#"{"scripts":{"lint":"eslint .","typecheck":"tsc"}}"#.into()),
        manager: "pnpm",
        ..Sources::default()
    };
    let found = propose(&sources, &["pytest"]);
    let proposed: Vec<(&str, &str)> = found
        .proposals
        .iter()
        .map(|p| (p.name.as_str(), p.command.as_str()))
        .collect();
    assert_eq!(
        proposed,
        [
            ("npm-lint", "npm run lint"),
            ("bats", "bats test/"),
            ("npm-typecheck", "pnpm run typecheck")
        ]
    );
    assert_eq!(found.covered, [("pytest".to_string(), "pytest")]);
}

#[test]
fn scripts_the_test_script_runs_are_the_npm_test_presets() {
    let sources = Sources {
        workflows: vec![(
            "ci.yml".into(),
            "jobs:\n  t:\n    steps:\n      - run: npm run unit\n      - run: npm run lint\n".into(),
        )],
        package_json: Some(
            r#"{"scripts":{"test":"npm run unit && npm run lint","unit":"bats test/","lint":"npm run lint:md","lint:md":"markdownlint .","typecheck":"tsc"}}"#.into(),
        ),
        manager: "npm",
        ..Sources::default()
    };
    let found = propose(&sources, &["npm-test"]);
    let proposed: Vec<&str> = found.proposals.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(proposed, ["npm-typecheck"]);
    let covered: Vec<&str> = found.covered.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        covered,
        [
            "npm run unit",
            "npm run lint",
            "npm run lint:md",
            "npm run test"
        ]
    );
    // Without the preset they are the project's own checks.
    assert_eq!(propose(&sources, &[]).proposals.len(), 5);
}

#[test]
fn a_proposal_that_failed_is_written_commented_out_and_a_fast_check_after_edits() {
    let p = |name: &str, kind| Proposal {
        name: name.into(),
        command: format!("run \"{name}\""),
        kind,
        source: "ci.yml".into(),
    };
    let text = render(
        &[
            (p("lint", Kind::Check), Verdict::Passed(200)),
            (p("slow-lint", Kind::Check), Verdict::Passed(60_000)),
            (
                p("tests", Kind::Test),
                Verdict::Failed("it fails on this tree as it is (exit 1)".into()),
            ),
        ],
        &[".venv/bin".to_string()],
    );
    let parsed: toml::Table = toml::from_str(&text).expect("valid TOML");
    let gates = parsed["gate"].as_array().unwrap();
    assert_eq!(gates.len(), 2, "{text}");
    assert_eq!(gates[0]["run"].as_str(), Some("run \"lint\""));
    assert_eq!(gates[0]["phases"].as_array().unwrap().len(), 3);
    assert_eq!(gates[1]["phases"].as_array().unwrap().len(), 2);
    assert_eq!(
        gates[1]["path"].as_array().unwrap()[0].as_str(),
        Some(".venv/bin")
    );
    assert!(
        text.contains("# Left out when init ran it: it fails on this tree as it is (exit 1)."),
        "{text}"
    );
    assert!(text.contains("# name = \"tests\""), "{text}");
}

/// Commands that would check nothing or change the tree are never proposed, however they
/// are spelled: a failure swallowed in a script's body or a make recipe (`|| true`, make's
/// `-`), a fixer behind a checking name, a step whose folder or shell is unknown.
#[test]
fn what_checks_nothing_or_writes_is_not_proposed() {
    let scripts = sources::scripts_of(
        r#"{"scripts":{"test:ci":"jest || true","lint":"eslint . --fix","check":"npm run lint","typecheck":"tsc --noEmit; exit 0","types":"tsc --noEmit","test:unit":"jest | tee out.log","lint:all":"tsc\necho done","vet":"set -e; tsc; eslint .","clear-test":"jest --clearCache","test:watch2":"vitest --watch","test:snap":"jest -u","trace":"tsc --generateTrace trace"}}"#,
    );
    let found: Vec<String> = sources::package_scripts(&scripts, "npm")
        .into_iter()
        .map(|c| c.command)
        .collect();
    assert_eq!(found, ["npm run types", "npm run vet"]);
    let make = "test:\n\t-pytest\nlint:\n\truff check --fix .\ncheck:\n\tmypy src || exit 0\nvet:\n\tgo vet ./...\n";
    let none = |_: &str| false;
    assert_eq!(
        commands(&sources::makefile(make, &none, &Scripts::new())),
        ["make vet"]
    );
    let yaml = "jobs:\n  t:\n    steps:\n      - run: npm run lint\n      - run: pytest\n        working-directory: ${{ github.workspace }}/sub\n      - run: Invoke-Pester\n        shell: pwsh\n      - run: mypy .\n        shell: python {0}\n      - run: ruff check .\n        shell: bash\n      - run: mypy . | tee log\n        shell: sh\n      - run: tsc; eslint .\n";
    assert_eq!(
        commands(&sources::workflow("ci.yml", yaml, &scripts)),
        ["ruff check .", "tsc", "eslint ."]
    );
}

#[test]
fn python_checkers_configured_without_a_command() {
    let none = |_: &str| false;
    let pyproject = "[project]\nname = \"x\"\n[tool.ruff]\nline-length = 100\n";
    assert_eq!(
        commands(&sources::python_configs(Some(pyproject), &none)),
        ["ruff check ."]
    );
    let file = |name: &str| name == "pyrightconfig.json";
    assert_eq!(commands(&sources::python_configs(None, &file)), ["pyright"]);
    assert!(sources::python_configs(Some("not toml [["), &none).is_empty());
}

/// A preset's checker with options that pick what it checks (features, a target, more kinds
/// of tests) is the project's own check, not one the preset runs (semver's CI runs `cargo
/// check --no-default-features`, which `init` said the rust preset ran).
#[test]
fn a_checker_with_options_that_check_more_is_proposed_not_covered() {
    let sources = Sources {
        workflows: vec![(
            ".github/workflows/ci.yml".into(),
            "jobs:\n  t:\n    steps:\n      - run: cargo test --locked\n      - run: cargo check --no-default-features\n      - run: cargo check --features serde\n".into(),
        )],
        ..Sources::default()
    };
    let found = propose(&sources, &["rust"]);
    let covered: Vec<&str> = found.covered.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(covered, ["cargo test --locked"]);
    let proposed: Vec<&str> = found.proposals.iter().map(|p| p.command.as_str()).collect();
    assert_eq!(
        proposed,
        [
            "cargo check --no-default-features",
            "cargo check --features serde"
        ]
    );
}
