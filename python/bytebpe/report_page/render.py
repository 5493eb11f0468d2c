"""The page: the template with its stylesheet, script and packed data put inline, so the
file needs nothing else at view time (no network, no other files)."""

from __future__ import annotations

import html
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def render_html(packed: str, title: str) -> str:
    page = _asset("template.html")
    script = _asset("report.js")
    if "</script" in script.lower():
        raise AssertionError("report.js must not contain '</script'")
    for key, value in (
        ("/*CSS*/", _asset("report.css")),
        ("/*JS*/", script),
        ("%TITLE%", html.escape(title)),
        ("%DATA%", packed),  # base64: no character that HTML would read
    ):
        if key not in page:
            raise AssertionError(f"template.html lacks {key}")
        page = page.replace(key, value)
    return page
