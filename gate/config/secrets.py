"""Secret values expanded into the config, and their redaction from every output.

A value is secret when its env var is listed in `secrets:` or its name looks like
a credential. The Redactor is applied to every string the reports and logs emit.
"""

from __future__ import annotations

import re

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)


def looks_secret(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


class Redactor:
    def __init__(self):
        self._values: dict[str, str] = {}

    def add(self, value: str, name: str = "secret") -> None:
        if value and len(value) >= 4:  # shorter values would redact ordinary text
            self._values[value] = name

    @property
    def values(self) -> list[str]:
        return list(self._values)

    def redact(self, text: str) -> str:
        for value in sorted(self._values, key=len, reverse=True):
            if value in text:
                text = text.replace(value, f"***{self._values[value]}***")
        return text
