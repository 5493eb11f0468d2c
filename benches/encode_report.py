"""The markdown section of one encode_compare.py run, made from its raw runs alone.

`render(raw)` takes the dict encode_compare.py writes with --json (every child's JSON
line, and what the run knew of itself under "meta"), so a section can be made again from
a saved run, and the tables never hold a figure the raw runs do not:

    python benches/encode_report.py RAW.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from encode_worst import WORST_CASES

# (tool, api) -> label and the call it times
BATCH_APIS = {
    ("bytebpe", "list"): "bytebpe `encode_ordinary_batch`",
    ("bytebpe", "numpy"): "bytebpe `encode_batch_numpy`",
    ("tiktoken", "list"): "tiktoken `encode_ordinary_batch`",
    ("tokenizers", "list"): "tokenizers `encode_batch` + `.ids`",
    ("tokenizers", "fast"): "tokenizers `encode_batch_fast` + `.ids`",
}
SINGLE_CALL = {
    "bytebpe": "`encode_ordinary`",
    "tiktoken": "`encode_ordinary`",
    "tokenizers": "`encode(text).ids`",
}


def med(runs: list[dict], key: str):
    xs = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec: str = ".1f", none: str = "–") -> str:
    return none if x is None else format(x, spec)


def ratio(num, den, spec: str = ".2f") -> str:
    return "–" if not num or not den else format(num / den, spec)


def paired(num_runs: list[dict], den_runs: list[dict], key: str) -> str:
    """num / den per repeat (runs paired by repeat, so both saw the same load): the median
    ratio with the min–max over the repeats, "–" without a pair."""
    xs = sorted(
        a[key] / b[key]
        for a, b in zip(num_runs, den_runs)
        if "error" not in a and "error" not in b and a.get(key) and b.get(key)
    )
    return spread(xs)


def spread(xs: list[float]) -> str:
    """The median with the min–max ("–" for none)."""
    if not xs:
        return "–"
    xs, med_x = sorted(xs), statistics.median(xs)
    return f"{med_x:.2f}" if len(xs) == 1 else f"{med_x:.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"


def others_cell(runs: list[dict]) -> str:
    """Median and max of the cores other processes kept busy during the timed parts."""
    xs = [r["others_cores"] for r in runs if r.get("others_cores") is not None]
    return "–" if not xs else f"{statistics.median(xs):.2f} (max {max(xs):.2f})"


def ok_runs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if "error" not in r]


def errors(runs: list[dict]) -> str:
    return "; ".join(sorted({r["error"] for r in runs if "error" in r}))


def keyed(runs: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """The raw file's "tool api" and "tool case" keys as (tool, api) and (tool, case)."""
    return {tuple(k.split(" ", 1)): v for k, v in runs.items()}


def render(raw: dict) -> str:
    meta, prep = raw["meta"], raw["prep"]
    tools: list[str] = meta["tools"]
    single: dict[str, list[dict]] = raw["single"]
    batch, batch_one = keyed(raw["batch"]), keyed(raw["batch_one_thread"])
    worst = keyed(raw["worst"])
    out = head(raw)
    out += single_table(tools, single)
    out += batch_table(raw["threads"], prep["bytes"] / 1e6, batch, batch_one, single)
    if raw["pair_single"]:
        out += ceiling(raw["pair_single"], single["bytebpe"])
    if worst:
        out += worst_table(tools, worst, single, raw["repeats"], meta["timeout"])
    if "bytebpe" in tools and len(tools) > 1:
        out += anchors_table(tools, single, batch, worst, raw["repeats"])
    out += footer(raw)
    return "\n".join(out)


