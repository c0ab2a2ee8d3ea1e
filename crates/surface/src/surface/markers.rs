//! What checked code says about its own checking: suppressions and skips (`@ts-ignore`,
//! `#[ignore]`, `# noqa`, `it.skip`), and the tests it defines, found as each runner finds
//! them. Lines are read, not parsed: a marker inside a string is counted too, which can only
//! hold a loop for a person to look, never pass one.

use super::source::Source;
use super::{Comparison, Finding, Marker, Reads, Surface, Test};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Script,
    Python,
    Rust,
    Shell,
    Go,
    Bats,
}

fn lang(rel: &Path) -> Option<Lang> {
    let ext = rel.extension().and_then(|e| e.to_str());
    Some(match ext {
        Some("ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs") => Lang::Script,
        Some("py" | "pyi") => Lang::Python,
        Some("rs") => Lang::Rust,
        Some("sh" | "bash" | "ksh" | "dash" | "zsh") | None => Lang::Shell,
        Some("go") => Lang::Go,
        Some("bats") => Lang::Bats,
        _ => return None,
    })
}

/// Which gates a marker can change the verdict of.
#[derive(Clone, Copy)]
enum Needs {
    Tsc,
    Tests,
    Clippy,
    PyLint,
    PyTypes,
    Eslint,
    Shellcheck,
}

impl Needs {
    fn met(self, r: &Reads) -> bool {
        match self {
            Needs::Tsc => r.tsc,
            Needs::Tests => r.tests,
            Needs::Clippy => r.clippy,
            Needs::PyLint => r.python_lint,
            Needs::PyTypes => r.python_types,
            Needs::Eslint => r.eslint,
            Needs::Shellcheck => r.shellcheck,
        }
    }
}

struct Pattern {
    lang: Lang,
    needs: Needs,
    re: Regex,
}

/// The markers, each as a language, what it needs, and a pattern whose match (or first
/// group, when it has one) names the marker's kind.
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    use Lang::*;
    use Needs::*;
    let p = |lang, needs, re: &str| Pattern {
        lang,
        needs,
        re: Regex::new(re).expect("marker pattern"),
    };
    vec![
        p(Script, Tsc, r"@ts-(?:nocheck|ignore|expect-error)\b"),
        p(Script, Eslint, r"eslint-disable(?:-next-line|-line)?"),
        p(
            Script,
            Tests,
            r"\b(?:describe|it|test|suite|context|bench)\.(?:skip|only|todo|failing|skipIf|runIf)\b",
        ),
        p(
            Script,
            Tests,
            r"\b(?:xit|xdescribe|xtest|xcontext|fit|fdescribe)\s*\(",
        ),
        p(Script, Tests, r"\b(?:skip|todo)\s*:\s*(?:true|'|\x22|`)"),
        p(Script, Tests, r"\bt\.(?:skip|todo)\s*\("),
        p(
            Python,
            PyTypes,
            r"#\s*(?:type:\s*ignore|pyright:\s*ignore|mypy:\s*ignore-errors)",
        ),
        p(
            Python,
            PyLint,
            r"#\s*(?:noqa|ruff:\s*noqa|pylint:\s*disable|flake8:\s*noqa)",
        ),
        p(Python, Tests, r"@pytest\.mark\.(?:skip|skipif|xfail)\b"),
        p(Python, Tests, r"\bpytest\.(?:skip|xfail|importorskip)\s*\("),
        p(
            Python,
            Tests,
            r"@(?:unittest\.)?(?:skip|skipIf|skipUnless|expectedFailure)\b",
        ),
        p(
            Python,
            Tests,
            r"\.skipTest\s*\(|raise\s+(?:unittest\.)?SkipTest\b",
        ),
        p(
            Python,
            Tests,
            r"^\s*def\s+load_tests\s*\(|\bcollect_ignore(?:_glob)?\b|def\s+pytest_collection_modifyitems\b",
        ),
        p(
            Rust,
            Tests,
            r"#\[ignore(?:\s*=\s*\x22[^\x22]*\x22)?\]|#\[should_panic\b|#\[cfg\(\s*any\(\s*\)\s*\)\]|#\[cfg\(\s*not\(\s*all\(\s*\)\s*\)\s*\)\]|#\[cfg_attr\([^\]]*\bignore\b[^\]]*\]",
        ),
        p(Rust, Clippy, r"#!?\[(?:allow|expect)\([^\]]*\)\]"),
        p(Shell, Shellcheck, r"#\s*shellcheck\s+disable=[\w,]+"),
        p(
            Go,
            Tests,
            r"\bt\.(?:Skip|SkipNow|Skipf)\s*\(|^//go:build\s+ignore\b|^// \+build ignore\b",
        ),
        p(Bats, Tests, r"^\s*skip\b"),
    ]
});

