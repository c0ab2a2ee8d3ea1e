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
    ("busybox", &[], 0),
    ("chroot", &["--userspec", "--groups"], 1),
    ("unbuffer", &[], 0),
    ("flock", &["-w", "-E", "-c"], 1),
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

/// What a command line has set, as far as the guard follows it: variables assigned with a
/// literal (`F=ralph.toml`) and loop variables (`for f in a b`), each with every value it
/// may hold. Words are expanded with them and with brace expansion (`{a,b}.toml`).
#[derive(Debug, Default)]
pub struct Vars {
    known: std::collections::HashMap<String, Vec<String>>,
}

impl Vars {
    /// Learns from a simple command that only sets variables; true when that is all it did.
    pub fn learn(&mut self, words: &[String]) -> bool {
        if let [f, name, kw, values @ ..] = words {
            if f == "for" && kw == "in" {
                self.known.insert(name.clone(), values.to_vec());
                return true;
            }
        }
        if !words.is_empty() && words.iter().all(|w| is_assignment(w)) {
            for w in words {
                let (k, v) = w.split_once('=').expect("an assignment");
                self.known.insert(k.to_string(), vec![v.to_string()]);
            }
            return true;
        }
        false
    }

    /// Every word, with known variables and braces expanded (a word may become several).
    pub fn expand(&self, words: &[String]) -> Vec<String> {
        words
            .iter()
            .flat_map(|w| self.variables(w))
            .flat_map(|w| braces(&w))
            .collect()
    }

    fn variables(&self, word: &str) -> Vec<String> {
        let mut out = vec![word.to_string()];
        for (name, values) in &self.known {
            let forms = [format!("${{{name}}}"), format!("${name}")];
            out = out
                .into_iter()
                .flat_map(|w| match forms.iter().find(|f| w.contains(f.as_str())) {
                    Some(f) => values.iter().map(|v| w.replace(f.as_str(), v)).collect(),
                    None => vec![w],
                })
                .collect();
        }
        out
    }
}

/// Brace expansion of the first `{a,b}` group, recursively (`{ralph,x}.toml`); sequences
/// (`{1..3}`) and words without a comma in braces are left as they are.
pub fn braces(word: &str) -> Vec<String> {
    let Some(open) = word.find('{') else {
        return vec![word.to_string()];
    };
    let mut level = 0;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in word[open..].char_indices() {
        match c {
            '{' => level += 1,
            '}' => {
                level -= 1;
                if level == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if level == 1 => commas.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close.filter(|_| !commas.is_empty()) else {
        return vec![word.to_string()];
    };
    let (pre, post) = (&word[..open], &word[close + 1..]);
    let mut cuts = vec![open];
    cuts.extend(&commas);
    cuts.push(close);
    let mut out = Vec::new();
    for pair in cuts.windows(2) {
        let alt = &word[pair[0] + 1..pair[1]];
        out.extend(braces(&format!("{pre}{alt}{post}")));
    }
    out
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
