"""Headless Chromium driven through the DevTools protocol (CDP), for the console's end-to-end tests:
a page is loaded, clicked with real mouse events, typed into and photographed as a user would.

The protocol is JSON over a websocket; aiohttp (a dependency of the server) is the websocket client,
so the tests need nothing beyond the venv and Debian's `chromium`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp
import pytest

from infra.toolchain import ensure_chromium

STARTUP_S = 30
NAVIGATION_S = 60


def chromium_path() -> str:
    """Debian's chromium; infra/up installs it (apt-get) when missing. Fails, never skips."""
    problem = ensure_chromium()
    found = shutil.which("chromium")
    if problem or not found:
        pytest.fail(f"the console's browser tests need headless Chromium: {problem or 'chromium not on PATH'}")
    return found


class CdpError(Exception):
    pass


class Chromium:
    """One headless Chromium with one page; `async with Chromium(path) as page: …`."""

    def __init__(self, executable: str, width: int = 1400, height: int = 1000) -> None:
        self._executable = executable
        self._size = (width, height)
        self._profile = tempfile.TemporaryDirectory(prefix="strata-cdp-")
        self._process: subprocess.Popen[bytes] | None = None
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._waiters: list[tuple[str, asyncio.Future[dict[str, Any]]]] = []

    async def __aenter__(self) -> Chromium:
        profile = Path(self._profile.name)
        self._process = subprocess.Popen(
            [self._executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             f"--window-size={self._size[0]},{self._size[1]}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # Its own process group: the renderer, utility and crashpad helpers outlive the browser
            # process and write into the profile, so closing ends the group, not one pid.
            start_new_session=True)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + STARTUP_S
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self._process.poll() is not None:
                raise CdpError("chromium did not open its DevTools port")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as reply:
            targets = await reply.json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        await self.send("Emulation.setDeviceMetricsOverride", width=self._size[0], height=self._size[1],
                        deviceScaleFactor=1, mobile=False)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self._process is not None:
            self._end_process_group()
        self._remove_profile()

    def _end_process_group(self) -> None:
        assert self._process is not None
        group = self._process.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        self._process.wait()

    def _remove_profile(self) -> None:
        """Removes the profile directory; a helper that was still exiting may add a file between the
        listing and the rmdir (seen in CI: `Directory not empty: 'Default'`), so a few tries."""
        deadline = time.monotonic() + 10
        while True:
            try:
                self._profile.cleanup()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    async def _read(self) -> None:
        assert self._ws is not None
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            for waiter in [w for w in self._waiters if w[0] == data.get("method")]:
                self._waiters.remove(waiter)
                if not waiter[1].done():
                    waiter[1].set_result(data.get("params", {}))

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        assert self._ws is not None
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, NAVIGATION_S)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _next_event(self, method: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((method, future))
        return future

    async def set_time_zone(self, zone: str) -> None:
        """The page's time zone from now on, as if the machine were set to `zone` (an IANA name)."""
        await self.send("Emulation.setTimezoneOverride", timezoneId=zone)

    async def goto(self, url: str) -> None:
        loaded = self._next_event("Page.loadEventFired")
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded, NAVIGATION_S)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression[:80]}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def url(self) -> str:
        return str(await self.evaluate("location.href"))

    async def type_into(self, selector: str, text: str) -> None:
        """Focuses the field and types `text` as keystrokes."""
        await self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        await self.send("Input.insertText", text=text)

    async def click(self, selector: str, navigates: bool = True) -> None:
        """A real mouse click on the middle of the element (scrolled into view first); waits for the
        page it opens to load when `navigates`."""
        box = await self.evaluate(
            f"(() => {{const el = document.querySelector({json.dumps(selector)}); if (!el) return null;"
            "el.scrollIntoView({block: 'center'}); const r = el.getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2];})()")
        if box is None:
            raise CdpError(f"no element matches {selector!r} on {await self.url()}")
        loaded = self._next_event("Page.loadEventFired") if navigates else None
        await self.send("Input.dispatchMouseEvent", type="mouseMoved", x=box[0], y=box[1])
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left",
                            clickCount=1)
        if loaded is not None:
            await asyncio.wait_for(loaded, NAVIGATION_S)

    async def screenshot(self, path: Path) -> Path:
        """The whole page as a PNG."""
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path
