//! Gates run in process groups of their own, so a terminal's Ctrl-C does not reach them. This
//! module remembers every live group and, when ralph-gate is told to stop (SIGINT, SIGTERM,
//! SIGHUP), kills them all before exiting, so no tsc or cargo outlives us.

use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();
/// Run before exiting on a signal (the dashboard restores the terminal here).
static BEFORE_EXIT: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

pub fn before_exit(f: fn()) {
    let _ = BEFORE_EXIT.set(f);
}

type Cleanup = Box<dyn Fn() + Send>;
static CLEANUPS: Mutex<Vec<(u64, Cleanup)>> = Mutex::new(Vec::new());
static NEXT_CLEANUP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Runs `f` if ralph-gate is told to stop before [`forget_cleanup`] is called with the id
/// returned: after every gate's group is killed, before exiting (the working tree that
/// `check --staged` changed is put back here).
pub fn on_stop(f: impl Fn() + Send + 'static) -> u64 {
    install();
    let id = NEXT_CLEANUP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CLEANUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((id, Box::new(f)));
    id
}

pub fn forget_cleanup(id: u64) {
    CLEANUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(i, _)| *i != id);
}

/// Hold this while spawning and call `add` before dropping it, so a signal that arrives
/// mid-spawn still finds the new group.
pub fn lock() -> MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn remove(pgid: i32) {
    lock().retain(|g| *g != pgid);
}

/// Sends `signal` to a whole process group. ESRCH (nothing left) is fine.
pub fn kill_group(pgid: i32, signal: i32) {
    // SAFETY: killpg has no memory-safety preconditions; a stale pgid only yields ESRCH.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Installs the handler thread once per process.
pub fn install() {
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let groups = lock();
                for g in groups.iter() {
                    kill_group(*g, libc::SIGTERM);
                }
                std::thread::sleep(Duration::from_millis(300));
                for g in groups.iter() {
                    kill_group(*g, libc::SIGKILL);
                }
                for (_, f) in CLEANUPS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    f();
                }
                if let Some(f) = BEFORE_EXIT.get() {
                    f();
                }
                std::process::exit(128 + sig);
            }
        });
    });
}
