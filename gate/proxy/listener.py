"""The proxy's listening socket, accepted by hand so that running out of descriptors pauses it.

asyncio's and uvloop's servers meet EMFILE/ENFILE by logging it (with a traceback) for every
connection in the backlog, and uvloop (libuv) keeps retrying at once: an agent that leaks
connections made the gate log ~98,000 lines and spin a core. Here an accept that finds no
descriptor stops accepting: the listening socket leaves the loop, open connections are
served as before, the agents' new connections wait in the kernel's backlog, and accepting
resumes when a connection of ours closes or after a short backoff, whichever comes first.
Each deferral is counted, not logged (gate/proxy/incidents.py tells the count once a cell).
"""

from __future__ import annotations

import asyncio
import errno
import socket

ACCEPT_RETRY = 0.25  # seconds before accepting again when descriptors may have freed elsewhere
ACCEPT_BATCH = 64  # connections taken per wake-up, so a burst cannot starve the open ones
BACKLOG = 2048
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class Listener:
    def __init__(self, sock: socket.socket, protocol_factory, incidents):
        self.sock, self.factory, self.incidents = sock, protocol_factory, incidents
        self.loop: asyncio.AbstractEventLoop | None = None
        self.reading = self.closed = False
        self._retry: asyncio.TimerHandle | None = None
        self._adopting: set[asyncio.Task] = set()

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.sock.setblocking(False)
        self.sock.listen(BACKLOG)
        self.resume()

    def resume(self) -> None:
        """Accept again (a connection closed, or the backoff passed); a no-op while accepting."""
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if not self.reading and not self.closed and self.loop is not None:
            self.reading = True
            self.loop.add_reader(self.sock.fileno(), self._ready)

    def _pause(self) -> None:
        if self.reading:
            self.reading = False
            self.loop.remove_reader(self.sock.fileno())

    def _ready(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _EXHAUSTED:
                    self._exhausted()
                    return
                continue  # ECONNABORTED and the like: that agent left before it was accepted
            task = self.loop.create_task(self._adopt(conn))
            self._adopting.add(task)
            task.add_done_callback(self._adopting.discard)

    def _exhausted(self) -> None:
        """No descriptor for the next connection: leave it in the backlog and stop asking."""
        self.incidents.note("descriptors")
        self._pause()
        self._retry = self.loop.call_later(ACCEPT_RETRY, self.resume)

    async def _adopt(self, conn: socket.socket) -> None:
        conn.setblocking(False)
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await self.loop.connect_accepted_socket(self.factory, conn)
        except Exception as exc:  # gone already, no descriptor left for the loop's own use, or the loop stopping
            conn.close()
            if getattr(exc, "errno", None) in _EXHAUSTED:
                self._exhausted()

    def close(self) -> None:
        self.closed = True
        self._pause()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
