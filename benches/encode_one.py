"""Encoding benchmark: one tool, one run, one JSON line on stdout.

Run by encode_compare.py, one fresh process per run. Modes:

    # once per comparison: train a bytebpe tokenizer on the first MB of the corpus, save it
    # and its checked exports (tiktoken ranks + pattern, Hugging Face tokenizer.json), and
    # write the encoding corpus (the documents after the training slice) to DIR/texts.json
    python benches/encode_one.py --mode prepare --dir DIR \
        --corpus ../shared/corpora/code.jsonl.gz --mb 20 --vocab-size 32768 --pattern cl100k

    # single-thread throughput + per-document latency: documents encoded one by one
    python benches/encode_one.py --mode single --tool tiktoken --dir DIR [--dump FILE]
    # ... two processes at once, their timed loops started together (the machine's own
    # ceiling for two threads: encode_compare.py runs both and times until both finish)
    python benches/encode_one.py --mode single --tool bytebpe --dir DIR --barrier EMPTY_DIR
    # ... each into a NumPy array (encode_to_numpy; bytebpe and tiktoken)
    python benches/encode_one.py --mode single --api numpy --tool bytebpe --dir DIR

    # batch calls over all documents on N threads (after an untimed one; the median of
    # --calls timed calls)
    python benches/encode_one.py --mode batch --tool bytebpe --api numpy --threads 2 --dir DIR

    # one worst-case input (median of --runs calls; bytebpe's each after 1 MB of the
    # held-out text, timed too, for its ratio to prose run by run)
    python benches/encode_one.py --mode worst --tool tokenizers --case spaces_x --dir DIR

Tools and the calls timed:
  bytebpe     single: tok.encode_ordinary(text)     batch: tok.encode_ordinary_batch(texts, num_threads=N)
                                                    (--api numpy: tok.encode_batch_numpy(texts, num_threads=N))
  tiktoken    single: enc.encode_ordinary(text)     batch: enc.encode_ordinary_batch(texts, num_threads=N)
  (single --api numpy: tok.encode_to_numpy(text) / enc.encode_to_numpy(text))
  tokenizers  single: hf.encode(text).ids           batch: [e.ids for e in hf.encode_batch(texts)]
                                                    (--api fast: encode_batch_fast, no offsets)
For Hugging Face the `.ids` extraction (building the Python lists) is inside the timing,
as the other tools return lists of ids; the call alone is reported too (call_s).

Each tool process imports only its own library: the tiktoken process builds its Encoding
from the exported ranks and pattern, the Hugging Face one loads the exported
tokenizer.json (both exports checked by bytebpe in the prepare step, and the ids are
compared on the whole corpus by encode_compare.py through --dump).

Single mode also reports short_us: the time of one call on "hello world" (the fixed cost
of a call; median of 7 rounds of 5,000 calls). Single and batch report others_cores: the cores other processes
(and the hypervisor, as steal) kept busy during the timed part, from /proc/stat.

Memory: rss_loaded_mb is the RSS after importing the tool, loading the tokenizer and the
texts; peak_rss_mb is VmHWM at the end of the timed part (before any --dump work; in batch
mode the untimed call before it counts too, and holds as much).
"""

from __future__ import annotations

import argparse
import base64
import gc
import gzip
import json
import os
import resource
import statistics
import sys
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode_worst import WORST_CASES, prose_slices, run_worst
from train_one import build_stamp, load_texts, peak_mb, reset_peak, status_mb

SHORT = "hello world"  # for the fixed cost of a call
WARMUP = "def f(x):\n    return x + 1  # warm-up, nothing measured\n\tif (a != b) { c += 1; }\n" * 8


def version(pkg: str) -> str:
    from importlib import metadata

    return metadata.version(pkg)


# ==================== prepare


def iter_docs(path: str):
    """Documents of a .jsonl.gz corpus in the order (and with the blank-line rule) of
    train_one.load_texts: lines split on b"\\n" only."""
    with gzip.open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            yield json.loads(line)["text"]


