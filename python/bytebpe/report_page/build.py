"""Assembling the report: every figure computed once, packed for the page."""

from __future__ import annotations

import datetime
import os
import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from html import escape
from typing import Any, Union

from bytebpe._bytebpe import __version__
from bytebpe.report_page import DEFAULT_MAX_BYTES, compare, evaluate, vocabulary
from bytebpe.report_page.evaluate import EvalSet
from bytebpe.report_page.payload import Packer
from bytebpe.report_page.render import render_html
from bytebpe.report_page.reported import ReportedTokenizer
from bytebpe.report_page.unicode_blocks import NAMES as BLOCK_NAMES
from bytebpe.report_page.vocab import Vocab, read_vocab

# What `eval=` takes: {name: a path or glob, a list of Paths, or a list of documents},
# or EvalSet objects; None means the bundled held-out sample.
EvalSpec = Union[Mapping[str, Any], Iterable[EvalSet], None]


class Report:
    """A rendered report: `save(path)` writes the HTML file; in Jupyter it shows inline."""

    def __init__(self, html: str, figures: dict[str, Any], timings: dict[str, float]) -> None:
        self.html = html
        self.figures = figures
        self.timings = timings

    def save(self, path: Any) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)

    def _repr_html_(self) -> str:
        # An iframe keeps the page's scripts and styles apart from the notebook's.
        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" '
                'style="width:100%;height:900px;border:1px solid #ccc" '
                'title="bytebpe report"></iframe>')

    def __repr__(self) -> str:
        return f"<bytebpe report: {len(self.html) / 1e6:.2f} MB of HTML>"


# What a refusal of `eval=` says it takes.
EVAL_FORMS = ("give a file or glob, {name: a file or glob, a list of paths or a list of "
              "documents}, a list of documents (str or bytes), or EvalSets")


def _eval_sets(spec: EvalSpec, max_bytes: int) -> list[EvalSet]:
    """`eval=` as EvalSets. A str or path is a file or glob; a mapping names its sets
    (each a file or glob, a list of paths, or a list of documents); any other iterable
    is EvalSets, or documents (str or bytes) making one set. Anything else is refused,
    naming where it is."""
    if spec is None:
        return evaluate.bundled_sample()
    if isinstance(spec, (str, os.PathLike)):
        path = os.fspath(spec)
        return [evaluate.read_eval(os.path.basename(path) or path, [path], max_bytes)]
    if isinstance(spec, Mapping):
        return [_eval_set(str(name), value, max_bytes, f"eval[{name!r}]")
                for name, value in spec.items()]
    if not isinstance(spec, Iterable):
        raise TypeError(f"eval is {type(spec).__name__}; {EVAL_FORMS}")
    items = list(spec)
    if all(isinstance(x, EvalSet) for x in items):
        return items
    return [_eval_set("eval", items, max_bytes, "eval")]


def _eval_set(name: str, value: object, max_bytes: int, where: str) -> EvalSet:
    """One set of `eval=`: `value` is an EvalSet, a file or glob, a list of paths, or a
    list of documents; `where` names it in a refusal."""
    if isinstance(value, EvalSet):
        return value
    if isinstance(value, (str, os.PathLike)):
        return evaluate.read_eval(name, [os.fspath(value)], max_bytes)
    if not isinstance(value, Iterable):
        raise TypeError(f"{where} is {type(value).__name__}; {EVAL_FORMS}")
    items = list(value)
    if items and all(isinstance(x, os.PathLike) for x in items):
        return evaluate.read_eval(name, [os.fspath(x) for x in items], max_bytes)
    for i, doc in enumerate(items):
        if not isinstance(doc, (str, bytes)):
            raise TypeError(
                f"{where}[{i}] is {type(doc).__name__}; a document is str or bytes"
            )
    return EvalSet(name, items, "documents passed in")


