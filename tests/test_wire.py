"""The lean HTTP/1.1 client (gate/transport/wire.py) keeps connections alive.

Every agent invocation and every proxied LLM/tool call goes through it; a new TCP
connection per request once cost a connect (and a server thread) each time. These tests
count the connections a local server accepts.
"""

from __future__ import annotations

import asyncio

from gate.transport import WireClient


class Server:
    """A tiny HTTP/1.1 server: answers each request with `reply`; may close after each answer."""

    def __init__(self, close_after: bool = False, connection_close_header: bool = False, idle_close: bool = False):
        self.idle_close = idle_close  # close a kept-alive connection when its second request arrives
        self.accepted = 0
        self.requests = 0
        self.close_after = close_after
        self.header = b"connection: close\r\n" if connection_close_header else b""

    async def handle(self, reader, writer):
        self.accepted += 1
        served = 0
        while True:
            head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
            if not head:
                break
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            if self.idle_close and served:
                break  # like a keep-alive timeout firing just as the request came in
            served += 1
            self.requests += 1
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n" + self.header + b"\r\nok")
            await writer.drain()
            if self.close_after or self.header:
                break
        writer.close()

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._safe, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/x"
        return self

    async def _safe(self, reader, writer):
        try:
            await self.handle(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def __aexit__(self, *exc):
        self.server.close()


async def _get(client: WireClient, url: str) -> tuple[int, bytes]:
    status, _, chunks, close = await client.request("POST", url, [], b"{}")
    body = b"".join([c async for c in chunks])
    await close()
    return status, body


def test_keep_alive_reuses_one_connection():
    async def main():
        async with Server() as server:
            client = WireClient()
            answers = [await _get(client, server.url) for _ in range(5)]
            await client.aclose()
            return answers, server.accepted

    answers, accepted = asyncio.run(main())
    assert answers == [(200, b"ok")] * 5
    assert accepted == 1


def test_connection_close_is_honoured():
    async def main():
        async with Server(connection_close_header=True) as server:
            client = WireClient()
            answers = [await _get(client, server.url) for _ in range(3)]
            return answers, server.accepted

    answers, accepted = asyncio.run(main())
    assert answers == [(200, b"ok")] * 3
    assert accepted == 3


def test_an_idle_connection_closed_by_the_server_is_replaced_once():
    """The server drops the connection after each answer without saying so: the next request
    finds the pooled connection dead (before any byte of an answer) and goes out on a new one,
    and the server sees each request exactly once."""
    async def main():
        async with Server(close_after=True) as server:
            client = WireClient()
            answers = []
            for _ in range(3):
                answers.append(await _get(client, server.url))
                await asyncio.sleep(0)  # the FIN may or may not have been seen yet: both must work
            return answers, server.requests

    answers, requests = asyncio.run(main())
    assert answers == [(200, b"ok")] * 3
    assert requests == 3


def test_a_pooled_connection_that_dies_unanswered_is_retried_on_a_new_one():
    """The pooled connection looks alive, but the server closes it without a byte of an
    answer: the request goes out once more on a fresh connection (never when bytes came back)."""
    async def main():
        async with Server(idle_close=True) as server:
            client = WireClient()
            answers = [await _get(client, server.url) for _ in range(3)]
            return answers, server.accepted

    answers, accepted = asyncio.run(main())
    assert answers == [(200, b"ok")] * 3
    assert accepted == 3  # 1st on A, 2nd dropped by A and answered on B, 3rd dropped by B and answered on C


class SlowBodyServer(Server):
    """Sends the headers, then the body a moment later: the answer is not all there with its headers."""

    async def handle(self, reader, writer):
        self.accepted += 1
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"ok")
        await writer.drain()
        writer.close()


def test_a_body_that_came_with_its_headers_is_taken_whole_and_the_connection_kept():
    async def main():
        async with Server() as server:
            client = WireClient()
            wholes = []
            for _ in range(2):
                _, _, body, close = await client.request("POST", server.url, [], b"{}")
                await asyncio.sleep(0.02)  # let the body land (it was written with the headers)
                wholes.append(body.arrived_whole())
                assert [c async for c in body] == []  # nothing is handed out twice
                await close()
            await client.aclose()
            return wholes, server.accepted

    wholes, accepted = asyncio.run(main())
    assert wholes == [b"ok", b"ok"] and accepted == 1


