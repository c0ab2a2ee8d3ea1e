"""ralph-gate's listener, loaded into every pytest a gate starts (`-p ralph_gate_told`).

It writes what the session ran as pytest reports it (failed tests, errors, how many of the
tests collected to run did run, whether the session reached its end) where ralph-gate reads it once the gate's command has exited: an
exit status of 0 must agree with it. Only the outermost session of a gate records: a
session started inside another (pytester, in the same process or a child) tests pytest
itself, and its failures are expected.
"""
import json
import os

_REPORTS = "RALPH_GATE_PYTEST_REPORTS"
_NESTED = "RALPH_GATE_PYTEST_NESTED"
_active = []


class _Listener:
    def __init__(self, path, config):
        self.path = path
        self.config = config
        self.ran = set()
        self.state = {
            "failed": [],
            "errors": [],
            "passed": 0,
            "to_run": 0,
            "ran": 0,
            "finished": False,
        }
        self.write()

    def write(self):
        partial = self.path + ".partial"
        with open(partial, "w") as f:
            json.dump(self.state, f)
        os.replace(partial, self.path)

    def pytest_collection_finish(self, session):
        if not self.config.option.collectonly:
            self.state["to_run"] = len(session.items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.state["errors"].append(report.nodeid or "(collection)")

    def pytest_runtest_logreport(self, report):
        self.ran.add(report.nodeid)
        if report.failed:
            kind = "failed" if report.when == "call" else "errors"
            self.state[kind].append(report.nodeid)
        elif report.passed and report.when == "call":
            self.state["passed"] += 1


def pytest_configure(config):
    where = os.environ.get(_REPORTS)
    if not where or os.environ.get(_NESTED) or _active or hasattr(config, "workerinput"):
        return
    # Whatever this session starts (pytester's subprocesses) is nested in it.
    os.environ[_NESTED] = "1"
    listener = _Listener(os.path.join(where, "%d-%d.json" % (os.getpid(), id(config))), config)
    _active.append((config, listener))
    config.pluginmanager.register(listener, "ralph_gate_listener")


def pytest_unconfigure(config):
    if _active and _active[-1][0] is config:
        _, listener = _active.pop()
        listener.state["ran"] = len(listener.ran)
        listener.state["finished"] = True
        listener.write()
        os.environ.pop(_NESTED, None)
