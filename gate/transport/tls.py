"""One shared TLS context: building one reads the CA bundle (tens of ms), so every
client of the gate reuses this one."""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()