def test_a_body_still_arriving_is_not_whole_and_streams():
    async def main():
        async with SlowBodyServer() as server:
            client = WireClient()
            _, _, body, close = await client.request("POST", server.url, [], b"{}")
            whole = body.arrived_whole()
            chunks = [c async for c in body]
            await close()
            await client.aclose()
            return whole, chunks

    whole, chunks = asyncio.run(main())
    assert whole is None and b"".join(chunks) == b"ok"


def test_the_proxy_relays_a_whole_answer_with_its_length_and_a_stream_chunked():
    """The sim's JSON answer (all there at once, like a real upstream's small answer) reaches the
    agent in one piece with content-length; its streamed completion stays chunked, event by event."""
    import httpx

    from proxy_harness import sim_proxy

    ask = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    with sim_proxy() as proxy:
        proxy.begin()
        with httpx.Client(trust_env=False) as client:
            whole = client.post(proxy.env["OPENAI_BASE_URL"] + "/chat/completions", json=ask)
            streamed = client.post(proxy.env["OPENAI_BASE_URL"] + "/chat/completions", json={**ask, "stream": True})
        trace = proxy.end()
    assert whole.status_code == 200 and whole.json()["choices"][0]["message"]["content"].startswith("Hello!")
    assert whole.headers["content-length"] == str(len(whole.content))
    assert "transfer-encoding" not in whole.headers
    assert streamed.headers.get("transfer-encoding") == "chunked" and b"data: [DONE]" in streamed.content
    assert [e.bytes_out for e in trace] == [len(whole.content), len(streamed.content)]


class BigBodyServer(Server):
    """Answers with a body far larger than the client holds unread (so its reading must pause)."""

    size = 4 << 20

    async def handle(self, reader, writer):
        self.accepted += 1
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nx-big: yes\r\n\r\n" % self.size)
        for _ in range(self.size // 65536):
            writer.write(b"b" * 65536)
            await writer.drain()
        writer.close()


def test_a_reader_that_falls_behind_pauses_the_socket_and_still_gets_every_byte():
    """Body bytes wait in the connection only up to HIGH_WATER: a slow reader pauses reading (the
    sender's writes back up) instead of the gate holding a whole large answer, and nothing is lost."""
    from gate.transport.wire import HIGH_WATER

    async def main():
        async with BigBodyServer() as server:
            client = WireClient()
            status, headers, body, close = await client.request("POST", server.url, [], b"{}")
            held, total = [], 0
            async for chunk in body:
                total += len(chunk)
                await asyncio.sleep(0.002)  # a slow consumer
                held.append(body.response.held)  # what arrived meanwhile, not yet handed out
            await close()
            return status, dict(headers), total, max(held), body.conn.paused

    status, headers, total, most_held, paused = asyncio.run(main())
    assert status == 200 and headers["x-big"] == "yes" and total == BigBodyServer.size
    assert most_held <= HIGH_WATER + (256 << 10) and not paused  # at most one socket read past the mark


def test_headers_unread_when_not_asked_for_and_stray_bytes_retire_a_connection():
    """An agent's answer is read for its status and body alone (`read_headers=False`: llhttp makes
    no call per header). A pooled connection that receives bytes nobody asked for is never reused."""
    async def main():
        async with Server() as server:
            client = WireClient()
            status, headers, body, close = await client.request("POST", server.url, [], b"{}", read_headers=False)
            data = b"".join([c async for c in body])
            await close()
            (conn,) = client.idle[next(iter(client.idle))]
            conn.data_received(b"HTTP/1.1 200 OK\r\n\r\n")  # as if the server sent a second answer
            again = await _get(client, server.url)
            await client.aclose()
            return status, headers, data, conn.usable(), again, server.accepted

    status, headers, data, usable, again, accepted = asyncio.run(main())
    assert (status, headers, data) == (200, [], b"ok")
    assert not usable and again == (200, b"ok") and accepted == 2
