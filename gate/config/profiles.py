"""Built-in and local profiles: named fault sets in YAML, resolved into scenarios.

Built-ins live in the repository's `profiles/` directory (or $CHAOS_GATE_PROFILES);
a config may add its own directory with `profiles_dir`. A profile that does not
exist is a config error on the line that names it, with the nearest name suggested.

A profile tests each of its faults (`split`): run together, the first fault that fires
usually ends the agent's turn (the SDK raises) and the rest never run. So a profile of N
faults becomes N cells, one fault each, named by its kind; a fault placed at call k only
to come after the others (`on_calls: [4]`) moves to the first call it would reach alone.
A scenario (`chaos.scenarios`, `contract.scenarios`) keeps its faults together: that is
how to write a cascade.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from pathlib import Path

from pydantic import ValidationError

from gate.errors import ConfigError

BUILTIN = Path(__file__).resolve().parents[2] / "profiles"


def search_dirs(base_dir: Path | None, profiles_dir: str | None) -> list[Path]:
    dirs = []
    if profiles_dir:
        dirs.append((base_dir or Path.cwd()) / profiles_dir)
    if os.environ.get("CHAOS_GATE_PROFILES"):
        dirs.append(Path(os.environ["CHAOS_GATE_PROFILES"]))
    dirs.append(BUILTIN)
    return dirs


def available(dirs: list[Path]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for d in reversed(dirs):  # earlier dirs override later ones
        for path in sorted(d.glob("*.yaml")) if d.is_dir() else []:
            found[path.stem] = path
    return found


@lru_cache(maxsize=64)
def load_profile(path: Path):
    from gate.config.chaos import Profile
    from gate.config.reading import format_errors, parse_yaml
    from gate.config.source import read_config_text

    data, lines, _, _ = parse_yaml(read_config_text(path), str(path))  # bounded, encoding-checked
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = format_errors(exc, str(path), lines)
        raise ConfigError("invalid profile:\n  " + "\n  ".join(problems), problems) from None


def resolve(name: str, dirs: list[Path], where: str = "") -> tuple:
    profiles = available(dirs)
    if name not in profiles:
        close = difflib.get_close_matches(name, list(profiles), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (available: {', '.join(sorted(profiles))})"
        raise ConfigError(f"{where}unknown profile '{name}'{hint}")
    profile = load_profile(profiles[name])
    return ProfileFaults(profile.faults, cascade=profile.cascade)


class ProfileFaults(tuple):
    """A profile's faults, and whether they are one cascade (one cell) or each tested alone."""

    def __new__(cls, faults, cascade: bool = False):
        made = super().__new__(cls, faults)
        made.cascade = cascade
        return made


def _rebased(fault):
    """The fault alone: its on_calls shifted so that the first one is call 1."""
    calls = getattr(fault, "on_calls", None)
    if not calls or min(calls) <= 1:
        return fault
    shift = min(calls) - 1
    return fault.model_copy(update={"on_calls": [c - shift for c in calls]})


def split(faults: tuple) -> list[tuple[str, object]]:
    """[(cell suffix, fault)] with one entry per fault: its kind, numbered when the kind repeats
    (`server_error-1`, `server_error-2`). A single fault stays as it is, with no suffix."""
    if len(faults) <= 1:
        return [("", f) for f in faults]
    labels = [f.label() for f in faults]
    seen: dict[str, int] = {}
    out = []
    for label, fault in zip(labels, faults, strict=True):
        seen[label] = seen.get(label, 0) + 1
        suffix = f"{label}-{seen[label]}" if labels.count(label) > 1 else label
        out.append((suffix, _rebased(fault)))
    return out
