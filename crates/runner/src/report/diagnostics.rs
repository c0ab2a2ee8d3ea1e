//! Diagnostics (file, line, column, severity, message) read back out of the tools' own
//! output, for annotations: tsc, `py_compile` tracebacks, ShellCheck (gcc and tty formats),
//! cargo/rustc (short and human), go vet and anything else printing `file:line:col: message`.
//! Pure: text in, diagnostics out.

use regex::Regex;
use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub col: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn of(word: &str) -> Severity {
        match word.to_ascii_lowercase().as_str() {
            "warning" | "warn" | "note" | "info" | "style" | "help" | "notice" => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// The line shapes of the tools' output.
struct Patterns {
    tsc: Regex,
    tsc_pretty: Regex,
    gcc: Regex,
    rust_head: Regex,
    rust_at: Regex,
    py_at: Regex,
    py_error: Regex,
    sc_at: Regex,
    sc_code: Regex,
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("fixed patterns compile");
        Patterns {
            tsc: re(
                r"^(?P<f>[^\s(][^(]*)\((?P<l>\d+),(?P<c>\d+)\): (?P<s>error|warning) (?P<m>TS\d+: .*)$",
            ),
            tsc_pretty: re(
                r"^(?P<f>[^\s:][^:]*):(?P<l>\d+):(?P<c>\d+) - (?P<s>error|warning) (?P<m>TS\d+: .*)$",
            ),
            gcc: re(
                r"^(?P<f>[^\s:][^:]*):(?P<l>\d+):(?:(?P<c>\d+):)? (?:(?P<s>error|warning|note|info|style|fatal error)(?:\[[^\]]+\])?: )?(?P<m>.+)$",
            ),
            rust_head: re(r"^(?P<s>error|warning)(?:\[[A-Z]\d+\])?: (?P<m>.+)$"),
            rust_at: re(r"^\s*--> (?P<f>[^:]+):(?P<l>\d+):(?P<c>\d+)$"),
            py_at: re(r#"^\s*File "(?P<f>[^"]+)", line (?P<l>\d+)"#),
            py_error: re(r"^(?P<m>[A-Za-z_]*(?:Error|Exception|Warning)(?::.*)?)$"),
            sc_at: re(r"^In (?P<f>.+) line (?P<l>\d+):$"),
            sc_code: re(r"\^-*\s*(?P<m>SC\d+ \((?P<s>\w+)\): .*)$"),
        }
    })
}

fn num(s: Option<regex::Match<'_>>) -> Option<u32> {
    s.and_then(|m| m.as_str().parse().ok())
}

/// Reads output line by line; some tools name the place on one line and the error on a
/// later one (Python tracebacks, ShellCheck's tty format, rustc's human format).
#[derive(Default)]
struct Reader {
    out: Vec<Diagnostic>,
    rust_pending: Option<(Severity, String)>,
    py_at: Option<(String, u32)>,
    sc_at: Option<(String, u32)>,
}

impl Reader {
    fn push(&mut self, d: Diagnostic) {
        if !self.out.contains(&d) {
            self.out.push(d);
        }
    }

    fn line(&mut self, p: &Patterns, line: &str) {
        // go vet names itself before a type error's location.
        let line = line.strip_prefix("vet: ").unwrap_or(line);
        if let Some(c) = p.tsc.captures(line).or_else(|| p.tsc_pretty.captures(line)) {
            return self.push(Diagnostic {
                file: c["f"].trim().to_string(),
                line: num(c.name("l")).unwrap_or(1),
                col: num(c.name("c")),
                severity: Severity::of(&c["s"]),
                message: c["m"].to_string(),
            });
        }
        if let Some(c) = p.py_at.captures(line) {
            self.py_at = Some((c["f"].to_string(), num(c.name("l")).unwrap_or(1)));
            return;
        }
        if let (Some((f, l)), Some(c)) = (self.py_at.clone(), p.py_error.captures(line)) {
            self.py_at = None;
            return self.push(Diagnostic {
                file: f,
                line: l,
                col: None,
                severity: Severity::Error,
                message: c["m"].to_string(),
            });
        }
        if let Some(c) = p.sc_at.captures(line) {
            self.sc_at = Some((c["f"].to_string(), num(c.name("l")).unwrap_or(1)));
            return;
        }
        if let (Some((f, l)), Some(c)) = (self.sc_at.clone(), p.sc_code.captures(line)) {
            return self.push(Diagnostic {
                file: f,
                line: l,
                col: None,
                severity: Severity::of(&c["s"]),
                message: c["m"].to_string(),
            });
        }
        self.rust_or_gcc(p, line);
    }

    fn rust_or_gcc(&mut self, p: &Patterns, line: &str) {
        if let Some(c) = p.rust_head.captures(line) {
            self.rust_pending = Some((Severity::of(&c["s"]), c["m"].to_string()));
            return;
        }
        if let (Some((s, m)), Some(c)) = (&self.rust_pending, p.rust_at.captures(line)) {
            let d = Diagnostic {
                file: c["f"].to_string(),
                line: num(c.name("l")).unwrap_or(1),
                col: num(c.name("c")),
                severity: *s,
                message: m.clone(),
            };
            self.rust_pending = None;
            return self.push(d);
        }
        let Some(c) = p.gcc.captures(line) else {
            return;
        };
        let file = c["f"].trim();
        // `path:line: text` needs a path that looks like one, or prose with colons
        // ("Note: 3 files") would be taken for a location; a severity word after the place
        // makes it one (ShellCheck on an extensionless script: `deploy:3:1: warning: ...`).
        if !file.contains('.') && !file.contains('/') && c.name("s").is_none() {
            return;
        }
        self.push(Diagnostic {
            file: file.to_string(),
            line: num(c.name("l")).unwrap_or(1),
            col: num(c.name("c")),
            severity: c
                .name("s")
                .map_or(Severity::Error, |s| Severity::of(s.as_str())),
            message: c["m"].to_string(),
        });
    }
}

/// Every diagnostic found in `output`, in order, without repeats.
pub fn parse(output: &str) -> Vec<Diagnostic> {
    let p = patterns();
    let mut reader = Reader::default();
    for raw in output.lines() {
        reader.line(p, raw.trim_end());
    }
    reader.out
}

/// A gate's output within `limit` characters. When it has to be cut, every file its
/// diagnostics name comes first, compactly: a batch gate with findings in 81 files names all
/// 81, where the kept head and tail show a few of them.
pub fn within(output: &str, limit: usize) -> String {
    if output.chars().count() <= limit {
        return output.to_string();
    }
    let mut files: Vec<String> = Vec::new();
    for d in parse(output) {
        if !files.contains(&d.file) {
            files.push(d.file);
        }
    }
    if files.len() < 2 {
        return ralph_base::text::head_tail(output, limit);
    }
    let room = limit / 3;
    let mut list = String::new();
    let mut shown = 0;
    for f in &files {
        if list.chars().count() + f.chars().count() + 2 > room {
            break;
        }
        if shown > 0 {
            list.push_str(", ");
        }
        list.push_str(f);
        shown += 1;
    }
    let more = files.len() - shown;
    let line = format!(
        "[ralph-gate: findings in {} files: {list}{}]\n",
        files.len(),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
    let rest = limit.saturating_sub(line.chars().count()).max(200);
    format!("{line}{}", ralph_base::text::head_tail(output, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extensionless_script_s_finding_is_a_place_and_prose_is_not() {
        let d = one("deploy:3:1: warning: Quote this to prevent word splitting. [SC2086]");
        assert_eq!((d.file.as_str(), d.line, d.col), ("deploy", 3, Some(1)));
        assert!(parse("Summary:2: all good").is_empty());
    }

    #[test]
    fn go_vet_s_own_prefix_is_not_a_file() {
        let d = one("vet: app/main.go:10:24: undefined: x");
        assert_eq!(
            (d.file.as_str(), d.line, d.col),
            ("app/main.go", 10, Some(24))
        );
    }

    #[test]
    fn a_cut_output_names_every_file_with_findings_first() {
        let output: String = (0..81)
            .map(|i| {
                format!(
                    "lib/s{i}.sh:3:1: warning: x appears unused. [SC2034]\n{}\n",
                    "-".repeat(60)
                )
            })
            .collect();
        let cut = within(&output, 4000);
        assert!(cut.chars().count() <= 4100, "{}", cut.len());
        assert!(
            cut.starts_with("[ralph-gate: findings in 81 files: lib/s0.sh, lib/s1.sh"),
            "{cut}"
        );
        assert!(
            cut.contains("lib/s40.sh"),
            "a file from the cut middle is named: {cut}"
        );
        assert_eq!(within("short", 4000), "short");
    }

    fn one(text: &str) -> Diagnostic {
        let d = parse(text);
        assert_eq!(d.len(), 1, "{text}: {d:?}");
        d.into_iter().next().unwrap()
    }

    #[test]
    fn each_tools_format() {
        let d =
            one("src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.severity),
            ("src/a.ts", 3, Some(7), Severity::Error)
        );
        assert!(d.message.starts_with("TS2322: "));
        let d = one("web/src/m1.ts:12:5 - error TS2304: Cannot find name 'x'.");
        assert_eq!(
            (d.file.as_str(), d.line, d.col),
            ("web/src/m1.ts", 12, Some(5))
        );

        let py = "  File \"pkg/bad.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n";
        let d = one(py);
        assert_eq!(
            (d.file.as_str(), d.line, d.message.as_str()),
            ("pkg/bad.py", 1, "SyntaxError: invalid syntax")
        );

        let d = one("scripts/run.sh:4:8: warning: Double quote to prevent globbing and word splitting. [SC2086]");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.severity),
            ("scripts/run.sh", 4, Some(8), Severity::Warning)
        );
        let tty = "\nIn scripts/run.sh line 4:\necho $x\n     ^-- SC2086 (info): Double quote to prevent globbing.\n";
        let d = one(tty);
        assert_eq!(
            (d.file.as_str(), d.line, d.severity),
            ("scripts/run.sh", 4, Severity::Warning)
        );

        let d = one("src/lib.rs:3:5: error[E0308]: mismatched types");
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.message.as_str()),
            ("src/lib.rs", 3, Some(5), "mismatched types")
        );
        let human = "error[E0425]: cannot find value `y` in this scope\n --> src/main.rs:2:13\n  |\n2 |     let x = y;\n";
        let d = one(human);
        assert_eq!(
            (d.file.as_str(), d.line, d.col, d.message.as_str()),
            (
                "src/main.rs",
                2,
                Some(13),
                "cannot find value `y` in this scope"
            )
        );

        let d = one("./cmd/main.go:10:2: fmt.Printf format %d has arg s of wrong type string");
        assert_eq!(
            (d.file.as_str(), d.line, d.severity),
            ("./cmd/main.go", 10, Severity::Error)
        );
    }

    #[test]
    fn prose_is_not_a_location() {
        assert!(parse("Note: 3 files checked\nerror: could not compile `x`\nFAILED\n").is_empty());
    }
}
