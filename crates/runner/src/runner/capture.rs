//! Bounded capture of a gate's output: the first and last bytes are kept, the middle is
//! counted and dropped, so a gate printing gigabytes costs a fixed amount of memory.

use std::collections::VecDeque;

/// Bytes kept from the start and from the end of a run's output.
pub const HEAD_BYTES: usize = 256 * 1024;
pub const TAIL_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, Default)]
pub struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: u64,
    head_cap: usize,
    tail_cap: usize,
}

impl Captured {
    pub fn new() -> Self {
        Self::with_caps(HEAD_BYTES, TAIL_BYTES)
    }

    pub fn with_caps(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head_cap,
            tail_cap,
            ..Self::default()
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.dropped += (self.tail.len() + bytes.len() - self.tail_cap) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.dropped += overflow as u64;
        self.tail.extend(bytes);
    }

    /// The output as text (invalid UTF-8 replaced), with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out.push_str(&format!(
                "\n[ralph-gate: {} bytes of output not kept]\n",
                self.dropped
            ));
        }
        let (a, b) = self.tail.as_slices();
        let mut tail = a.to_vec();
        tail.extend_from_slice(b);
        out.push_str(&String::from_utf8_lossy(&tail));
        out
    }

    #[cfg(test)]
    pub fn total_bytes(&self) -> u64 {
        self.head.len() as u64 + self.tail.len() as u64 + self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Captured::with_caps(8, 8);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.text(), "hello world");
        assert_eq!(c.total_bytes(), 11);
    }

    #[test]
    fn large_output_keeps_head_and_tail_and_counts_the_rest() {
        let mut c = Captured::with_caps(4, 4);
        for chunk in [b"abcd".as_slice(), b"efgh", b"ijkl", b"mn"] {
            c.push(chunk);
        }
        let text = c.text();
        assert!(text.starts_with("abcd"), "{text}");
        assert!(text.ends_with("klmn"), "{text}");
        assert!(text.contains("6 bytes of output not kept"), "{text}");
        assert_eq!(c.total_bytes(), 14);
    }

    #[test]
    fn one_huge_write_keeps_its_end() {
        let mut c = Captured::with_caps(2, 3);
        c.push(b"0123456789");
        assert!(c.text().starts_with("01"));
        assert!(c.text().ends_with("789"));
        assert_eq!(c.total_bytes(), 10);
    }
}
