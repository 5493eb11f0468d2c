"""The report's figures, each checked against an independent computation (plain Python
loops over the tokenizer's public API, the tokenization-scorer package, the Rust ledger,
real prefix tokenizers), and what the page receives (unpacked from the HTML)."""

from __future__ import annotations

import json
import re
import string
from collections import Counter

import pytest

pytest.importorskip("numpy")
tiktoken = pytest.importorskip("tiktoken")

from bytebpe import Tokenizer  # noqa: E402
from bytebpe.cli import main  # noqa: E402
from bytebpe.report import EvalSet, build_report  # noqa: E402
from bytebpe.report_page.payload import read_varints, unpack, varints  # noqa: E402

CL100K = "cl100k"

ENGLISH = [
    "The quick brown fox jumps over the lazy dog. " * 3 + "\n",
    "Tokenizers split text into pieces; the pieces become tokens.\n",
    "A report shows which tokens a vocabulary learned, and how each was built.\n",
] * 20
CODE = ["def f(x):\n    return x == 1 and x != 2  # check\n", "for i in range(10):\n\ttotal += i\n"] * 20
OTHER = ["Привет, мир! Как дела?\n", "日本語のテキストです。東京\n", "Ελληνικά κείμενα 😀 ok\n"] * 10
# Invalid UTF-8 of every kind the ledger knows, inside otherwise plain text.
BROKEN = [b"ok\x80\xc0 \xe2\x82x \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xff end\n",
          b"plain text line\n", b"caf\xc3\xa9 \xe9t\xe9\n"]


