#!/usr/bin/env python3
"""Rebuild the sample corpus shipped in the package: python/bytebpe/data/sample.jsonl.gz.

Usage (from the repository root):

    python3 tools/build_sample.py [CORPORA_DIR]     # default: ../shared/corpora

CORPORA_DIR holds english.jsonl.gz, code.jsonl.gz and multilingual.jsonl.gz (built from
Debian bookworm packages by CORPORA_DIR/build.py).  Those corpora as a whole are not for
redistribution, so only documents from sources whose licence clearly allows it are taken;
the sources, licences and counts are documented in python/bytebpe/data/SOURCES.md (update
it by hand if the budgets or sources below change; the script prints the numbers).

The selection is deterministic: documents are ranked by the SHA-256 of their text, taken
greedily up to a per-source byte budget, and assigned to the "heldout" split by a fixed
stride.  The output is gzip'ed with mtime=0, so rebuilding gives byte-identical output
(with the same zlib).  This is a development tool; tests never run it.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "python" / "bytebpe" / "data" / "sample.jsonl.gz"
KB = 1000

# Largest document taken: keeps a few huge files from eating a source's whole budget.
MAX_DOC = 48 * KB
HELDOUT_STRIDE = 10  # every 10th document (in a stable order) is held out

PERMISSIVE_SPDX = {"MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause"}


class Source(NamedTuple):
    corpus: str  # english | code | multilingual: the corpus file, and the "kind" of its documents
    src: str  # "src" in the corpus
    lang: str
    licence: str | None  # None: taken from each document's SPDX header
    budget: int  # UTF-8 bytes of text: ~40% English, ~30% code, ~30% multilingual overall
    keep: Callable[[str], bool] | None = None  # licence (or language) filter
    name: str | None = None  # "src" in the sample, when one corpus source is split by licence


def linux_spdx(text: str) -> str | None:
    """The file's SPDX expression if it offers a permissive licence (most of Linux is GPL-only)."""
    m = re.search(r"SPDX-License-Identifier:\s*(.*?)\s*(?:\*/|$)", text[:400], re.M)
    if not m:
        return None
    expr = m.group(1)
    if re.search(r"\band\b", expr, re.I):
        return None
    alternatives = [a.strip(" ()") for a in re.split(r"\s+or\s+", expr, flags=re.I)]
    if not PERMISSIVE_SPDX & set(alternatives):
        return None
    expr = re.sub(r"\s+or\s+", " OR ", expr, flags=re.I)
    if expr.startswith("(") and expr.endswith(")") and expr.count("(") == 1:
        expr = expr[1:-1]
    return expr


def imports(module: str) -> Callable[[str], bool]:
    pat = re.compile(rf"^\s*(?:from|import)\s+{module}\b", re.M)
    return lambda text: pat.search(text) is not None


def contains(*needles: str) -> Callable[[str], bool]:
    return lambda text: all(n in text for n in needles)


