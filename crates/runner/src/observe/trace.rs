//! Running a command with every file its process tree names recorded (Linux: ptrace, with a
//! seccomp filter so that only the calls that name a file stop the process).
//!
//! The tracer is a thread of its own: ptrace ties a tracee to the thread that traces it, and
//! that thread must both start the child and wait for every stop. The caller gets the
//! child's pid at once, its exit status when it exits, and the record when the whole tree is
//! gone. With the in-process half ([`preload`]) the programs append their own calls to the
//! record, so a program set on it can hide a read: by making the call with the run's key,
//! by writing a line of its own, or, as it always could, by opening the file for writing
//! too or reading through io_uring. The record is what honest tools read; the verdicts
//! that end a loop come from fresh runs.

use super::filter::{self, Call, Kind};
use super::preload;
use super::Access;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc::{channel, Sender};

pub use super::record::{Record, Report, StartError, Traced, Unavailable};

/// Starts `command` traced. `command`'s own settings (cwd, env, stdio, process group) are
/// kept; it is consumed so the parent's copies of its pipes close once it has started.
pub fn spawn(mut command: Command) -> Result<Traced, StartError> {
    let ring = in_process(&mut command);
    let key = ring.as_ref().map(|(_, key)| *key);
    let program = filter::program(key).ok_or(StartError::Unavailable(Unavailable::Architecture))?;
    let ring = ring.map(|(ring, _)| ring);
    let (pid_tx, pid_rx) = channel();
    let (tx, reports) = channel();
    std::thread::spawn(move || {
        // SAFETY: the closure runs between fork and exec and only makes raw system calls on
        // memory it owns (the program was built before the fork).
        unsafe {
            command.pre_exec(move || install(&program));
        }
        let spawned = command.spawn();
        drop(command);
        match spawned {
            Ok(child) => {
                let pid = child.id() as i32;
                let _ = pid_tx.send(Ok(pid));
                trace(pid, &tx, ring.as_ref());
            }
            Err(e) => {
                let _ = pid_tx.send(Err(e));
            }
        }
    });
    match pid_rx.recv() {
        Ok(Ok(pid)) => Ok(Traced { pid, reports }),
        // EPERM: ptrace or seccomp refused (a container's policy); EINVAL/ENOSYS: a kernel
        // without them. The same command may well start without them.
        Ok(Err(e))
            if matches!(
                e.raw_os_error(),
                Some(libc::EPERM | libc::EINVAL | libc::ENOSYS | libc::EACCES)
            ) =>
        {
            Err(StartError::Unavailable(Unavailable::Refused {
                kind: e.kind(),
                message: e.to_string(),
            }))
        }
        Ok(Err(e)) => Err(StartError::Spawn(e)),
        Err(_) => Err(StartError::Unavailable(Unavailable::TracerEnded)),
    }
}

/// Has `command`'s dynamically linked programs record their own path calls
/// ([`preload`]): the ring they write to and the key their calls carry, or `None` where the
/// library or the ring cannot be made (every call is then traced).
fn in_process(command: &mut Command) -> Option<(preload::Ring, u64)> {
    let library = preload::library()?;
    let ring = preload::Ring::new().ok()?;
    let key = preload::key();
    let before = |name: &str| match command.get_envs().find(|(k, _)| *k == name) {
        Some((_, v)) => v.map(std::ffi::OsStr::to_os_string),
        None => ralph_base::env::inherited(name),
    };
    let vars = ring.vars(library, key, (before("LD_PRELOAD"), before("ASAN_OPTIONS")));
    command.envs(vars);
    Some((ring, key))
}

/// Whether runs can be observed on this machine: a traced `true`, once per process.
pub fn probe() -> Result<(), Unavailable> {
    static ANSWER: std::sync::OnceLock<Result<(), Unavailable>> = std::sync::OnceLock::new();
    ANSWER
        .get_or_init(|| {
            let mut cmd = ralph_base::child::command("true");
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let traced = match spawn(cmd) {
                Ok(t) => t,
                Err(StartError::Unavailable(why)) => return Err(why),
                Err(StartError::Spawn(e)) => {
                    return Err(Unavailable::Probe {
                        kind: e.kind(),
                        message: e.to_string(),
                    })
                }
            };
            loop {
                match traced.reports.recv() {
                    Ok(Report::Exited(..)) => continue,
                    Ok(Report::Done(r)) => {
                        return r
                            .incomplete
                            .map_or(Ok(()), |why| Err(Unavailable::Incomplete(why)))
                    }
                    Err(_) => return Err(Unavailable::TracerEnded),
                }
            }
        })
        .clone()
}

