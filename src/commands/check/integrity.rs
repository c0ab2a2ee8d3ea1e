//! The `integrity` result of `check --base`: the surface comparison as one more gate result,
//! so that every format (human, JSON, JUnit, GitHub annotations) reports it as it reports
//! a gate, each weakening a `file:line: message` line.

use ralph_base::env::Environment;
use ralph_base::text::plural;
use ralph_config::{Config, Phase};
use ralph_plan::project::Project;
use ralph_runner::runner::{GateResult, GateStatus};
use ralph_surface::differential;
use ralph_surface::pin;
use ralph_surface::surface::{self, base::Against, Finding};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Its place in the report: after every gate.
pub const INDEX: usize = usize::MAX;
pub const NAME: &str = "integrity";

/// The comparison with the base, the gates' changes included (by the pin's rules: a gate
/// added is stronger, anything else that moves a stop gate is weaker).
pub fn compare(mut a: Against, now: &Config, phase: Phase, files: &[PathBuf]) -> Against {
    let Some(base) = &a.config else { return a };
    let (was, is) = (pin::of_phase(base, phase), pin::of_phase(now, phase));
    let gone_with_its_files = |name: &str| pin::preset_gone_with_its_files(&was, name, now, files);
    let file = now
        .file
        .as_deref()
        .map(|p| surface::text(p.strip_prefix(&now.root).unwrap_or(p)))
        .unwrap_or_default();
    for c in written_out(pin::compare(&was, &is), (now, &is), phase, files) {
        let finding = Finding {
            file: file.clone(),
            line: 0,
            what: c.to_string(),
        };
        match c {
            pin::Change::Added(_) => a.comparison.stronger.push(finding),
            pin::Change::Version { .. } => {}
            pin::Change::Removed(g) if gone_with_its_files(&g) => a.notes.push(format!(
                "stop gate `{g}` of the presets is gone with the last file it checked"
            )),
            _ => a.comparison.weaker.push(finding),
        }
    }
    a
}

/// `changes` with a move from the presets to a config file judged against the presets this
/// tree would pick ([`pin::judge_written_out`]): `init`'s ralph.toml commits cleanly.
fn written_out(
    changes: Vec<pin::Change>,
    (now, is): (&Config, &pin::Pin),
    phase: Phase,
    files: &[PathBuf],
) -> Vec<pin::Change> {
    if !changes
        .iter()
        .any(|c| matches!(c, pin::Change::Source { .. }))
    {
        return changes;
    }
    match ralph_config::resolve(now.root.clone(), None, &mut || files.to_vec()) {
        Ok(presets) => pin::judge_written_out(changes, is, &pin::of_phase(&presets, phase)),
        Err(_) => changes,
    }
}

/// Judges by effect what changed in the checks since the base: the gates run once more on
/// this tree with every file of the checks put back as the base had it (a differential
/// run). The weakenings the parsers found in those files count only when that run fails
/// where this one passed; then the run's failures are named too. Only a run of every gate on
/// every file (`whole`) is compared, and only through the gates that pass: a failing one
/// fails the check anyway (its tests, what it read and a weakening only it could show are
/// judged again on the run that passes it), and a gate failing as at the base (gofmt of a
/// newer Go) must not leave the others judged by the parsers alone. First, a `baseline`
/// gate failing only as at the base passes.
pub fn by_effect(
    mut a: Against,
    (project, whole): (&Project, bool),
    env: &Environment,
    phase: Phase,
    results: &mut [GateResult],
) -> Against {
    let asked = ralph_surface::baseline::asked(&project.config, env.strict(), results);
    let base = asked
        .then(|| Base::of(&a, project.root(), results))
        .flatten();
    let taken = base
        .as_ref()
        .and_then(|b| excuse_old_failures(&a.rev, b, project, env, phase, results));
    if whole {
        if let Some(mut b) = base.or_else(|| Base::of(&a, project.root(), results)) {
            judge_deferred(&mut a, project, env, phase, (results, &mut b, taken));
        }
    }
    a
}

