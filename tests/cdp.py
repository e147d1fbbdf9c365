"""A minimal Chrome DevTools Protocol driver for the report.html test: headless Debian chromium,
one page, console errors and network requests collected, DOM queries and a screenshot.

Only what the test needs: launch with a fresh profile and no background traffic, attach to
one page target (flattened session), navigate, evaluate, screenshot, close.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import websockets

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "--window-size=1280,1600"]


class Page:
    def __init__(self, ws, session: str):
        self.ws, self.session = ws, session
        self.next_id = 0
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.events: list[dict] = []

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        mine = self.next_id
        await self.ws.send(json.dumps({"id": mine, "method": method, "params": params, "sessionId": self.session}))
        while True:
            msg = json.loads(await self.ws.recv())
            if msg.get("id") == mine:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def _event(self, msg: dict) -> None:
        method, params = msg.get("method", ""), msg.get("params", {})
        self.events.append(msg)
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params["exceptionDetails"])[:500])
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])

    async def wait_event(self, name: str, timeout: float = 20) -> dict:
        async def pump():
            for msg in self.events:
                if msg.get("method") == name:
                    return msg
            while True:
                msg = json.loads(await self.ws.recv())
                self._event(msg)
                if msg.get("method") == name:
                    return msg
        return await asyncio.wait_for(pump(), timeout)

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        shot = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))


async def open_page(url: str, work):
    """Runs `work(page)` against `url` in a fresh headless chromium; returns its result."""
    profile = tempfile.mkdtemp(prefix="chaos-gate-chromium-")
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ws_url = await asyncio.wait_for(asyncio.to_thread(_devtools_url, proc), 30)
        async with websockets.connect(ws_url, max_size=64 << 20) as ws:
            browser = Page(ws, None)
            target = await _browser_call(browser, "Target.createTarget", url="about:blank")
            attached = await _browser_call(browser, "Target.attachToTarget", targetId=target["targetId"], flatten=True)
            page = Page(ws, attached["sessionId"])
            for domain in ("Page", "Runtime", "Log", "Network"):
                await page.call(f"{domain}.enable")
            await page.call("Page.navigate", url=url)
            await page.wait_event("Page.loadEventFired")
            return await work(page)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


async def _browser_call(browser: Page, method: str, **params) -> dict:
    browser.next_id += 1
    mine = browser.next_id
    await browser.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
    while True:
        msg = json.loads(await browser.ws.recv())
        if msg.get("id") == mine:
            return msg["result"]


def _devtools_url(proc: subprocess.Popen) -> str:
    for line in proc.stderr:
        found = re.search(r"DevTools listening on (ws://\S+)", line)
        if found:  # keep draining, or chromium blocks once the pipe is full
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return found.group(1)
    raise RuntimeError("chromium exited before its DevTools endpoint was up")
