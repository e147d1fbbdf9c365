"""Serve a ProxyApp with uvicorn on a loopback socket bound up front.

Binding first means the port is known before the agent starts (its env vars point
here). uvicorn's own signal handling is bypassed: the gate owns SIGINT/SIGTERM.
"""

from __future__ import annotations

import logging
import socket

import uvicorn


class ProxyServer:
    def __init__(self, app, bind: str = "127.0.0.1", advertise: str | None = None):
        self.app = app
        self.advertise = advertise or bind
        # proto must be IPPROTO_TCP: asyncio only sets TCP_NODELAY on sockets that say so,
        # and without it every response pays a 40 ms Nagle + delayed-ACK stall.
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((bind, 0))
        self.port = self.sock.getsockname()[1]
        self.server: uvicorn.Server | None = None

    @property
    def url(self) -> str:
        return f"http://{self.advertise}:{self.port}"

    async def start(self) -> None:
        config = uvicorn.Config(self.app, lifespan="off", log_level="warning", access_log=False,
                                timeout_graceful_shutdown=1, timeout_keep_alive=30, ws="none", http="auto",
                                proxy_headers=False)  # the agent is the only client: no X-Forwarded-* to honour
        config.load()
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
        self.server = uvicorn.Server(config)
        self.server.lifespan = config.lifespan_class(config)
        await self.server.startup(sockets=[self.sock])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
            self.server.force_exit = True
            await self.server.shutdown(sockets=[self.sock])
        self.sock.close()