def build_report(
    tok: ReportedTokenizer,
    eval: EvalSpec = None,  # the name for it (shadows the builtin here only)
    baseline: ReportedTokenizer | None = None,
    *,
    origin: dict[str, Any] | None = None,
    baseline_origin: dict[str, Any] | None = None,
    max_eval_bytes: int = DEFAULT_MAX_BYTES,
    title: str | None = None,
) -> Report:
    """The report of `tok`; `origin` says where it came from (a file, a run store and its
    facts), when known.

    `eval`: {name: a file or glob (str), a list of `pathlib.Path`s, or a list of documents
    (str or bytes)}; None (default) uses the held-out part of the sample corpus bundled
    with bytebpe; {} measures nothing. Files are read as `bytebpe.read_files` reads them,
    up to `max_eval_bytes` per set. `baseline`: another
    tokenizer to compare with on the same eval sets.
    """
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise ImportError("the report needs numpy: pip install 'bytebpe[report]'") from None

    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 3)
        clock = now

    origin = origin if origin is not None else {"kind": "Tokenizer object"}
    base = baseline
    base_origin = baseline_origin if baseline_origin is not None else {"kind": "Tokenizer object"}
    vocab = read_vocab(tok)
    lap("vocab")
    # Three things overlap, since the native encoder and numpy release the GIL: a thread
    # works out every token's merge steps (pure Python, for the growth curves) and the
    # composition; a worker encodes the eval sets one after another; this thread measures
    # each set as soon as it is encoded.
    background: dict[str, Any] = {}

    def vocabulary_work() -> None:
        try:
            if eval != {}:
                vocab.precompute_steps()
            background["composition"] = vocabulary.composition(vocab)
        except BaseException as e:  # re-raised in the calling thread below
            background["error"] = e

    side = threading.Thread(target=vocabulary_work, name="bytebpe-report-vocabulary")
    side.start()
    try:
        sets = _eval_sets(eval, max_eval_bytes)
        lap("read_eval")
        with ThreadPoolExecutor(1, thread_name_prefix="bytebpe-report-encode") as pool:
            encoded = [pool.submit(evaluate.encode, tok, es) for es in sets]
            results = [evaluate.measure(tok, vocab, es, job.result())
                       for es, job in zip(sets, encoded)]
        lap("encode_eval")
    finally:
        side.join()
    if "error" in background:
        raise background["error"]
    lap("vocabulary_join")
    sizes = evaluate.growth_sizes(vocab.size)
    if results:
        evaluate.growth_curve(vocab, results, sizes)
    lap("growth")
    diffs = None
    if base is not None:
        for es, r in zip(sets, results):
            r.baseline = compare.baseline_figures(base, es, r)
        diffs = compare.word_differences(tok, base, sets)
    lap("baseline")
    usage_total = sum(r.usage for r in results) if results else None
    comp = background["composition"]
    health = vocabulary.health(vocab, usage_total)
    lap("vocabulary")

    packer = Packer()
    figures = _figures(tok, vocab, origin, results, sizes, comp, health, packer)
    figures["title"] = title or _default_title(origin)
    figures["generated"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC")
    figures["bytebpe_version"] = __version__
    if base is not None:
        figures["baseline"] = _baseline_figures(base, base_origin, results, diffs)
    lap("figures")
    html = render_html(packer.pack(figures), figures["title"])
    lap("render")
    timings["total"] = round(sum(timings.values()), 3)
    return Report(html, figures, timings)


def _default_title(origin: dict[str, Any]) -> str:
    name = origin.get("path") or origin.get("name") or "tokenizer"
    return f"bytebpe report: {os.path.basename(str(name))}"


def _figures(
    tok: Any,
    vocab: Vocab,
    origin: dict[str, Any],
    results: list[evaluate.EvalResult],
    sizes: list[int],
    comp: dict[str, Any],
    health: dict[str, Any],
    packer: Packer,
) -> dict[str, Any]:
    n = vocab.size
    # How each token was built; bytes resolve from the parts, the rest are stored.
    packer.column("left", vocab.left, shift=1)
    packer.column("right", vocab.right, shift=1)
    packer.column("count", vocab.count, shift=1)
    packer.column("merge_rank", vocab.merge_rank, shift=1)
    packer.column("derived", [1 if d else 0 for d in vocab.derived])
    # (The page takes id t < 256 for byte t unless told: an imported tokenizer.json may
    # number its bytes otherwise, GPT-2's does.)
    explicit = [t for t in range(n) if vocab.left[t] < 0 and vocab.tokens[t]
                and vocab.tokens[t] != (bytes([t]) if t < 256 else None)]
    packer.column("explicit_ids", explicit)
    packer.column("explicit_lens", [len(vocab.tokens[t]) for t in explicit])
    packer.raw("explicit_bytes", b"".join(vocab.tokens[t] for t in explicit))
    # The merge log in order (counts for the growth chart; duplicates listed apart).
    packer.column("log_count", [c for _, _, _, c in vocab.merges])
    seen: set[int] = set()
    duplicates = []
    for k, (a, b, t, c) in enumerate(vocab.merges):
        if t in seen or (t < n and vocab.merge_rank[t] != k):
            duplicates.append([k, a, b, t, c])
        seen.add(t)
    for i, r in enumerate(results):
        packer.column(f"usage_{i}", r.usage[:n])
    for key in ("unreachable", "not_utf8", "unused", "unused_bytes", "intermediate"):
        if health[key] is not None:
            packer.column(f"health_{key}", health[key])
    packer.column("operators", comp.pop("operators"))

    ledger = tok.loss_report()
    evals = []
    for r in results:
        used = int((r.usage[:n] > 0).sum())
        blocks = [[BLOCK_NAMES[i], int(r.block_chars[i]), int(r.block_split[i])]
                  for i in range(len(BLOCK_NAMES)) if r.block_chars[i]]
        entry = {
            "name": r.name, "source": r.source, "truncated": r.truncated,
            "documents": r.documents, "bytes": r.n_bytes, "chars": r.chars, "words": r.words,
            "tokens": r.tokens, "bytes_per_token": r.bytes_per_token,
            "tokens_per_word": r.tokens_per_word, "renyi": r.renyi, "distinct_tokens": used,
            "invalid": r.invalid, "invalid_bytes": r.invalid_bytes.tolist(),
            "split_bytes": r.split_bytes.tolist(), "split_chars": r.split_chars,
            "blocks": blocks, "examples": r.examples, "growth": r.growth,
            "sample_hex": r.sample.hex(), "sample_ids": tok.encode_bytes(r.sample),
        }
        evals.append(entry)
    _fairness(evals)
    return {
        "summary": {
            "vocab_size": tok.vocab_size,
            "ordinary": n,
            "merged": len(vocab.merged_ids),
            "special_tokens": sorted(([t, i] for t, i in vocab.special.items()),
                                     key=lambda x: x[1]),
            "pattern": tok.pattern,
            "pattern_name": tok.pattern_name,
            "origin": origin,
            "merges_logged": len(vocab.merges),
            "duplicate_merges": len(duplicates),
            "has_counts": vocab.has_counts,
            "derived_parts": sum(vocab.derived),
            "ledger": ledger,
        },
        "duplicates": duplicates[:2000],
        "evals": evals,
        "growth_sizes": sizes,
        "composition": comp,
        "health_problems": health["problems"][:200],
        "health_counts": {k: (len(v) if v is not None else None) for k, v in health.items()
                          if k != "problems"},
        "renyi_alpha": evaluate.RENYI_ALPHA,
    }


def _fairness(evals: list[dict[str, Any]]) -> None:
    """Each set's figures relative to the best set: tokens per word over the lowest, and
    the highest bytes per token over its own (both 1.0 for the best, larger is worse)."""
    tpw = [e["tokens_per_word"] for e in evals if e["tokens_per_word"]]
    bpt = [e["bytes_per_token"] for e in evals if e["bytes_per_token"]]
    for e in evals:
        e["fertility_ratio"] = e["tokens_per_word"] / min(tpw) if e["tokens_per_word"] else None
        e["bpt_ratio"] = max(bpt) / e["bytes_per_token"] if e["bytes_per_token"] else None


def _baseline_figures(
    base: Any, origin: dict[str, Any], results: list[evaluate.EvalResult],
    diffs: dict[str, Any] | None,
) -> dict[str, Any]:
    samples = []
    for r in results:
        b = r.baseline or {}
        ids = b.get("sample", [])
        samples.append({
            "tokens": b.get("tokens"), "bytes_per_token": b.get("bytes_per_token"),
            "tokens_per_word": b.get("tokens_per_word"), "renyi": b.get("renyi"),
            "sample_ids": ids,
            "sample_tokens": {str(t): base.token_bytes(t).hex() for t in set(ids)},
        })
    return {
        "vocab_size": base.vocab_size, "pattern_name": base.pattern_name,
        "pattern": base.pattern, "origin": origin, "evals": samples, "words": diffs,
    }
