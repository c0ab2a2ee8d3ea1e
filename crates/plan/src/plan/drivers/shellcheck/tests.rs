use super::*;
use crate::plan::drivers::testing;
use crate::plan::MemFs;
use ralph_config::Config;

fn preset() -> Config {
    testing::config("presets = [\"shell\"]\n")
}

fn argv_of(j: &Job) -> String {
    testing::shown(j)
}

fn jobs(fs: &MemFs, config: &Config) -> Vec<Job> {
    testing::jobs(plan, config, fs, None)
}

#[test]
fn libraries_get_the_dialect_of_their_sourcing_scripts() {
    let fs = MemFs::new(&[
        (
            "bin/run",
            "#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../lib/util.sh\"\n",
        ),
        ("lib/util.sh", "helper() { echo hi; }\n"),
        ("lib/posix.sh", "x=1\n"),
        ("tests/t1", "#!/bin/sh\n. ./lib/posix.sh\n"),
        ("lib/declared.sh", "# shellcheck shell=dash\nx=1\n"),
        ("zsh/thing.sh", "#!/bin/zsh\nsetopt x\n"),
        ("notes.txt", "#!/bin/bash\n"),
    ]);
    let c = preset();
    let j = jobs(&fs, &c);
    let shown: Vec<String> = j.iter().map(argv_of).collect();
    assert_eq!(shown.len(), 5, "{shown:#?}");
    let sev = "shellcheck --format=gcc --severity=warning --exclude=SC1091 --external-sources --source-path=SCRIPTDIR";
    assert!(shown.contains(&format!("{sev} bin/run")), "{shown:#?}");
    assert!(
        shown.contains(&format!("{sev} --shell=bash --exclude=SC2034 lib/util.sh")),
        "{shown:#?}"
    );
    assert!(
        shown.contains(&format!("{sev} --shell=sh --exclude=SC2034 lib/posix.sh")),
        "{shown:#?}"
    );
    assert!(
        shown.contains(&format!("{sev} lib/declared.sh")),
        "sourced by no script: every warning counts: {shown:#?}"
    );
    assert!(shown.contains(&format!("{sev} tests/t1")), "{shown:#?}");
}

/// Libraries are told by the path their `source` line names: a standalone `tools/lib.sh`
/// keeps every warning though `app/run.sh` sources an `app/lib.sh` of the same name; a path
/// that names no file falls back to the name; `.bats` test files are checked as bash.
#[test]
fn a_library_is_the_file_its_source_line_names() {
    let fs = MemFs::new(&[
        (
            "app/run.sh",
            "#!/bin/bash
source \"$(dirname \"$0\")/lib.sh\"\n",
        ),
        ("app/lib.sh", "x=1\n"),
        ("tools/lib.sh", "y=1\n"),
        ("deploy.sh", "#!/bin/sh\n. \"$CONF_DIR/conf.sh\"\n"),
        ("etc/conf.sh", "z=1\n"),
        ("test/add.bats", "@test \"adds\" {\n  true\n}\n"),
    ]);
    let j = jobs(&fs, &preset());
    let shown = |f: &str| {
        j.iter()
            .map(argv_of)
            .find(|a| a.ends_with(&format!(" {f}")))
            .unwrap_or_else(|| {
                panic!(
                    "{f} is checked: {:#?}",
                    j.iter().map(argv_of).collect::<Vec<_>>()
                )
            })
    };
    assert!(shown("app/lib.sh").contains("--exclude=SC2034"), "sourced");
    assert!(
        !shown("tools/lib.sh").contains("SC2034"),
        "standalone: every warning counts"
    );
    assert!(
        shown("etc/conf.sh").contains("--shell=sh --exclude=SC2034"),
        "a path no file answers falls back to the name"
    );
    assert!(
        !shown("test/add.bats").contains("--shell="),
        "bats is declared by its extension"
    );
}

#[test]
fn severity_comes_from_fail_on() {
    let c = testing::config("presets = [\"shell\"]\n[[gate]]\nname = \"shellcheck\"\ndriver = \"shellcheck\"\nglobs = [\"*.sh\"]\nfail_on = \"style\"\n");
    let fs = MemFs::new(&[("a.sh", "#!/bin/sh\n")]);
    let j = jobs(&fs, &c);
    assert!(
        argv_of(&j[0]).contains("--severity=style"),
        "{}",
        argv_of(&j[0])
    );
}

#[test]
fn followed_sources_are_inputs() {
    let files = [
        (
            "main.sh",
            "#!/bin/bash\nsource lib/a.sh\n. ./lib/missing.sh\nsource \"$X/dyn.sh\"\n",
        ),
        (
            "lib/a.sh",
            "# shellcheck source=lib/b.sh\nsource \"$DIR/b.sh\"\n",
        ),
        ("lib/b.sh", "y=2\n"),
    ];
    let c = preset();
    let follow = jobs(&MemFs::new(&files), &c);
    let main = follow
        .iter()
        .find(|j| argv_of(j).ends_with("main.sh"))
        .unwrap();
    for p in ["lib/a.sh", "lib/b.sh", "lib/missing.sh"] {
        assert!(
            main.inputs.contains(&PathBuf::from(p)),
            "{p} in {:?}",
            main.inputs
        );
    }
}

#[test]
fn source_words_keep_substitutions_whole() {
    assert_eq!(
        first_word("\"$(dirname \"$0\")/../lib/util.sh\" arg"),
        "$(dirname $0)/../lib/util.sh"
    );
    assert_eq!(first_word("'lib/a b.sh'; x"), "lib/a b.sh");
    assert_eq!(first_word("./x.sh&&y"), "./x.sh");
}
