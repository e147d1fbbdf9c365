"""The environment an agent process gets: an allow-list, never the gate's own.

On a pull request the agent is the PR's code, so it is untrusted. The gate's
environment holds CI credentials (GITHUB_TOKEN, the Action's INPUT_GITHUB-TOKEN,
ACTIONS_RUNTIME_TOKEN, cloud keys), so an agent starts from nothing and receives:
a minimal base a program needs to run (paths, locale, time zone, CA bundles), what
the gate itself sets (proxy base URLs, the port), what the config sets in `env`,
and what the config names in `inherit_env`.

A glob in `inherit_env` never pulls in a CI variable or a credential-named one:
those must be named exactly, so `inherit_env: ["*"]` cannot hand a token over by
accident. Pure functions only; the callers pass in the parent environment.

The project's world comes first on PATH: its virtualenv's `bin` and its `node_modules/.bin`,
found in the directory the process runs in (and the config's, when that differs), so `python`
in the agent's command, and in whatever the agent spawns (an MCP server, a tool), is the
project's own, never the gate's interpreter that happens to be on the inherited PATH.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

from gate.config.secrets import looks_secret

# What nearly any program needs to start and to make TLS calls; none of it is a credential.
BASE_NAMES = frozenset({
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
})
BASE_GLOBS = ("LC_*",)

VENVS = (".venv", "venv", "env")  # where projects keep their virtualenv, in the order they are looked for

# Variables of the CI runner itself: tokens, runtime URLs, the Action's inputs.
RESERVED_GLOBS = ("GITHUB_TOKEN", "INPUT_*", "ACTIONS_*", "RUNNER_*")


def is_reserved(name: str) -> bool:
    """A CI or credential variable: reaches the agent only when named exactly."""
    return looks_secret(name) or any(fnmatchcase(name, g) for g in RESERVED_GLOBS)


def _in_base(name: str) -> bool:
    return name in BASE_NAMES or any(fnmatchcase(name, g) for g in BASE_GLOBS)


def _inherited(name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        if name == pattern:
            return True
        if any(c in pattern for c in "*?[") and fnmatchcase(name, pattern) and not is_reserved(name):
            return True
    return False


def agent_environment(parent: Mapping[str, str], *, inherit: Iterable[str] = (),
                      gate_set: Mapping[str, str] | None = None, configured: Mapping[str, str] | None = None,
                      base: bool = True, project: Iterable[Path] = ()) -> dict[str, str]:
    """The agent's environment, from lowest to highest precedence:

    base (from `parent`, when `base`) < inherited names < what the gate sets < the config's `env`.
    A container passes base=False: the image's own PATH and HOME must not be overridden by the host's.
    `project`: the directories whose virtualenv and node_modules/.bin go first on PATH.
    """
    inherit = list(inherit)
    env = {k: v for k, v in parent.items() if base and _in_base(k) and not is_reserved(k)}
    env.update({k: v for k, v in parent.items() if _inherited(k, inherit)})
    if base and project:
        env["PATH"] = project_path(env.get("PATH", ""), project)
    env.update(gate_set or {})
    env.update(configured or {})
    return env


def project_bins(directories: Iterable[Path]) -> list[str]:
    """The project's own executables' directories: each directory's virtualenv `bin`, then its
    `node_modules/.bin`, the first directory first."""
    found: list[str] = []
    for directory in dict.fromkeys(Path(d).resolve() for d in directories):
        venv = next((directory / name / "bin" for name in VENVS if (directory / name / "bin" / "python").exists()),
                    None)
        found += [str(b) for b in (venv, directory / "node_modules" / ".bin") if b is not None and b.is_dir()]
    return found


def project_path(path: str, directories: Iterable[Path]) -> str:
    """`path` with the project's own bins first (each once: an entry already on it moves to the front)."""
    first = project_bins(directories)
    rest = [p for p in path.split(os.pathsep) if p and p not in first]
    return os.pathsep.join(first + rest)
