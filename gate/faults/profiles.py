"""Built-in and local profiles: named fault sets in YAML, resolved into scenarios.

Built-ins live in the repository's `profiles/` directory (or $CHAOS_GATE_PROFILES);
a config may add its own directory with `profiles_dir`. A profile that does not
exist is a config error on the line that names it, with the nearest name suggested.
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
    from gate.config.loader import _format_errors, parse_yaml
    from gate.config.source import read_config_text

    data, lines, _, _ = parse_yaml(read_config_text(path), str(path))  # bounded, encoding-checked
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = _format_errors(exc, str(path), lines)
        raise ConfigError("invalid profile:\n  " + "\n  ".join(problems), problems) from None


def resolve(name: str, dirs: list[Path], where: str = "") -> tuple:
    profiles = available(dirs)
    if name not in profiles:
        close = difflib.get_close_matches(name, list(profiles), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (available: {', '.join(sorted(profiles))})"
        raise ConfigError(f"{where}unknown profile '{name}'{hint}")
    return tuple(load_profile(profiles[name]).faults)