def naive_encode(data: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """Byte pair merging by definition: merge the lowest-ranked adjacent pair, leftmost
    first, until none is a token (no whole-piece shortcut)."""
    parts = [bytes([b]) for b in data]
    while True:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return parts
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def page_data(report) -> tuple[dict, dict]:
    m = re.search(r'<script id="bytebpe-data" type="application/octet-stream">([^<]*)</script>',
                  report.html)
    assert m, "the page has no data element"
    return unpack(m.group(1))


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(ENGLISH + CODE + OTHER, vocab_size=450,
                                         pattern=CL100K, progress=False)


@pytest.fixture(scope="module")
def report(tok):
    return build_report(tok, eval={"english": ENGLISH, "code": CODE, "other": OTHER,
                                   "broken": BROKEN})


def by_name(report, name):
    return next(e for e in report.figures["evals"] if e["name"] == name)


def test_bytes_per_token_and_fertility_match_plain_counting(tok, report):
    for name, docs in (("english", ENGLISH), ("code", CODE), ("other", OTHER)):
        e = by_name(report, name)
        tokens = sum(len(tok.encode(d)) for d in docs)
        nbytes = sum(len(d.encode()) for d in docs)
        words = sum(len(d.split()) for d in docs)
        assert e["tokens"] == tokens
        assert e["bytes"] == nbytes
        assert e["words"] == words
        assert e["bytes_per_token"] == pytest.approx(nbytes / tokens, rel=1e-12)
        assert e["tokens_per_word"] == pytest.approx(tokens / words, rel=1e-12)
    e = by_name(report, "broken")
    assert e["tokens"] == sum(len(tok.encode_bytes(d)) for d in BROKEN)
    assert e["bytes"] == sum(map(len, BROKEN))
    # Ratios to the best set: the best is 1.0, the others its multiple.
    evals = report.figures["evals"]
    best_tpw = min(x["tokens_per_word"] for x in evals)
    best_bpt = max(x["bytes_per_token"] for x in evals)
    for x in evals:
        assert x["fertility_ratio"] == pytest.approx(x["tokens_per_word"] / best_tpw)
        assert x["bpt_ratio"] == pytest.approx(best_bpt / x["bytes_per_token"])
    assert min(x["fertility_ratio"] for x in evals) == 1.0


def test_renyi_efficiency_equals_tokenization_scorer(tok, report, capsys):
    scorer = pytest.importorskip("tokenization_scorer")
    for name, docs in (("english", ENGLISH), ("code", CODE), ("other", OTHER)):
        # The package reads whitespace-separated units per line: one line of ids per doc.
        lines = "\n".join(" ".join(map(str, tok.encode(d))) for d in docs)
        want = scorer.score(lines, metric="renyi", power=2.5)
        assert by_name(report, name)["renyi"] == pytest.approx(want, rel=1e-9, abs=1e-12)
    capsys.readouterr()  # the package prints its progress


def test_growth_equals_real_prefix_tokenizers(tok, report):
    sizes = report.figures["growth_sizes"]
    assert sizes[0] == 256 and sizes[-1] == tok.vocab_size
    ranks = tok.mergeable_ranks()
    for i in (0, 3, len(sizes) // 2, len(sizes) - 2, len(sizes) - 1):
        n = sizes[i]
        prefix = Tokenizer.from_tiktoken(tiktoken.Encoding(
            "prefix", pat_str=tok.pattern, special_tokens={},
            mergeable_ranks={b: r for b, r in ranks.items() if r < n}))
        for name, docs in (("english", ENGLISH), ("code", CODE), ("other", OTHER)):
            e = by_name(report, name)
            want = e["bytes"] / sum(len(prefix.encode(d)) for d in docs)
            assert e["growth"][i] == pytest.approx(want, rel=1e-12), (n, name)


def test_growth_of_a_run_store_equals_its_prefixes(tmp_path):
    store = tmp_path / "run.sqlite"
    Tokenizer.train_from_iterator(ENGLISH + CODE, vocab_size=380, store=str(store),
                                  progress=False)
    rep = build_report(str(store), eval={"english": ENGLISH})
    e = rep.figures["evals"][0]
    sizes = rep.figures["growth_sizes"]
    for i in (5, len(sizes) // 2, len(sizes) - 1):
        prefix = Tokenizer.load(str(store), vocab_size=sizes[i])
        want = e["bytes"] / sum(len(prefix.encode(d)) for d in ENGLISH)
        assert e["growth"][i] == pytest.approx(want, rel=1e-12)
    origin = rep.figures["summary"]["origin"]
    assert origin["kind"] == "run store" and origin["complete"]
    assert origin["counting"]["documents"] == len(ENGLISH + CODE)
    assert origin["merge_seconds"] >= 0


def unreachable_tokenizer() -> Tokenizer:
    # "abcd" (259) is unreachable: "bc" merges first, and then no pair of [a, bc, d] is
    # a token. "xyz" (262) is reachable. Pattern: runs of non-space, runs of space.
    ranks = {bytes([i]): i for i in range(256)}
    for r, t in enumerate([b"bc", b"ab", b"cd", b"abcd", b"xy", b"yz", b"xyz"], 256):
        ranks[t] = r
    return Tokenizer.from_tiktoken(tiktoken.Encoding(
        "u", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={}))


def test_unreachable_tokens_match_a_naive_merger():
    tok = unreachable_tokenizer()
    ranks = tok.mergeable_ranks()
    naive = sorted(r for b, r in ranks.items() if len(naive_encode(b, ranks)) != 1)
    assert naive == [259]
    docs = ["abcd xyz abcd abcdx", "xyzxyz abc bcd"]
    rep = build_report(tok, eval={"t": docs})
    header, cols = page_data(rep)
    assert cols["health_unreachable"] == naive
    assert header["health_counts"]["unreachable"] == 1
    assert any("259" in p for p in header["health_problems"])
    # Growth stays exact with an unreachable token used as a whole piece.
    e = header["evals"][0]
    for i, n in enumerate(header["growth_sizes"]):
        prefix = Tokenizer.from_tiktoken(tiktoken.Encoding(
            "p", pat_str=tok.pattern, special_tokens={},
            mergeable_ranks={b: r for b, r in ranks.items() if r < n}))
        want = e["bytes"] / sum(len(prefix.encode(d)) for d in docs)
        assert e["growth"][i] == pytest.approx(want, rel=1e-12), n
    # An imported vocabulary has no merge log: parts are found by merging, and every
    # part pair concatenates to the token.
    assert not header["summary"]["has_counts"]
    for t in range(256, len(cols["left"])):
        left, right = cols["left"][t], cols["right"][t]
        if left >= 0:
            assert tok.token_bytes(left) + tok.token_bytes(right) == tok.token_bytes(t)
            assert cols["derived"][t] == 1
    assert cols["left"][262] >= 0  # "xyz" = "xy" + "z" (the encoder's last merge)
    assert tok.token_bytes(cols["left"][262]) == b"xy"


def test_page_rebuilds_every_token_from_its_parts(tok, report):
    header, cols = page_data(report)
    n = len(cols["left"])
    assert n == len(tok.mergeable_ranks())
    memo: dict[int, bytes] = {}

    def bytes_of(t: int) -> bytes:
        if t < 256:
            return bytes([t])
        if t not in memo:
            memo[t] = bytes_of(cols["left"][t]) + bytes_of(cols["right"][t])
        return memo[t]

    merges = tok.merges()
    for t in range(n):
        assert bytes_of(t) == tok.token_bytes(t)
    for k, m in enumerate(merges):
        assert (cols["left"][m.token], cols["right"][m.token]) == (m.left, m.right)
        assert cols["count"][m.token] == m.count and cols["merge_rank"][m.token] == k
    assert cols["log_count"] == [m.count for m in merges]
    for i, e in enumerate(header["evals"]):
        usage = Counter(t for d in {"english": ENGLISH, "code": CODE, "other": OTHER}.get(
            e["name"], []) for t in tok.encode(d))
        if e["name"] != "broken":
            assert cols[f"usage_{i}"] == [usage[t] for t in range(n)]


def test_invalid_utf8_kinds_match_the_training_ledger(tok, report):
    ledger = Tokenizer.train_from_iterator(BROKEN, vocab_size=257, progress=False)
    want = ledger.loss_report()["training"]["invalid_utf8_bytes"]
    e = by_name(report, "broken")
    assert e["invalid"] == want
    assert sum(want.values()) > 0 and all(v > 0 for v in want.values())
    # Per byte value: every invalid byte counted once under its value.
    assert sum(e["invalid_bytes"]) == sum(want.values())
    assert e["invalid_bytes"][0xFF] == 1 and e["invalid_bytes"][0xC0] == 1


def test_cut_characters_match_a_plain_walk(tok, report):
    for name, docs in (("other", OTHER), ("english", ENGLISH)):
        per_byte = [0] * 256
        per_block: Counter[str] = Counter()
        cut = 0
        from bytebpe.report_page.unicode_blocks import block_of

        for d in docs:
            ends, pos = set(), 0
            for t in tok.encode(d):
                pos += len(tok.token_bytes(t))
                ends.add(pos)
            pos = 0
            for ch in d:
                raw = ch.encode()
                if any(pos + k in ends for k in range(1, len(raw))):
                    cut += 1
                    per_block[block_of(ord(ch))] += 1
                    for b in raw:
                        per_byte[b] += 1
                pos += len(raw)
        e = by_name(report, name)
        assert e["split_chars"] == cut
        assert e["split_bytes"] == per_byte
        assert {b: s for b, _, s in e["blocks"] if s} == dict(per_block)
        chars = Counter(block_of(ord(c)) for d in docs for c in d)
        assert {b: c for b, c, _ in e["blocks"]} == dict(chars)
    other = by_name(report, "other")
    assert other["split_chars"] > 0  # the test text does cut some
    examples = [x for x in other["examples"] if x["kind"] == "split_character"]
    assert examples and len({x["char"] for x in examples}) == len(examples)
    for x in examples:  # the tokens shown are the ones spanning that character
        assert len(x["tokens"]) >= 2
        assert x["char"].encode() in b"".join(tok.token_bytes(t) for t in x["tokens"])


def test_composition_and_health_match_plain_classification(tok, report):
    header, cols = page_data(report)
    merged = [tok.token_bytes(t) for t in range(256, len(tok.mergeable_ranks()))]
    assert dict(header["composition"]["lengths"]) == dict(Counter(map(len, merged)))
    kinds = dict(header["composition"]["kinds"])
    assert sum(kinds.values()) == len(merged)
    assert kinds["digits"] == sum(
        1 for b in merged if b.strip(b" ").isdigit() and b.strip(b" ") and b.isascii())
    ops = [t for t in range(256, 256 + len(merged)) if tok.token_bytes(t).lstrip(b" ")
           and all(chr(c) in string.punctuation for c in tok.token_bytes(t).lstrip(b" "))]
    assert cols["operators"] == ops and ops  # "==" and "!=" are in the code set
    not_utf8 = []
    for t in range(256, 256 + len(merged)):
        try:
            tok.token_bytes(t).decode()
        except UnicodeDecodeError:
            not_utf8.append(t)
    assert cols["health_not_utf8"] == not_utf8
    used = set()
    for docs in (ENGLISH, CODE, OTHER):
        for d in docs:
            used.update(tok.encode(d))
    for d in BROKEN:
        used.update(tok.encode_bytes(d))
    assert cols["health_unused"] == [t for t in range(256, 256 + len(merged)) if t not in used]


def test_intermediate_only_tokens_never_appear_in_the_training_text():
    docs = ["the theory of other thermal themes\n", "mathematics hypothesis\n"] * 30
    tok = Tokenizer.train_from_iterator(docs, vocab_size=280, progress=False)
    rep = build_report(tok, eval={})
    _, cols = page_data(rep)
    inter = set(cols["health_intermediate"])
    appear = {t for d in docs for t in tok.encode(d)}
    self_pairs = {m.token for m in tok.merges() if m.left == m.right}
    for t in range(256, tok.vocab_size):
        if t not in self_pairs:
            assert (t in inter) == (t not in appear), t
    assert inter  # "th" and the like are only steps here


def test_baseline_comparison(tok):
    base = Tokenizer.train_from_iterator(ENGLISH, vocab_size=300, pattern=CL100K, progress=False)
    rep = build_report(tok, eval={"english": ENGLISH, "code": CODE}, baseline=base)
    b = rep.figures["baseline"]
    for i, (e, docs) in enumerate(zip(rep.figures["evals"], (ENGLISH, CODE))):
        assert b["evals"][i]["tokens"] == sum(len(base.encode(d)) for d in docs)
        assert base.decode_bytes(b["evals"][i]["sample_ids"]) == bytes.fromhex(e["sample_hex"])
    words = b["words"]
    assert words["better"], "the bigger vocabulary must win somewhere"
    for row in words["better"] + words["worse"]:
        mine, theirs = tok.encode(row["word"]), base.encode(row["word"])
        assert [tok.token_bytes(t).hex() for t in mine] == row["mine"]
        assert row["saved"] == (len(theirs) - len(mine)) * row["count"]
    assert all(r["saved"] > 0 for r in words["better"])
    assert all(r["saved"] < 0 for r in words["worse"])


def test_sample_ids_decode_to_the_sample(tok, report):
    for e in report.figures["evals"]:
        assert tok.decode_bytes(e["sample_ids"]) == bytes.fromhex(e["sample_hex"])
        assert len(e["sample_hex"]) > 0


def test_varints_round_trip():
    values = [0, 1, 127, 128, 300, 2**21, 2**35 + 7, 2**53 + 1, 2**63, 2**64 - 1]
    assert read_varints(varints(values)) == values
    assert varints([127, 128]) == b"\x7f\x80\x01"
    with pytest.raises(ValueError):
        varints([-1])


def test_the_page_is_self_contained(report):
    html = report.html
    assert "%DATA%" not in html and "/*JS*/" not in html and "/*CSS*/" not in html
    # No network at view time: no external scripts, styles, fonts or images.
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)=', html)
    assert not re.search(r"https?://", html.split('id="bytebpe-data"')[0])
    assert "@import" not in html and "url(" not in html
    assert report._repr_html_().startswith("<iframe srcdoc=")


def test_cli_writes_a_report(tmp_path, tok, capsys):
    path = tmp_path / "tok.json"
    tok.save(path)
    en = tmp_path / "en.txt"
    en.write_text("".join(ENGLISH))
    code = tmp_path / "code.jsonl"
    code.write_text("".join(json.dumps({"text": d}) + "\n" for d in CODE))
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out), "--eval", f"english={en}",
                 "--eval", f"code={code}", "--baseline", str(path), "--timings"]) == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    m = re.search(r'<script id="bytebpe-data" type="application/octet-stream">([^<]*)</script>', html)
    header, _ = unpack(m.group(1))
    assert [e["name"] for e in header["evals"]] == ["english", "code"]
    assert header["evals"][0]["documents"] == len(ENGLISH)  # one per line
    assert header["evals"][1]["tokens"] == sum(len(tok.encode(d)) for d in CODE)
    err = capsys.readouterr().err
    assert "wrote" in err and json.loads(err.strip().splitlines()[-1])["total"] > 0
    # Mistakes get a clear error, not a traceback.
    assert main(["report", str(path), "-o", str(out), "--eval", "nofiles"]) == 1
    assert "NAME=FILE" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.json"), "-o", str(out)]) == 1