/// A test definition per language: the pattern and whether a file can hold tests at all.
static TESTS: LazyLock<Vec<(Lang, Regex)>> = LazyLock::new(|| {
    let r = |s: &str| Regex::new(s).expect("test pattern");
    vec![
        (
            Lang::Rust,
            r(r"^\s*#\[(?:[\w:]+::)?(?:test|rstest|test_case)\b"),
        ),
        (Lang::Python, r(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")),
        (
            Lang::Script,
            r(r#"\b(?:it|test)\s*\(\s*(?:'([^']*)'|"([^"]*)"|`([^`]*)`)"#),
        ),
        (
            Lang::Go,
            r(r"^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)"),
        ),
        (Lang::Bats, r(r#"^\s*@test\s+"([^"]*)""#)),
    ]
});

static NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"\b(?:fn|def|func|class)\s+(\w+)|\b(?:it|test|describe)(?:\.\w+)?\s*\(\s*['"`]([^'"`]+)"#,
    )
    .expect("name pattern")
});

/// The markers and tests of the files `code`.
pub fn scan<'a>(
    source: &Source,
    code: impl Iterator<Item = &'a PathBuf>,
    reads: &Reads,
) -> (Vec<Marker>, Vec<Test>) {
    let (mut markers, mut tests) = (Vec::new(), Vec::new());
    for rel in code {
        let Some(lang) = lang(rel) else { continue };
        let Some(text) = source.read_text(rel) else {
            continue;
        };
        let file = super::text(rel);
        let lines: Vec<&str> = text.lines().collect();
        let tests_here = holds_tests(rel, lang, &text);
        markers_of(&file, lang, &lines, reads, tests_here, &mut markers);
        if reads.tests && tests_here {
            tests_of(&file, lang, &lines, &mut tests);
        }
    }
    (markers, tests)
}

/// `tests_here`: a test file, where `@ts-expect-error` is how a type test says "this must
/// not compile" (it fails when the error goes away), not a suppression.
fn markers_of(
    file: &str,
    lang: Lang,
    lines: &[&str],
    reads: &Reads,
    tests_here: bool,
    out: &mut Vec<Marker>,
) {
    for (i, line) in lines.iter().enumerate() {
        for p in PATTERNS
            .iter()
            .filter(|p| p.lang == lang && p.needs.met(reads))
        {
            for m in p.re.find_iter(line) {
                if tests_here && m.as_str() == "@ts-expect-error" {
                    continue;
                }
                out.push(Marker {
                    file: file.to_string(),
                    line: i as u32 + 1,
                    kind: kind(m.as_str()),
                    context: context(lines, i),
                    skips_test: matches!(p.needs, Needs::Tests),
                });
            }
        }
        if lang == Lang::Rust && reads.tests && cfg_on_test(lines, i) {
            out.push(Marker {
                file: file.to_string(),
                line: i as u32 + 1,
                kind: line.trim().to_string(),
                context: context(lines, i),
                skips_test: true,
            });
        }
    }
}

