"""The tokenizer against a baseline: the same figures per eval set, and the words the two
split most differently, weighted by how often the words occur."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bytebpe.report_page.evaluate import EvalResult, EvalSet, as_encodable, renyi_efficiency

#: Text per eval set whose words are compared one by one.
WORD_BYTES = 2 * 10**6
MAX_WORDS = 50_000
ROWS = 15


def baseline_figures(baseline: Any, es: EvalSet, result: EvalResult) -> dict[str, Any]:
    import numpy as np

    docs = [as_encodable(d) for d in es.docs]
    if docs:
        flat, _ = baseline.encode_batch_numpy(docs, dtype=np.uint32)
    else:
        flat = np.zeros(0, np.uint32)
    usage = np.bincount(flat, minlength=baseline.vocab_size)
    n = len(flat)
    return {
        "tokens": n,
        "bytes_per_token": result.n_bytes / n if n else None,
        "tokens_per_word": n / result.words if result.words else None,
        "renyi": renyi_efficiency(usage),
        "sample": baseline.encode_bytes(result.sample),
    }


def word_differences(tok: Any, baseline: Any, sets: list[EvalSet]) -> dict[str, Any]:
    """Words (whitespace-separated, encoded with a leading space as in running text) from
    the start of each eval set, with their token counts under both tokenizers; the rows
    where the tokenizer saves the most tokens over the baseline and where it loses most
    (difference x occurrences)."""
    words: Counter[str] = Counter()
    for es in sets:
        seen = 0
        for d in es.docs:
            text = d if isinstance(d, str) else d.decode("utf-8", "replace")
            words.update(text.split())
            seen += len(text)
            if seen > WORD_BYTES:
                break
    common = [w for w, _ in words.most_common(MAX_WORDS)]
    if not common:
        return {"better": [], "worse": [], "words": 0}
    texts = [" " + w for w in common]
    mine = tok.encode_ordinary_batch(texts)
    theirs = baseline.encode_ordinary_batch(texts)
    ranked = sorted(
        ((len(b) - len(a)) * words[w], w, a, b) for w, a, b in zip(common, mine, theirs)
        if len(a) != len(b)
    )

    def row(item: tuple[int, str, list[int], list[int]]) -> dict[str, Any]:
        saved, w, a, b = item
        return {"word": " " + w, "count": words[w], "saved": saved,
                "mine": [tok.token_bytes(t).hex() for t in a],
                "baseline": [baseline.token_bytes(t).hex() for t in b]}

    return {
        "better": [row(x) for x in reversed(ranked[-ROWS:]) if x[0] > 0],
        "worse": [row(x) for x in ranked[:ROWS] if x[0] < 0],
        "words": len(common),
    }
