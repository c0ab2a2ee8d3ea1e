//! Every output format, whole, on one fixed set of results ([`super::sample`]): the human
//! report, JSON, JUnit, GitHub's workflow commands and job summary. A change to any byte of
//! them shows as a snapshot diff (`src/report/snapshots/`); accept an intended one with
//! `INSTA_UPDATE=always cargo test -p ralph-runner snapshots` (or `cargo insta review`).

use super::sample::results;
use super::{github, human, json, junit, RunInfo};
use std::time::Duration;

fn info(ci: bool) -> RunInfo {
    RunInfo {
        ci,
        output_limit: 4000,
        duration: Duration::from_millis(2500),
        config: Some("/p/ralph.toml".into()),
        presets: vec![("python".into(), Some("3 .py files".into()))],
    }
}

const PREAMBLE: &str =
    "ralph-gate: /p/ralph.toml\nralph-gate: 17 files with 4 gates for phase check\n";

#[test]
fn human() {
    let r = results();
    insta::assert_snapshot!(human::render(
        PREAMBLE,
        &r,
        &[0, 1, 2, 3],
        false,
        &info(false)
    ));
}

#[test]
fn human_quiet_under_ci() {
    let r = results();
    insta::assert_snapshot!(human::render(
        PREAMBLE,
        &r,
        &[0, 1, 2, 3],
        true,
        &info(true)
    ));
}

#[test]
fn json() {
    insta::assert_snapshot!(json::render(&results(), &info(false)));
}

#[test]
fn junit() {
    insta::assert_snapshot!(junit::render(&results(), &info(false)));
}

#[test]
fn github() {
    let r = results();
    let human = human::render(PREAMBLE, &r, &[0, 1, 2, 3], false, &info(false));
    insta::assert_snapshot!(github::render(&r, &info(false), &human));
}

#[test]
fn github_job_summary() {
    insta::assert_snapshot!(github::summary(&results(), &info(true)));
}