/// A marker's kind as matched, without the reason it gives: `#[ignore = "slow"]` is the
/// `#[ignore]` it was, so giving a reason is not adding a suppression.
fn kind(matched: &str) -> String {
    static REASON: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"\bignore\s*=\s*"[^"]*""#).expect("reason pattern"));
    REASON.replace_all(matched.trim(), "ignore").into_owned()
}

/// A `#[cfg(...)]` among a test's attributes: the test is compiled out when it is false.
fn cfg_on_test(lines: &[&str], i: usize) -> bool {
    let l = lines[i].trim();
    if !l.starts_with("#[cfg(") || l.starts_with("#[cfg(test)]") {
        return false;
    }
    let attr = |l: &str| l.trim().starts_with("#[");
    let after = lines[i + 1..].iter().take_while(|l| attr(l));
    let before = lines[..i].iter().rev().take_while(|l| attr(l));
    after.chain(before).any(|l| TESTS[0].1.is_match(l))
}

/// The function or test a marker at line `i` applies to: named on its line; for a call in
/// a body (`t.Skip()`, `pytest.skip()`, a trailing `# noqa`), the definition around it;
/// for a decorator, an attribute or a directive on a line of its own, what follows, up to
/// eleven lines below (a decorator's arguments can span lines).
fn context(lines: &[&str], i: usize) -> String {
    if let Some(name) = decorated(lines, i) {
        return name;
    }
    if let Some(name) = named(lines[i]) {
        return name;
    }
    let lead = lines[i].trim_start();
    let ahead = ["@", "#", "//"].iter().any(|p| lead.starts_with(p));
    if let Some(name) = (!ahead).then(|| enclosing(lines, i)).flatten() {
        return name;
    }
    lines
        .iter()
        .skip(i)
        .take(12)
        .find_map(|l| named(l))
        .unwrap_or_else(|| lines[i].trim().to_string())
}

/// The nearest definition above line `i` indented less than it: the body it stands in.
fn enclosing(lines: &[&str], i: usize) -> Option<String> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let depth = indent(lines[i]);
    lines[..i]
        .iter()
        .rev()
        .take(400)
        .filter(|l| !l.trim().is_empty() && indent(l) < depth)
        .find_map(|l| named(l))
}

/// The function, class or test a line defines, if it defines one.
fn named(line: &str) -> Option<String> {
    let c = NAME.captures(line)?;
    Some(c.get(1).or_else(|| c.get(2))?.as_str().to_string())
}

/// For a Python decorator, the function it decorates: the next `def` at its indentation,
/// however long the decorators between (a `parametrize` list can run for pages).
fn decorated(lines: &[&str], i: usize) -> Option<String> {
    static DEF: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\s*)(?:async\s+)?(?:def|class)\s+(\w+)").expect("def pattern")
    });
    let line = lines[i];
    let indent = &line[..line.len() - line.trim_start().len()];
    if !line.trim_start().starts_with('@') {
        return None;
    }
    lines[i + 1..].iter().take(400).find_map(|l| {
        let c = DEF.captures(l)?;
        (c.get(1)?.as_str() == indent).then(|| c[2].to_string())
    })
}

/// Files where a runner looks for tests.
fn holds_tests(rel: &Path, lang: Lang, text: &str) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let path = super::text(rel);
    match lang {
        Lang::Python => {
            name.starts_with("test") || name.ends_with("_test.py") || text.contains("unittest")
        }
        Lang::Script => {
            path.contains("test") || path.contains("spec") || text.contains("node:test")
        }
        Lang::Go => name.ends_with("_test.go"),
        Lang::Rust | Lang::Bats => true,
        Lang::Shell => false,
    }
}

fn tests_of(file: &str, lang: Lang, lines: &[&str], out: &mut Vec<Test>) {
    let Some((_, re)) = TESTS.iter().find(|(l, _)| *l == lang) else {
        return;
    };
    let mut found: Vec<(usize, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = re.captures(line) else { continue };
        let name = match lang {
            // The attribute names no test: the function after it does.
            Lang::Rust => context(lines, i),
            _ => c
                .iter()
                .skip(1)
                .flatten()
                .next()
                .map_or_else(String::new, |m| m.as_str().to_string()),
        };
        found.push((i, name));
    }
    for (n, (i, name)) in found.iter().enumerate() {
        let end = found.get(n + 1).map_or(lines.len(), |(next, _)| *next);
        out.push(Test {
            file: file.to_string(),
            line: *i as u32 + 1,
            body: body_print(&lines[*i..end], name),
            name: name.clone(),
        });
    }
}

/// Hashes in a test's code signature: the share of equal ones estimates how alike two
/// tests' words are.
const SIGNATURE: usize = 16;
/// Two tests this alike are one test renamed (and perhaps edited), not one replaced.
const ALIKE: usize = SIGNATURE / 2;

