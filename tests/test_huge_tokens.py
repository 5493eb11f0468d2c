"""Huge tokens and huge words: loading, training, encoding and exporting stay linear in the
token bytes and the input, and Ctrl-C stops a long load or training.

Each case runs in a child process with a memory cap and a timeout, so a return of the
quadratic construction (a 1 MB token once took 74 s to load) fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from ctrl_c import interrupt_child

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS on Linux")

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONPATH = os.pathsep.join(p for p in [HERE, *sys.path] if p)

# The child's preamble: a memory cap (`interrupt_child` adds Python's Ctrl-C handler).
PREAMBLE = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
"""


def run_child(body: str, *, cap_mb: int = 3072, timeout: float = 60) -> dict:
    """Runs `body` in a fresh interpreter capped at `cap_mb`; returns the JSON object it
    prints last."""
    script = PREAMBLE.format(cap=cap_mb << 20) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish in {timeout} s (superlinear again?)")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_one_megabyte_token_loads_encodes_and_exports(tmp_path):
    path = tmp_path / "big.tiktoken"
    out = run_child(
        f"""
        import base64
        import tiktoken
        from bytebpe import Tokenizer
        big = b"x" * (1 << 20)
        # The bytes, runs of x of every power of two (so the big token is reachable by
        # merges: Hugging Face needs that), and one odd-length run.
        tokens = [bytes([b]) for b in range(256)]
        tokens += [b"x" * (1 << k) for k in range(1, 21)] + [b"x" * 1000]
        with open({str(path)!r}, "wb") as f:
            for rank, token in enumerate(tokens):
                f.write(base64.b64encode(token) + b" %d\\n" % rank)
        tok = Tokenizer.load({str(path)!r}, pattern="cl100k")
        enc = tiktoken.Encoding("big", pat_str=tok.pattern,
                                mergeable_ranks={{t: i for i, t in enumerate(tokens)}},
                                special_tokens={{}})
        texts = ["x" * (1 << 20), "x" * ((1 << 20) + 1001), " " + "x" * 3000 + " yx"]
        same = all(tok.encode(t) == enc.encode_ordinary(t) for t in texts)
        trip = all(tok.decode(tok.encode(t)) == t for t in texts)
        # Every token splits into its halves; exports reproduce the ids.
        hf = tok.to_huggingface()
        hf_same = all(hf.encode(t).ids == tok.encode(t) for t in texts)
        tk = tok.to_tiktoken()
        tk_same = all(tk.encode_ordinary(t) == tok.encode(t) for t in texts)
        tok.save({str(tmp_path / "big.json")!r})
        again = Tokenizer.load({str(tmp_path / "big.json")!r})
        print(json.dumps({{"same": same, "trip": trip, "hf": hf_same, "tk": tk_same,
                          "one": tok.encode_bytes(big) == [275],
                          "again": again.encode(texts[1]) == tok.encode(texts[1])}}))
        """
    )
    assert out == {"same": True, "trip": True, "hf": True, "tk": True, "one": True,
                   "again": True}


def test_an_unreachable_megabyte_token_is_one_id_as_tiktoken_and_hugging_face_say(tmp_path):
    # "x" * 2**20 cannot be made from two tokens here: encoding finds it only as a whole
    # piece, as tiktoken does and as Hugging Face does with `ignore_merges` (the export
    # sets it).
    path = tmp_path / "one.tiktoken"
    result = run_child(
        f"""
        import base64
        from bytebpe import Tokenizer
        tokens = [bytes([b]) for b in range(256)] + [b"x" * (1 << 20), b"xx"]
        with open({str(path)!r}, "wb") as f:
            for rank, token in enumerate(tokens):
                f.write(base64.b64encode(token) + b" %d\\n" % rank)
        tok = Tokenizer.load({str(path)!r}, pattern="cl100k")
        whole = tok.encode("x" * (1 << 20))
        longer = tok.encode("x" * ((1 << 20) + 1))
        hf = tok.to_huggingface()
        same = [hf.encode(t).ids == tok.encode(t) for t in ("x" * (1 << 20), "x" * 1001)]
        print(json.dumps({{"whole": whole, "longer": len(longer),
                          "longer_ids": sorted(set(longer)), "hf": same}}))
        """
    )
    assert result["whole"] == [256]
    assert result["longer"] == (1 << 19) + 1 and result["longer_ids"] == [120, 257]
    assert result["hf"] == [True, True]


def _train_one_word(word_expr: str, vocab_size: int, tmp_path, timeout: float = 60) -> dict:
    """Trains on the one word `word_expr` builds (with a store) and compares the merges
    and the ids of encoding it with the oracle."""
    return run_child(
        f"""
        sys.path.insert(0, {HERE!r})
        import reference
        from bytebpe import Tokenizer
        word = {word_expr}
        tok = Tokenizer.train_from_iterator([word], {vocab_size}, progress=False,
                                            store={str(tmp_path / "run.sqlite")!r})
        ours = [tuple(m) for m in tok.merges()]
        want = [tuple(m) for m in reference.train_counts({{word: 1}}, {vocab_size})]
        ids = tok.encode(word)
        # The oracle's merges applied in order: for a word made of one repeated unit each
        # merge joins equal neighbours, so this is also the rank-order encoding (the
        # oracle's own encoder, and tiktoken's, are quadratic on one long piece).
        expected = tuple(word.encode())
        for left, right, token, _ in want:
            expected = reference._merge_word(expected, (left, right), token)
        print(json.dumps({{"merges": ours == want, "n": len(ours),
                          "trip": tok.decode(ids) == word, "ids": ids == list(expected)}}))
        """,
        timeout=timeout,
    )


