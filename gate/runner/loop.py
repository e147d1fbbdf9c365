"""The event loop the gate runs on: uvloop when installed, asyncio's otherwise.

The proxy sits on the hot path of every agent call; uvloop (with uvicorn's httptools
parser) cuts its per-request overhead several-fold, so it is a pinned dependency, but
the gate stays correct without it.
"""

from __future__ import annotations

import asyncio


def run_async(coro):
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a declared dependency
        return asyncio.run(coro)
    return uvloop.run(coro)
