"""Read a config file's bytes into text, refusing what YAML should never see.

The YAML parser is only handed a bounded amount of valid UTF-8 text: the size is
checked before reading everything, a UTF-16/32 byte-order mark or a NUL byte is
named as such (an editor saved the wrong encoding, or this is not a text file), and
a byte that is not UTF-8 is reported on its own line, so the user knows where to look.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from gate.errors import ConfigError

MAX_CONFIG_BYTES = 4 << 20  # far beyond any real config; bounds memory and parse time

_WIDE_BOMS = [
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),  # before UTF-16: LE BOMs share a prefix
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
]


def read_config_text(path: Path) -> str:
    """The file's text, or a ConfigError naming the file, the line and the fix."""
    raw = _read_bounded(path)
    for bom, name in _WIDE_BOMS:
        if raw.startswith(bom):
            raise ConfigError(f"{path}:1: the file is {name} (it starts with a {name} byte-order mark); "
                              f"save it as UTF-8")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{path}:{_line_of(raw, nul)}: the file holds a NUL byte: it is binary or not UTF-8 "
                          f"text; a config must be UTF-8 YAML")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 1].hex()
        raise ConfigError(f"{path}:{_line_of(raw, exc.start)}: the file is not UTF-8 (byte 0x{bad} at column "
                          f"{_column_of(raw, exc.start)}; Latin-1 or another legacy encoding?): save it as UTF-8"
                          ) from None


def _read_bounded(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}:1: the file is larger than {MAX_CONFIG_BYTES >> 20} MiB: "
                          f"not a config a person wrote; refusing to parse it")
    return raw


def _line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def _column_of(raw: bytes, offset: int) -> int:
    return offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
