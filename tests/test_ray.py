"""The cluster path on a real local Ray cluster (two worker CPUs, 127.0.0.1 only,
started here and stopped after): counting and encoding give exactly the single-machine
results for any partitioning; a worker killed mid-task and a driver killed mid-count
change nothing."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import bytebpe
import pytest
import ray
import ray.data
from bytebpe import Tokenizer, _bytebpe, cluster, store

PACKAGE_ROOT = str(Path(bytebpe.__file__).resolve().parent.parent)
VOCAB = 256 + 300

pytestmark = [
    pytest.mark.timeout(120),
    # Ray's own modules warn about things that are not ours.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.fixture(scope="session")
def cluster_address() -> Any:
    """A local Ray cluster for the whole session. Workers import the bytebpe under test
    (its folder first on PYTHONPATH, inherited by the raylet and its workers)."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _with_package(os.environ)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():  # e.g. the README's example ran first in this session
        ray.shutdown()
    try:
        context = ray.init(
            num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
            object_store_memory=256 << 20, log_to_driver=False, configure_logging=False,
        )
    finally:  # the raylet has its environment; the other tests keep theirs
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield context.address_info["gcs_address"]
    ray.shutdown()


# ==================== Corpora


def english_with_invalid_bytes(n: int = 1500, seed: int = 0) -> list[bytes]:
    """Prose-like documents as bytes, some with invalid UTF-8 of several kinds."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("etaoinshrdlucmfwyp") for _ in range(rng.randint(1, 9)))
        for _ in range(600)
    ] + ["the", "of", "and", "naïve", "café", "日本語", "😀"]
    bad = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80\x80", b"\xf4\x90\x80\x80"]
    docs = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        data = text.encode()
        if i % 7 == 3:
            cut = rng.randint(0, len(data))
            data = data[:cut] + rng.choice(bad) + data[cut:]
        docs.append(data)
    return docs


def sample_texts(n: int = 1200) -> list[str]:
    """Documents of the bundled sample (real prose and code), as str."""
    path = Path(bytebpe.__file__).parent / "data" / "sample.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    return [t for t in texts if t][:n]


def _with_package(env: Any) -> str:
    """PYTHONPATH with the folder of the bytebpe under test first."""
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join([PACKAGE_ROOT, *rest])


def dataset(docs: list[Any], blocks: int) -> Any:
    return ray.data.from_items([{"text": d} for d in docs], override_num_blocks=blocks)


def summary(tok: Tokenizer) -> tuple[Any, Any]:
    return tok.merges(), tok.loss_report()


# ==================== Training


@pytest.mark.parametrize("corpus", ["invalid_utf8", "sample"])
def test_merges_and_ledger_equal_single_machine_for_any_partitioning(
    cluster_address: str, corpus: str
) -> None:
    docs: list[Any] = english_with_invalid_bytes() if corpus == "invalid_utf8" else sample_texts()
    want = Tokenizer.train_from_iterator(docs, VOCAB, progress=False)
    if corpus == "invalid_utf8":
        assert want.loss_report()["training"]["invalid_utf8_examples"]
    for blocks, fan_in in [(1, 8), (2, 2), (4, 8), (8, 2)]:
        tok = Tokenizer.train_from_ray(dataset(docs, blocks), VOCAB, fan_in=fan_in,
                                       progress=False)
        assert summary(tok) == summary(want), (corpus, blocks)
        assert cluster.LAST_COUNT["blocks"] == blocks
        assert cluster.LAST_COUNT["bytes"] == want.loss_report()["training"]["bytes"]


def test_options_and_skipped_rows_match(cluster_address: str) -> None:
    docs: list[Any] = sample_texts(300) + [None, "<|end|> tail", None]
    opts: dict[str, Any] = dict(special_tokens=["<|end|>"], max_token_length=6, progress=False)
    want = Tokenizer.train_from_iterator(
        [{"text": d} for d in docs], VOCAB, on_bad_item="skip", **opts
    )
    tok = Tokenizer.train_from_ray(dataset(docs, 3), VOCAB, on_bad_item="skip", **opts)
    assert summary(tok) == summary(want)
    assert tok.loss_report()["training"]["rejected_items"] == {"NoneType": 2}
    assert tok.special_tokens == want.special_tokens


def test_a_bad_row_is_named(cluster_address: str) -> None:
    with pytest.raises(bytebpe.InputError, match=r"row 1 of a block .*NoneType"):
        Tokenizer.train_from_ray(dataset(["ok", None, "fine"], 1), VOCAB, progress=False)
    with pytest.raises(bytebpe.InputError, match="no 'body' column"):
        Tokenizer.train_from_ray(dataset(["ok"], 1), VOCAB, text_column="body", progress=False)
    with pytest.raises(TypeError, match="ray.data.Dataset"):
        Tokenizer.train_from_ray(["ok"], VOCAB, progress=False)


def test_memory_limit(cluster_address: str) -> None:
    """Guarantee: the cluster prunes the exact total once, before merging, by the
    single machine's merge-loop rule. So it equals the single machine whenever the
    single machine's counting table stays under its high mark (here: 80k distinct
    words under 64 MiB prune only before merging), and in every case the result
    depends only on the limit and the documents, never on the partitioning."""
    rng = random.Random(1)

    def letters(n: int) -> str:
        out = ""
        while True:
            out += chr(ord("a") + n % 26)
            n //= 26
            if n == 0:
                return out

    def corpus(distinct: int) -> list[str]:
        words = [letters(i) for i in range(distinct)]
        rng.shuffle(words)
        return [" ".join(words[i:i + 100]) + " the end" for i in range(0, distinct, 100)]

    small = corpus(80_000)
    want = Tokenizer.train_from_iterator(small, VOCAB, memory_limit="64MiB", progress=False)
    assert want.loss_report()["training"]["dropped_word_mass"] > 0
    tok = Tokenizer.train_from_ray(dataset(small, 4), VOCAB, memory_limit="64MiB",
                                   progress=False)
    assert summary(tok) == summary(want)

    large = corpus(160_000)
    results = [
        summary(Tokenizer.train_from_ray(dataset(large, blocks), VOCAB,
                                         memory_limit="64MiB", progress=False))
        for blocks in (1, 5)
    ]
    assert results[0] == results[1]
    assert results[0][1]["training"]["dropped_word_mass"] > 0


# ==================== Encoding


def test_encoded_tokens_equal_single_machine(cluster_address: str, tmp_path: Path) -> None:
    docs = english_with_invalid_bytes(400, seed=3)
    tok = Tokenizer.train_from_iterator(docs, VOCAB, special_tokens=["<|eot|>"],
                                        progress=False)
    ref = tmp_path / "ref.bin"
    tok.encode_to_file(docs, ref, eot="<|eot|>", progress=False)
    for blocks in (1, 3):
        out = tmp_path / f"shards-{blocks}"
        index = bytebpe.encode_ray(dataset(docs, blocks), tok, output_dir=out, eot="<|eot|>",
                                   progress=False)
        assert index["documents"] == len(docs) and len(index["shards"]) == blocks
        stream = b"".join((out / s["bin"]).read_bytes() for s in index["shards"])
        assert hashlib.sha256(stream).hexdigest() == hashlib.sha256(ref.read_bytes()).hexdigest()
        assert json.loads((out / "index.json").read_text()) == index
    rows = bytebpe.encode_ray(dataset(docs[:50], 2), tok).take_all()
    assert [list(r["tokens"]) for r in rows] == [tok.encode_bytes(d) for d in docs[:50]]
    assert [r["text"] for r in rows] == docs[:50]


# ==================== Faults


def test_worker_killed_mid_task_is_retried(cluster_address: str, tmp_path: Path) -> None:
    docs = sample_texts(400)
    marker = tmp_path / "killed-once"

    def kill_once(batch: Any) -> Any:
        if not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies in the middle of the task
        return batch

    ds = dataset(docs, 4).map_batches(kill_once, batch_format="pyarrow", max_retries=3)
    tok = Tokenizer.train_from_ray(ds, VOCAB, progress=False)
    assert marker.exists()
    assert summary(tok) == summary(Tokenizer.train_from_iterator(docs, VOCAB, progress=False))


def test_a_worker_that_keeps_dying_is_a_clear_error(cluster_address: str) -> None:
    def always_die(batch: Any) -> Any:
        os._exit(1)

    # The user's map fuses with the counting task: its worker dies on every attempt.
    ds = dataset(["a b c"] * 10, 1).map_batches(always_die, batch_format="pyarrow",
                                                max_retries=1)
    with pytest.raises(cluster.ClusterError, match="died on every attempt"):
        Tokenizer.train_from_ray(ds, VOCAB, max_retries=1, progress=False)


DRIVER = textwrap.dedent("""
    import json, sys, time
    import ray, ray.data
    from bytebpe import Tokenizer, cluster
    address, docs_path, store, slow = sys.argv[1:5]
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    docs = json.load(open(docs_path))
    ds = ray.data.from_items([{"text": d} for d in docs], override_num_blocks=8)
    if slow == "1":
        def slow_block(batch):
            time.sleep(1.5)
            return batch
        ds = ds.map_batches(slow_block, batch_format="pyarrow")
    tok = Tokenizer.train_from_ray(ds, VOCAB, store=store, progress=False)
    print(json.dumps({"merges": [list(m) for m in tok.merges()], "stats": cluster.LAST_COUNT}))
