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
/// How deep nested command substitutions are read: deep enough for any command a person
/// writes, since a program missed here is a tool whose replacement the cache key would not
/// see (the guard reads less deep: it sits in front of every Bash call).
const DEPTH: u8 = 16;

pub fn command_words(script: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for simple in ralph_base::shell::parse(script, DEPTH) {
        let words = &simple.words;
        let start = words
            .iter()
            .position(|w| !KEYWORDS.contains(&w.as_str()))
            .unwrap_or(words.len());
        let words = &words[start..];
        // After `for` and `case` come data, up to the next separator.
        if words
            .first()
            .is_some_and(|w| matches!(w.as_str(), "for" | "case"))
        {
            continue;
        }
        let (wrappers, rest) = ralph_base::shell::unwrap(words);
        for w in wrappers {
            if !BUILTINS.contains(&w) && !ralph_base::shell::BUILTINS.contains(&w) {
                push(&mut out, w);
            }
        }
        if let Some(w) = rest.first().filter(|w| !BUILTINS.contains(&w.as_str())) {
            push(&mut out, w);
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
        assert_eq!(
            command_words("nice -n 5 timeout -s KILL 60 cargo test"),
            ["nice", "timeout", "cargo"],
            "the wrappers the guard sees through, with their option values"
        );
        assert_eq!(
            command_words("cat <<EOF\nrm -rf /\nEOF\nmake"),
            ["cat", "make"],
            "a here-document's body is data"
        );
        assert_eq!(
            command_words("x=$(a=$(b=$(c=$(d=$(e=$(tsc -p .))))))"),
            ["tsc"],
            "nested substitutions are read as deep as the old reader read them"
        );
    }
}
