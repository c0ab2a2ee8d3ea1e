//! The seccomp filter an observed run is started under: every system call that names a file
//! (open, stat, access, readlink, rename and their `*at` forms), ptrace and connect, stops
//! the process for the tracer; everything else runs at full speed. What each call's
//! arguments mean is encoded in the 16 bits of data the filter hands the tracer, so the
//! tracer needs no system call table.

/// How a traced call touches its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// stat, access, readlink: the path's kind and, for a file, its content may decide.
    Probe,
    /// open: read (a file's content, a folder's listing) unless its flags write.
    Open,
    /// rename's destination, creat, truncate, mkdir: the run makes or writes it.
    Write,
    /// openat2: the flags are in a struct the third argument points to.
    OpenHow,
    /// A call of another architecture (a 32-bit program on a 64-bit kernel): not decoded,
    /// so the run's inputs are not all known.
    Foreign,
    /// ptrace: the run traces processes itself (a debugger's tests, a leak checker at
    /// exit), which fails under a tracer: its verdict is not the bare tool's.
    Traces,
    /// connect: `path` is the `struct sockaddr *`, `flags` its length. A Unix socket names
    /// a server, whose reads are not the run's.
    Connects,
    /// link's existing file: given another name by the run, its change time moves by the
    /// run's own hand (its content does not).
    Links,
}

/// A traced call's meaning, decoded from the filter's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub kind: Kind,
    /// The argument holding the path.
    pub path: usize,
    /// The argument holding the folder a relative path starts from (`None`: the cwd).
    pub dirfd: Option<usize>,
    /// The argument holding open's flags (or openat2's `struct open_how *`).
    pub flags: Option<usize>,
}

const NONE: u32 = 7;

const fn arg_bits(a: Option<usize>) -> u32 {
    match a {
        Some(i) => i as u32,
        None => NONE,
    }
}

impl Call {
    const fn new(kind: Kind, path: usize, dirfd: Option<usize>, flags: Option<usize>) -> Self {
        Self {
            kind,
            path,
            dirfd,
            flags,
        }
    }

    /// The 16 bits the filter returns with `SECCOMP_RET_TRACE`.
    pub const fn encode(self) -> u16 {
        let kind = match self.kind {
            Kind::Probe => 1,
            Kind::Open => 2,
            Kind::Write => 3,
            Kind::OpenHow => 4,
            Kind::Traces => 5,
            Kind::Connects => 6,
            Kind::Links => 7,
            Kind::Foreign => 15,
        };
        (kind | (self.path as u32) << 4 | arg_bits(self.dirfd) << 7 | arg_bits(self.flags) << 10)
            as u16
    }

    pub fn decode(data: u16) -> Self {
        let data = u32::from(data);
        let kind = match data & 15 {
            1 => Kind::Probe,
            2 => Kind::Open,
            3 => Kind::Write,
            4 => Kind::OpenHow,
            5 => Kind::Traces,
            6 => Kind::Connects,
            7 => Kind::Links,
            _ => Kind::Foreign,
        };
        let arg = |bits: u32| (bits != NONE).then_some(bits as usize);
        Self {
            kind,
            path: ((data >> 4) & 7) as usize,
            dirfd: arg((data >> 7) & 7),
            flags: arg((data >> 10) & 7),
        }
    }
}

/// A traced system call: its number, its meaning, and the argument whose `AT_EMPTY_PATH`
/// bit makes it an fstat (glibc's fstat is `newfstatat(fd, "", AT_EMPTY_PATH)`: no path).
struct Traced {
    nr: u32,
    call: Call,
    empty_path_flag: Option<usize>,
}

const fn t(nr: u32, call: Call) -> Traced {
    Traced {
        nr,
        call,
        empty_path_flag: None,
    }
}

const fn fd_stat(nr: u32, flag_arg: usize) -> Traced {
    Traced {
        nr,
        call: Call::new(Kind::Probe, 1, Some(0), None),
        empty_path_flag: Some(flag_arg),
    }
}

