//! The programs a gate's shell command runs: the words in command position. This is not a shell
//! parser; it only has to find `tsc` in `if [ -f x ]; then tsc -p .; fi` and `python3` in
//! `VAR=1 python3 -m py_compile "$@"`, so that their identities join the cache key. A word it
//! misses is a tool whose replacement the key does not see, which is why presets also list
//! their tools in `requires`, and those are always identified.

/// Reserved words after which the next word is again in command position.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
    "[[", "]]",
];
/// Builtins and keywords that are not programs on PATH.
const BUILTINS: &[&str] = &[
    "cd", "echo", "printf", "test", "[", "exit", "return", "export", "set", "unset", "shift",
    "read", "eval", "true", "false", ":", ".", "source", "local", "trap", "wait", "type", "case",
    "esac", "for", "in", "function", "break", "continue", "umask", "ulimit", "alias", "let",
    "declare", "readonly", "getopts", "hash", "pwd", "exec", "command",
];
/// Words that run the next word as the program.
const WRAPPERS: &[&str] = &["exec", "command", "env", "nice", "nohup", "xargs", "sudo"];

pub fn command_words(script: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for segment in segments(script) {
        let mut words = segment.iter().map(String::as_str).peekable();
        while let Some(w) = words.next() {
            if KEYWORDS.contains(&w) {
                continue;
            }
            if is_assignment(w) || is_redirection(w) {
                continue;
            }
            if w == "for" || w == "case" {
                break; // the words that follow are data, up to the next separator
            }
            if WRAPPERS.contains(&w) {
                if !BUILTINS.contains(&w) {
                    push(&mut out, w);
                }
                // Skip the wrapper's options (`env -i`, `nice -n 5`) to reach the program.
                while let Some(next) = words.peek() {
                    if next.starts_with('-') || is_assignment(next) || next.parse::<i64>().is_ok() {
                        words.next();
                    } else {
                        break;
                    }
                }
                continue;
            }
            if !BUILTINS.contains(&w) {
                push(&mut out, w);
            }
            break;
        }
    }
    out
}

fn push(out: &mut Vec<String>, w: &str) {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-/".contains(&b))
        && !w.starts_with('-');
    if plain && !out.iter().any(|o| o == w) {
        out.push(w.to_string());
    }
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.as_bytes()[0].is_ascii_digit()
        }
        None => false,
    }
}

fn is_redirection(w: &str) -> bool {
    let w = w.trim_start_matches(|c: char| c.is_ascii_digit());
    w.starts_with('>') || w.starts_with('<')
}

/// Splits a script into simple commands (at `;`, `&`, `|`, newlines, parentheses, `$(` and
/// backquotes) and each into words, with quotes removed. A quoted word keeps a marker that
/// makes it no plain word (`"$1"` is never a program name we could look up).
fn segments(script: &str) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars().peekable();
    let flush_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.push('\u{0}');
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                word.push('\u{0}');
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            chars.next();
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        word.push(n);
                    }
                }
            }
            '#' if !in_word => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                flush_word(&mut words, &mut word, &mut in_word);
                all.push(std::mem::take(&mut words));
            }
            // `2>&1` and `&>` are redirections, not separators.
            '&' if word.ends_with(['>', '<']) || chars.peek() == Some(&'>') => {
                in_word = true;
                word.push(c);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' => {
                flush_word(&mut words, &mut word, &mut in_word);
                all.push(std::mem::take(&mut words));
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                flush_word(&mut words, &mut word, &mut in_word);
                all.push(std::mem::take(&mut words));
            }
            c if c.is_whitespace() => flush_word(&mut words, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    flush_word(&mut words, &mut word, &mut in_word);
    all.push(words);
    all.retain(|s| !s.is_empty());
    all
}

#[cfg(test)]
mod tests {
    use super::command_words;

    #[test]
    fn finds_programs_in_command_position() {
        assert_eq!(
            command_words(r#"PYTHONPYCACHEPREFIX="${TMPDIR:-/tmp}/x" python3 -m py_compile "$@""#),
            ["python3"]
        );
        assert_eq!(
            command_words("if [ -f tsconfig.json ]; then tsc --noEmit -p .; else tsc \"$@\"; fi"),
            ["tsc"]
        );
        assert_eq!(
            command_words("! grep -n 'breakpoint()' \"$@\" && echo ok | sort >out 2>&1"),
            ["grep", "sort"]
        );
        assert_eq!(
            command_words("unformatted=$(gofmt -l \"$@\") || exit 1"),
            ["gofmt"]
        );
        assert_eq!(command_words("exec env -i A=1 node x.js"), ["env", "node"]);
        assert_eq!(
            command_words("for f in a b; do shellcheck \"$f\"; done"),
            ["shellcheck"]
        );
        assert_eq!(
            command_words("./scripts/lint.sh --all # not: rm"),
            ["./scripts/lint.sh"]
        );
        assert!(command_words("\"$1\" --x; $TOOL -y").is_empty());
    }
}