def head(raw: dict) -> list[str]:
    meta, prep = raw["meta"], raw["prep"]
    versions = meta["versions"]
    return [
        (
            f"## {meta['started']}: encode, {raw['corpus']}, pattern {meta['pattern']}, "
            f"vocab {meta['vocab_size']:,}, {raw['repeats']} repeats"
        ),
        "",
        f"- Command: `{meta['command']}`",
        f"- Machine: {meta['machine']}; at end {' '.join(f'{x:.2f}' for x in raw['load_end'])}",
        f"- Python {meta['python']}; "
        + ", ".join(
            f"{t} {versions[t]}"
            + (f" ({prep['build']})" if t == "bytebpe" and prep.get("build") else "")
            for t in meta["tools"]
        )
        + f"; numpy {versions['numpy']}; {meta['repo']}",
        (
            f"- Tokenizer: bytebpe trained on the first {prep['train_bytes'] / 1e6:.4g} MB "
            f"({prep['train_docs']:,} documents) in {prep['train_s']:.1f} s, vocab {prep['vocab_out']:,}; "
            f"exported to tiktoken and Hugging Face (checked by bytebpe; not timed)."
        ),
        (
            f"- Encoded: the next {prep['docs']:,} documents, {prep['bytes'] / 1e6:.4g} MB (median document "
            f"{prep['doc_bytes_p50']:,} bytes, largest {prep['doc_bytes_max']:,}). Batch threads: {raw['threads']}."
        ),
    ]


