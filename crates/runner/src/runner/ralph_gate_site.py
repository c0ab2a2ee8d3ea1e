"""ralph-gate's `sitecustomize`, first on the `PYTHONPATH` of every run of a gate, in front of
the one the Python would load otherwise (which it loads, as Python's `site` would). Once
`unittest.main` or `doctest` loads in a Python that no pytest runs, it has ralph-gate's
listener (the module `RALPH_GATE_PY_LISTENER` names, beside this file) record what their
runs run, as pytest's sessions are recorded. It costs a Python that loads neither one
finder asked about each import by name."""
import os
import sys

_WATCHED = ("unittest.main", "doctest")


class _Watch:
    """Finds nothing itself: has the real finder's loader call the listener after it runs
    a watched module."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in _WATCHED or "_pytest" in sys.modules:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is cls or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is None:
            return spec

        def run(module):
            exec_module(module)
            try:
                __import__(os.environ["RALPH_GATE_PY_LISTENER"]).listen(name, module)
            except Exception:
                pass

        spec.loader.exec_module = run
        return spec


def _chain():
    """Loads the `sitecustomize` this one stands in front of, if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    me = sys.modules.pop("sitecustomize", None)
    path = list(sys.path)
    sys.path[:] = [p for p in path if os.path.abspath(p or os.curdir) != here]
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        sys.modules["sitecustomize"] = me
    finally:
        sys.path[:] = path + [p for p in sys.path if p not in path]


def _child():
    """In a Python a session of a runner started: the listener's `child`, loaded under a
    name of its own (a pytest this process may become loads the listener by its name)."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    file = os.path.join(here, os.environ["RALPH_GATE_PY_LISTENER"] + ".py")
    spec = importlib.util.spec_from_file_location("_ralph_gate_child", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.child()


if os.environ.get("RALPH_GATE_PY_LISTENER"):
    sys.meta_path.insert(0, _Watch)
    if os.environ.get("RALPH_GATE_PY_SESSION"):
        try:
            _child()
        except Exception:
            pass
_chain()