def test_imported_formats_open(tmp_path, tok):
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    pytest.importorskip("tokenizers")
    tok.save_huggingface(tmp_path / "tokenizer.json")
    for path, kind in ((tmp_path / "t.tiktoken", "tiktoken ranks file"),
                       (tmp_path / "tokenizer.json", "Hugging Face tokenizer.json")):
        rep = build_report(str(path), eval={"english": ENGLISH[:5]})
        assert rep.figures["summary"]["origin"]["kind"] == kind
        assert rep.figures["evals"][0]["tokens"] == sum(len(tok.encode(d)) for d in ENGLISH[:5])


def test_default_eval_is_the_bundled_held_out_sample(tok):
    rep = build_report(tok)
    names = [e["name"] for e in rep.figures["evals"]]
    assert {"english", "code", "multilingual"} <= set(names)
    assert all(e["tokens"] > 0 for e in rep.figures["evals"])


def test_eval_sets_read_from_files_stop_at_the_cap(tmp_path, tok):
    p = tmp_path / "big.txt"
    p.write_text("line of text\n" * 1000)
    rep = build_report(tok, eval={"big": str(p)}, max_eval_bytes=1300)
    e = rep.figures["evals"][0]
    assert e["truncated"] and e["documents"] == 100 and e["bytes"] == 1300
    rep = build_report(tok, eval=[EvalSet("given", ["abc def\n"], "test")])
    assert rep.figures["evals"][0]["words"] == 2


