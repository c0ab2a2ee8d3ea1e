//! A value worked out on a thread of its own and waited for only when it is needed: a
//! version manager's answer, a tool's `--version`. Asking either runs a process that can take
//! tens of milliseconds (a pyenv shim is bash starting a dozen more), which a gate should not
//! wait for when it does not need the answer to start.

use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

pub struct Pending<T> {
    thread: Mutex<Option<JoinHandle<T>>>,
    value: OnceLock<Option<T>>,
}

impl<T: Send + 'static> Pending<T> {
    /// Starts working out the value.
    pub fn start(work: impl FnOnce() -> T + Send + 'static) -> Self {
        Self {
            thread: Mutex::new(Some(std::thread::spawn(work))),
            value: OnceLock::new(),
        }
    }

    /// The value, waiting for it if it is still being worked out; `None` if the work failed
    /// (its thread panicked). Callers at once wait for the same one.
    pub fn get(&self) -> Option<&T> {
        self.value
            .get_or_init(|| {
                let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
                thread.and_then(|t| t.join().ok())
            })
            .as_ref()
    }

    /// True once somebody has waited for the value.
    pub fn settled(&self) -> bool {
        self.value.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_is_worked_out_once_and_kept() {
        let p = Pending::start(|| 6 * 7);
        assert!(!p.settled());
        assert_eq!(p.get(), Some(&42));
        assert!(p.settled());
        assert_eq!(p.get(), Some(&42));
    }

    #[test]
    fn failed_work_has_no_value() {
        let p: Pending<u8> = Pending::start(|| panic!("the work failed"));
        assert_eq!(p.get(), None);
    }
}