const PROBE: Call = Call::new(Kind::Probe, 0, None, None);
const PROBE_AT: Call = Call::new(Kind::Probe, 1, Some(0), None);
const OPEN_AT: Call = Call::new(Kind::Open, 1, Some(0), Some(2));
const RENAME_AT: Call = Call::new(Kind::Write, 3, Some(2), None);
const WRITE: Call = Call::new(Kind::Write, 0, None, None);
const WRITE_AT: Call = Call::new(Kind::Write, 1, Some(0), None);
const TRACES: Call = Call::new(Kind::Traces, 0, None, None);
const CONNECTS: Call = Call::new(Kind::Connects, 1, None, Some(2));
const LINKS: Call = Call::new(Kind::Links, 0, None, None);
const LINKS_AT: Call = Call::new(Kind::Links, 1, Some(0), None);

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "x86_64")]
const CALLS: &[Traced] = &[
    t(2, Call::new(Kind::Open, 0, None, Some(1))), // open
    t(4, PROBE),                                   // stat
    t(6, PROBE),                                   // lstat
    t(21, PROBE),                                  // access
    t(42, CONNECTS),                               // connect
    t(76, WRITE),                                  // truncate
    t(82, Call::new(Kind::Write, 1, None, None)),  // rename
    t(83, WRITE),                                  // mkdir
    t(85, WRITE),                                  // creat
    t(86, LINKS),                                  // link
    t(89, PROBE),                                  // readlink
    t(101, TRACES),                                // ptrace
    t(257, OPEN_AT),                               // openat
    t(258, WRITE_AT),                              // mkdirat
    fd_stat(262, 3),                               // newfstatat
    t(264, RENAME_AT),                             // renameat
    t(265, LINKS_AT),                              // linkat
    t(267, PROBE_AT),                              // readlinkat
    t(269, PROBE_AT),                              // faccessat
    t(316, RENAME_AT),                             // renameat2
    fd_stat(332, 2),                               // statx
    t(437, Call::new(Kind::OpenHow, 1, Some(0), Some(2))), // openat2
    t(439, PROBE_AT),                              // faccessat2
];

#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
#[cfg(target_arch = "aarch64")]
const CALLS: &[Traced] = &[
    t(34, WRITE_AT),                                       // mkdirat
    t(37, LINKS_AT),                                       // linkat
    t(38, RENAME_AT),                                      // renameat
    t(45, WRITE),                                          // truncate
    t(48, PROBE_AT),                                       // faccessat
    t(56, OPEN_AT),                                        // openat
    t(78, PROBE_AT),                                       // readlinkat
    fd_stat(79, 3),                                        // newfstatat
    t(117, TRACES),                                        // ptrace
    t(203, CONNECTS),                                      // connect
    t(276, RENAME_AT),                                     // renameat2
    fd_stat(291, 2),                                       // statx
    t(437, Call::new(Kind::OpenHow, 1, Some(0), Some(2))), // openat2
    t(439, PROBE_AT),                                      // faccessat2
];

/// Calls refused with an errno, keyed or not: they read files no tracer can see (io_uring's
/// operations run in the kernel's own threads; a file handle names no path). Every program
/// that uses io_uring falls back to plain calls on `ENOSYS` (libuv, liburing's users,
/// tokio); opening by handle takes a privilege tests do not have (`EPERM`, as unprivileged).
/// io_uring's calls have the same numbers on every architecture; open_by_handle_at does not.
const REFUSED: &[(u32, i32)] = &[
    (425, libc::ENOSYS),              // io_uring_setup
    (426, libc::ENOSYS),              // io_uring_enter
    (427, libc::ENOSYS),              // io_uring_register
    (OPEN_BY_HANDLE_AT, libc::EPERM), // open_by_handle_at
];
#[cfg(target_arch = "x86_64")]
const OPEN_BY_HANDLE_AT: u32 = 304;
#[cfg(target_arch = "aarch64")]
const OPEN_BY_HANDLE_AT: u32 = 265;
/// No filter is built here ([`SUPPORTED`]): the number is never used.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const OPEN_BY_HANDLE_AT: u32 = u32::MAX;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: u32 = 0;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const CALLS: &[Traced] = &[];

/// Whether this build can observe runs at all.
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// One classic BPF instruction (`struct sock_filter`).
pub type Insn = libc::sock_filter;

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
const AT_EMPTY_PATH: u32 = 0x1000;
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
const fn arg_low(i: usize) -> u32 {
    16 + 8 * i as u32
}

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
    Insn { code, jt, jf, k }
}

fn trace(call: Call) -> Insn {
    insn(
        RET_K,
        0,
        0,
        libc::SECCOMP_RET_TRACE | u32::from(call.encode()),
    )
}

/// The filter program, or `None` on an architecture this build cannot decode. A call with
/// `key` in its sixth argument register runs without a stop: the in-process observer
/// (`preload.c`) recorded it already; the calls that name a file take at most five
/// arguments, so no other call of theirs has anything there but what the register held.
pub fn program(key: Option<u64>) -> Option<Vec<Insn>> {
    if !SUPPORTED {
        return None;
    }
    Some(program_for(ARCH, CALLS, key))
}

