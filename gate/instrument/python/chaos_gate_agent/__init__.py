"""chaos-gate's in-process instrumentation, loaded into an agent through PYTHONPATH.

`sitecustomize` (beside this package) calls `install()` when the gate set
CHAOS_GATE_FN_URL. Nothing framework-specific is imported up front: an import hook
waits for each framework's own module to load, then patches its tool-invocation seam
(`seams.SEAMS`: module name -> the patch, named). An agent that imports none of them pays
for one meta-path lookup per import and nothing else: no seam module is even loaded.

Standard library only: this code runs inside someone else's virtualenv.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys


class _PatchOnLoad(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of each seam module so its patch runs after it loads."""

    def __init__(self, patches: dict):
        self.patches = patches
        self.busy: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if name not in self.patches or name in self.busy:
            return None
        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _PatchingLoader(spec.loader, self.patches[name])
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader, patch):
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _apply(self.patch, module)

    def __getattr__(self, name):  # get_resource_reader, is_package, ... of the real loader
        return getattr(self.loader, name)


def _apply(patch, module) -> None:
    """`patch`: a SEAMS entry ("seam module:function"), or a callable (a declared function's)."""
    from chaos_gate_agent import client
    from chaos_gate_agent.seams import resolve

    try:
        fn = patch if callable(patch) else resolve(patch)
        seam = fn(module)
    except Exception as exc:  # noqa: BLE001 - a framework version we do not know: report, never break the agent
        client.hello(f"{module.__name__}:failed", {"error": f"{type(exc).__name__}: {exc}"[:300]})
        return
    if seam:  # a framework seam says its framework: one whose framework made no call is no reach of the agent's
        owner = None if callable(patch) else sys.modules.get(fn.__module__)
        framework = getattr(getattr(owner, "SEAM", None), "framework", None)
        client.hello(seam, {"module": module.__name__, **({"framework": framework} if framework else {})})


def install() -> None:
    from chaos_gate_agent import clock
    from chaos_gate_agent.seams import SEAMS

    if any(isinstance(f, _PatchOnLoad) for f in sys.meta_path):
        return
    clock.report_rate()  # under agent.time_scale: this process's own clock rate, for the gate to check
    patches = {**SEAMS, **_declared_patches(SEAMS)}
    for name, patch in patches.items():  # already imported (rare: sitecustomize runs first)
        if name in sys.modules:
            _apply(patch, sys.modules[name])
    sys.meta_path.insert(0, _PatchOnLoad(patches))


def _declared_patches(seams: dict) -> dict:
    """The config's `kind: function` tools, one patch per module (after the framework's own, if any).
    Without any, nothing is imported (the seam module loads asyncio: tens of ms of every start)."""
    import os

    if not os.environ.get("CHAOS_GATE_FUNCTIONS"):
        return {}
    from chaos_gate_agent import declared

    out = {}
    for module, functions in declared.declared().items():
        mine = declared.patcher(functions)
        if module in seams:
            out[module] = _both(seams[module], mine)
        else:
            out[module] = mine
    return out


def _both(first, second):
    def patch(module):
        _apply(first, module)
        return second(module)
    return patch