/// The base's tree, and this tree described against it (the checks to put back).
struct Base {
    start: String,
    prepared: differential::Prepared,
}

impl Base {
    /// `results`: this tree's runs, whose runners say which files are their tests'.
    fn of(a: &Against, root: &std::path::Path, results: &[GateResult]) -> Option<Self> {
        let rev = format!("{}^{{tree}}", a.rev);
        let out = ralph_base::snapshot::run_raw(root, &["rev-parse", &rev]).ok()?;
        let start = String::from_utf8_lossy(out.trim_ascii()).into_owned();
        let surfaces = (Some(&a.surfaces.0), Some(&a.surfaces.1));
        let mut prepared = differential::prepare(root, (&start, None), surfaces).ok()?;
        let said = differential::said::by_runners(root, results);
        prepared.also_checks(&said).ok()?;
        Some(Self { start, prepared })
    }
}

/// `check --base`: each failing gate the config lists in `baseline` that fails only as it
/// failed at the base, in files the change did not touch, passes, saying so. The base's
/// runs it took are returned, for the differential comparison to use rather than take again.
fn excuse_old_failures(
    rev: &str,
    base: &Base,
    project: &Project,
    env: &Environment,
    phase: Phase,
    results: &mut [GateResult],
) -> Option<differential::StartRuns> {
    let far = std::time::Instant::now() + std::time::Duration::from_secs(24 * 3600);
    // Not known: the failures stay failures.
    let runs = differential::start_runs(project, env, (phase, far), &base.prepared, &base.start);
    let (Ok(runs), Ok(changed)) = (runs, base.prepared.changed_files(&base.start)) else {
        return None;
    };
    let then = format!("at {rev}");
    let failures = &runs.failures;
    let config = &project.config;
    for note in
        ralph_surface::baseline::excuse(config, env.strict(), (failures, &changed, &then), results)
    {
        super::note(&note);
    }
    Some(runs)
}

fn judge_deferred(
    a: &mut Against,
    project: &Project,
    env: &Environment,
    phase: Phase,
    (results, base, taken): (&[GateResult], &mut Base, Option<differential::StartRuns>),
) {
    let (start, prepared) = (&base.start, &mut base.prepared);
    push_left_reach(a, prepared);
    let far = std::time::Instant::now() + std::time::Duration::from_secs(24 * 3600);
    let now = passing(differential::ran_or_silent(results), results, env.strict());
    let at_base = match taken.map_or_else(
        || base_runs(project, env, (phase, far), prepared, (start, &now, results)),
        Ok,
    ) {
        Ok(at_base) => at_base,
        Err(why) => {
            a.comparison
                .weaker
                .push(unconfirmed(&a.rev, &why.to_string()));
            return;
        }
    };
    // A file the base's tests read and the change deleted is part of the checks too.
    if let Err(why) = prepared.also_checks(&differential::said::roles(&at_base.said)) {
        return a
            .comparison
            .weaker
            .push(unconfirmed(&a.rev, &why.to_string()));
    }
    let prepared = &*prepared;
    let not_run = differential::not_run(&at_base.tests, &now);
    let reached = passing(differential::reached(results), results, env.strict());
    let unreached = prepared.out_of_reach(&at_base.read, &reached);
    if !prepared.changed() {
        push_unreached(a, &unreached);
        push_not_run(a, &not_run, None);
        return;
    }
    let put_back: BTreeSet<&str> = prepared.put_back.iter().map(|p| p.shown.as_str()).collect();
    let deferred = defer(a, &put_back, project, env, results);
    let names: Vec<&str> = put_back.into_iter().collect();
    match differential::run(project, env, (phase, far), prepared, results) {
        differential::Outcome::Honest { ran: then, read } => {
            push_unreached(a, &differential::still_unreached(&unreached, &read));
            push_not_run(a, &differential::not_run(&not_run, &then), Some(&names));
        }
        differential::Outcome::LoadBearing(failing) => {
            let starts = (&at_base.tests, &at_base.failed);
            let both = (prepared, results);
            if let Some(gone) =
                differential::gone_with_their_code(project, env, (phase, far), both, starts)
            {
                push_unreached(a, &differential::still_unreached(&unreached, &gone.read));
                return gone_with_their_code(a, &gone, (&not_run, &names));
            }
            push_unreached(a, &unreached);
            let kept = differential::renamed_away(&not_run, &at_base.tests, &now);
            let subtests = differential::subtests(results);
            let kept = differential::folded(&kept, &at_base.subtests, &subtests);
            let base = (&at_base, &kept);
            let with = changed_with_the_code(
                project,
                env,
                (phase, far),
                (prepared, results),
                base,
                &failing,
            );
            judge_load_bearing(a, with, (&failing, deferred), &names);
        }
        differential::Outcome::Unavailable(why) => {
            push_unreached(a, &unreached);
            a.comparison.weaker.extend(deferred);
            a.comparison.weaker.push(unconfirmed(&a.rev, &why));
        }
    }
}

