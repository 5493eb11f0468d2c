"""ASGI plumbing: a light reply, the deadline watchdog, the dispatching app."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.applications import Starlette

JSON = "application/json"


class Reply:
    """A response sent straight to the ASGI `send` (lighter than Starlette's Response)."""

    __slots__ = ("body", "headers", "media_type", "status_code")

    def __init__(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None,
                 media_type: str = JSON) -> None:
        self.body = body
        self.status_code = status
        self.headers = headers
        self.media_type = media_type

    async def send(self, send: Any) -> None:
        raw = [(b"content-type", self.media_type.encode("latin-1")),
               (b"content-length", str(len(self.body)).encode("latin-1"))]
        if self.headers:
            raw += [(k.lower().encode("latin-1"), v.encode("latin-1"))
                    for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": self.status_code, "headers": raw})
        await send({"type": "http.response.body", "body": self.body})


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(orjson.dumps(body), status, headers)


class Watchdog:
    """Cancels requests past their deadline. One task per event loop wakes every
    `tick` seconds; a request costs a dict insert and delete (a timer handle or a cancel
    scope per request cost more than encoding a 1 KB text)."""

    def __init__(self, tick: float = 0.05) -> None:
        self.tick = tick
        self.deadlines: dict[asyncio.Task[Any], float] = {}
        self.expired: set[asyncio.Task[Any]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, deadline: float) -> asyncio.Task[Any] | None:
        task = asyncio.current_task()
        if task is None:
            return None
        loop = task.get_loop()
        if self._loop is not loop or self._runner is None or self._runner.done():
            self._loop = loop
            self.deadlines.clear()
            self.expired.clear()
            self._runner = loop.create_task(self._run())
        self.deadlines[task] = deadline
        return task

    def unwatch(self, task: asyncio.Task[Any] | None) -> bool:
        """Stops watching; True if the task was cancelled for its deadline."""
        if task is None:
            return False
        self.deadlines.pop(task, None)
        if task in self.expired:
            self.expired.discard(task)
            if hasattr(task, "uncancel"):
                task.uncancel()
            return True
        return False

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            now = time.monotonic()
            late = [task for task, deadline in self.deadlines.items() if deadline <= now]
            for task in late:
                del self.deadlines[task]
                self.expired.add(task)
                task.cancel()

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            self._runner = None


class ServiceApp:
    """The ASGI app: the encoding routes are dispatched by one dict lookup; everything
    else (other routes, 404/405, lifespan) goes through Starlette."""

    def __init__(self, starlette: Starlette, hot: dict[tuple[str, str], Any]) -> None:
        self.starlette = starlette
        self.state = starlette.state
        self.routes = starlette.routes
        self._hot = hot

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path")
            if root and path.startswith(root):
                path = path[len(root):]
            endpoint = self._hot.get((scope["method"], path))
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self.starlette(scope, receive, send)


class AsgiEndpoint:
    """Marks a coroutine function as an ASGI app for Starlette's Route (which would
    otherwise wrap a plain function as a request -> response endpoint)."""

    __slots__ = ("app",)

    def __init__(self, app: Callable[[Any, Any, Any], Awaitable[None]]) -> None:
        self.app = app

    def __call__(self, scope: Any, receive: Any, send: Any) -> Awaitable[None]:
        return self.app(scope, receive, send)