/// A test's code, from its start to the next test's, as a MinHash signature of its words
/// (its own name left out), in hex: tests that share most words share most hashes.
fn body_print(lines: &[&str], name: &str) -> String {
    let name_words: BTreeSet<&str> = words(name).collect();
    let mut mins = [u32::MAX; SIGNATURE];
    for word in lines.iter().flat_map(|l| words(l)) {
        if name_words.contains(word) {
            continue;
        }
        let base = u64::from_le_bytes(
            blake3::hash(word.as_bytes()).as_bytes()[..8]
                .try_into()
                .expect("8 bytes"),
        );
        for (i, m) in mins.iter_mut().enumerate() {
            let h = ((base ^ SEEDS[i]).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
            *m = (*m).min(h);
        }
    }
    mins.iter().map(|m| format!("{m:08x}")).collect()
}

const SEEDS: [u64; SIGNATURE] = [
    0x243F_6A88_85A3_08D3,
    0x1319_8A2E_0370_7344,
    0xA409_3822_299F_31D0,
    0x082E_FA98_EC4E_6C89,
    0x4528_21E6_38D0_1377,
    0xBE54_66CF_34E9_0C6C,
    0xC0AC_29B7_C97C_50DD,
    0x3F84_D5B5_B547_0917,
    0x9216_D5D9_8979_FB1B,
    0xD131_0BA6_98DF_B5AC,
    0x2FFD_72DB_D01A_DFB7,
    0xB8E1_AFED_6A26_7E96,
    0xBA7C_9045_F12C_7F99,
    0x24A1_9947_B391_6CF7,
    0x0801_F2E2_858E_FC16,
    0x6369_20D8_7157_1574,
];

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
}

/// Two signatures agree on at least half their hashes.
fn alike(a: &str, b: &str) -> bool {
    if a.len() != SIGNATURE * 8 || b.len() != SIGNATURE * 8 {
        return false;
    }
    (0..SIGNATURE)
        .filter(|i| a[i * 8..i * 8 + 8] == b[i * 8..i * 8 + 8])
        .count()
        >= ALIKE
}

/// Markers added (weaker) and removed (stronger). A marker is its kind and what it applies
/// to, wherever it is: moving code is not adding a suppression.
/// A skip on a test that is new takes nothing away that ran before: the test is an addition
/// that runs where its condition allows.
pub fn compare_markers(old: &Surface, new: &Surface, out: &mut Comparison) {
    let (before, after) = (by_what(&old.markers), by_what(&new.markers));
    let tested_before: BTreeSet<&str> = old.tests.iter().map(|t| t.name.as_str()).collect();
    let tested_now: BTreeSet<&str> = new.tests.iter().map(|t| t.name.as_str()).collect();
    let on_new_test = |m: &Marker| {
        m.skips_test
            && !tested_before.contains(m.context.as_str())
            && (tested_now.contains(m.context.as_str()) || is_test_name(&m.context))
    };
    // Only as many as the tests added, and none when a test is gone: a test renamed (or
    // replaced) and skipped is not new, whatever else was added beside it.
    let vanished = tested_before.iter().any(|n| !tested_now.contains(n));
    let mut new_tests = if vanished {
        0
    } else {
        new.tests.len().saturating_sub(old.tests.len())
    };
    let mut exempt = |m: &Marker| {
        let yes = new_tests > 0 && on_new_test(m);
        new_tests -= usize::from(yes);
        yes
    };
    for (k, now) in &after {
        let was = before.get(k).map_or(&[][..], Vec::as_slice);
        for m in surplus(now, was).into_iter().filter(|m| !exempt(m)) {
            let applies = if m.context == m.kind || m.context.contains(&m.kind) {
                String::new()
            } else {
                format!(" to `{}`", m.context)
            };
            out.weaker.push(Finding {
                file: m.file.clone(),
                line: m.line,
                what: format!("`{}` added{applies}", m.kind),
            });
        }
    }
    for (k, was) in &before {
        let now = after.get(k).map_or(&[][..], Vec::as_slice);
        for m in surplus(was, now) {
            out.stronger.push(Finding {
                file: m.file.clone(),
                line: m.line,
                what: format!("`{}` removed", m.kind),
            });
        }
    }
}