/// Takes from `a` the parsers' findings in files a differential run puts back (`put_back`),
/// which wait for its verdict. Not when a failing gate that a marker or an option could
/// silence (tests, a type checker, a linter) is among `results`: no run that passes judges
/// it, so the findings stand as found.
fn defer(
    a: &mut Against,
    put_back: &BTreeSet<&str>,
    project: &Project,
    env: &Environment,
    results: &[GateResult],
) -> Vec<Finding> {
    let failed = |name: &str| differential::fails(results, name, env.strict());
    let failing = project.config.gates.iter().filter(|g| failed(&g.name));
    let unjudged = ralph_surface::surface::Reads::of_gates(failing).heeds_markers();
    let (deferred, kept): (Vec<Finding>, Vec<Finding>) = std::mem::take(&mut a.comparison.weaker)
        .into_iter()
        .partition(|f| !unjudged && put_back.contains(f.file.as_str()));
    a.comparison.weaker = kept;
    deferred
}

/// Pure: `tests` (by gate) of the gates of `results` that pass: what a failing gate ran or
/// read is no measure of what the change took away, and its failure stands anyway.
fn passing(
    mut tests: differential::Tests,
    results: &[GateResult],
    strict: bool,
) -> differential::Tests {
    tests.retain(|gate, _| !differential::fails(results, gate, strict));
    tests
}

/// One finding per file of checked code moved where no gate reads it: named at its old
/// place, which is never put back (the differential run cannot undo it).
fn push_left_reach(a: &mut Against, prepared: &differential::Prepared) {
    for (from, to) in &prepared.left_reach {
        a.comparison.weaker.push(Finding {
            file: from.clone(),
            line: 0,
            what: format!("checked code moved to {to}, where no gate reads it"),
        });
    }
}

/// One finding per file of checked code the tests read at the base, still here, that they
/// no longer read (see [`differential::Prepared::out_of_reach`]).
fn push_unreached(a: &mut Against, unreached: &[differential::Unreached]) {
    for u in unreached {
        a.comparison.weaker.push(Finding {
            file: u.file.clone(),
            line: 0,
            what: format!(
                "the tests of gate `{}` read this code at {} and no longer do: something else answers for it where they look, or it is dead (delete it)",
                u.gate, a.rev
            ),
        });
    }
}

/// Test files deleted with the code they tested (see [`differential::Gone`]): a note, and
/// the tests that ran at the base and still did not run with the rest put back.
fn gone_with_their_code(
    a: &mut Against,
    gone: &differential::Gone,
    (not_run, names): (&differential::Tests, &[&str]),
) {
    a.notes.push(format!(
        "deleted with the code they tested: {} (their tests passed at {}; put back on this code they fail only where what they import is gone, and the rest of the checks as at {1} pass)",
        gone.files.join(", "),
        a.rev
    ));
    push_not_run(a, &gone.still_not_run(not_run), Some(names));
}