def test_eval_takes_a_path_or_documents_and_names_what_it_refuses(tmp_path, tok):
    p = tmp_path / "held.txt"
    p.write_text("line of text\n" * 10)
    by_path = build_report(tok, eval=str(p)).figures["evals"]
    assert [(e["name"], e["documents"]) for e in by_path] == [("held.txt", 10)]
    docs = build_report(tok, eval=["abc def\n", b"ghi\n"]).figures["evals"]
    assert [(e["name"], e["documents"], e["words"]) for e in docs] == [("eval", 2, 3)]
    for bad, message in (
        (5, "eval is int; give a file or glob"),
        ({"x": 5}, r"eval\['x'\] is int; give a file or glob"),
        ({"x": ["a b", 3]}, r"eval\['x'\]\[1\] is int; a document is str or bytes"),
        (["a", None], r"eval\[1\] is NoneType; a document is str or bytes"),
    ):
        with pytest.raises(TypeError, match=message):
            build_report(tok, eval=bad)
    with pytest.raises(FileNotFoundError):
        build_report(tok, eval=str(tmp_path / "missing.txt"))


CHILD = """
import sys, time
from bytebpe import Tokenizer, RunStore

def docs():
    for i in range(400):
        yield f"document {i} with some words in it " * 3
        if i == 200:
            time.sleep(0.2)  # let the counter take the batches before this one
            open(sys.argv[2], "w").close()
            time.sleep(60)

Tokenizer.train_from_iterator(
    docs(), vocab_size=300, buffer_size=10, progress=False,
    store=RunStore(sys.argv[1], checkpoint_every=0, commit_every=0))
"""