@pytest.mark.filterwarnings("ignore")
def test_training_on_one_long_word_equals_the_oracle(tmp_path):
    # One 2 MB word (the cl100k pattern keeps a run of letters whole): the merges double
    # the token each time; building the vocabulary took 27 s at 800 KB, quadratically.
    out = _train_one_word('"ab" * 1_000_000', 1000, tmp_path)
    assert out == {"merges": True, "n": out["n"], "trip": True, "ids": True}
    assert out["n"] >= 19


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_training_on_ten_megabytes_of_spaces_equals_the_oracle(tmp_path):
    # One piece of 10 MB (trailing whitespace is one piece); did not finish in a minute.
    # (The oracle's pure-Python passes over 10M positions take most of the time.)
    out = _train_one_word('" " * 10_000_000', 1000, tmp_path, timeout=300)
    assert out == {"merges": True, "n": out["n"], "trip": True, "ids": True}
    assert out["n"] >= 22


def _interrupted(body: str, *, wait: float = 0.5, cap_mb: int = 3072) -> tuple[str, str]:
    """Runs `body` (which prints "ready" just before its long call) and sends Ctrl-C
    `wait` seconds after; returns (stdout, stderr) once it exits."""
    script = PREAMBLE.format(cap=cap_mb << 20) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": PYTHONPATH}
    stopped = interrupt_child(script, wait=wait, timeout=60, env=env)
    return stopped.out, stopped.err


# A merge log of 6,000 merges whose tokens hold 18 MB of bytes and 18M splits into two
# tokens: the log is small, the vocabulary (and its pair table) is not, so nearly all the
# time goes to the core. The child reports how long the call ran (monotonic clock).
HUGE_VOCABULARY = """
    import time
    from bytebpe import _bytebpe
    a = ord("a")
    merges = [(a, a, 256, 0)] + [(255 + k, a, 256 + k, 0) for k in range(1, 6000)]
    print("ready", flush=True)
    start = time.monotonic()
    try:
        _bytebpe.CoreTokenizer.from_merges("cl100k", merges, [])
    except KeyboardInterrupt:
        print("caught", time.monotonic() - start, flush=True)
        raise
    print(json.dumps({"finished": time.monotonic() - start}), flush=True)
    """


@pytest.mark.slow
def test_ctrl_c_stops_building_a_huge_vocabulary():
    # The same call uninterrupted, then Ctrl-C'd 0.3 s in: it must stop long before it
    # would have finished (the core checks for signals; before, it ran to the end). The
    # two runs are compared with each other, so the machine's speed does not matter.
    whole = run_child(HUGE_VOCABULARY.replace('print("ready", flush=True)', ""))["finished"]
    out, err = _interrupted(HUGE_VOCABULARY, wait=0.3)
    assert "caught" in out and "finished" not in out and "KeyboardInterrupt" in err
    stopped_after = float(out.split("caught", 1)[1].split()[0])
    assert stopped_after < whole / 2, (stopped_after, whole)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_ctrl_c_during_training_keeps_what_was_done(tmp_path):
    # Interrupted with a store, the same call resumes and gives the uninterrupted merges.
    # The call takes a few seconds (0.4 s for 200,000 words on a fast host once: done
    # before the Ctrl-C came), so the Ctrl-C half a second in finds it running.
    store = str(tmp_path / "run.sqlite")
    body = f"""
        import random
        from bytebpe import Tokenizer
        rng = random.Random(0)
        words = {{"".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=24)): rng.randint(1, 9)
                 for _ in range(1_000_000)}}
        print("ready", flush=True)
        try:
            tok = Tokenizer.train_from_counts(words, 4000, min_frequency=1, progress=False,
                                              store={store!r})
        except KeyboardInterrupt:
            print("caught", flush=True)
            raise
        print(json.dumps([list(m) for m in tok.merges()]), flush=True)
        """
    out, err = _interrupted(body)
    assert "caught" in out and "KeyboardInterrupt" in err
    resumed = run_child(body.replace('print("ready", flush=True)', ""))
    fresh = run_child(body.replace('print("ready", flush=True)', "").replace(
        f"store={store!r}", "store=None"))
    assert resumed == fresh and len(fresh) == 4000 - 256


@pytest.mark.parametrize("seed", range(4))
def test_long_words_merge_like_the_oracle(seed):
    # Words of 256 tokens or more are merged by position (train/long.rs): random long
    # words over small alphabets (pairs overlap and repeat), with short words and
    # counts, against the oracle's plain rescans.
    sys.path.insert(0, HERE)
    import random

    import reference
    from bytebpe import Tokenizer

    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for _ in range(6):
        alphabet = "abc"[: rng.randint(1, 3)]
        counts["".join(rng.choices(alphabet, k=rng.randint(256, 3000)))] = rng.randint(1, 3)
    for _ in range(200):
        counts["".join(rng.choices("abcd", k=rng.randint(1, 12)))] = rng.randint(1, 5)
    want = reference.train_counts(counts, 700)
    tok = Tokenizer.train_from_counts(counts, 700, progress=False)
    assert [tuple(m) for m in tok.merges()] == [tuple(m) for m in want]
    assert len(want) > 300