/// Whether the differential run's `failing` gates fail only because the behaviour changed
/// with its tests (see [`differential::changed_with_the_code`]): the cheap conditions first,
/// then, when anything but tests differs from the base, a second run with only that put back.
fn changed_with_the_code(
    project: &Project,
    env: &Environment,
    phase: (Phase, std::time::Instant),
    (prepared, results): (&differential::Prepared, &[GateResult]),
    (at_base, not_run): (&differential::StartRuns, &differential::Tests),
    failing: &[(String, String)],
) -> differential::WithTheCode {
    let gates: Vec<&str> = failing.iter().map(|(g, _)| g.as_str()).collect();
    let with = differential::changed_with_the_code(&gates, at_base, not_run);
    // What the tests assert (the tests, code only they use, the data they read: a feature's
    // cases added or moved with it, a harness's table of them) changes with the behaviour;
    // how they are run (configs, plugins, runners' files) must not. An expectation edited
    // to what broken code returns looks the same in a case file as in a test file, and a
    // reviewer reads both.
    let mut said = differential::said::of_runs(project.root(), results);
    for (file, part) in &at_base.said {
        said.entry(file.clone()).or_insert(*part);
    }
    let rest = |p: &differential::PutBack| !prepared.tests_own(p, &said);
    if with == differential::WithTheCode::No
        || (prepared.unlent.is_empty() && !prepared.put_back.iter().any(&rest))
    {
        return with;
    }
    let then = differential::run_putting_back(project, env, phase, (prepared, &rest), results);
    match then {
        differential::Outcome::Honest { .. } => with,
        _ => differential::WithTheCode::No,
    }
}

/// The verdict on the gates `failing` only with the checks put back: a change of behaviour
/// ([`changed_with_the_code`]) is a note each (beside the parsers' findings in the tests,
/// when a gate that runs no test failed too); anything else, the findings `deferred` to
/// this run and a finding per gate with its failure.
fn judge_load_bearing(
    a: &mut Against,
    with: differential::WithTheCode,
    (failing, deferred): (&[(String, String)], Vec<Finding>),
    names: &[&str],
) {
    if with == differential::WithTheCode::No {
        a.comparison.weaker.extend(deferred);
        return push_load_bearing(a, failing, names);
    }
    if with == differential::WithTheCode::AndTheirCheckers {
        a.comparison.weaker.extend(deferred);
    }
    for (gate, _) in failing {
        a.notes.push(format!(
            "changed with the code: gate `{gate}`: the tests as at {} fail on this code and the tests changed with it (with code only they use and the data they read) pass, the rest of the checks as at {0} pass, and every test still runs (or one took its place in its file, or its cases run in another's table): read as a change of behaviour, not a weakening (a reviewer reads the tests)",
            a.rev
        ));
    }
}

/// One finding per gate that fails with the base's checks put back (`names`).
fn push_load_bearing(a: &mut Against, failing: &[(String, String)], names: &[&str]) {
    for (gate, output) in failing {
        let last = differential::failure_tail(output, 8);
        a.comparison.weaker.push(Finding {
            file: String::new(),
            line: 0,
            what: format!(
                "gate `{gate}` passes only with the checks changed: with {} as at {}, it fails:\n{}",
                ralph_base::text::listed(names, 20),
                a.rev,
                last
            ),
        });
    }
}

