//! Enough of the POSIX shell grammar to see what a command writes: words with their quoting
//! removed, output redirections, the operators that separate commands (`;`, `&&`, `||`, `|`,
//! `&`, newlines, parentheses), comments, here-documents (whose bodies are data, not
//! commands), and the text of command substitutions (`$(...)`, backticks, `<(...)`), which
//! is parsed as commands in turn. Variables are not expanded: the guard reads what is written.

/// One simple command: its words and the files its redirections write to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<String>,
    pub writes: Vec<String>,
}

/// Every simple command in `text`, command substitutions included (to `depth` levels).
pub fn parse(text: &str, depth: u8) -> Vec<Simple> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        out: Vec::new(),
        current: Simple::default(),
        subs: Vec::new(),
        heredocs: Vec::new(),
    };
    lexer.run();
    let mut out = lexer.out;
    if depth > 0 {
        for sub in lexer.subs {
            out.extend(parse(&sub, depth - 1));
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Redirect {
    Write,
    Read,
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    out: Vec<Simple>,
    current: Simple,
    /// Texts of command substitutions, parsed after this level.
    subs: Vec<String>,
    /// Here-document delimiters whose bodies start at the next newline (`true`: `<<-`).
    heredocs: Vec<(String, bool)>,
}

impl Lexer {
    fn peek(&self, n: usize) -> Option<char> {
        self.chars.get(self.at + n).copied()
    }

    fn end_command(&mut self) {
        let done = std::mem::take(&mut self.current);
        if !done.words.is_empty() || !done.writes.is_empty() {
            self.out.push(done);
        }
    }

    fn run(&mut self) {
        let mut pending: Option<Redirect> = None;
        let mut heredoc_next = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.at += 1,
                '\n' => {
                    self.at += 1;
                    self.end_command();
                    self.skip_heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' => {
                    // `&>` and `&>>` write; everything else separates commands.
                    if c == '&' && self.peek(1) == Some('>') {
                        self.at += if self.peek(2) == Some('>') { 3 } else { 2 };
                        pending = Some(Redirect::Write);
                        continue;
                    }
                    self.at += 1;
                    while matches!(self.peek(0), Some(';' | '&' | '|')) {
                        self.at += 1;
                    }
                    self.end_command();
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '>' | '<' if self.peek(1) == Some('(') => {
                    // Process substitution: a command whose text is parsed later.
                    self.at += 2;
                    let inner = self.balanced(')');
                    self.subs.push(inner);
                }
                '>' | '<' => {
                    let kind = self.redirect_op();
                    match kind {
                        Some((Redirect::Read, true)) => heredoc_next = true,
                        Some((k, false)) => pending = Some(k),
                        _ => {}
                    }
                }
                _ => {
                    let word = self.word();
                    // `2>file`: a word of digits right before `>` is a file descriptor.
                    if matches!(self.peek(0), Some('>' | '<'))
                        && !word.is_empty()
                        && word.chars().all(|c| c.is_ascii_digit())
                    {
                        continue;
                    }
                    if heredoc_next {
                        heredoc_next = false;
                        let dash = word.starts_with('-');
                        self.heredocs
                            .push((word.trim_start_matches('-').to_string(), dash));
                        continue;
                    }
                    match pending.take() {
                        Some(Redirect::Write) => self.current.writes.push(word),
                        Some(Redirect::Read) => {}
                        None => self.current.words.push(word),
                    }
                }
            }
        }
        self.end_command();
    }

    /// Reads a redirection operator at `>` or `<`; returns its kind and whether it starts a
    /// here-document. `>&2`, `2>&1` and `<&0` duplicate descriptors and name no file.
    fn redirect_op(&mut self) -> Option<(Redirect, bool)> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '<' {
            if self.peek(0) == Some('<') {
                self.at += 1;
                if self.peek(0) == Some('<') {
                    self.at += 1; // here-string: a word, read as data
                    return Some((Redirect::Read, false));
                }
                if self.peek(0) == Some('-') {
                    // `<<-` keeps the dash for the delimiter reader.
                    return Some((Redirect::Read, true));
                }
                return Some((Redirect::Read, true));
            }
            if self.peek(0) == Some('>') {
                self.at += 1;
                return Some((Redirect::Write, false));
            }
            if self.peek(0) == Some('&') {
                self.at += 1;
                self.word();
                return None;
            }
            return Some((Redirect::Read, false));
        }
        if matches!(self.peek(0), Some('>' | '|')) {
            self.at += 1;
        }
        if self.peek(0) == Some('&') {
            self.at += 1;
            // `>&file` (bash) writes to a file; `>&2` and `>&-` do not.
            let target = self.word();
            if !target.is_empty() && !target.chars().all(|c| c.is_ascii_digit()) && target != "-" {
                self.current.writes.push(target);
            }
            return None;
        }
        Some((Redirect::Write, false))
    }

    /// One word, quotes removed, up to an unquoted blank or operator.
    fn word(&mut self) -> String {
        let mut w = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.at += 1;
                    match self.peek(0) {
                        Some('\n') => self.at += 1,
                        Some(n) => {
                            w.push(n);
                            self.at += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.at += 1;
                    while let Some(n) = self.peek(0) {
                        self.at += 1;
                        if n == '\'' {
                            break;
                        }
                        w.push(n);
                    }
                }
                '"' => {
                    self.at += 1;
                    while let Some(n) = self.peek(0) {
                        match n {
                            '"' => {
                                self.at += 1;
                                break;
                            }
                            '\\' if matches!(self.peek(1), Some('"' | '\\' | '$' | '`' | '\n')) => {
                                if self.peek(1) != Some('\n') {
                                    w.push(self.peek(1).unwrap_or_default());
                                }
                                self.at += 2;
                            }
                            '$' if self.peek(1) == Some('(') => self.substitution(&mut w),
                            '`' => self.backticks(&mut w),
                            _ => {
                                w.push(n);
                                self.at += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('(') => self.substitution(&mut w),
                '$' if self.peek(1) == Some('\'') => self.ansi_c(&mut w),
                '`' => self.backticks(&mut w),
                _ => {
                    w.push(c);
                    self.at += 1;
                }
            }
        }
        w
    }

    /// `$'...'`: bash's quoting with C escapes (`$'\x72m'` is `rm`), decoded.
    fn ansi_c(&mut self, w: &mut String) {
        self.at += 2;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.peek(0) else { return };
                    self.at += 1;
                    let simple = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'v' => Some('\u{b}'),
                        '\\' | '\'' | '"' | '?' => Some(e),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        w.push(ch);
                        continue;
                    }
                    let (radix, max) = match e {
                        'x' => (16, 2),
                        'u' => (16, 4),
                        'U' => (16, 8),
                        '0'..='7' => {
                            self.at -= 1;
                            (8, 3)
                        }
                        _ => {
                            w.push('\\');
                            w.push(e);
                            continue;
                        }
                    };
                    let mut digits = String::new();
                    while digits.len() < max && self.peek(0).is_some_and(|d| d.is_digit(radix)) {
                        digits.push(self.peek(0).unwrap_or_default());
                        self.at += 1;
                    }
                    match u32::from_str_radix(&digits, radix)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        Some(ch) => w.push(ch),
                        None => {
                            w.push('\\');
                            w.push(e);
                        }
                    }
                }
                _ => w.push(c),
            }
        }
    }

    /// `$(...)`: the text is kept in the word (unexpanded) and parsed as commands later.
    fn substitution(&mut self, w: &mut String) {
        self.at += 2;
        let inner = self.balanced(')');
        w.push_str("$(");
        w.push_str(&inner);
        w.push(')');
        self.subs.push(inner);
    }

    fn backticks(&mut self, w: &mut String) {
        self.at += 1;
        let mut inner = String::new();
        while let Some(n) = self.peek(0) {
            self.at += 1;
            match n {
                '`' => break,
                '\\' => {
                    if let Some(e) = self.peek(0) {
                        inner.push(e);
                        self.at += 1;
                    }
                }
                _ => inner.push(n),
            }
        }
        w.push('`');
        w.push_str(&inner);
        w.push('`');
        self.subs.push(inner);
    }

    /// The text up to the `close` that balances an already consumed opener, quotes respected.
    fn balanced(&mut self, close: char) -> String {
        let open = if close == ')' { '(' } else { close };
        let mut level = 1usize;
        let mut out = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some('"'), '\\') => {
                    out.push(c);
                    if let Some(n) = self.peek(0) {
                        out.push(n);
                        self.at += 1;
                    }
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => {
                    out.push(c);
                    if let Some(n) = self.peek(0) {
                        out.push(n);
                        self.at += 1;
                    }
                    continue;
                }
                (None, c) if c == open => level += 1,
                (None, c) if c == close => {
                    level -= 1;
                    if level == 0 {
                        return out;
                    }
                }
                _ => {}
            }
            out.push(c);
        }
        out
    }

    /// After a newline, the bodies of pending here-documents are data: skip them.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, dash) in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
                let line: String = self.chars[start..self.at].iter().collect();
                let at_end = self.peek(0).is_none();
                self.at += usize::from(!at_end);
                let line = if dash {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter || at_end {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        parse(text, 2).into_iter().map(|s| s.words).collect()
    }

    fn writes(text: &str) -> Vec<String> {
        parse(text, 2).into_iter().flat_map(|s| s.writes).collect()
    }

    #[test]
    fn quoting_and_operators() {
        assert_eq!(
            words(r#"rm -f 'a b' "c\"d" e\ f && echo x; ls | wc -l"#),
            vec![
                vec!["rm", "-f", "a b", "c\"d", "e f"],
                vec!["echo", "x"],
                vec!["ls"],
                vec!["wc", "-l"]
            ]
        );
    }

    #[test]
    fn redirections_name_their_files() {
        assert_eq!(
            writes("echo x > a >> b 2> c &> d 2>&1 >&2"),
            ["a", "b", "c", "d"]
        );
        assert_eq!(writes("cat < in"), Vec::<String>::new());
        assert_eq!(writes("echo x >| forced"), ["forced"]);
        assert_eq!(writes("echo x>glued"), ["glued"]);
    }

    #[test]
    fn substitutions_are_parsed_and_heredoc_bodies_are_not() {
        let all = words("echo $(rm -rf x) `touch y`");
        assert!(
            all.contains(&vec!["rm".to_string(), "-rf".into(), "x".into()]),
            "{all:?}"
        );
        assert!(
            all.contains(&vec!["touch".to_string(), "y".into()]),
            "{all:?}"
        );
        let doc = words("cat > notes.md <<'EOF'\nrm -rf everything\nEOF\necho done");
        assert_eq!(doc, vec![vec!["cat"], vec!["echo", "done"]]);
        assert_eq!(writes("cat > notes.md <<EOF\nx\nEOF"), ["notes.md"]);
    }

    #[test]
    fn ansi_c_quotes_are_decoded() {
        assert_eq!(
            words(r"$'\x72m' $'a\'b' $'\101\u0042' x$'\n'y"),
            vec![vec!["rm", "a'b", "AB", "x\ny"]]
        );
    }

    #[test]
    fn comments_end_at_the_line() {
        assert_eq!(
            words("ls # rm ralph.toml\npwd"),
            vec![vec!["ls"], vec!["pwd"]]
        );
    }
}
