"""The service's settings, passed from the command line to every worker process."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

ENV = "BYTEBPE_SERVE_CONFIG"


@dataclass(frozen=True)
class ServeConfig:
    path: str
    """What to serve: a run store, a bytebpe tokenizer file, a .tiktoken file (with its
    .json sidecar) or a Hugging Face tokenizer.json."""
    kind: str | None = None
    """Force the loader ("store", "bytebpe", "tiktoken", "huggingface"); default: detect."""
    admin_token: str | None = None
    """Bearer token for /v1/admin/*; without one the admin endpoints are off."""
    poll_interval: float = 0.1
    """Seconds between checks of the source for changes (0: never; reload by admin only)."""
    keep_versions: int = 8
    """Earlier vocabularies kept in memory for version pinning."""
    max_body_bytes: int = 16 * 1024 * 1024
    max_batch: int = 1024
    """Texts per tokenize/count request, id lists per detokenize request."""
    max_text_bytes: int = 4 * 1024 * 1024
    """UTF-8 bytes of one text."""
    max_ids: int = 4 * 1024 * 1024
    """Ids in one detokenize request, all lists together."""
    timeout: float = 30.0
    """Seconds a request may take, reading its body included (then 408)."""
    inline_bytes: int = 8192
    """Requests with at most this many bytes of text are encoded on the event loop; larger
    ones in the thread pool (the Rust side releases the GIL)."""
    threads: int = 0
    """Thread-pool size for large requests (0: twice the CPU count)."""
    access_log_sample: float = 0.0
    """Fraction of requests logged (0: none; errors and reloads are always logged)."""
    trigger_file: str | None = None
    """A file whose change makes every worker reload (the admin endpoint touches it)."""

    def to_env(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_env(cls) -> ServeConfig:
        raw = os.environ.get(ENV)
        if not raw:
            raise RuntimeError(f"{ENV} is not set; start the service with `bytebpe serve PATH`")
        return cls(**json.loads(raw))

    def check(self) -> None:
        """Raises ValueError naming a setting out of range."""
        for name in ("max_body_bytes", "max_batch", "max_text_bytes", "max_ids", "keep_versions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in ("timeout",):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")
        for name in ("poll_interval", "inline_bytes", "threads"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)}")
        if not 0 <= self.access_log_sample <= 1:
            raise ValueError(f"access_log_sample must be in [0, 1], not {self.access_log_sample}")
        if self.admin_token is not None and len(self.admin_token) < 16:
            raise ValueError("the admin token must be at least 16 characters long")
