"""The HTTP tokenizer service (`bytebpe serve`; `pip install 'bytebpe[serve]'`).

    from bytebpe.serve import create_app
    app = create_app("run.sqlite", admin_token=None)   # any ASGI server runs it

See `bytebpe.serve.app` for the routes and `docs/design.md` ("The service") for how
reloads, versions and metrics work.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ServeConfig", "create_app", "vocabulary_version"]


def __getattr__(name: str) -> Any:
    # Lazy, so `bytebpe serve --help` and the version module work without the extra.
    if name == "create_app":
        from bytebpe.serve.app import create_app

        return create_app
    if name == "ServeConfig":
        from bytebpe.serve.config import ServeConfig

        return ServeConfig
    if name == "vocabulary_version":
        from bytebpe.serve.version import vocabulary_version

        return vocabulary_version
    raise AttributeError(name)