def encode_slice(path: str, skip_docs: int, mb: float) -> list[str]:
    """The documents after the first skip_docs, up to mb * 10**6 bytes of UTF-8 (the last
    one cut on a character boundary, as load_texts does)."""
    limit = int(mb * 1_000_000)
    texts, total = [], 0
    for i, text in enumerate(iter_docs(path)):
        if i < skip_docs:
            continue
        data = text.encode("utf-8")
        if total + len(data) > limit:
            text = data[: limit - total].decode("utf-8", "ignore")
            data = text.encode("utf-8")
        texts.append(text)
        total += len(data)
        if total >= limit:
            break
    return texts


def prepare(args) -> dict:
    import bytebpe

    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    train = load_texts(args.corpus, args.mb)
    # The encoding slice starts after the training slice's last document (which
    # load_texts may have cut): no document is in both.
    texts = encode_slice(args.corpus, len(train), args.mb)
    load_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    tok = bytebpe.Tokenizer.train_from_iterator(
        iter(train), args.vocab_size, pattern=args.pattern, progress=False
    )
    train_s = time.perf_counter() - t0
    tok.save(d / "tok.bbpe")
    tok = bytebpe.Tokenizer.load(d / "tok.bbpe")  # what the bytebpe runs will load

    t0 = time.perf_counter()
    enc = tok.to_tiktoken()  # checked by bytebpe on its stress battery
    tiktoken_s = time.perf_counter() - t0
    ranks = sorted(enc._mergeable_ranks.items(), key=lambda kv: kv[1])
    with open(d / "tiktoken.ranks", "w") as f:
        f.writelines(f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks)
    (d / "tiktoken.json").write_text(
        json.dumps({"pat_str": enc._pat_str, "special_tokens": enc._special_tokens})
    )
    t0 = time.perf_counter()
    tok.save_huggingface(d / "tokenizer.json")  # checked like to_huggingface()
    hf_s = time.perf_counter() - t0

    with open(d / "texts.json", "w", encoding="utf-8") as f:
        json.dump(texts, f, ensure_ascii=False)
    sizes = sorted(len(t.encode("utf-8")) for t in texts)
    return {
        "mode": "prepare",
        "version": version("bytebpe"),
        "build": build_stamp("bytebpe"),
        "pattern": tok.pattern,
        "vocab_out": tok.vocab_size,
        "train_docs": len(train),
        "train_bytes": sum(len(t.encode("utf-8")) for t in train),
        "docs": len(texts),
        "bytes": sum(sizes),
        "doc_bytes_p50": sizes[len(sizes) // 2] if sizes else 0,
        "doc_bytes_max": sizes[-1] if sizes else 0,
        "load_s": round(load_s, 3),
        "train_s": round(train_s, 3),
        "export_tiktoken_s": round(tiktoken_s, 3),
        "export_hf_s": round(hf_s, 3),
    }


# ==================== the tools


def setup(tool: str, d: Path, api: str = "list"):
    """Import the tool, load the tokenizer; return (version, single(text) -> ids (api
    numpy: a uint32 array),
    batch(texts, api, threads) -> (ids lists | (flat, offsets)), call_s | None)."""
    if tool == "bytebpe":
        import bytebpe

        tok = bytebpe.Tokenizer.load(d / "tok.bbpe")
        single = tok.encode_to_numpy if api == "numpy" else tok.encode_ordinary

        def batch(texts, api, threads):
            if api == "numpy":
                return tok.encode_batch_numpy(texts, num_threads=threads), None
            return tok.encode_ordinary_batch(texts, num_threads=threads), None

    elif tool == "tiktoken":
        import tiktoken

        meta = json.loads((d / "tiktoken.json").read_text())
        ranks = {}
        with open(d / "tiktoken.ranks", "rb") as f:
            for line in f:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        enc = tiktoken.Encoding(
            "bytebpe-bench",
            pat_str=meta["pat_str"],
            mergeable_ranks=ranks,
            special_tokens=meta["special_tokens"],
        )
        single = enc.encode_to_numpy if api == "numpy" else enc.encode_ordinary

        def batch(texts, api, threads):
            return enc.encode_ordinary_batch(texts, num_threads=threads), None

    elif tool == "tokenizers":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(str(d / "tokenizer.json"))

        def single(text):
            return hf.encode(text).ids

        def batch(texts, api, threads):
            t0 = time.perf_counter()
            out = hf.encode_batch_fast(texts) if api == "fast" else hf.encode_batch(texts)
            call_s = time.perf_counter() - t0
            return [e.ids for e in out], call_s

    else:
        raise SystemExit(f"unknown tool {tool!r}")
    return version(tool), single, batch


def load_texts_json(d: Path) -> list[str]:
    with open(d / "texts.json", encoding="utf-8") as f:
        return json.load(f)


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine_busy() -> float:
    """Busy CPU seconds of the whole machine since boot (steal included), /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


class Window:
    """Wall and CPU time of a timed part, and the cores other processes (or the
    hypervisor, as steal) kept busy meanwhile."""

    def __enter__(self):
        self.busy0, self.cpu0, self.t0 = machine_busy(), cpu_s(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.t0
        self.cpu = cpu_s() - self.cpu0
        others = machine_busy() - self.busy0 - self.cpu
        # /proc/stat counts in ticks (10 ms): short windows are rounded
        self.others = max(0.0, others / self.wall) if self.wall > 0.2 else None
        return False


def write_dump(path: str, docs) -> None:
    """Ids as uint32 (path) and the documents' token counts as uint32 (path + '.len')."""
    with open(path, "wb") as ids_f, open(path + ".len", "wb") as len_f:
        lens = array("I")
        for ids in docs:
            array("I", ids).tofile(ids_f)
            lens.append(len(ids))
        lens.tofile(len_f)


def percentile(sorted_xs: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not sorted_xs:
        return float("nan")
    k = max(0, min(len(sorted_xs) - 1, int(-(-q * len(sorted_xs) // 100)) - 1))
    return sorted_xs[k]


def wait_for_parties(barrier: str, parties: int, timeout_s: float = 120) -> None:
    """Marks this process ready in the directory `barrier` and waits until `parties`
    processes are (polled every millisecond, so they start within about a millisecond
    of each other); gives up with an error after `timeout_s`."""
    Path(barrier, f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + timeout_s
    while len(os.listdir(barrier)) < parties:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(os.listdir(barrier))} of {parties} processes ready")
        time.sleep(0.001)


def run_single(args, single, texts) -> dict:
    single(WARMUP)
    gc.collect()
    gc.disable()  # no collector pauses inside the timed loop (the outputs are dropped)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    lat = [0.0] * len(texts)
    clock = time.perf_counter_ns
    if args.barrier:
        wait_for_parties(args.barrier, args.parties)
    started = time.time()
    with Window() as w:
        for i, text in enumerate(texts):
            s = clock()
            single(text)
            lat[i] = clock() - s
    peak = peak_mb()
    # The fixed cost of one call: a short text, many times.
    short = []
    for _ in range(7):
        s = clock()
        for _ in range(5000):
            single(SHORT)
        short.append((clock() - s) / 5000)
    gc.enable()
    lat.sort()
    out = {
        "bytes": n_bytes,
        "docs": len(texts),
        "wall_s": round(w.wall, 4),
        "cpu_s": round(w.cpu, 3),
        "others_cores": None if w.others is None else round(w.others, 3),
        "mb_s": round(n_bytes / 1e6 / w.wall, 3),
        "short_us": round(statistics.median(short) / 1e3, 2),
        "p50_us": round(percentile(lat, 50) / 1e3, 1),
        "p95_us": round(percentile(lat, 95) / 1e3, 1),
        "p99_us": round(percentile(lat, 99) / 1e3, 1),
        "max_us": round(lat[-1] / 1e3, 1),
        "peak_rss_mb": peak,
        "started_epoch": round(started, 4),
    }
    if args.dump:  # after timing: a second pass, streamed to the file
        write_dump(args.dump, (single(t) for t in texts))
    return out


def run_batch(args, batch, texts) -> dict:
    threads = args.threads or os.cpu_count() or 1
    # One untimed call over the same texts first, as a data loader's calls after its
    # first would run: the timed call then finds the allocator grown, the library's
    # lazy state built and any threads it imports settled (numpy's OpenBLAS threads spin
    # for a while after import, on the cores the batch wants). Single mode is warm by
    # construction: its outputs are dropped call by call, so their memory is reused.
    batch(texts, args.api, threads)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    # Several timed calls, the median one reported: a call over 20 MB lasts about a
    # tenth of a second on code, where one slow moment of a shared host moved a lone
    # call by half. Each call's output is dropped before the next, so one is held at a
    # time, as with the untimed call.
    timed, result = [], None
    for _ in range(max(1, args.calls)):
        result = None
        gc.collect()
        gc.disable()  # as in single mode: no collector pauses inside the timed call
        with Window() as w:
            result, call_s = batch(texts, args.api, threads)
        gc.enable()
        timed.append((w, call_s))
    w, call_s = sorted(timed, key=lambda t: t[0].wall)[len(timed) // 2]
    peak = peak_mb()
    out = {
        "bytes": n_bytes,
        "docs": len(texts),
        "threads": threads,
        "calls": len(timed),
        "walls_s": [round(t[0].wall, 4) for t in timed],
        "wall_s": round(w.wall, 4),
        "cpu_s": round(w.cpu, 3),
        "others_cores": None if w.others is None else round(w.others, 3),
        "mb_s": round(n_bytes / 1e6 / w.wall, 3),
        "call_s": None if call_s is None else round(call_s, 4),
        "peak_rss_mb": peak,
    }
    if args.dump:
        if args.api == "numpy":
            flat, offsets = result
            out["dtype"] = str(flat.dtype)
            off = offsets.tolist()
            write_dump(args.dump, (flat[a:b].tolist() for a, b in zip(off, off[1:])))
        else:
            write_dump(args.dump, result)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", required=True, choices=["prepare", "single", "batch", "worst"])
    ap.add_argument("--dir", required=True, help="working directory written by --mode prepare")
    ap.add_argument("--tool", choices=["bytebpe", "tiktoken", "tokenizers"])
    ap.add_argument(
        "--api",
        default="list",
        choices=["list", "numpy", "fast"],
        help="call variant: numpy (single: bytebpe, tiktoken; batch: bytebpe), fast (batch: tokenizers)",
    )
    ap.add_argument("--threads", type=int, default=None, help="batch threads (default: all cores)")
    ap.add_argument("--case", choices=sorted(WORST_CASES))
    ap.add_argument("--runs", type=int, default=3, help="worst mode: calls (median)")
    ap.add_argument("--calls", type=int, default=3, help="batch mode: timed calls (median)")
    ap.add_argument("--dump", help="write the ids (uint32) here after timing, for the id check")
    ap.add_argument(
        "--barrier",
        help="single mode: a directory where --parties processes meet before timing starts",
    )
    ap.add_argument("--parties", type=int, default=2, help="processes that meet at --barrier")
    ap.add_argument("--corpus", help="prepare: .jsonl.gz corpus")
    ap.add_argument("--mb", type=float, default=20, help="prepare: MB to train on, and to encode")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k")
    args = ap.parse_args()

    if args.mode == "prepare":
        print(json.dumps(prepare(args)))
        return
    if not args.tool:
        ap.error("--tool is required")
    d = Path(args.dir)
    try:
        ver, single, batch = setup(args.tool, d, args.api)
    except ImportError as e:
        print(json.dumps({"tool": args.tool, "error": f"ImportError: {e}"}))
        sys.exit(2)
    base = {
        "tool": args.tool,
        "version": ver,
        "build": build_stamp(args.tool),
        "mode": args.mode,
        "api": args.api,
    }
    if args.mode == "worst":
        # bytebpe's worst cases are compared with its prose (the target is a multiple of
        # it), so its process keeps a few MB of the held-out text (the rest is freed, and
        # the peak RSS counted from there); the others' need none.
        prose = None
        if args.tool == "bytebpe":
            prose = prose_slices(load_texts_json(d), args.runs + 1)
            gc.collect()
            reset_peak()
        base["rss_loaded_mb"] = round(status_mb("VmRSS"), 1)
        single(WARMUP)
        print(json.dumps({**base, **run_worst(args, single, prose)}))
        return
    texts = load_texts_json(d)
    gc.collect()
    base["rss_loaded_mb"] = round(status_mb("VmRSS"), 1)
    run = (
        run_single(args, single, texts) if args.mode == "single" else run_batch(args, batch, texts)
    )
    print(json.dumps({**base, **run}))


if __name__ == "__main__":
    main()