def test_a_run_store_while_training_writes_it(tmp_path):
    import subprocess
    import sys
    import time

    store, flag = tmp_path / "live.sqlite", tmp_path / "counting"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(flag)])
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert child.poll() is None, "the training child died"
            assert time.monotonic() < deadline, "the training child never got going"
            time.sleep(0.05)
        from bytebpe import store as run_store

        while run_store.read(store, with_snapshot=False).documents == 0:  # a busy machine
            assert time.monotonic() < deadline, "the child never checkpointed its counting"
            time.sleep(0.05)
        rep = build_report(str(store), eval={"x": ["document 7 with some words"]})
        origin = rep.figures["summary"]["origin"]
        assert origin["kind"] == "run store" and origin["complete"] is False
        assert origin["counting"]["finished"] is False and origin["counting"]["documents"] > 0
        assert rep.figures["summary"]["vocab_size"] == 256  # no merge yet: the bytes
        assert child.poll() is None  # reading did not disturb the writer
    finally:
        child.kill()
        child.wait()


def test_a_tokenizer_json_with_permuted_byte_ids(tmp_path, tok):
    """Hugging Face files may number the bytes otherwise (GPT-2 does): ids stay as in the
    file, so id 97 need not be b"a". The page's token table and the figures follow."""
    pytest.importorskip("tokenizers")
    tok.save_huggingface(tmp_path / "tokenizer.json")
    doc = json.loads((tmp_path / "tokenizer.json").read_text())
    vocab = doc["model"]["vocab"]
    vocab["a"], vocab["e"] = vocab["e"], vocab["a"]
    (tmp_path / "permuted.json").write_text(json.dumps(doc))
    perm = Tokenizer.from_huggingface(str(tmp_path / "permuted.json"))
    assert perm.token_bytes(97) == b"e"
    rep = build_report(str(tmp_path / "permuted.json"), eval={"english": ENGLISH})
    header, cols = page_data(rep)
    assert set(cols["explicit_ids"]) >= {97, 101}
    off, table = 0, {}
    for t, n in zip(cols["explicit_ids"], cols["explicit_lens"]):
        table[t] = cols["explicit_bytes"][off : off + n]
        off += n

    def bytes_of(t: int) -> bytes:
        if t in table:
            return table[t]
        if cols["left"][t] < 0:
            return bytes([t])
        return bytes_of(cols["left"][t]) + bytes_of(cols["right"][t])

    for t in range(len(cols["left"])):
        assert bytes_of(t) == perm.token_bytes(t)
    e = header["evals"][0]
    assert e["tokens"] == sum(len(perm.encode(d)) for d in ENGLISH)
    assert header["summary"]["merged"] == len(tok.mergeable_ranks()) - 256
    ranks = perm.mergeable_ranks()
    n = header["growth_sizes"][len(header["growth_sizes"]) // 2]
    prefix = Tokenizer.from_tiktoken(tiktoken.Encoding(
        "p", pat_str=perm.pattern, special_tokens={},
        mergeable_ranks={b: r for b, r in ranks.items() if r < n}))
    want = e["bytes"] / sum(len(prefix.encode(d)) for d in ENGLISH)
    assert e["growth"][len(header["growth_sizes"]) // 2] == pytest.approx(want, rel=1e-12)
