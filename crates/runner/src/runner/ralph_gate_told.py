"""ralph-gate's listener, loaded into every pytest a gate starts (`-p` with a module name
drawn for the run, so no file of the project can stand in for it: `-p` plugins load before
any conftest).

It writes what the session ran as pytest reports it (failed tests, errors, how many of the
tests collected to run did run, the exit status pytest itself computed, whether the session
reached its end) where ralph-gate reads it once the gate's command has exited: an exit
status of 0 must agree with it. Only the outermost session of a gate counts: a session
started inside another (pytester, in the same process or in a child process) tests pytest
itself, and its failures are expected. Nesting is told by the processes, not by a variable:
a session whose process, or an ancestor of it, already has a report open is nested.
"""
import json
import os

# Read when `-p` imports this module, before any conftest runs: one cannot take it away.
_WHERE = os.environ.get("RALPH_GATE_PYTEST_REPORTS")
_active = []

# `-p` imports this module into a pytest; ralph-gate's `sitecustomize` imports it into any
# other Python once unittest or doctest loads there (`listen`).
_IN_PYTEST = "_pytest" in __import__("sys").modules


def _heard():
    """A runner was heard: ralph-gate must not take a failure that names this module for
    one to load it."""
    if _WHERE:
        try:
            open(os.path.join(_WHERE, "loaded-%d" % os.getpid()), "w").close()
        except OSError:
            pass


if _IN_PYTEST:
    _heard()


def _checkout_stands_in():
    """In a run in a checkout standing for the work tree (a loop's start tree, the base of
    `check --base`), the code the import system finds in the work tree is taken from the
    checkout: an editable install (a `.pth` line naming the project's `src/`, an import
    finder of setuptools or hatch) names the work tree's code wherever a run is, and the
    checkout's tests would run on it. Decided by where a module was found, whatever found
    it: a module found in the work tree whose file the checkout has (its own, not one lent
    from the work tree) is loaded from there; a package searches the checkout's folder
    first, then the work tree's (a generated `_version.py` git ignores). Modules pytest
    imported before this (its own dependencies) from the work tree are dropped, to be imported
    again; pytest and pluggy themselves stay."""
    import sys

    work = os.environ.pop("RALPH_GATE_WORK_TREE", None)
    here = os.environ.pop("RALPH_GATE_CHECKOUT", None)
    if not work or not here:
        return
    work = os.path.realpath(work)

    def theirs(path):
        """For a file of the work tree's own (not one the checkout is lent), the path the
        checkout has for it, whether or not a file is there."""
        if not isinstance(path, str):
            return None
        real = os.path.realpath(path)
        if not real.startswith(work + os.sep):
            return None
        mine = os.path.join(here, os.path.relpath(real, work))
        return None if os.path.realpath(mine) == real else mine

    def counterpart(path):
        mine = theirs(path)
        return mine if mine is not None and os.path.exists(mine) else None

    def moved(spec):
        import importlib.util

        places = spec.submodule_search_locations
        mine = counterpart(spec.origin) if spec.has_location else None
        if mine is None:
            if places is not None:
                # A namespace package: its folders in the checkout first.
                ours = [c for c in map(counterpart, list(places)) if c]
                if ours:
                    spec.submodule_search_locations = ours + list(places)
            return spec
        if places is None:
            return importlib.util.spec_from_file_location(spec.name, mine)
        first = [os.path.dirname(mine)] + list(places)
        return importlib.util.spec_from_file_location(
            spec.name, mine, submodule_search_locations=first
        )

    # The runner running this session stays as it is, wherever it came from (a checkout of
    # pytest's own repository): its objects would not match new copies of its modules.
    running = ("pytest", "_pytest", "pluggy")

    class CheckoutFirst:
        finding = set()

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name in cls.finding or name.split(".", 1)[0] in running:
                return None
            cls.finding.add(name)
            try:
                for finder in sys.meta_path:
                    find = getattr(finder, "find_spec", None)
                    if finder is cls or find is None:
                        continue
                    spec = find(name, path, target)
                    if spec is not None:
                        return moved(spec)
                return None
            finally:
                cls.finding.discard(name)

    for name, module in list(sys.modules.items()):
        if name.split(".", 1)[0] in running:
            continue
        if theirs(getattr(module, "__file__", None)):
            del sys.modules[name]
    sys.meta_path.insert(0, CheckoutFirst)