/// In the child: be traced by the parent thread, and have path calls stop for it. Execve is
/// not in the filter, so the exec that follows runs before the tracer has set its options.
fn install(program: &[filter::Insn]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: plain system calls; `prog` points at memory that lives across them.
    unsafe {
        if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1
            || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1
            || libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &prog as *const libc::sock_fprog,
            ) == -1
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

const OPTIONS: libc::c_int = libc::PTRACE_O_TRACESECCOMP
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_EXITKILL;

/// The tracer's loop: serve every stop of every process in the tree until none is left.
fn trace(main: i32, tx: &Sender<Report>, ring: Option<&preload::Ring>) {
    let mut record = Record::default();
    let mut alive: HashSet<i32> = HashSet::from([main]);
    let mut attached: HashSet<i32> = HashSet::new();
    let mut main_done = false;
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is valid; wait4 writes one int and one rusage.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: see above.
        let pid = unsafe {
            libc::wait4(
                -1,
                &mut status,
                libc::__WALL | libc::__WNOTHREAD,
                &mut usage,
            )
        };
        if pid == -1 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            alive.remove(&pid);
            if pid == main && !main_done {
                main_done = true;
                let _ = tx.send(Report::Exited(status, ralph_base::child::cpu_time(&usage)));
                // What the command left behind goes with it, in its group or not.
                for p in &alive {
                    // SAFETY: kill has no memory preconditions.
                    unsafe { libc::kill(*p, libc::SIGKILL) };
                }
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        alive.insert(pid);
        let signal = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        let inject = if pid == main && attached.insert(pid) {
            // The stop after the first exec: the tracer's options start here.
            // SAFETY: pid is a stopped tracee of this thread.
            if unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, OPTIONS) } == -1 {
                record.incomplete = Some("cannot set the tracer's options".into());
            }
            0
        } else if event == libc::PTRACE_EVENT_SECCOMP {
            record.stops += 1;
            seen_call(pid, &mut record);
            0
        } else if event == libc::PTRACE_EVENT_EXEC {
            if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
                note(&mut record, exe, Access::Read, pid);
            }
            0
        } else if event != 0 {
            note_child(&mut record, pid);
            0
        } else if signal == libc::SIGSTOP && attached.insert(pid) {
            // A new process's first stop is the attach, not a signal to pass on.
            0
        } else {
            signal
        };
        attached.insert(pid);
        // SAFETY: pid is a stopped tracee of this thread.
        unsafe { libc::ptrace(libc::PTRACE_CONT, pid, 0, inject) };
    }
    if !main_done {
        record.incomplete = Some("the command's exit was not seen".into());
    }
    if let Some(ring) = ring {
        add_in_process(&mut record, ring);
    }
    let _ = tx.send(Report::Done(Box::new(record)));
}

/// Notes which process (or thread) `pid`, stopped at a fork, vfork or clone, started. The
/// new process is traced already: it stops on its own.
fn note_child(record: &mut Record, pid: i32) {
    let mut new: libc::c_ulong = 0;
    // SAFETY: pid is a stopped tracee of this thread; the call writes one c_ulong.
    let got = unsafe { libc::ptrace(libc::PTRACE_GETEVENTMSG, pid, 0, &mut new) };
    if got == 0 {
        record.parent.insert(new as i32, pid);
    }
}

/// Adds what the run's programs recorded in process; called once every process is gone,
/// when that record is whole.
fn add_in_process(record: &mut Record, ring: &preload::Ring) {
    match ring.read() {
        Ok(calls) => {
            record.in_process = calls.len();
            for (path, access, pid, updates) in calls {
                if updates {
                    record.updated.insert(path.clone());
                }
                note(record, path, access, pid);
            }
        }
        Err(why) => {
            record.incomplete.get_or_insert_with(|| why.to_string());
        }
    }
}

/// `struct ptrace_syscall_info` (Linux 5.3), as far as a seccomp stop fills it.
#[repr(C)]
#[derive(Default)]
struct SyscallInfo {
    op: u8,
    pad: [u8; 3],
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    nr: u64,
    args: [u64; 6],
    ret_data: u32,
    pad2: u32,
}

const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
const PTRACE_SYSCALL_INFO_SECCOMP: u8 = 3;

