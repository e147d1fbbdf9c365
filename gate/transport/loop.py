"""The event loop the gate runs on: uvloop when installed, asyncio's otherwise.

The proxy sits on the hot path of every agent call; uvloop (under the gate's own HTTP/1.1
server and client, both fed to httptools' llhttp) cuts its per-request overhead several-fold,
so it is a pinned dependency, but the gate stays correct without it.
"""

from __future__ import annotations

import asyncio


def run_async(coro):
    """Run `coro` to completion and return its result.

    The result travels in a box, not as the main task's result: asyncio's runner (3.11)
    formats its SIGINT handler, a partial holding the main task, whose repr includes the
    task's result — for a 10,000-cell pool that was a ~250 MB string at the end of the run."""
    box: list = []

    async def main():
        box.append(await coro)

    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a declared dependency
        asyncio.run(main())
    else:
        uvloop.run(main())
    return box[0]
