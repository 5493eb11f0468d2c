"""The `bytebpe` command.

    bytebpe train --sample -o tok.json                # the bundled sample
    bytebpe train 'corpus/**/*.txt' data.jsonl.gz -o tok.json
    cat corpus.txt | bytebpe train - -o tok.json      # standard input
    bytebpe export tok.json --format huggingface      # -> tokenizer.json
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator

from bytebpe import __version__, arrays, loading, observe, store
from bytebpe.checks import check_writable_file
from bytebpe.interop.tiktoken import sidecar_path
from bytebpe.ledger import format_report
from bytebpe.options import TrainingOptions, parse_memory_limit
from bytebpe.report import cli as report_cli
from bytebpe.run import INVALID_UTF8_SHARE
from bytebpe.sample import sample_documents
from bytebpe.serve import cli as serve_cli
from bytebpe.sources import read_files
from bytebpe.tokenizer import Tokenizer

# Without --heldout, every HOLDOUT_EVERY-th document is kept out of training and used
# to measure compression, so the figure is honest. At most HELDOUT_BYTES of them are
# kept (a 16th of --memory-limit when one is given), so files are streamed, not held.
HOLDOUT_EVERY = 20
HELDOUT_BYTES = 32 * 10**6


def main(argv: list[str] | None = None) -> int:
    """Runs `bytebpe ARGS` (`argv` defaults to the command line); returns the exit status.

    >>> main(["export", "tok.json", "--format", "tiktoken"])   # doctest: +SKIP
    0
    """
    parser = argparse.ArgumentParser(prog="bytebpe", description="Byte-level BPE tokenizers.")
    parser.add_argument("--version", action="version", version=f"bytebpe {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_train(commands)
    _add_encode(commands)
    _add_inspect(commands)
    _add_export(commands)
    report_cli.add_parser(commands)
    serve_cli.add_parser(commands)
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except (OSError, ValueError, TypeError, KeyError) as e:  # CorruptTokenizerError is a ValueError
        print(f"bytebpe {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"bytebpe {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # no traceback escapes the command: say what failed
        print(f"bytebpe {args.command}: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def _add_train(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "train",
        help="train a tokenizer and report what it learned",
        description="Train a tokenizer on files, standard input (-) or the bundled sample.",
    )
    p.add_argument("inputs", nargs="*",
                   help="files or globs (.txt, .jsonl, .parquet; gzip, zstd, xz or bzip2 compressed), or -")
    p.add_argument("--sample", action="store_true", help="train on the bundled sample corpus")
    _add_output_options(p)
    p.add_argument("--vocab-size", type=int, default=8192)
    p.add_argument("--pattern", default=None,
                   help="gpt2, cl100k, o200k, or a regex (default: cl100k, or the base's)")
    p.add_argument("--special-token", action="append", default=[], dest="special_tokens",
                   help="a special token (repeatable)")
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument("--base", default=None,
                   help="extend this tokenizer, keeping its ids: a bytebpe file or run store, "
                        "a tiktoken ranks file (.tiktoken), or a tokenizer.json")
    p.add_argument("--seed-merges", default=None,
                   help="tokens made first: digits, whitespace, code (joined by commas)")
    _add_input_options(p)
    p.add_argument("--heldout", nargs="*", default=None,
                   help="files to measure compression on (default: every 20th document)")
    p.add_argument("--store", default=None,
                   help="keep the run in this SQLite run store; run again to resume after a crash")
    p.add_argument("--memory-limit", default=None,
                   help="peak memory of the whole run, e.g. 2GB or 1.5GiB (rare words are "
                        "dropped past it and counted in the loss ledger)")
    p.add_argument("--show", type=int, default=20, help="how many learned tokens to show")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve Prometheus metrics of the run on 127.0.0.1 at this port while "
                        "it trains (0: a free one); needs bytebpe[observe]")
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                   default="warning",
                   help="training events on standard error (start, checkpoints, phases, "
                        "end with the ledger): JSON lines off a terminal with "
                        "bytebpe[observe], else plain lines (default: warning)")
    p.set_defaults(run=_train)


# What `--format` writes, and where by default (only a Hugging Face file is named
# tokenizer.json; transformers gets a directory from `save_pretrained`).
FORMATS = {
    "bytebpe": "bytebpe-tokenizer.json",
    "huggingface": "tokenizer.json",
    "tiktoken": "tokenizer.tiktoken",
    "transformers": "tokenizer",
}
ROLES = ("bos", "eos", "pad", "unk")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    """Which format `train` and `export` write, and where."""
    p.add_argument("-o", "--output", default=None,
                   help="where to write the tokenizer (default: "
                   + ", ".join(f"{v} for {k}" for k, v in FORMATS.items()) + ")")
    p.add_argument("--format", choices=tuple(FORMATS), default="bytebpe",
                   help="bytebpe (its own file: merges, counts, ledger), huggingface "
                   "(tokenizer.json), tiktoken (.tiktoken ranks + .json sidecar), or "
                   "transformers (a directory AutoTokenizer.from_pretrained loads)")
    for role in ROLES:
        p.add_argument(f"--{role}-token", default=None,
                       help=f"with --format transformers: the special token used as {role}_token")


def _check_output(args: argparse.Namespace) -> None:
    """Refuses an output location `_write` cannot write, before any long work: a missing
    directory, or a directory where a file goes (and the reverse for transformers)."""
    output: str = args.output or FORMATS[args.format]
    if args.format != "transformers":
        check_writable_file(output)
    elif os.path.exists(output) and not os.path.isdir(output):
        raise FileExistsError(
            errno.EEXIST, f"{output!r} is a file; --format transformers writes a directory"
        )
    else:
        parent = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(parent):
            raise FileNotFoundError(
                errno.ENOENT, f"cannot write {output!r}: its directory {parent!r} does not exist"
            )


def _write(tok: Tokenizer, args: argparse.Namespace) -> str:
    """Writes `tok` in `args.format` to `args.output` (or the format's default name)."""
    output: str = args.output or FORMATS[args.format]
    roles = {f"{role}_token": getattr(args, f"{role}_token") for role in ROLES}
    if args.format != "transformers" and any(roles.values()):
        raise ValueError("--bos-token, --eos-token, --pad-token and --unk-token go with "
                         "--format transformers")
    if args.format == "bytebpe":
        tok.save(output)
    elif args.format == "huggingface":
        tok.save_huggingface(output)
    elif args.format == "tiktoken":
        tok.save_tiktoken(output)
        output += f" (and {sidecar_path(output)})"
    else:
        tok.save_pretrained(output, **roles)
        output += "/"
    return output


def load_tokenizer(path: str, pattern: str | None = None) -> tuple[Tokenizer, str]:
    """Any tokenizer file bytebpe reads, by its content (read once, so a pipe works), and
    its kind; `pattern` is used only by a bare .tiktoken ranks file (one without its
    sidecar)."""
    file = loading.read(path)
    bare = file.kind == "tiktoken" and not os.path.exists(sidecar_path(file.path))
    if bare and pattern is None:
        raise ValueError(
            f"{path} is a bare .tiktoken ranks file (no sidecar {sidecar_path(path)}), which "
            "does not store its pre-tokenization pattern; pass --pattern (cl100k, o200k, "
            "gpt2, or the regex it was trained with)"
        )
    loaded = loading.build(file, pattern=pattern if bare else None)
    return Tokenizer(*loaded), file.kind


def _add_input_options(p: argparse.ArgumentParser) -> None:
    """How `train` and `encode` read documents, and how they run."""
    p.add_argument("--text-column", default="text", help="the text field of .jsonl rows")
    p.add_argument("--documents", choices=("lines", "files", "separator"), default="lines",
                   help="plain text: one document per line (default), per file, or between "
                   "occurrences of --separator")
    p.add_argument("--separator", default=None,
                   help=r'the text between documents, with --documents separator (e.g. "\n\n")')
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")


def _train(args: argparse.Namespace) -> int:
    _configure_logging(args.log_level)
    if args.sample == bool(args.inputs):
        raise ValueError("give input files (or - for standard input), or --sample, not both")
    if (args.separator is not None) != (args.documents == "separator"):
        raise ValueError("--separator goes with --documents separator (and needs it)")
    if args.sample and args.separator is not None:
        raise ValueError("--sample is split into documents already: leave out --separator")
    _check_output(args)
    if args.inputs == ["-"] or args.documents == "separator" or (
        args.heldout is not None and not args.sample
    ):
        return _train_streaming(args)
    if args.sample:
        train_docs: Iterable[str | bytes] = list(sample_documents(split="train"))
        # English first, so the line shown in tokens is one most readers can follow.
        heldout: list[str | bytes] = sorted(
            sample_documents(split="heldout"), key=lambda d: not d.isascii()
        )
        source = "the bundled sample"
    else:
        files = read_files(args.inputs, documents=args.documents, text_column=args.text_column)
        if args.heldout is not None:
            train_docs = files
            heldout = list(
                read_files(args.heldout, documents=args.documents, text_column=args.text_column)
            )
        else:
            limit = parse_memory_limit(args.memory_limit)
            cap = HELDOUT_BYTES if limit is None else min(HELDOUT_BYTES, limit // 16)
            split = _HoldOut(files, HOLDOUT_EVERY, cap)
            train_docs, heldout = split, split.heldout
        source = ", ".join(args.inputs)

    started = time.perf_counter()
    tok = Tokenizer.train_from_iterator(train_docs, args.vocab_size, **_training_options(args))
    _report(tok, args, source, time.perf_counter() - started, heldout)
    return 0


def _training_options(args: argparse.Namespace) -> TrainingOptions:
    """The options every training entry point takes, from the command line."""
    return TrainingOptions(
        pattern=args.pattern,
        special_tokens=args.special_tokens,
        min_frequency=args.min_frequency,
        num_threads=args.threads,
        store=args.store,
        base=load_tokenizer(args.base, args.pattern)[0] if args.base else None,
        seed_merges=args.seed_merges,
        memory_limit=args.memory_limit,
        progress=not args.no_progress,
        metrics_port=args.metrics_port,
    )


def _report(
    tok: Tokenizer, args: argparse.Namespace, source: str, seconds: float,
    heldout: list[str | bytes],
) -> None:
    """Saves the tokenizer and prints what it was trained on and learned."""
    written = _write(tok, args)
    training = tok.loss_report()["training"] or {}
    n_bytes = training.get("bytes", 0)
    print(f"trained on {source}: {training.get('documents', 0):,} documents, "
          f"{n_bytes / 1e6:,.1f} MB")
    invalid = sum(training.get("invalid_utf8_bytes", {}).values())
    if invalid:
        share = invalid / max(n_bytes, 1)
        flag = " -- is the input binary or compressed?" if share >= INVALID_UTF8_SHARE else ""
        print(f"invalid UTF-8: {invalid:,} bytes ({share:.1%} of the input, kept as byte "
              f"tokens){flag}")
    if training.get("dropped_word_mass"):
        print(f"memory limit {args.memory_limit}: dropped {training['dropped_word_mass']:,} "
              f"occurrences of rare words ({training['dropped_bytes'] / 1e6:,.1f} MB of text)")
    print(f"vocabulary size: {tok.vocab_size:,} (asked for {args.vocab_size:,})")
    print(f"time: {seconds:.2f} s ({n_bytes / 1e6 / max(seconds, 1e-9):,.1f} MB/s)")
    _report_compression(tok, heldout)
    _show_learned(tok, args.show, heldout)
    print(f"wrote {written}")


def _configure_logging(level: str) -> None:
    """Structured logs (structlog) when the observe extra is installed, else plain lines."""
    try:
        observe.configure_logging(level=level)
    except ImportError:
        logging.basicConfig(level=level.upper(), format="%(asctime)s %(name)s %(message)s")


def _train_streaming(args: argparse.Namespace) -> int:
    """Standard input, or files (with --heldout, or split at a separator), read in chunks
    by the Rust reader, never held in memory whole. Held-out text comes only from
    --heldout (a stream cannot be read twice, and documents are not kept)."""
    if "-" in args.inputs and args.inputs != ["-"]:
        raise ValueError("standard input (-) is read as a stream: give it alone")
    # Escapes such as \n are read as in Python; other characters stay as typed.
    separator = None
    if args.separator is not None:
        separator = args.separator.encode("latin-1", "backslashreplace").decode("unicode_escape")
    options = _training_options(args)
    started = time.perf_counter()
    if args.inputs == ["-"]:
        if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:
            raise ValueError("standard input is closed; give input files instead of -")
        source = "standard input"
        tok = Tokenizer.train_from_stream(
            sys.stdin.buffer, args.vocab_size, name="<stdin>", documents=args.documents,
            separator=separator, text_column=args.text_column, **options,
        )
    else:
        source = ", ".join(args.inputs)
        tok = Tokenizer.train_from_files(
            args.inputs, args.vocab_size, documents=args.documents, separator=separator,
            text_column=args.text_column, **options,
        )
    seconds = time.perf_counter() - started
    heldout: list[str | bytes] = []
    if args.heldout:
        mode = "lines" if args.documents == "separator" else args.documents
        heldout = list(read_files(args.heldout, documents=mode, text_column=args.text_column))
    _report(tok, args, source, seconds, heldout)
    return 0


class _HoldOut:
    """The documents of `docs` except every `every`-th one, which goes to `heldout`
    (up to `cap` bytes). Iterable again (files are reopened), so a stored run can resume
    its counting."""

    def __init__(self, docs: Iterable[str | bytes], every: int, cap: int) -> None:
        self.docs, self.every, self.cap = docs, every, cap
        self.heldout: list[str | bytes] = []

    def __iter__(self) -> Iterator[str | bytes]:
        self.heldout.clear()
        size = 0
        for i, doc in enumerate(self.docs):
            if i % self.every == self.every - 1:
                if size < self.cap:
                    self.heldout.append(doc)
                    size += len(doc)
                continue
            yield doc


def _add_encode(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "encode",
        help="encode files into a flat binary token file (np.memmap-readable)",
        description="Encode documents into one flat .bin token file (uint16, or uint32 for "
        "vocabularies above 65,536), as nanoGPT reads with numpy.memmap.",
    )
    p.add_argument("inputs", nargs="+",
                   help="files or globs (.txt, .jsonl, .parquet; gzip, zstd, xz or bzip2 compressed), or -")
    p.add_argument("-t", "--tokenizer", required=True,
                   help="any tokenizer file: bytebpe's, a run store, tokenizer.json, .tiktoken")
    p.add_argument("--pattern", default=None, help="the pattern of a bare .tiktoken file")
    p.add_argument("-o", "--output", required=True, help="the .bin file to write")
    p.add_argument("--eot", default=None,
                   help="a special token written after every document (e.g. '<|endoftext|>')")
    p.add_argument("--dtype", choices=("uint16", "uint32"), default=None)
    _add_input_options(p)
    p.set_defaults(run=_encode)


def _encode(args: argparse.Namespace) -> int:
    if args.documents == "separator" or args.separator is not None:
        raise ValueError("encode splits documents by line or by file (--documents lines|files)")
    check_writable_file(args.output)
    tok, _ = load_tokenizer(args.tokenizer, args.pattern)
    started = time.perf_counter()
    docs = read_files(args.inputs, documents=args.documents, text_column=args.text_column)
    count = tok.encode_to_file(docs, args.output, dtype=args.dtype, eot=args.eot,
                               num_threads=args.threads, progress=not args.no_progress)
    seconds = time.perf_counter() - started
    dtype, _ = arrays.itemsize_for(tok.vocab_size, args.dtype)
    print(f"wrote {count:,} tokens ({dtype}) to {args.output} in {seconds:.2f} s")
    return 0


def _add_inspect(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "inspect",
        help="show a run store or tokenizer file: settings, progress, merges, loss ledger",
    )
    p.add_argument("path", help="a run store or any tokenizer file (bytebpe's, "
                   "tokenizer.json, .tiktoken)")
    p.add_argument("--top", type=int, default=15, help="how many merges to list")
    p.add_argument("--pattern", default=None, help="the pattern of a bare .tiktoken file")
    p.set_defaults(run=_inspect)


def _add_export(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "export",
        help="write a tokenizer in another format",
        description="Read any tokenizer file (bytebpe's, a run store, tokenizer.json, "
        ".tiktoken) and write it as --format. Every export is checked to give identical ids.",
    )
    p.add_argument("path", help="the tokenizer to convert")
    p.add_argument("--pattern", default=None, help="the pattern of a bare .tiktoken file")
    _add_output_options(p)
    p.set_defaults(run=_export)


def _export(args: argparse.Namespace) -> int:
    _check_output(args)
    tok, _ = load_tokenizer(args.path, args.pattern)
    print(f"wrote {_write(tok, args)} ({args.format}, {tok.vocab_size:,} tokens)")
    return 0


def _inspect(args: argparse.Namespace) -> int:
    tok, kind = load_tokenizer(args.path, args.pattern)
    if kind == "store":
        run = store.read(args.path, with_snapshot=False)
        meta = run.meta
        print(f"run store {args.path}")
        print(f"  pattern: {tok.pattern_name or repr(tok.pattern)}")
        print(f"  special tokens: {run.special_tokens}")
        print(f"  min_frequency: {meta['min_frequency']}, max_token_length: "
              f"{meta['max_token_length']}, target vocab_size: {meta.get('vocab_size')}, "
              f"memory_limit: {meta.get('memory_limit', 'null')}")
        state = "finished" if run.counting_finished else "in progress"
        print(f"  counting: {state}, {run.documents:,} documents, {run.bytes:,} bytes")
        if "start_state" in meta:
            start = json.loads(meta["start_state"])
            print(f"  warm start: extends a tokenizer of {start['vocab_size']:,} tokens")
        print(f"  merges: {len(run.merges):,}; vocabulary so far: {tok.vocab_size:,}")
        print(f"  complete: {'yes' if meta.get('complete') == '1' else 'no'}")
    else:
        print(f"tokenizer {args.path} ({kind})")
        print(f"  pattern: {tok.pattern_name or repr(tok.pattern)}")
        print(f"  special tokens: {list(tok.special_tokens)}")
        print(f"  vocab_size: {tok.vocab_size:,}")
    merges = tok.merges()
    if merges and args.top > 0:
        print(f"first {min(args.top, len(merges))} merges (rank: token, count):")
        for rank, m in enumerate(merges[: args.top]):
            print(f"  {rank}: {_printable(tok.token_bytes(m.token))!r} {m.count:,}")
    print(format_report(tok.loss_report()))
    return 0


def _report_compression(tok: Tokenizer, heldout: list[str | bytes]) -> None:
    if not heldout:
        print("compression: no held-out text")
        return
    n_bytes = n_tokens = 0
    for doc in heldout:
        data = doc.encode("utf-8") if isinstance(doc, str) else doc
        n_bytes += len(data)
        n_tokens += len(tok.encode_bytes(data))
    ratio = n_bytes / max(n_tokens, 1)
    print(f"compression on held-out text: {ratio:.2f} bytes per token "
          f"({n_bytes:,} bytes -> {n_tokens:,} tokens)")


def _show_learned(tok: Tokenizer, count: int, heldout: list[str | bytes]) -> None:
    if count <= 0:
        return
    # Learned: made by a merge, so two bytes or more (the 256 byte tokens are given).
    learned = [kv for kv in tok.mergeable_ranks().items() if len(kv[0]) > 1]
    tokens = sorted(learned, key=lambda kv: (-len(kv[0]), kv[1]))
    shown = " | ".join(_printable(b) for b, _ in tokens[:count]) or "none (no merge learned)"
    print(f"longest learned tokens: {shown}")
    # A prose-like line shows merges best: mostly letters and spaces, not markup.
    lines = (ln.strip() for d in heldout if isinstance(d, str) for ln in d.split("\n"))
    line = next((ln for ln in lines if len(ln) >= 40 and _wordy(ln)), None)
    if line is not None:
        pieces = [_printable(tok.token_bytes(t)) for t in tok.encode_ordinary(line[:120])]
        print(f"a held-out line in tokens: {'|'.join(pieces)}")


def _wordy(line: str) -> bool:
    return sum((c.isascii() and c.isalpha()) or c == " " for c in line) >= 0.9 * len(line)


def _printable(data: bytes) -> str:
    """A token's bytes for a terminal: its text, with invalid UTF-8 and every character
    that does not print (newlines, tabs, control characters) escaped."""
    text = data.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


if __name__ == "__main__":
    raise SystemExit(main())