def single_table(tools: list[str], single: dict[str, list[dict]]) -> list[str]:
    out = [
        "",
        "### Single thread: documents one by one",
        "",
        (
            "| tool | call | MB/s (median) | min–max | p50 µs | p95 µs | p99 µs | µs per call on 11 bytes "
            "| RSS loaded MB | peak RSS MB | others' cores |"
        ),
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for tool in tools:
        rs = ok_runs(single[tool])
        if not rs:
            out.append(f"| {tool} | {SINGLE_CALL[tool]} | {errors(single[tool])} | | | | | | | | |")
            continue
        xs = [r["mb_s"] for r in rs]
        out.append(
            f"| {tool} {rs[0]['version']} | {SINGLE_CALL[tool]} | **{med(rs, 'mb_s'):.2f}** "
            f"| {min(xs):.2f}–{max(xs):.2f} | {med(rs, 'p50_us'):,.0f} | {med(rs, 'p95_us'):,.0f} "
            f"| {med(rs, 'p99_us'):,.0f} | {med(rs, 'short_us'):.2f} | {med(rs, 'rss_loaded_mb'):.0f} "
            f"| {med(rs, 'peak_rss_mb'):.0f} | {others_cell(rs)} |"
        )
    return out


def batch_table(threads: int, mb: float, batch, batch_one, single) -> list[str]:
    out = [
        "",
        f"### Batch: one call over all documents, {threads} threads (per repeat, the median "
        "of its timed calls)",
        "",
        (
            "| tool | MB/s (median) | min–max | CPU s / wall s "
            "| scaling (batch / own single, per repeat: median (min–max)) "
            "| scaling (batch / the same call on 1 thread) "
            "| peak RSS MB | others' cores |"
        ),
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for key, runs in batch.items():
        rs = ok_runs(runs)
        if not rs:
            out.append(f"| {BATCH_APIS[key]} | {errors(runs)} | | | | | | |")
            continue
        xs = [r["mb_s"] for r in rs]
        util = statistics.median(r["cpu_s"] / r["wall_s"] for r in rs)
        extra = ""
        if med(rs, "call_s"):
            extra = f" (call alone {mb / med(rs, 'call_s'):.2f})"
        out.append(
            f"| {BATCH_APIS[key]} | **{med(rs, 'mb_s'):.2f}**{extra} | {min(xs):.2f}–{max(xs):.2f} "
            f"| {util:.2f} | {paired(runs, single[key[0]], 'mb_s')} "
            f"| {paired(runs, batch_one[key], 'mb_s') if key in batch_one else '–'} "
            f"| {med(rs, 'peak_rss_mb'):.0f} "
            f"| {others_cell(rs)} |"
        )
    return out


def ceiling(pairs: list[dict], single_bytebpe: list[dict]) -> list[str]:
    return [
        "",
        (
            "The machine's own ceiling: bytebpe's single-thread run as two processes at "
            "once (their timed loops started together, timed until both finished) over "
            "one alone, per repeat: "
            f"{paired(pairs, single_bytebpe, 'mb_s')} (2.00: two cores give twice "
            "one core's work; less: the cores share caches, memory or a host)."
        ),
    ]


def prose_ratios(worst_run: dict, prose_mb_s: float | None) -> list[float]:
    """A bytebpe worst-case run's time over that of 1 MB of prose, sorted: per call,
    against the MB timed just before it (`vs_prose`), or for a run without those, its
    median call over the single-thread runs' MB/s (1 MB takes 1 / (MB/s) seconds); none
    when neither is known."""
    if worst_run.get("vs_prose"):
        return sorted(worst_run["vs_prose"])
    if worst_run.get("median_s") and prose_mb_s:
        return [worst_run["median_s"] * prose_mb_s]
    return []


def worst_table(tools: list[str], worst, single, repeats: int, timeout: float) -> list[str]:
    header = (
        ["input"]
        + [f"{t} s" for t in tools]
        + [f"{t} ÷ bytebpe" for t in tools if t != "bytebpe"]
        + [
            "bytebpe 1M ÷ 500k (linear: 2.0)",
            "bytebpe ÷ 1 MB of this corpus (per call, the MB timed just before it)",
            "tokens",
            f"peak RSS MB ({', '.join(tools)})",
        ]
    )
    out = [
        "",
        (
            f"### Worst cases: one call on one input (median of {repeats} calls in one process; "
            f"killed after {timeout:g} s)"
        ),
        "",
        "| " + " | ".join(header) + " |",
        "|---|" + "--:|" * (len(header) - 1),
    ]
    prose = med(ok_runs(single.get("bytebpe", [])), "mb_s")
    notes: list[str] = []
    for case, (desc, _) in WORST_CASES.items():
        cells, secs = [], {}
        for t in tools:
            r = worst[t, case]
            if r.get("timeout"):
                cells.append(f"> {timeout:g} (killed)")
            elif "error" in r:
                where = f" after {r['median_s']:.3f} s" if "median_s" in r else ""
                notes.append(f"{t} on `{desc}`: {r['error']}".replace("|", "/"))
                cells.append(f"fails{where} [{len(notes)}]")
            else:
                secs[t] = r["median_s"]
                cells.append(f"{r['median_s']:.3f}")
        ratios = [ratio(secs.get(t), secs.get("bytebpe")) for t in tools if t != "bytebpe"]
        tokens = next((worst[t, case]["tokens"] for t in tools if "tokens" in worst[t, case]), None)
        rss = ", ".join(fmt(worst[t, case].get("peak_rss_mb"), ".0f") for t in tools)
        b = worst.get(("bytebpe", case), {})
        linear = ratio(b.get("median_s"), b.get("half_median_s")) if "error" not in b else "–"
        vs_prose = "–" if "error" in b else spread(prose_ratios(b, prose))
        row = [f"`{desc}`", *cells, *ratios, linear, vs_prose, fmt(tokens, ","), rss]
        out.append("| " + " | ".join(row) + " |")
    if notes:
        out += [""] + [f"[{i}] {n}  " for i, n in enumerate(notes, 1)]
    return out


def anchors_table(tools: list[str], single, batch, worst, repeats: int) -> list[str]:
    anchors = [t for t in tools if t != "bytebpe"]
    bs = ok_runs(single["bytebpe"])

    def row(name: str, b, vals: list, inverse: bool = False) -> str:
        cells = [ratio(v, b) if inverse else ratio(b, v) for v in vals]
        return f"| {name} | " + " | ".join(cells) + " |"

    out = [
        "",
        "### bytebpe against the anchors",
        "",
        (
            "Speed-up = anchor time / bytebpe time (above 1: bytebpe faster); memory = bytebpe / "
            "anchor (below 1: bytebpe smaller). "
            + (
                f"Throughput ratios are per repeat ({repeats} interleaved repeats)."
                if repeats >= 3
                else f"**Only {repeats} repeat(s): not a headline figure (needs 3).**"
            )
        ),
        "",
        "| measure | " + " | ".join(f"vs {t}" for t in anchors) + " |",
        "|---|" + "--:|" * len(anchors),
    ]
    a_single = {t: ok_runs(single[t]) for t in anchors}
    # Per-repeat ratios of interleaved runs: median (min–max), never one repeat alone.
    out.append(
        "| single-thread throughput (median of per-repeat ratios, min–max) | "
        + " | ".join(paired(single["bytebpe"], single[t], "mb_s") for t in anchors)
        + " |"
    )
    for q in ("p50", "p95", "p99"):
        out.append(
            row(
                f"latency {q}",
                med(bs, f"{q}_us"),
                [med(a_single[t], f"{q}_us") for t in anchors],
                inverse=True,
            )
        )
    a_batch = {t: ok_runs(batch.get((t, "list"), [])) for t in anchors}
    for api in ("list", "numpy"):
        if ("bytebpe", api) in batch:
            out.append(
                row(
                    f"batch: {BATCH_APIS['bytebpe', api]} vs the anchor's batch call",
                    med(ok_runs(batch["bytebpe", api]), "mb_s"),
                    [med(a_batch[t], "mb_s") for t in anchors],
                )
            )
    out.append(
        row(
            "peak RSS, single",
            med(bs, "peak_rss_mb"),
            [med(a_single[t], "peak_rss_mb") for t in anchors],
        )
    )
    if ("bytebpe", "list") in batch:
        out.append(
            row(
                "peak RSS, batch (`encode_batch`)",
                med(ok_runs(batch["bytebpe", "list"]), "peak_rss_mb"),
                [med(a_batch[t], "peak_rss_mb") for t in anchors],
            )
        )
    for case, (desc, _) in WORST_CASES.items():
        if ("bytebpe", case) not in worst:
            continue
        mine = worst["bytebpe", case]
        b = mine.get("median_s") if "error" not in mine else None
        cells = []
        for t in anchors:
            r = worst[t, case]
            if "error" in r:
                cells.append("killed" if r.get("timeout") else "anchor fails")
            else:
                cells.append(ratio(r["median_s"], b))
        out.append(f"| worst case `{desc}` | " + " | ".join(cells) + " |")
    return out


def footer(raw: dict) -> list[str]:
    """The ids' check, the machine's load and what other processes used."""
    meta = raw["meta"]
    runs = [*raw["single"].values(), *raw["batch"].values()]
    loads = [r["load1"] for rs in runs for r in rs if "load1" in r]
    out = ["", *meta["id_lines"]]
    if loads:
        out.append(
            f"- 1-minute load average when the corpus runs started: median {statistics.median(loads):.2f}, "
            f"max {max(loads):.2f} ({meta['ncpu']} cores)."
        )
    out.append(
        "- Others' cores: CPU that other processes (and the hypervisor, as steal) used during "
        "each timed part, from /proc/stat (– when the part is under 0.2 s); above ~0.2 "
        "the run shared the machine."
    )
    out.append(
        f"- CPU used by other processes (outside this benchmark): {meta['background']:.2f} cores in a "
        f"3 s sample before the run, {max(meta['others'], 0):.2f} cores on average during its "
        f"{meta['run_wall']:.0f} s (from /proc/stat minus this benchmark's children)."
    )
    out.append("")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw", help="the file encode_compare.py --json wrote")
    with open(ap.parse_args().raw, encoding="utf-8") as f:
        print(render(json.load(f)))


if __name__ == "__main__":
    main()