fn seen_call(pid: i32, record: &mut Record) {
    let mut info = SyscallInfo::default();
    let size = std::mem::size_of::<SyscallInfo>();
    // SAFETY: the kernel writes at most `size` bytes into `info`.
    let got = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO,
            pid,
            size,
            &mut info as *mut SyscallInfo,
        )
    };
    if got <= 0 || info.op != PTRACE_SYSCALL_INFO_SECCOMP {
        record.incomplete.get_or_insert_with(|| {
            "this kernel does not describe system calls to a tracer (Linux 5.3 or later does)"
                .into()
        });
        return;
    }
    let call = Call::decode(info.ret_data as u16);
    let access = match call.kind {
        Kind::Foreign => {
            record
                .incomplete
                .get_or_insert_with(|| "a program of another architecture ran".into());
            return;
        }
        Kind::Traces => {
            record.traced_itself = true;
            return;
        }
        Kind::Connects => {
            let len = info.args[call.flags.unwrap_or(2)] as usize;
            if let Some(path) = unix_socket(pid, info.args[call.path], len) {
                record.sockets.insert(path);
            }
            return;
        }
        Kind::Probe | Kind::Links => Opens::Is(Access::Probe),
        Kind::Write => Opens::Is(Access::Write),
        Kind::Open => Opens::With(info.args[call.flags.unwrap_or(1)]),
        Kind::OpenHow => match read_u64(pid, info.args[call.flags.unwrap_or(2)]) {
            Some(flags) => Opens::With(flags),
            None => Opens::Is(Access::Read),
        },
    };
    let Some(raw) = read_path(pid, info.args[call.path]) else {
        return;
    };
    let Some(path) = resolve(pid, raw, call.dirfd.map(|i| info.args[i] as i32)) else {
        record
            .incomplete
            .get_or_insert_with(|| "a relative path's folder could not be read".into());
        return;
    };
    let Some(path) = through_parents(through_proc_links(pid, path)) else {
        record.incomplete.get_or_insert_with(|| {
            "a path through `..` ran through a folder that could not be searched".into()
        });
        return;
    };
    let access = match access {
        Opens::Is(access) => access,
        Opens::With(flags) => {
            let access = open_access(flags, || path.exists());
            if access == Access::Read && flags as libc::c_int & libc::O_ACCMODE == libc::O_RDWR {
                record.updated.insert(path.clone());
            }
            access
        }
    };
    if call.kind == Kind::Links {
        record.linked.insert(path.clone());
    }
    note(record, path, access, pid);
}

/// What a call does to its path: known from the call alone, or from an open's flags.
enum Opens {
    Is(Access),
    With(u64),
}

/// `path` with its `..` taken as the kernel takes them: from the real folder before the last
/// one, resolved now, while the call that names it waits. Kept as it was, a name through a
/// folder the run removes later (`sandbox/../tool`, a test's scratch repository) names
/// nothing once the run is over, and would serve a stored verdict whatever `tool` holds.
/// A folder on the way that is not there (already gone, or never made) ends the kernel's
/// walk too: the call names the missing folder, and what lies past it cannot decide what
/// it does. `None` when the way cannot be read (a folder it may not search).
fn through_parents(path: PathBuf) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Component;
    // Every call a run makes comes here: a name without `..` costs one scan, no allocation.
    if !path.as_os_str().as_bytes().windows(2).any(|w| w == b"..") {
        return Some(path);
    }
    let parts: Vec<Component<'_>> = path.components().collect();
    let Some(last) = parts.iter().rposition(|c| *c == Component::ParentDir) else {
        return Some(path);
    };
    let head: PathBuf = parts[..=last].iter().collect();
    let tail: PathBuf = parts[last + 1..].iter().collect();
    let real = match std::fs::canonicalize(&head) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing_on_the_way(&parts),
        Err(_) => return None,
    };
    Some(match tail.as_os_str().is_empty() {
        true => real,
        false => real.join(tail),
    })
}

/// The first name on the way of `parts` (an absolute path) that is not there, walked as
/// the kernel walks it: `..` from the real folder reached so far.
fn missing_on_the_way(parts: &[std::path::Component<'_>]) -> Option<PathBuf> {
    use std::path::Component;
    let mut at = PathBuf::from("/");
    for c in parts {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                let next = at.join(name);
                match std::fs::canonicalize(&next) {
                    Ok(real) => at = real,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(next),
                    Err(_) => return None,
                }
            }
        }
    }
    Some(at)
}

/// `path` through the kernel's links to a process's folders and files (`/proc/self/cwd/x`,
/// `/proc/<pid>/root/<path>`, `/proc/thread-self/fd/3`, `/dev/fd/3`): the file the call
/// names, read now, while the call waits. Kept as it was, the read of a project's file by
/// such a name is a read under `/proc`, which is never an input, and `self` would name the
/// tracer. A link to no file (a pipe, a socket) or one that cannot be read keeps the path.
fn through_proc_links(pid: i32, path: PathBuf) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // Every call comes here: anything else costs one comparison.
    if !bytes.starts_with(b"/proc/") && !bytes.starts_with(b"/dev/fd/") {
        return path;
    }
    let parts: Vec<&OsStr> = path.iter().skip(1).collect();
    let (mut at, rest) = match parts.as_slice() {
        [d, fd, rest @ ..] if *d == "dev" && *fd == "fd" => {
            (PathBuf::from(format!("/proc/{pid}/fd")), rest)
        }
        [p, who, rest @ ..] if *p == "proc" => {
            let who = match who.to_str() {
                Some("self") => pid.to_string(),
                Some("thread-self") => format!("{pid}/task/{pid}"),
                Some(n) if n.bytes().all(|b| b.is_ascii_digit()) => n.to_string(),
                _ => return path,
            };
            (PathBuf::from(format!("/proc/{who}")), rest)
        }
        _ => return path,
    };
    for (i, part) in rest.iter().enumerate() {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return path;
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        return match std::fs::read_link(&at) {
            Ok(target) if target.is_absolute() => {
                let mut real = target;
                real.extend(&rest[i + 1..]);
                real
            }
            _ => path,
        };
    }
    path
}