fn program_for(arch: u32, calls: &[Traced], key: Option<u64>) -> Vec<Insn> {
    let allow = insn(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW);
    let foreign = trace(Call::new(Kind::Foreign, 0, None, None));
    let mut p = vec![
        insn(LD_W_ABS, 0, 0, ARCH_AT),
        insn(JEQ_K, 1, 0, arch),
        foreign,
    ];
    p.push(insn(LD_W_ABS, 0, 0, NR));
    for (nr, errno) in REFUSED {
        p.push(insn(JEQ_K, 0, 1, *nr));
        p.push(insn(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | *errno as u32));
    }
    if let Some(key) = key {
        p.extend([
            insn(LD_W_ABS, 0, 0, arg_low(5)),
            insn(JEQ_K, 0, 3, key as u32),
            insn(LD_W_ABS, 0, 0, arg_low(5) + 4),
            insn(JEQ_K, 0, 1, (key >> 32) as u32),
            allow,
        ]);
    }
    p.push(insn(LD_W_ABS, 0, 0, NR));
    if arch == 0xC000_003E {
        // x32 calls have this bit set: another ABI, not decoded.
        p.push(insn(JGE_K, 0, 1, 0x4000_0000));
        p.push(foreign);
    }
    for c in calls {
        match c.empty_path_flag {
            None => {
                p.push(insn(JEQ_K, 0, 1, c.nr));
                p.push(trace(c.call));
            }
            Some(flag) => {
                p.push(insn(JEQ_K, 0, 4, c.nr));
                p.push(insn(LD_W_ABS, 0, 0, arg_low(flag)));
                p.push(insn(JSET_K, 0, 1, AT_EMPTY_PATH));
                p.push(allow);
                p.push(trace(c.call));
            }
        }
    }
    p.push(allow);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_survives_the_trip_through_the_filter_data() {
        for c in CALLS {
            assert_eq!(Call::decode(c.call.encode()), c.call);
        }
        let foreign = Call::new(Kind::Foreign, 0, None, None);
        assert_eq!(Call::decode(foreign.encode()).kind, Kind::Foreign);
    }

    /// Runs the program over one call the way the kernel does, and returns what it says.
    fn verdict(p: &[Insn], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |off: u32| -> u32 {
            match off {
                0 => nr,
                4 => arch,
                o if o >= 16 && (o - 16) % 8 == 4 => (args[((o - 16) / 8) as usize] >> 32) as u32,
                o if o >= 16 => (args[((o - 16) / 8) as usize] & 0xffff_ffff) as u32,
                _ => 0,
            }
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = p[pc];
            match i.code {
                LD_W_ABS => a = word(i.k),
                RET_K => return i.k,
                JEQ_K | JGE_K | JSET_K => {
                    let yes = match i.code {
                        JEQ_K => a == i.k,
                        JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += usize::from(if yes { i.jt } else { i.jf });
                }
                other => panic!("unknown instruction {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_filter_traces_path_calls_only_and_lets_fstat_run() {
        let p = program_for(ARCH, CALLS, None);
        let traced = |v: u32| v & 0xffff_0000 == libc::SECCOMP_RET_TRACE;
        for c in CALLS {
            let v = verdict(&p, ARCH, c.nr, [0; 6]);
            assert!(traced(v), "call {} is traced", c.nr);
            assert_eq!(Call::decode((v & 0xffff) as u16), c.call);
            if let Some(flag) = c.empty_path_flag {
                let mut args = [0; 6];
                args[flag] = u64::from(AT_EMPTY_PATH);
                let v = verdict(&p, ARCH, c.nr, args);
                assert_eq!(v, libc::SECCOMP_RET_ALLOW, "an fstat of call {} runs", c.nr);
            }
        }
        // read(2) on x86_64, read(63) on aarch64: neither is a path call on either.
        for nr in [0, 1, 3, 63] {
            assert_eq!(verdict(&p, ARCH, nr, [0; 6]), libc::SECCOMP_RET_ALLOW);
        }
        // With a key: a call carrying it runs; the same call without it, or with half of
        // it, stops.
        let key = 0x1234_5678_9abc_def0_u64;
        let keyed = program_for(ARCH, CALLS, Some(key));
        for c in CALLS {
            let mut args = [0; 6];
            args[5] = key;
            assert_eq!(verdict(&keyed, ARCH, c.nr, args), libc::SECCOMP_RET_ALLOW);
            args[5] = key & 0xffff_ffff;
            assert!(
                traced(verdict(&keyed, ARCH, c.nr, args)),
                "half a key is no key"
            );
            assert!(traced(verdict(&keyed, ARCH, c.nr, [0; 6])));
        }
        for (nr, errno) in REFUSED {
            let mut args = [0; 6];
            args[5] = key;
            let refused = libc::SECCOMP_RET_ERRNO | *errno as u32;
            assert_eq!(verdict(&p, ARCH, *nr, [0; 6]), refused, "call {nr}");
            assert_eq!(
                verdict(&keyed, ARCH, *nr, args),
                refused,
                "keyed, call {nr}"
            );
        }
        let v = verdict(&p, 0x4000_0003, 5, [0; 6]);
        assert!(traced(v), "another architecture's call is traced");
        assert_eq!(Call::decode((v & 0xffff) as u16).kind, Kind::Foreign);
    }
}
