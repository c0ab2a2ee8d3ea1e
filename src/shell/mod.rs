//! Reading shell commands, for the two places that need it: the guard (what a command writes
//! or deletes) and tool identification (which programs a gate's command runs). One lexer
//! ([`lex`]) and one table of wrappers, so both see the same command in `sudo nice -n 5 rm x`.

pub mod lex;

pub use lex::parse;

/// Programs that run the rest of their arguments as the command: their options that take a
/// separate value, and the plain arguments they take before the command (`timeout 5 cmd`).
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    (
        "sudo",
        &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
        0,
    ),
    ("doas", &["-u", "-C"], 0),
    ("nohup", &[], 0),
    ("command", &[], 0),
    ("builtin", &[], 0),
    ("exec", &["-a"], 0),
    ("time", &["-f", "-o"], 0),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    ("nice", &["-n"], 0),
    ("ionice", &["-c", "-n", "-p", "-P", "-u"], 0),
    ("setsid", &[], 0),
    ("env", &["-u", "-C", "-P", "--unset", "--chdir"], 0),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    (
        "xargs",
        &["-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a"],
        0,
    ),
];

/// Words that are shell builtins, not programs on PATH.
pub const BUILTINS: &[&str] = &["exec", "command", "builtin", "time"];

/// `NAME=value`.
pub fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !name.as_bytes()[0].is_ascii_digit()
    })
}

/// The last path component of a command word (`/usr/bin/rm` is `rm`).
pub fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A simple command's words split into the wrappers in front (with leading assignments and
/// their options skipped) and the command they run.
pub fn unwrap(words: &[String]) -> (Vec<&str>, &[String]) {
    let mut wrappers = Vec::new();
    let mut rest = words;
    loop {
        while rest.first().is_some_and(|w| is_assignment(w)) {
            rest = &rest[1..];
        }
        let Some(first) = rest.first() else {
            return (wrappers, rest);
        };
        let Some((name, valued, positional)) = WRAPPERS.iter().find(|w| w.0 == base(first)) else {
            return (wrappers, rest);
        };
        wrappers.push(first.as_str());
        rest = &rest[1..];
        while let Some(w) = rest.first() {
            if w == "--" {
                rest = &rest[1..];
                break;
            }
            let option = w.starts_with('-') && w.len() > 1;
            let numeric = *name == "nice" && w.parse::<i64>().is_ok();
            if !(option || numeric || is_assignment(w)) {
                break;
            }
            let takes_value = valued.contains(&w.as_str());
            rest = &rest[if takes_value { 2 } else { 1 }.min(rest.len())..];
        }
        rest = rest.get(*positional..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn wrappers_and_their_option_values_are_seen_through() {
        for (line, wrappers, command) in [
            ("rm x", vec![], "rm x"),
            (
                "A=1 sudo -u root nice -n 5 rm x",
                vec!["sudo", "nice"],
                "rm x",
            ),
            ("timeout -s KILL 5 rm x", vec!["timeout"], "rm x"),
            ("timeout --signal=KILL 5s rm x", vec!["timeout"], "rm x"),
            ("env -i -u HOME A=1 rm x", vec!["env"], "rm x"),
            (
                "nohup /usr/bin/nice -5 rm x",
                vec!["nohup", "/usr/bin/nice"],
                "rm x",
            ),
            ("xargs -I {} rm {}", vec!["xargs"], "rm {}"),
            (
                "stdbuf -oL exec -a name rm x",
                vec!["stdbuf", "exec"],
                "rm x",
            ),
            ("sudo -- rm x", vec!["sudo"], "rm x"),
        ] {
            let w = words(line);
            let (found, rest) = unwrap(&w);
            assert_eq!(
                (found, rest.join(" ")),
                (wrappers, command.to_string()),
                "{line}"
            );
        }
    }
}