/// The path of the Unix socket a `struct sockaddr_un` at `addr` (of `len` bytes) names;
/// `None` for another family, an abstract name or an unnamed socket.
fn unix_socket(pid: i32, addr: u64, len: usize) -> Option<PathBuf> {
    let len = len.min(std::mem::size_of::<libc::sockaddr_un>());
    if len <= 2 {
        return None;
    }
    let mut buf = vec![0u8; len];
    if read_mem(pid, addr, &mut buf) != Some(len) {
        return None;
    }
    let family = u16::from_ne_bytes([buf[0], buf[1]]);
    let name = &buf[2..];
    if family != libc::AF_UNIX as u16 || name.first().is_none_or(|b| *b == 0) {
        return None;
    }
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    resolve(pid, name[..end].to_vec(), None)
}

/// How an open with `flags` touches its file. One that can read what the file held before
/// the call reads it: `O_RDWR` too (a test's `open(cases, "r+")`, a shell's `3<>cases`, a
/// database), else a run that reads its data that way would leave it out of what it read.
/// One that writes only, truncates or must make a new file reads nothing. Whether the file
/// was there (`exists`, asked only for an open that may make it or write it) tells a file
/// the run makes from one it opens to read and perhaps update; one the run made earlier
/// stays its output ([`note`] keeps the strongest).
pub(crate) fn open_access(flags: u64, exists: impl FnOnce() -> bool) -> Access {
    let flags = flags as libc::c_int;
    let mode = flags & libc::O_ACCMODE;
    let made = libc::O_CREAT | libc::O_EXCL;
    if flags & libc::O_PATH != 0 {
        Access::Probe
    } else if mode == libc::O_WRONLY || flags & libc::O_TRUNC != 0 || flags & made == made {
        Access::Write
    } else if (mode == libc::O_RDONLY && flags & libc::O_CREAT == 0) || exists() {
        Access::Read
    } else {
        Access::Write
    }
}

fn note(record: &mut Record, path: PathBuf, access: Access, pid: i32) {
    match record.by.get_mut(&path) {
        Some(by) if !by.contains(&pid) => by.push(pid),
        Some(_) => {}
        None => {
            record.by.insert(path.clone(), vec![pid]);
        }
    }
    let e = record.paths.entry(path).or_insert(access);
    *e = (*e).max(access);
}

/// `raw` as an absolute path: a relative one joined to the process's cwd or to the folder
/// `dirfd` names, as the kernel will resolve it.
fn resolve(pid: i32, raw: Vec<u8>, dirfd: Option<i32>) -> Option<PathBuf> {
    let path = PathBuf::from(OsString::from_vec(raw));
    if path.is_absolute() {
        return Some(path);
    }
    let base = match dirfd {
        Some(fd) if fd != libc::AT_FDCWD => format!("/proc/{pid}/fd/{fd}"),
        _ => format!("/proc/{pid}/cwd"),
    };
    let base = std::fs::read_link(base).ok()?;
    Some(if path.as_os_str().is_empty() {
        base
    } else {
        base.join(path)
    })
}

/// Reads a NUL-terminated string from the tracee, page by page (a string may end just before
/// an unmapped page).
fn read_path(pid: i32, addr: u64) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < libc::PATH_MAX as usize {
        let len = (PAGE - at % PAGE) as usize;
        let mut buf = vec![0u8; len];
        if read_mem(pid, at, &mut buf) != Some(len) {
            return None;
        }
        if let Some(end) = buf.iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf);
        at += len as u64;
    }
    None
}

fn read_u64(pid: i32, addr: u64) -> Option<u64> {
    let mut buf = [0u8; 8];
    (read_mem(pid, addr, &mut buf) == Some(8)).then(|| u64::from_ne_bytes(buf))
}

fn read_mem(pid: i32, addr: u64, buf: &mut [u8]) -> Option<usize> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: writes at most buf.len() bytes into buf; the remote address is only read.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    usize::try_from(n).ok()
}