def mostly_non_ascii(text: str) -> bool:
    """Drops pages of non-Latin-script help that were left untranslated (English)."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(not c.isascii() for c in letters) / len(letters) >= 0.5


ENGLISH = [
    Source("english", "python-docs-rst", "en", "PSF-2.0", 1050 * KB),
    Source("english", "postgresql-doc-html", "en", "PostgreSQL", 1050 * KB),
]
# The corpus mixes CPython, SymPy and Django under src "python" without paths; an absolute
# self-import identifies SymPy and Django files (both BSD-3-Clause) unambiguously.
BSD3 = "BSD-3-Clause"
CODE = [
    Source("code", "python", "python", BSD3, 260 * KB, imports("sympy"), "python-sympy"),
    Source("code", "python", "python", BSD3, 260 * KB, imports("django"), "python-django"),
    Source("code", "c-linux", "c", None, 480 * KB, linux_spdx),
    Source("code", "go", "go", BSD3, 340 * KB, contains("The Go Authors", "BSD-style")),
    Source("code", "cpp-boost", "cpp", "BSL-1.0", 340 * KB, contains("Boost Software License")),
]
# LibreOffice help pages and UI strings (MPL-2.0).  CJK, Korean, Arabic, Hindi and Russian,
# which the project must cover, get larger budgets than the other scripts.
ML_BUDGETS = {
    "lo-help-ja": 150, "lo-help-zh-cn": 100, "lo-help-zh-tw": 60, "lo-help-ko": 80, "lo-ui-ko": 40,
    "lo-ui-ar": 120, "lo-help-hi": 60, "lo-ui-hi": 50, "lo-help-ru": 130,
    "lo-help-el": 50, "lo-ui-th": 50, "lo-ui-he": 50, "lo-ui-fa": 50, "lo-ui-bn": 40,
    "lo-ui-ta": 40, "lo-ui-ka": 40, "lo-ui-am": 40, "lo-help-km": 40, "lo-help-dz": 30,
    "lo-ui-te": 30, "lo-ui-ml": 30, "lo-ui-si": 30, "lo-ui-ug": 30,
    "lo-help-vi": 40, "lo-help-tr": 40, "lo-help-de": 40, "lo-help-fr": 40, "lo-help-es": 40,
    "lo-help-pl": 40,
}
LATIN = {"vi", "tr", "de", "fr", "es", "pl"}


def ml_lang(src: str) -> str:
    lang = src.split("-", 2)[2]
    base, _, region = lang.partition("-")
    return base + ("-" + region.upper() if region else "")


MULTILINGUAL = [
    Source("multilingual", src, ml_lang(src), "MPL-2.0", kb * KB,
           None if ml_lang(src) in LATIN else mostly_non_ascii)
    for src, kb in ML_BUDGETS.items()
]
SOURCES = ENGLISH + CODE + MULTILINGUAL

# ---------------------------------------------------------------- hand-written emoji document
# Written for this project and dedicated to the public domain (CC0-1.0).  Escapes are used for
# invisible or combining characters so reviewers can see exactly what is there.
ZWJ, VS16 = "\u200d", "\ufe0f"
TONES = ["\U0001F3FB", "\U0001F3FC", "\U0001F3FD", "\U0001F3FE", "\U0001F3FF"]
EMOJI_A = [
    "Emoji and other hard cases for byte-level tokenizers (part A)",
    "",
    "Plain emoji: \U0001F600 \U0001F602 \U0001F60D \U0001F914 \U0001F680 \U0001F389 \U0001F40D "
    "\U0001F980 \u2615 \u26A1 \U0001F525 \U0001F4AF",
    "Thumbs up in every skin tone: " + " ".join("\U0001F44D" + t for t in TONES),
    "Waving hands: " + "".join("\U0001F44B" + t for t in TONES) + " and no tone: \U0001F44B",
    "A family (ZWJ): \U0001F468" + ZWJ + "\U0001F469" + ZWJ + "\U0001F467" + ZWJ + "\U0001F466"
    + " - two mums: \U0001F469" + ZWJ + "\U0001F469" + ZWJ + "\U0001F466",
    "Jobs (ZWJ + tone): \U0001F469\U0001F3FD" + ZWJ + "\U0001F4BB \U0001F9D1\U0001F3FF" + ZWJ
    + "\U0001F680 \U0001F468\U0001F3FB" + ZWJ + "\U0001F373 \U0001F469\U0001F3FE" + ZWJ
    + "\U0001F52C",
    "Couple with heart, mixed tones: \U0001F469\U0001F3FC" + ZWJ + "\u2764" + VS16 + ZWJ
    + "\U0001F468\U0001F3FE",
    "Flags: \U0001F1EF\U0001F1F5 \U0001F1E9\U0001F1EA \U0001F1E7\U0001F1F7 \U0001F1F0\U0001F1F7 "
    "\U0001F1FA\U0001F1E6 - rainbow \U0001F3F3" + VS16 + ZWJ + "\U0001F308 - Scotland "
    "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",
    "Keycaps: 1" + VS16 + "\u20e3 #" + VS16 + "\u20e3 *" + VS16 + "\u20e3; heart text vs emoji: "
    "\u2764 \u2764" + VS16,
    "",
    "Combining marks: cafe\u0301 (decomposed) vs caf\u00e9 (precomposed); a\u0308 o\u0308 u\u0308;",
    "Vietnamese stacked: Vie\u0323\u0302t Nam, ti\u00ea\u0301ng Vi\u00ea\u0323t;",
    "Zalgo: Z\u0351\u0367\u0300a\u0364\u0310\u0346l\u0353\u032b\u0358"
    "g\u0342\u0336\u0325o\u0307\u0321\u0330!",
    "Hangul jamo (NFD): \u1112\u1161\u11ab\u1100\u1173\u11af vs \ud55c\uae00 (NFC)",
    "Devanagari conjunct with virama: \u0915\u094d\u0937 \u0924\u094d\u0930 \u091c\u094d\u091e",
    "Hebrew with niqqud: \u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd; Arabic with harakat: "
    "\u0645\u064e\u0631\u0652\u062d\u064e\u0628\u064b\u0627",
    "Persian half-space (ZWNJ): \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "",
    "Whitespace runs follow." + " " * 8,
    " " * 64 + "indented by 64 spaces",
    "\t\t\t\t\t\t\t\tindented by 8 tabs",
    "mixed \t \t  \t   \t    end",
    " " * 32,
    "no-break spaces:\u00a0\u00a0\u00a0\u00a0 ideographic spaces:\u3000\u3000\u3000"
    " thin:\u2009\u2009.",
    "",
    "",
    "",
    "(two blank lines above, CRLF line endings throughout) \U0001F44B\U0001F3FD",
]
EMOJI_B = [
    "Emoji and other hard cases for byte-level tokenizers (part B)",
    "",
    "Chat: ok \U0001F44C\U0001F3FE see you \U0001F642 lol \U0001F923\U0001F923\U0001F923 "
    "\u2728\u2728 nice \U0001F64C\U0001F3FB",
    "Repeated emoji: " + "\U0001F525" * 16 + " " + "\U0001F602" * 9,
    "Families: \U0001F468" + ZWJ + "\U0001F468" + ZWJ + "\U0001F467" + " \U0001F469" + ZWJ
    + "\U0001F467" + ZWJ + "\U0001F467",
    "People: \U0001F9D1\U0001F3FC" + ZWJ + "\U0001F33E \U0001F468\U0001F3FF" + ZWJ + "\U0001F3A8 "
    "\U0001F469\U0001F3FB" + ZWJ + "\u2695" + VS16 + " \U0001F3C3\U0001F3FD" + ZWJ
    + "\u2640" + VS16,
    "Hand shake, two tones: \U0001FAF1\U0001F3FB" + ZWJ + "\U0001FAF2\U0001F3FF",
    "Flags: \U0001F1EB\U0001F1F7 \U0001F1EE\U0001F1F3 \U0001F1E8\U0001F1F3 \U0001F1EA\U0001F1EC "
    "\U0001F1FA\U0001F1F8 - pirate \U0001F3F4" + ZWJ + "\u2620" + VS16,
    "",
    "Combining: n\u0303 (n + tilde), \u00f1 (precomposed),"
    " A\u030a vs \u00c5 vs \u212b (angstrom sign)",
    "Thai tone marks: \u0e19\u0e49\u0e33 \u0e01\u0e34\u0e48\u0e07;"
    " Tamil: \u0ba4\u0bae\u0bbf\u0bb4\u0bcd",
    "Enclosed: a\u20dd b\u20de; overline: x\u0305y\u0305",
    "",
    "key:\t\t\tvalue",
    "    four",
    "        eight",
    "                sixteen",
    "\t" * 16 + "sixteen tabs",
    "trailing spaces" + " " * 20,
    "end \U0001F3C1",
]
EMOJI_DOCS = [("\r\n".join(EMOJI_A) + "\r\n", "train"), ("\r\n".join(EMOJI_B) + "\r\n", "heldout")]


# ---------------------------------------------------------------- selection
def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_corpus(path: Path) -> dict[str, list[str]]:
    by_src: dict[str, list[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f.read().split("\n"):  # not splitlines(): texts contain U+2028
            if line:
                d = json.loads(line)
                by_src.setdefault(d["src"], []).append(d["text"])
    return by_src


def select(texts: list[str], budget: int, keep: Callable[[str], bool] | None) -> list[str]:
    taken, used, seen = [], 0, set()
    for text in sorted(texts, key=sha):
        n = len(text.encode("utf-8"))
        if n > MAX_DOC or used + n > budget or text in seen or (keep and not keep(text)):
            continue
        seen.add(text)
        taken.append(text)
        used += n
    return taken


def build(corpora: Path) -> list[dict]:
    cache: dict[str, dict[str, list[str]]] = {}
    records = []
    for s in SOURCES:
        if s.corpus not in cache:
            cache[s.corpus] = read_corpus(corpora / f"{s.corpus}.jsonl.gz")
        texts = cache[s.corpus].get(s.src)
        if not texts:
            sys.exit(f"source {s.src} missing from {s.corpus}.jsonl.gz")
        for text in select(texts, s.budget, s.keep):
            records.append({"text": text, "src": s.name or s.src, "kind": s.corpus,
                            "lang": s.lang, "licence": s.licence or linux_spdx(text)})
    # Stride over a stable (kind, lang, src, hash) order, so every group of >= 10 documents
    # contributes to the heldout split.
    records.sort(key=lambda r: (r["kind"], r["lang"], r["src"], sha(r["text"])))
    for i, r in enumerate(records):
        r["split"] = "heldout" if i % HELDOUT_STRIDE == HELDOUT_STRIDE - 1 else "train"
    for text, split in EMOJI_DOCS:
        records.append({"text": text, "src": "bytebpe-emoji", "kind": "emoji", "lang": "mul",
                        "licence": "CC0-1.0", "split": split})
    # Hash order mixes kinds, so any prefix of the file is a representative sample.
    records.sort(key=lambda r: sha(r["text"]))
    return records


def write(records: list[dict], out: Path) -> int:
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(body)
    out.write_bytes(buf.getvalue())
    return len(body)


def report(records: list[dict], raw: int, out: Path) -> None:
    total = sum(len(r["text"].encode("utf-8")) for r in records)
    print(f"{out.relative_to(ROOT)}: {len(records)} documents, {total / 1e6:.2f} MB text,"
          f" {raw / 1e6:.2f} MB jsonl, {out.stat().st_size / 1e6:.3f} MB gzip")
    by_kind: Counter[str] = Counter()
    for r in records:
        by_kind[r["kind"]] += len(r["text"].encode("utf-8"))
    shares = (f"{k} {100 * v / total:.0f}%" for k, v in by_kind.items())
    print("  share by kind: " + ", ".join(shares))
    groups: dict[tuple[str, ...], list[int]] = {}
    for r in records:
        g = groups.setdefault((r["kind"], r["src"], r["lang"], r["licence"]), [0, 0, 0])
        g[0] += 1
        g[1] += r["split"] == "heldout"
        g[2] += len(r["text"].encode("utf-8"))
    row = "  {:13} {:22} {:8} {:46} {:>5} {:>4} {:>8}"
    print(row.format("kind", "src", "lang", "licence", "docs", "held", "bytes"))
    for key, counts in sorted(groups.items()):
        print(row.format(*key, *counts))


def main() -> None:
    corpora = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpora"
    records = build(corpora)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    raw = write(records, OUT)
    report(records, raw, OUT)


if __name__ == "__main__":
    main()