/// Markers by what they are: their kind and what they apply to, wherever they stand.
fn by_what(markers: &[Marker]) -> BTreeMap<(String, String), Vec<&Marker>> {
    let mut out: BTreeMap<(String, String), Vec<&Marker>> = BTreeMap::new();
    for m in markers {
        out.entry((m.kind.clone(), m.context.clone()))
            .or_default()
            .push(m);
    }
    out
}

/// A name only a test has (`test_x`, `TestX`): a skip on a function so named that was not
/// there before is on a new test, though it is not run where the skip applies.
fn is_test_name(name: &str) -> bool {
    name.starts_with("test") || name.starts_with("Test")
}

/// The members of `more` beyond the count of `fewer`, preferring those in files `fewer` has
/// none of (a marker that stayed in its file is the old one).
fn surplus<'a>(more: &[&'a Marker], fewer: &[&Marker]) -> Vec<&'a Marker> {
    if more.len() <= fewer.len() {
        return Vec::new();
    }
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for m in fewer {
        *left.entry(m.file.as_str()).or_default() += 1;
    }
    let (mut kept, mut extra) = (Vec::new(), Vec::new());
    for m in more {
        match left.get_mut(m.file.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                kept.push(*m);
            }
            _ => extra.push(*m),
        }
    }
    let want = more.len() - fewer.len();
    extra
        .into_iter()
        .chain(kept.into_iter().rev())
        .take(want)
        .collect()
}

/// Fewer tests is a weakening, named with the tests that are gone; more is a strengthening.
/// Renaming or moving a test keeps the count and is not held.
pub fn compare_tests(old: &[Test], new: &[Test], out: &mut Comparison) {
    if new.len() > old.len() {
        out.stronger.push(Finding {
            file: String::new(),
            line: 0,
            what: format!("{} tests -> {}", old.len(), new.len()),
        });
    }
    // More tests than before: what went was rewritten into more (a test parametrised, split
    // or reworked, as real histories do all the time); only a count that did not grow is
    // held to the names.
    if new.len() > old.len() {
        return;
    }
    let gone = gone_tests(old, new);
    if gone.is_empty() {
        return;
    }
    let header = if new.len() < old.len() {
        format!(
            "{} tests no longer run ({} -> {})",
            old.len() - new.len(),
            old.len(),
            new.len()
        )
    } else {
        // As many run, but not the same ones: a failing test deleted beside a new one.
        format!(
            "{} tests are gone, replaced by as many others ({} -> {})",
            gone.len(),
            old.len(),
            new.len()
        )
    };
    // One finding per file the tests were in: a differential run that puts a file of tests
    // back judges the losses in it.
    let mut by_file: BTreeMap<&str, Vec<&Test>> = BTreeMap::new();
    for t in &gone {
        by_file.entry(t.file.as_str()).or_default().push(t);
    }
    for (file, tests) in by_file {
        let list = tests
            .iter()
            .take(20)
            .map(|t| format!("{}:{} `{}`", t.file, t.line, t.name))
            .collect::<Vec<_>>()
            .join(", ");
        out.weaker.push(Finding {
            file: file.to_string(),
            line: 0,
            what: format!("{header}: {list}"),
        });
    }
}

/// The tests of `old` that `new` no longer has, by name wherever they are; a test renamed
/// (its code much the same) is not gone.
fn gone_tests<'a>(old: &'a [Test], new: &[Test]) -> Vec<&'a Test> {
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for t in new {
        *names.entry(t.name.as_str()).or_default() += 1;
    }
    let old_names: BTreeSet<&str> = old.iter().map(|t| t.name.as_str()).collect();
    // The tests that are new by name: where a renamed test went.
    let mut added: Vec<&Test> = new
        .iter()
        .filter(|t| !old_names.contains(t.name.as_str()))
        .collect();
    let mut gone = Vec::new();
    for t in old {
        match names.get_mut(t.name.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => match added.iter().position(|a| alike(&a.body, &t.body)) {
                Some(i) => {
                    added.swap_remove(i);
                }
                None => gone.push(t),
            },
        }
    }
    gone
}
