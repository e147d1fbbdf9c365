"""Secret values, and their redaction from every output the gate writes.

Redaction does not depend on what the config happens to reference. The Redactor
learns values from three places: the env vars listed in `secrets:` (and any
credential-named `${VAR}` the config expands), every credential-named variable of
the gate's own environment (values of 8+ characters, so that `AUTH_MODE=none`
does not redact the word "none" everywhere), and the auth headers the proxy sees
on the agent's requests (noted as they arrive, so recorded sessions and the
report written after the run are covered).

Each value is matched in the forms it takes in our outputs (raw, JSON-escaped,
XML-escaped), and one compiled alternation (longest first) replaces them all,
for text and for the byte chunks of a streamed log alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)
MIN_DECLARED = 4  # a value the user declared secret; shorter ones would redact ordinary text
MIN_DISCOVERED = 8  # a value we only guessed is secret from its name
AUTH_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
                          "cookie", "set-cookie", "x-auth-token", "x-amz-security-token"})


def looks_secret(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def is_auth_header(name: str) -> bool:
    name = name.lower()
    return name in AUTH_HEADERS or looks_secret(name)


def _forms(value: str) -> set[str]:
    """The spellings a value takes once written into our JSON, JUnit XML or Markdown."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
            _xml_escaped(value)}


def _xml_escaped(value: str) -> str:
    # by hand: xml.sax.saxutils pulls in urllib, http.client and ssl, a tenth of `validate`'s start-up
    for char, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&apos;")):
        value = value.replace(char, entity)
    return value


class Redactor:
    def __init__(self):
        self._values: dict[str, str] = {}  # value -> name shown in its place
        self._added: set[str] = set()  # values given to add(): an agent sends its key on every call
        self._text_re: re.Pattern | None = None
        self._bytes_re: re.Pattern | None = None
        self._auth_names: dict[str, bool] = {}  # header name -> is_auth_header(name), asked per request

    @classmethod
    def for_environment(cls, environ: Mapping[str, str], declared: Iterable[str] = ()) -> Redactor:
        redactor = cls()
        redactor.add_environment(environ, declared)
        return redactor

    def add(self, value: str, name: str = "secret", minimum: int = MIN_DECLARED) -> None:
        if not value or len(value) < minimum or value in self._added:
            return
        self._added.add(value)
        for form in _forms(value):
            if form not in self._values:
                self._values[form] = name
                self._text_re = self._bytes_re = None

    def add_environment(self, environ: Mapping[str, str], declared: Iterable[str] = ()) -> None:
        """Every declared name's value, and every credential-named variable's, referenced or not."""
        declared = set(declared)
        for name, value in environ.items():
            if name in declared:
                self.add(value, name)
            elif looks_secret(name):
                self.add(value, name, MIN_DISCOVERED)

    def note_header(self, name: str, value: str) -> None:
        """An auth header the agent sent: redact the whole value and its credential part."""
        auth = self._auth_names.get(name)
        if auth is None:
            auth = is_auth_header(name)
            if len(self._auth_names) < 1024:  # names come from the agent: the cache stays bounded
                self._auth_names[name] = auth
        if not auth:
            return
        label = name.upper()
        self.add(value, label, MIN_DISCOVERED)
        parts = value.split(None, 1)  # "Bearer sk-..." -> the token alone
        if len(parts) == 2:
            self.add(parts[1].strip(), label, MIN_DISCOVERED)
        if name.lower() in ("cookie", "set-cookie"):
            for pair in value.split(";"):
                self.add(pair.partition("=")[2].strip(), label, MIN_DISCOVERED)

    @property
    def values(self) -> list[str]:
        return list(self._values)

    @property
    def max_bytes(self) -> int:
        """Length in bytes of the longest form: a streamed scrub keeps this minus one as overlap."""
        return max((len(v.encode()) for v in self._values), default=0)

    def _text(self) -> re.Pattern:
        if self._text_re is None:
            ordered = sorted(self._values, key=len, reverse=True)  # longest wins where values overlap
            self._text_re = re.compile("|".join(map(re.escape, ordered)))
        return self._text_re

    def bytes_pattern(self) -> re.Pattern | None:
        if not self._values:
            return None
        if self._bytes_re is None:
            ordered = sorted((v.encode() for v in self._values), key=len, reverse=True)
            self._bytes_re = re.compile(b"|".join(map(re.escape, ordered)))
        return self._bytes_re

    def placeholder(self, value: str | bytes) -> str:
        if isinstance(value, bytes):
            value = value.decode()
        return f"***{self._values[value]}***"

    def redact(self, text: str) -> str:
        if not self._values or not text:
            return text
        return self._text().sub(lambda m: self.placeholder(m.group(0)), text)

    def redact_bytes(self, data: bytes) -> bytes:
        """`redact` for UTF-8 bytes (a serialised report chunk), without decoding them."""
        pattern = self.bytes_pattern()
        if pattern is None or not data:
            return data
        return pattern.sub(lambda m: self.placeholder(m.group(0)).encode(), data)

    __call__ = redact