""").replace("VOCAB", str(VOCAB))


def test_driver_killed_and_resumed(cluster_address: str, tmp_path: Path) -> None:
    docs = sample_texts(800)
    docs_path = tmp_path / "docs.json"
    docs_path.write_text(json.dumps(docs))
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    store_path = tmp_path / "run.sqlite"
    args = [sys.executable, str(script), cluster_address, str(docs_path), str(store_path)]
    env = dict(os.environ, PYTHONPATH=_with_package(os.environ))
    first = subprocess.Popen(args + ["1"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    try:
        # A bound, not a timing: a loaded machine can take over a minute to start the
        # cluster's workers and store two blocks.
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and _stored_blocks(store_path) < 2:
            assert first.poll() is None, "the driver ended before it was killed"
            time.sleep(0.1)
        assert _stored_blocks(store_path) >= 2
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait()
    done_before = _stored_blocks(store_path)
    assert done_before < 8
    rerun = subprocess.run(args + ["0"], env=env, capture_output=True, text=True, timeout=90)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    result = json.loads(rerun.stdout.strip().splitlines()[-1])
    want = Tokenizer.train_from_iterator(docs, VOCAB, progress=False)
    assert result["merges"] == [list(m) for m in want.merges()]
    assert result["stats"]["reused"] >= done_before
    assert result["stats"]["counted"] == 8 - result["stats"]["reused"]
    assert Tokenizer.load(store_path).merges() == want.merges()
    stored = store.read(store_path)
    assert stored.counting_finished and stored.documents == len(docs)
    # The cluster's fingerprint: joinable, so the same for any partitioning.
    assert stored.fingerprint == _bytebpe.sequence_fingerprint(list(docs))
    assert _stored_blocks(store_path) == 0  # their sum is the counting checkpoint now


def _stored_blocks(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM blocks").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_an_empty_dataset_trains_the_byte_tokenizer(cluster_address: str) -> None:
    with pytest.warns(bytebpe.TrainingWarning, match="empty"):
        tok = Tokenizer.train_from_ray(dataset([], 1), VOCAB, progress=False)
    assert tok.vocab_size == 256 and tok.loss_report()["training"]["documents"] == 0


@pytest.mark.slow
def test_a_larger_corpus_in_many_blocks(cluster_address: str, tmp_path: Path) -> None:
    """Heavier: 16 blocks joined three at a time (three tree levels), a memory limit
    that prunes only before merging, uint32 shards."""
    docs = sample_texts(100_000) + [d.decode("utf-8", "replace") for d in
                                    english_with_invalid_bytes(3000, seed=5)]
    opts: dict[str, Any] = dict(memory_limit="256MiB", progress=False)
    want = Tokenizer.train_from_iterator(docs, 256 + 2000, **opts)
    tok = Tokenizer.train_from_ray(dataset(docs, 16), 256 + 2000, fan_in=3, **opts)
    assert summary(tok) == summary(want)
    ref = tmp_path / "ref.bin"
    tok.encode_to_file(docs, ref, dtype="uint32", progress=False)
    index = bytebpe.encode_ray(dataset(docs, 16), tok, output_dir=tmp_path / "out",
                               dtype="uint32", progress=False)
    stream = b"".join((tmp_path / "out" / s["bin"]).read_bytes() for s in index["shards"])
    assert stream == ref.read_bytes()