/// The base's runs, when they matter: only where a runner that names its tests ran here
/// (`now`), or said which files are its tests' when the result it served was made (a
/// file the base's tests read may be gone since).
fn base_runs(
    project: &Project,
    env: &Environment,
    phase: (Phase, std::time::Instant),
    prepared: &differential::Prepared,
    (start, now, results): (&str, &differential::Tests, &[GateResult]),
) -> Result<differential::StartRuns, differential::RunError> {
    let said = results
        .iter()
        .flat_map(|r| &r.run_details)
        .any(|d| !d.of_tests.is_empty());
    if now.is_empty() && !said {
        return Ok(differential::StartRuns {
            tests: differential::Tests::new(),
            failed: differential::Tests::new(),
            unstarted: differential::Tests::new(),
            passed: BTreeSet::new(),
            failures: Default::default(),
            read: differential::Tests::new(),
            said: Default::default(),
            subtests: differential::Tests::new(),
        });
    }
    differential::start_runs(project, env, phase, prepared, start)
}

fn unconfirmed(rev: &str, why: &str) -> Finding {
    Finding {
        file: String::new(),
        line: 0,
        what: format!("the checks could not be run as they were at {rev}: {why}"),
    }
}

/// One finding per gate whose tests that ran at the base did not run here; `put_back` names
/// the files the differential run had as at the base, when one was made.
fn push_not_run(a: &mut Against, not_run: &differential::Tests, put_back: Option<&[&str]>) {
    for (gate, ids) in not_run {
        let shown: Vec<&str> = ids.iter().take(10).map(String::as_str).collect();
        let more = if ids.len() > 10 { ", ..." } else { "" };
        let even = put_back.map_or(String::new(), |names| {
            format!(
                " (not even with {} as at {})",
                ralph_base::text::listed(names, 20),
                a.rev
            )
        });
        a.comparison.weaker.push(Finding {
            file: String::new(),
            line: 0,
            what: format!(
                "gate `{gate}`: {} that ran at {} did not run{even}: {}{more}",
                plural(ids.len(), "test", "tests"),
                a.rev,
                shown.join(", ")
            ),
        });
    }
}

/// The integrity gate's result; `local`: a commit being made here (`--staged`), where the
/// person committing is the one who accepts a weakening.
pub fn result(a: &Against, local: bool) -> GateResult {
    let c = &a.comparison;
    let weak = !c.weaker.is_empty();
    let severity = if a.warn_only { "warning" } else { "error" };
    let mut output: String = c
        .weaker
        .iter()
        .map(|f| match (f.file.is_empty(), f.line) {
            (false, n) if n > 0 => format!("{}:{n}: {severity}: {}\n", f.file, f.what),
            _ => format!("{f}\n"),
        })
        .collect();
    if weak {
        let (n, it) = (
            c.weaker.len(),
            if c.weaker.len() == 1 { "it" } else { "them" },
        );
        let how = match local {
            true => format!(
                "if you mean {it}, commit with `git commit --no-verify` (CI's `check --base` names {it} again, for a reviewer)"
            ),
            false => format!(
                "a person accepts {it} by merging with a reviewer's approval, or the base's ralph.toml sets [integrity] on_weakening = \"warn\""
            ),
        };
        output.push_str(&format!(
            "{} since {}: {how}\n",
            plural(n, "weakening", "weakenings"),
            a.rev,
        ));
    }
    for f in &c.stronger {
        output.push_str(&format!("stronger: {f}\n"));
    }
    for note in &a.notes {
        output.push_str(&format!("note: {note}\n"));
    }
    GateResult {
        gate: INDEX,
        name: NAME.to_string(),
        status: if weak && !a.warn_only {
            GateStatus::Fail
        } else {
            GateStatus::Pass
        },
        files: 0,
        runs: 1,
        command: format!("ralph-gate check --base {}", a.rev),
        output,
        exit_code: Some(i32::from(weak && !a.warn_only)),
        // Said on the gate's line, which a passing gate's report shows without its output.
        reason: match (weak, a.warn_only) {
            (true, true) => Some(format!(
                "{} since {} (warn only)",
                plural(c.weaker.len(), "weakening", "weakenings"),
                a.rev
            )),
            (false, _) if !a.notes.is_empty() => Some(format!("note: {}", a.notes.join("; "))),
            _ => None,
        },
        ..GateResult::default()
    }
}