if _IN_PYTEST:
    _checkout_stands_in()


def _ancestors():
    """This process and those above it, by /proc; only this one where there is no /proc."""
    pid, seen = os.getpid(), []
    while pid > 1 and len(seen) < 256:
        seen.append(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


def _nested(where):
    if _active:
        return True
    try:
        open_reports = {name.split("-", 1)[0] for name in os.listdir(where)}
    except OSError:
        return False
    return any(str(pid) in open_reports for pid in _ancestors())


class _Record:
    """What one session of a runner ran, written where ralph-gate reads it (at once, and
    again at its end: a session whose end never came is told by that)."""

    def __init__(self, path, runner="pytest"):
        self.path = path
        self.ran = set()
        self.state = {
            "runner": runner,
            "failed": [],
            "errors": [],
            "passed": 0,
            "to_run": 0,
            "ran": 0,
            "status": None,
            "finished": False,
            "plugins": [],
            "ran_ids": [],
            "test_files": [],
            "test_data": [],
            "test_listed": [],
            "pid": os.getpid(),
            "listed_dirs": [],
        }
        self.ran_ids = set()
        # (file opened for reading, the innermost file of the project whose code opened it)
        self.opened = set()
        # (file named without being opened: in a folder listed, or asked of with a stat,
        # an access or a readlink; the innermost file of the project whose code did it)
        self.listed = set()
        # Every folder of the project listed in this process, by any code.
        self.dirs = set()
        self.watching = False
        self.write()

    def write(self):
        partial = self.path + ".partial"
        with open(partial, "w") as f:
            json.dump(self.state, f)
        os.replace(partial, self.path)

    def finish(self, ours):
        """The session reached its end: what ran, and what the code of `ours` (its tests'
        files) read."""
        self.watching = False
        imported = _imported_files()
        self.state["ran"] = len(self.ran)
        self.state["ran_ids"] = sorted(self.ran_ids)
        self.state["test_data"] = _test_data(self, ours, imported)
        self.state["test_listed"] = _test_listed(self, ours, imported)
        self.state["listed_dirs"] = sorted(self.dirs | _import_listed())
        self.state["accounted"] = _accounted(self, ours, imported)
        self.state["finished"] = True
        self.write()


class _Listener(_Record):
    def __init__(self, path, config):
        self.config = config
        _Record.__init__(self, path)

    def pytest_collection_finish(self, session):
        if not self.config.option.collectonly:
            self.state["to_run"] = len(session.items)
        self.state["plugins"] = _plugin_files(self.config)
        self.state["test_files"] = _test_files(session.items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.state["errors"].append(report.nodeid or "(collection)")

    def pytest_runtest_logreport(self, report):
        self.ran.add(report.nodeid)
        # Ran: its call passed or failed, or its setup or teardown failed. Not a skip, an
        # xfail (reported as skipped) or a deselection: a loop compares these with the
        # tests that ran at its start.
        if report.failed or (report.when == "call" and report.passed):
            self.ran_ids.add(report.nodeid)
        if report.failed:
            kind = "failed" if report.when == "call" else "errors"
            self.state[kind].append(report.nodeid)
        elif report.passed and report.when == "call":
            self.state["passed"] += 1


def _test_files(items):
    """The files pytest collected the tests to run from, by what it collected (a module its
    `python_files` names, a doctest text file, a file a plugin collects), whatever their
    names: not a module of the code whose docstrings `--doctest-modules` runs."""
    files = set()
    for item in items:
        parent = getattr(item, "parent", None)
        if type(parent).__name__ == "DoctestModule":
            continue
        path = getattr(item, "path", None) or getattr(item, "fspath", None)
        if path is not None:
            files.add(os.path.abspath(str(path)))
    return sorted(files)


def _test_data(listener, ours, imported):
    """The files the tests read as data: opened for reading by code of a test file, a
    conftest or a plugin (`ours`; directly or through a library), not by the code under
    test, and not a module anything imported (the code a test reads as text stays code)."""
    ours = set(ours)
    return sorted({f for f, by in listener.opened if by in ours and f not in imported})


def _test_listed(listener, ours, imported):
    """The files the tests named without opening them: those in folders they listed (their
    names may be the cases), and those they asked of (a size, a mode, a link's target,
    whether one is there: there or not), neither opened (by the tests: their data; by the
    code: its own, a template it renders) nor a module anything imported: whether such a
    file's content is the tests' or the code's is not known (a script in a folder of
    cases). Not a folder."""
    ours = set(ours)
    opened = {f for f, _ in listener.opened}
    named = {f for f, by in listener.listed if by in ours and f not in imported and f not in opened}
    return sorted(f for f in named if not os.path.isdir(f))


def _import_listed():
    """The project's folders the import system listed in this process (its finders keep a
    listing of each folder they searched), before the listener could hear it too: `python
    -m pytest` searches the project's folder for pytest itself."""
    import sys

    root = os.path.abspath(_root())
    found = set()
    for folder, finder in list(sys.path_importer_cache.items()):
        if getattr(finder, "_path_cache", None) and isinstance(folder, str):
            full = os.path.abspath(folder or os.curdir)
            if (full + os.sep).startswith(root + os.sep):
                found.add(full)
    return found


def _accounted(listener, ours, imported):
    """The project's files this process is known to have read as the code under test's:
    every module imported, and what the code that is not the tests' opened. ralph-gate
    takes a file the traced run read beyond these, what the tests read and what the
    processes the session started said of themselves (`child`) for either the tests' data
    or the code: no audit event said which code read it (another program, a thread of a
    library's, C code)."""
    root = os.path.abspath(_root()) + os.sep
    ours = set(ours)
    files = {f for f in imported if f.startswith(root)}
    files.update(f for f, by in listener.opened if by not in ours)
    return sorted(files)


def _imported_files():
    """The file of every module imported so far."""
    import sys

    modules = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
    return {os.path.abspath(f) for f in modules if isinstance(f, str)}


def _reads_it(mode, flags):
    """Whether an open can read what the file held: for reading (`r`, `r+`, `a+`, `O_RDONLY`,
    `O_RDWR`), not one that only writes, truncates or makes a new file."""
    if isinstance(mode, str):
        return "r" in mode or ("a" in mode and "+" in mode)
    if not isinstance(flags, int):
        return True
    access = flags & getattr(os, "O_ACCMODE", 3)
    made = flags & os.O_CREAT and flags & os.O_EXCL
    return access != os.O_WRONLY and not flags & os.O_TRUNC and not made


_LISTINGS = ("os.listdir", "os.scandir")


def _watch_reads(listener, root):
    """Keeps, while the session runs, each file under `root` opened for reading and the
    innermost file of the project whose code opened it (Python's audit events: the open
    itself, whatever spelled it). Files the import system opens are not reads of data. A
    folder listed (`os.listdir`, `os.scandir`, and so `glob`, `os.walk`, `pathlib`) gives
    each file in it: the names a test reads can be its cases."""
    import sys

    roots = tuple({os.path.abspath(root) + os.sep, os.path.realpath(root) + os.sep})
    me = os.path.abspath(__file__)
    python = tuple(
        {os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    )

    def project_code(name):
        return (
            name.startswith(roots)
            and name != me
            and os.sep + "site-packages" + os.sep not in name
            and os.sep + "dist-packages" + os.sep not in name
        )

    def by_whom():
        frame = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib"):
                return None
            if project_code(name):
                return os.path.abspath(name)
            frame = frame.f_back
        return None

    import tempfile

    temp = os.path.abspath(tempfile.gettempdir())
    # Where a probe's name outside the project may be a link into it: a test's links live
    # in the temporary folder. Resolving every name (`/usr/bin/env`) tripled a stat's cost.
    links = tuple({"/proc/", "/dev/fd/", temp + os.sep, os.path.realpath(temp) + os.sep})

    def inside(path, through=None):
        """`path` as a file of the project's, or `None`; a name outside it is followed
        through links when it starts with one of `through` (every name: `None`)."""
        full = os.path.abspath(os.fsdecode(path))
        if through is not None and not full.startswith(through):
            return full if (full + os.sep).startswith(roots) else None
        if not (full + os.sep).startswith(roots) and not full.startswith(python):
            # A name outside the project may reach into it through links: a link the
            # test made under `tmp_path` to a case or to the project's folder,
            # `/proc/self/cwd/cases.txt`, `/dev/fd/3`. Not asked of Python's own files
            # (its imports).
            full = os.path.realpath(full)
            # A hard link made in this process to a file of the project's is that file;
            # one another program made (`ln`) in the temporary folder, found by its inode.
            full = _hard_links.get(full, full)
            if full.startswith(links) and not (full + os.sep).startswith(roots):
                full = _linked_to_project(full, roots[0]) or full
        return full if (full + os.sep).startswith(roots) else None

    def linked(args):
        """`os.link(src, dst)` (and `Path.hardlink_to`): `dst` names `src` from now on."""
        src, dst = args[0], args[1]
        if args[2] not in (None, -1) or args[3] not in (None, -1):
            return
        source = inside(src)
        if source is not None:
            name = os.path.abspath(os.fsdecode(dst))
            _hard_links[name] = source
            _hard_links[os.path.join(os.path.realpath(os.path.dirname(name)), os.path.basename(name))] = source

    def probed(path):
        if not listener.watching:
            return
        try:
            full = inside(path, links)
            by = by_whom() if full is not None else None
            if by is not None:
                listener.listed.add((full, by))
        except Exception:
            pass

    def hook(event, args):
        if event == "os.link" and listener.watching:
            try:
                linked(args)
            except Exception:
                pass
            return
        if event not in ("open", "sqlite3.connect") + _LISTINGS or not listener.watching:
            return
        try:
            path = args[0]
            if path is None and event in _LISTINGS:
                path = "."
            if isinstance(path, int) or (event == "open" and not _reads_it(*args[1:3])):
                return
            full = inside(path)
            if full is None:
                return
            if event in _LISTINGS:
                # Listed in this process, by any code (pytest's collection, the import
                # system): what the traced run listed beyond these another program did.
                listener.dirs.add(full)
            by = by_whom()
            if by is None:
                return
            if event in _LISTINGS:
                listener.listed.update((f, by) for f in _files_in(listener, full))
            else:
                listener.opened.add((full, by))
        except Exception:
            pass

    sys.addaudithook(hook)
    _hear_probes(probed)


# The hard links made in this process to the project's files, by their new name.
_hard_links = {}
# Before any wrapper: the listener's own questions are not heard.
_stat = os.stat
# The project's files with more than one name, by (device, inode), and how many times
# they were looked for: made again when a name is not found (linked since), a few times.
_inodes = None
_walks = 0
# Folders whose files no test links as its cases: tools' and installs' (cost, not safety).
_NOT_WALKED = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", "target"}


def _linked_to_project(name, root):
    """The project's file `name` is another name of (a hard link made by any program), or
    `None`. The project is walked on the first file with more than one name, and again
    when one is not found (up to 20 times a process)."""
    global _inodes, _walks
    st = _stat(name)
    if st.st_nlink < 2:
        return None
    key = (st.st_dev, st.st_ino)
    if (_inodes is None or key not in _inodes) and _walks < 20:
        _walks += 1
        _inodes = {}
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _NOT_WALKED]
            for f in files:
                path = os.path.join(folder, f)
                try:
                    i = _stat(path, follow_symlinks=False)
                except OSError:
                    continue
                if i.st_nlink > 1:
                    _inodes[(i.st_dev, i.st_ino)] = path
    return (_inodes or {}).get(key)

# The calls that answer of a file without opening it, which Python does not audit.
_PROBES = ("stat", "lstat", "access", "readlink")
_probe_hearers = []
_probing = None


def _hear_probes(hear):
    """Has `hear(path)` told of each `os.stat`, `os.lstat`, `os.access` and `os.readlink`,
    and so of `os.path.exists`, `getsize`, `isfile`, `islink` and `pathlib`'s `exists`,
    `stat`, `readlink`: their answer (a size, a mode, a link's target, whether a file is
    there) can be a test's expectation with the file never opened. The import system calls
    `posix` itself, unheard."""
    global _probing
    if _probing is None:
        import threading

        _probing = threading.local()
        for name in _PROBES:
            _wrap_probe(name)
    _probe_hearers.append(hear)


def _wrap_probe(name):
    import functools

    call = getattr(os, name, None)
    if call is None:
        return

    @functools.wraps(call)
    def probe(path, *args, **kwargs):
        # A hearer's own calls (`realpath` stats) are not heard again.
        if not getattr(_probing, "busy", False) and kwargs.get("dir_fd") is None:
            if not isinstance(path, int):
                _probing.busy = True
                try:
                    for hear in _probe_hearers:
                        hear(path)
                finally:
                    _probing.busy = False
        return call(path, *args, **kwargs)

    # Code asks these sets whether a call takes `dir_fd` or a descriptor (`shutil`).
    for kind in ("supports_dir_fd", "supports_fd", "supports_follow_symlinks", "supports_effective_ids"):
        supports = getattr(os, kind, None)
        if isinstance(supports, set) and call in supports:
            supports.add(probe)
    setattr(os, name, probe)


def _files_in(listener, folder):
    """The files in `folder` now. This listing is not the tests': the thread's hook lets it
    by (another thread's reads go on being kept)."""
    import threading

    mine = getattr(listener, "listing", None)
    if mine is None:
        mine = listener.listing = threading.local()
    if getattr(mine, "busy", False):
        return []
    mine.busy = True
    try:
        with os.scandir(folder) as entries:
            return [os.path.join(folder, e.name) for e in entries if e.is_file()]
    except OSError:
        return []
    finally:
        mine.busy = False


def _plugin_files(config):
    """The files of the code pytest runs as part of itself: every registered plugin's module
    (conftests, `-p` modules, entry points of installed packages) and Python's own startup
    hooks. ralph-gate holds a loop when one outside the work tree changed after it began."""
    import sys

    modules = list(config.pluginmanager.get_plugins())
    modules += [sys.modules.get(n) for n in ("sitecustomize", "usercustomize")]
    files = set(_executed_pth())
    for m in modules:
        f = getattr(m, "__file__", None)
        if isinstance(f, str) and not os.path.basename(f).startswith(__name__):
            files.add(os.path.abspath(f))
    return sorted(files)


def _executed_pth():
    """The `.pth` files of the site folders that Python's `site` ran code from at startup:
    by site's own rule, those with a line starting with `import`. Such a line can replace any
    module before the first test imports it."""
    import site

    folders = []
    try:
        folders += site.getsitepackages()
    except (AttributeError, OSError):
        pass
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    found = []
    for folder in dict.fromkeys(folders):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    if any(line.startswith(("import ", "import\t")) for line in f):
                        found.append(os.path.abspath(path))
            except OSError:
                pass
    return found


def _sessionfinish(session, exitstatus):
    # First of every sessionfinish hook: the status pytest computed, before any conftest
    # or plugin can set another.
    if _active:
        _active[-1][1].state["status"] = int(exitstatus)


def pytest_configure(config):
    if not _WHERE or _nested(_WHERE):
        return
    listener = _Listener(os.path.join(_WHERE, "%d-%d.json" % (os.getpid(), id(config))), config)
    _active.append((config, listener))
    config.pluginmanager.register(listener, "ralph_gate_listener")
    _children_tell()
    if _EARLY is not None:
        # What conftests read as pytest imported them counts with the session's reads.
        listener.opened = _EARLY.opened
        listener.listed = _EARLY.listed
        listener.dirs = _EARLY.dirs


def pytest_unconfigure(config):
    if _active and _active[-1][0] is config:
        _, listener = _active.pop()
        if _EARLY is not None:
            _EARLY.watching = False
        listener.state["plugins"] = _plugin_files(config)
        listener.finish(listener.state["test_files"] + listener.state["plugins"])


if _IN_PYTEST:
    import pytest as _pytest

    pytest_sessionfinish = _pytest.hookimpl(tryfirst=True)(_sessionfinish)


class _Reads:
    """What the project's code opens in a pytest from the moment `-p` imports this module,
    before any conftest: a conftest's reads as pytest imports it are its tests' too."""

    def __init__(self):
        self.opened = set()
        self.listed = set()
        self.dirs = set()
        self.watching = True


_EARLY = None
if _IN_PYTEST and _WHERE and hasattr(__import__("sys"), "addaudithook"):
    _EARLY = _Reads()
    _watch_reads(_EARLY, os.environ.get("RALPH_GATE_PYTEST_ROOT") or os.getcwd())


def listen(name, module):
    """Called by ralph-gate's `sitecustomize` once `unittest.main` or `doctest` has loaded in
    a Python that no pytest runs: what their runs run is recorded as a pytest session's is."""
    if not _WHERE or _nested(_WHERE):
        return
    if name == "unittest.main":
        _listen_unittest(module.TestProgram)
    elif name == "doctest":
        _listen_doctest(module)


def _root():
    return os.environ.get("RALPH_GATE_PYTEST_ROOT") or os.getcwd()


def _suite_cases(suite):
    try:
        tests = list(suite)
    except TypeError:
        return [suite]
    return [case for test in tests for case in _suite_cases(test)]


def _listen_unittest(program):
    """`unittest.main`, `python -m unittest` (and discover): the tests it runs, by id; the
    files of their modules; what they read; and whether the run reached its end."""
    import sys
    import unittest

    run_tests = program.runTests

    def runTests(self):
        _heard()
        record = _Record(os.path.join(_WHERE, "%d-%d.json" % (os.getpid(), id(self))), "unittest")
        cases = _suite_cases(self.test)
        record.state["to_run"] = len(cases)
        files = set()
        for case in cases:
            module = sys.modules.get(type(case).__module__)
            f = getattr(module, "__file__", None)
            if isinstance(f, str):
                files.add(os.path.abspath(f))
        record.state["test_files"] = sorted(files)
        undo = _hear_results(unittest.TestResult, record)
        _children_tell()
        record.watching = True
        if hasattr(sys, "addaudithook"):
            _watch_reads(record, _root())
        try:
            run_tests(self)
        finally:
            undo()
            result = getattr(self, "result", None)
            try:
                if result is not None:
                    record.state["status"] = 0 if result.wasSuccessful() else 1
                record.finish(record.state["test_files"])
            except Exception:
                # Unwritten, the session reads as one that never reached its end.
                pass

    program.runTests = runTests


def _hear_results(result_class, record):
    """Has every result of `result_class` (and its subclasses that call it) tell `record`
    each test that started, passed and failed; returns what undoes it."""
    saved = {}

    def on(name, hear):
        original = getattr(result_class, name)
        saved[name] = original

        def method(self, test, *rest):
            try:
                hear(test.id(), *rest)
            except Exception:
                pass
            return original(self, test, *rest)

        setattr(result_class, name, method)

    def passed(test_id):
        record.ran_ids.add(test_id)
        record.state["passed"] += 1

    def failed(kind):
        def hear(test_id, *rest):
            record.ran_ids.add(test_id)
            record.state[kind].append(test_id)

        return hear

    def sub_test(test_id, sub, err=None):
        if err is not None:
            record.ran_ids.add(test_id)
            record.state["failed"].append(test_id)

    on("startTest", record.ran.add)
    on("addSuccess", passed)
    on("addFailure", failed("failed"))
    on("addError", failed("errors"))
    on("addUnexpectedSuccess", failed("failed"))
    on("addSubTest", sub_test)

    def undo():
        for name, original in saved.items():
            setattr(result_class, name, original)

    return undo


def _listen_doctest(doctest):
    """`python -m doctest FILE`, `doctest.testfile`, `testmod`: the files it parsed tests
    from (a module's own docstrings are the code's), the examples' reads, and each run.
    Written only once a doctest is parsed: a Python that only imports doctest says nothing."""
    import atexit
    import sys

    record = _Record.__new__(_Record)
    parsed = set()
    get_doctest = doctest.DocTestParser.get_doctest

    def begin():
        _Record.__init__(record, os.path.join(_WHERE, "%d-doctest.json" % os.getpid()), "doctest")
        _heard()
        _children_tell()
        record.watching = True
        if hasattr(sys, "addaudithook"):
            _watch_reads(record, _root())
        atexit.register(end)

    def hear_parsed(self, string, globs, name, filename, lineno):
        try:
            if not parsed and not hasattr(record, "path"):
                begin()
            if isinstance(filename, str):
                parsed.add(os.path.abspath(filename))
        except Exception:
            pass
        return get_doctest(self, string, globs, name, filename, lineno)

    run = doctest.DocTestRunner.run

    def hear_run(self, test, *args, **kwargs):
        out = run(self, test, *args, **kwargs)
        try:
            if hasattr(record, "path") and out.attempted:
                record.ran_ids.add(test.name)
                record.ran.add(test.name)
                if out.failed:
                    record.state["failed"].append(test.name)
        except Exception:
            pass
        return out

    def end():
        try:
            record.state["test_files"] = sorted(parsed - _imported_files())
            record.state["to_run"] = len(record.ran)
            record.finish(record.state["test_files"])
        except Exception:
            # As above: never a traceback at the program's exit.
            pass

    doctest.DocTestParser.get_doctest = hear_parsed
    doctest.DocTestRunner.run = hear_run


_SESSION_VAR = "RALPH_GATE_PY_SESSION"


def _children_tell():
    """Has every Python process the session starts (inheriting the environment) tell what it
    imported and read (`child`, from ralph-gate's `sitecustomize`)."""
    os.environ[_SESSION_VAR] = "1"


def child():
    """In a Python a session started: writes at its exit the project's modules it imported
    and each file the project's code opened with the file whose code opened it, so the
    gate's run can tell the code under test's reads from the tests'. A process that ends
    without its exit (`os._exit`) says nothing: what it read is then either (`_accounted`)."""
    import atexit
    import sys

    if not _WHERE or not hasattr(sys, "addaudithook"):
        return
    reads = _Reads()
    _watch_reads(reads, _root())
    # The script Python runs (`python cli.py`): its module's `__file__` is gone by exit.
    ran = set()

    def script(event, args):
        if event == "cpython.run_file":
            ran.add(os.path.abspath(os.fsdecode(args[0])))

    sys.addaudithook(script)

    def end():
        try:
            root = os.path.abspath(_root()) + os.sep
            imported = _imported_files() | ran
            record = {
                "imported": sorted(f for f in imported if f.startswith(root)),
                "opened": sorted(reads.opened),
                "listed": sorted(reads.listed),
                "listed_dirs": sorted(reads.dirs | _import_listed()),
                "pid": os.getpid(),
            }
            path = os.path.join(_WHERE, "child-%d.reads" % os.getpid())
            with open(path + ".partial", "w") as f:
                json.dump(record, f)
            os.replace(path + ".partial", path)
        except Exception:
            pass

    atexit.register(end)
