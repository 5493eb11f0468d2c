"""Damaged tokenizer files, through every loader: each is a CorruptTokenizerError naming
the file and the field (never a raw IndexError, TypeError, KeyError, RecursionError, ...),
OS errors stay OSError, and special ids far beyond the vocabulary are refused without
allocating in proportion to them."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import bytebpe
import pytest
from bytebpe import CorruptTokenizerError, Tokenizer
from bytebpe.file_format import _digest

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(
        ["hello world, low lower lowest"] * 20, 270, special_tokens=["<|eot|>"], progress=False
    )


def saved_state(tok: Tokenizer, tmp_path: Any) -> dict[str, Any]:
    path = tmp_path / "tok.json"
    tok.save(path)
    return json.loads(path.read_text())


def write_state(path: Any, state: Any) -> None:
    """Writes a (damaged) state with a valid checksum, so the damage itself is found."""
    if isinstance(state, dict):
        state = dict(state)
        state["sha256"] = _digest(state)
    path.write_text(json.dumps(state))


def _set(state: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    state[key] = value
    return state


def _merge(state: dict[str, Any], index: int, value: Any) -> dict[str, Any]:
    state["merges"][index] = value
    return state


# (damage, the field the error names, what it says)
BYTEBPE_DAMAGE = [
    (lambda s: _merge(s, 3, s["merges"][3][:3]), r"merges\[3\]", "expected 4 integers"),
    (lambda s: _set(s, "merges", "abc"), "merges", "expected an array, got a string"),
    (lambda s: _merge(s, 0, [-1, 97, 256, 5]), r"merges\[0\]\[0\]", "-1 is out of range"),
    (lambda s: _merge(s, 0, [2**40, 97, 256, 5]), r"merges\[0\]\[0\]", "out of range"),
    (lambda s: _merge(s, 0, [97, 97, 256, 2**70]), r"merges\[0\]\[3\]", "out of range"),
    (lambda s: _merge(s, 0, [97, "b", 256, 5]), r"merges\[0\]\[1\]", "expected an integer"),
    (lambda s: _merge(s, 0, [97, 1.5, 256, 5]), r"merges\[0\]\[1\]", "expected an integer"),
    (lambda s: _merge(s, 0, [97, True, 256, 5]), r"merges\[0\]\[1\]", "got a boolean"),
    (lambda s: _merge(s, 0, None), r"merges\[0\]", "expected an array, got null"),
    (lambda s: {k: v for k, v in s.items() if k != "pattern"}, "the top level",
     "'pattern' is missing"),
    (lambda s: _set(s, "pattern", 5), "pattern", "expected a string"),
    (lambda s: _set(s, "special_tokens", {"<|eot|>": 270}), "special_tokens", "expected an array"),
    (lambda s: _set(s, "special_tokens", [["<|eot|>", -1]]), r"special_tokens\[0\]\[1\]",
     "-1 is out of range"),
    (lambda s: _set(s, "special_tokens", [["<|eot|>"]]), r"special_tokens\[0\]", "got 1 items"),
    (lambda s: _set(s, "special_tokens", [[5, 270]]), r"special_tokens\[0\]\[0\]",
     "expected a string"),
    (lambda s: _set(s, "tokens", [5]), r"tokens\[0\]", "expected a string"),
    (lambda s: _set(s, "tokens", ["@@@"]), r"tokens\[0\]", "is not base64"),
    (lambda s: _set(s, "vocab_size", "270"), "vocab_size", "expected an integer"),
    (lambda s: _set(s, "vocab_size", 2**80), "vocab_size", "out of range"),
    (lambda s: _set(s, "ledger", [1]), "ledger", "expected an object"),
    (lambda s: _set(s, "ledger", {"documents": "x", "bytes": 1}), "ledger.documents",
     "expected an integer"),
    (lambda s: _set(s, "ledger", {"bytes": 1}), "ledger", "'documents' is missing"),
    (lambda s: _set(s, "ledger", {"documents": 1, "bytes": 1, "invalid_utf8_bytes": []}),
     "ledger.invalid_utf8_bytes", "expected an object"),
    (lambda s: _set(s, "ledger", {"documents": 1, "bytes": 1,
                                  "invalid_utf8_examples": [{"kind": "x"}]}),
     r"ledger.invalid_utf8_examples\[0\]", "'document' is missing"),
]


@pytest.mark.parametrize(("damage", "field", "message"), BYTEBPE_DAMAGE)
def test_a_damaged_bytebpe_file_names_the_file_and_the_field(tok, tmp_path, damage, field, message):
    path = tmp_path / "damaged.json"
    write_state(path, damage(saved_state(tok, tmp_path)))
    with pytest.raises(CorruptTokenizerError, match=rf"damaged\.json'?: {field}: .*{message}"):
        Tokenizer.load(path)


@pytest.mark.parametrize("top", [[1, 2], "text", 5, None, True])
def test_a_non_object_top_level_is_corrupt(tmp_path, top):
    path = tmp_path / "top.json"
    path.write_text(json.dumps(top))
    with pytest.raises(CorruptTokenizerError, match="top.json"):
        Tokenizer.load(path)


def test_deeply_nested_json_is_corrupt_not_a_recursion_error(tok, tmp_path):
    state = saved_state(tok, tmp_path)
    path = tmp_path / "deep.json"
    text = json.dumps(state)
    deep = "[" * 200_000 + "]" * 200_000
    path.write_text(text[:-1] + f', "extra": {deep}}}')
    with pytest.raises(CorruptTokenizerError, match=r"deep\.json.*nested too deeply"):
        Tokenizer.load(path)
    hf = tmp_path / "deep-hf.json"
    hf.write_text('{"model": ' + deep + "}")
    with pytest.raises(CorruptTokenizerError, match=r"deep-hf\.json.*nested too deeply"):
        Tokenizer.from_huggingface(hf)


def test_a_huge_number_is_corrupt(tok, tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{"format": "bytebpe-tokenizer", "vocab_size": ' + "9" * 5000 + "}")
    with pytest.raises(CorruptTokenizerError, match=r"big\.json"):
        Tokenizer.load(path)


def test_a_core_error_in_a_file_is_corrupt_and_keeps_its_cause(tok, tmp_path):
    state = saved_state(tok, tmp_path)
    state["pattern"] = "(?<bad"
    path = tmp_path / "pattern.json"
    write_state(path, state)
    with pytest.raises(CorruptTokenizerError, match=r"pattern\.json.*invalid pattern") as e:
        Tokenizer.load(path)
    assert isinstance(e.value.__cause__, bytebpe.PatternError)


def test_os_errors_stay_os_errors_with_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        Tokenizer.load(tmp_path / "nope.json")
    if os.geteuid() != 0:
        path = tmp_path / "locked.json"
        path.write_text("{}")
        path.chmod(0)
        with pytest.raises(PermissionError, match="locked.json"):
            Tokenizer.load(path)


# ==================== .tiktoken and its sidecar


def _sidecar(tok: Tokenizer, tmp_path: Any) -> tuple[Any, dict[str, Any]]:
    path = tmp_path / "tok.tiktoken"
    tok.save_tiktoken(path)
    return path, json.loads((tmp_path / "tok.tiktoken.json").read_text())


@pytest.mark.parametrize(
    ("key", "value", "field", "message"),
    [
        ("special_tokens", {"<|eot|>": -1}, "special_tokens.<|eot|>", "-1 is out of range"),
        ("special_tokens", {"<|eot|>": "x"}, "special_tokens.<|eot|>", "expected an integer"),
        ("special_tokens", [["<|eot|>", 270]], "special_tokens", "expected an object"),
        ("pattern", None, "pattern", "expected a string, got null"),
        ("ranks_sha256", 5, "ranks_sha256", "expected a string"),
        ("ranks_sha256", "AB" * 32, "ranks_sha256", "expected 64 lowercase hex digits"),
        ("ranks_sha256", "ab", "ranks_sha256", "expected 64 lowercase hex digits"),
        ("n_ranks", "270", "n_ranks", "expected an integer"),
        ("n_ranks", -1, "n_ranks", "-1 is out of range"),
    ],
)
def test_a_damaged_sidecar_names_it_and_the_field(tok, tmp_path, key, value, field, message):
    path, meta = _sidecar(tok, tmp_path)
    meta[key] = value
    (tmp_path / "tok.tiktoken.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptTokenizerError, match=rf"sidecar .*tok\.tiktoken\.json'?: "
                                                    rf"{field}: {message}"):
        Tokenizer.load(path)


@pytest.mark.parametrize("key", ["ranks_sha256", "n_ranks", "pattern", "special_tokens"])
def test_a_sidecar_missing_a_field_is_refused(tok, tmp_path, key):
    # Every sidecar bytebpe has written has them all: one without the digest would tie
    # its pattern to no file in particular, so it is damaged, not an older format.
    path, meta = _sidecar(tok, tmp_path)
    del meta[key]
    (tmp_path / "tok.tiktoken.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptTokenizerError, match=rf"tok\.tiktoken\.json'?: the top level: "
                                                    rf"the field '{key}' is missing"):
        Tokenizer.load(path)


@pytest.mark.parametrize("sidecar", [b"[1]", b"{", b"\xff\xfe", b'{"format": 5}'])
def test_a_sidecar_that_is_not_one_is_corrupt(tok, tmp_path, sidecar):
    path, _ = _sidecar(tok, tmp_path)
    (tmp_path / "tok.tiktoken.json").write_bytes(sidecar)
    with pytest.raises(CorruptTokenizerError, match=r"tok\.tiktoken\.json"):
        Tokenizer.from_tiktoken(path)


def test_a_huge_rank_is_corrupt(tmp_path):
    path = tmp_path / "huge.tiktoken"
    path.write_bytes(b"YQ== 99999999999999999999999999999\n")
    with pytest.raises(CorruptTokenizerError, match=r"huge\.tiktoken'?, line 1: the rank is too large"):
        Tokenizer.from_tiktoken(path, pattern="gpt2")


# ==================== tokenizer.json


def _hf(tok: Tokenizer, tmp_path: Any) -> dict[str, Any]:
    path = tmp_path / "tokenizer.json"
    tok.save_huggingface(path)
    return json.loads(path.read_text())


def _model(doc: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    doc["model"][key] = value
    return doc


HF_DAMAGE = [
    (lambda d: _model(d, "merges", [*d["model"]["merges"][:3], ["Ġ", "zzzq"]]),
     r"model\.merges\[3\]", "'zzzq' is not in the vocabulary"),
    (lambda d: _model(d, "merges", [["a", "b", "c"]]), r"model\.merges\[0\]", "got 3"),
    (lambda d: _model(d, "merges", "abc"), "model.merges", "expected an array"),
    (lambda d: _model(d, "merges", [5]), r"model\.merges\[0\]", "expected an array, got an integer"),
    (lambda d: _model(d, "vocab", {**d["model"]["vocab"], "x": -1}), "model.vocab.x",
     "-1 is out of range"),
    (lambda d: _model(d, "vocab", {**d["model"]["vocab"], "x": "1"}), "model.vocab.x",
     "expected an integer"),
    (lambda d: _model(d, "vocab", {**d["model"]["vocab"], "zz": 0}), "model.vocab.zz",
     "id 0 is also the id of"),
    (lambda d: _model(d, "vocab", [1, 2]), "model.vocab", "expected an object"),
    (lambda d: {**d, "model": [1]}, "model", "expected an object"),
    (lambda d: {k: v for k, v in d.items() if k != "model"}, "the top level", "'model' is missing"),
    (lambda d: {**d, "added_tokens": [{"content": "<|eot|>", "id": -1}]}, r"added_tokens\[0\].id",
     "-1 is out of range"),
    (lambda d: {**d, "added_tokens": [{"id": 270}]}, r"added_tokens\[0\]", "'content' is missing"),
    (lambda d: {**d, "added_tokens": [{"content": 5, "id": 270}]}, r"added_tokens\[0\].content",
     "expected a string"),
    (lambda d: {**d, "added_tokens": "x"}, "added_tokens", "expected an array"),
    (lambda d: {**d, "pre_tokenizer": {"type": "Sequence", "pretokenizers": 5}},
     "pre_tokenizer.pretokenizers", "expected an array"),
    (lambda d: {**d, "pre_tokenizer": {"type": "Sequence"}}, "pre_tokenizer",
     "without its list of steps"),
    (lambda d: {**d, "pre_tokenizer": [1]}, "pre_tokenizer", "expected an object"),
]


@pytest.mark.parametrize(("damage", "field", "message"), HF_DAMAGE)
def test_a_damaged_tokenizer_json_names_the_file_and_the_field(tok, tmp_path, damage, field, message):
    doc = damage(copy.deepcopy(_hf(tok, tmp_path)))
    path = tmp_path / "damaged-hf.json"
    path.write_text(json.dumps(doc))
    for load in (Tokenizer.from_huggingface, Tokenizer.load):
        with pytest.raises(CorruptTokenizerError, match=rf"damaged-hf\.json'?: {field}: .*{message}"):
            load(path)


def test_whatever_tokenizers_refuses_is_corrupt(tok, tmp_path):
    doc = _hf(tok, tmp_path)
    doc["model"]["type"] = "BPE"
    doc["model"]["byte_fallback"] = "yes"  # tokenizers' own parser refuses this
    path = tmp_path / "refused.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CorruptTokenizerError, match=r"refused\.json") as e:
        Tokenizer.from_huggingface(path)
    assert e.value.__cause__ is not None


# ==================== special ids far beyond the vocabulary, through every loader

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: far below 2^31 ints
    import bytebpe
    from bytebpe import Tokenizer
    how, path, special_id = sys.argv[1], sys.argv[2], int(sys.argv[3])
    try:
        if how == "from_tiktoken":
            tok = Tokenizer.from_tiktoken(path, special_tokens={"<|s|>": special_id})
        elif how == "from_huggingface":
            tok = Tokenizer.from_huggingface(path)
        else:
            tok = Tokenizer.load(path)
        tok.encode("a <|s|>", allowed_special="all")
    except ValueError as e:  # CorruptTokenizerError or the argument's ValueError
        print(type(e).__name__, e)
        sys.exit(3)
    print("loaded")
    """
)


def _with_special_id(how: str, tok: Tokenizer, tmp_path: Any, special_id: int) -> str:
    """A file (or argument) giving the special token `<|s|>` the id `special_id`."""
    if how == "bytebpe":
        state = saved_state(tok, tmp_path)
        state["special_tokens"] = [["<|s|>", special_id]]
        state["vocab_size"] = tok.vocab_size
        path = tmp_path / "special.json"
        write_state(path, state)
    elif how in ("sidecar", "from_tiktoken"):
        path = tmp_path / "special.tiktoken"
        tok.save_tiktoken(path)
        side = tmp_path / "special.tiktoken.json"
        meta = json.loads(side.read_text())
        meta["special_tokens"] = {"<|s|>": special_id}
        side.write_text(json.dumps(meta))
    else:  # added_tokens of a tokenizer.json
        path = tmp_path / "special-hf.json"
        doc = _hf(tok, tmp_path)
        doc["added_tokens"] = [{"id": special_id, "content": "<|s|>", "single_word": False,
                                "lstrip": False, "rstrip": False, "normalized": False,
                                "special": True}]
        path.write_text(json.dumps(doc))
    return str(path)


HOWS = ["bytebpe", "sidecar", "from_tiktoken", "added_tokens", "from_huggingface"]


@pytest.mark.parametrize("special_id", [2**32 - 1, 2**31, 50_000_000, -1])
@pytest.mark.parametrize("how", HOWS)
def test_special_ids_far_beyond_the_vocabulary_are_refused_under_a_memory_cap(
        tmp_path, how, special_id):
    plain = Tokenizer.train_from_iterator(["hello world"] * 20, 262, progress=False)
    path = _with_special_id(how, plain, tmp_path, special_id)
    done = subprocess.run([sys.executable, "-c", CHILD, how, path, str(special_id)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert str(special_id) in done.stdout
    expected = "ValueError" if how == "from_tiktoken" and special_id < 0 else "CorruptTokenizerError"
    assert done.stdout.startswith(expected), done.stdout


# ==================== seeds checked against vocab_size before building


def test_seeds_that_cannot_fit_are_refused_before_building():
    seeds = [f"{n:03d}" for n in range(1000)]
    with pytest.raises(ValueError, match=r"1000 distinct seeds.*room for 44 new tokens"):
        Tokenizer.train_from_iterator(["a b"], 300, seed_merges=seeds, progress=False)
    with pytest.raises(ValueError, match=r"seed_merges hold 1100 distinct seeds"):
        Tokenizer.train_from_iterator(["a b"], 1000, seed_merges="digits", progress=False)
    # Repeats and seeds that are already tokens need no room of their own.
    with pytest.warns(bytebpe.TrainingWarning, match="short of"):
        tok = Tokenizer.train_from_iterator(["a b"], 300, seed_merges=["ab"] * 500, progress=False)
    assert tok.encode("ab") == [256]
    with pytest.warns(bytebpe.TrainingWarning, match="short of"):
        tok = Tokenizer.train_from_iterator(["12 12"], 1500, seed_merges="digits", progress=False)
    assert len(tok.encode("123")) == 1


def test_sha256_helper_matches_the_file(tok, tmp_path):
    # write_state must write what Tokenizer.save would: an undamaged state loads back.
    state = saved_state(tok, tmp_path)
    path = tmp_path / "again.json"
    write_state(path, state)
    assert Tokenizer.load(path) == tok
    assert json.loads(path.read_text())["sha256"] == hashlib.sha256(
        json.dumps({k: v for k, v in state.items() if k != "sha256"}, sort_keys=True,
                   separators=(",", ":"), ensure_ascii=True).encode("ascii")).hexdigest()


def test_what_is_not_the_file_s_fault_keeps_its_type(tok, tmp_path, monkeypatch):
    from bytebpe.interop import huggingface_import

    path = tmp_path / "tokenizer.json"
    tok.save_huggingface(path)

    def missing() -> None:
        raise ImportError("Hugging Face tokenizers is not installed; `pip install tokenizers`")

    monkeypatch.setattr(huggingface_import, "tokenizers_module", missing)
    with pytest.raises(ImportError, match="pip install tokenizers"):
        Tokenizer.from_huggingface(path)
    small = tmp_path / "tok.json"
    tok.save(small)
    with pytest.raises(ValueError, match="vocab_size=256 is too small") as e:
        Tokenizer.load(small, vocab_size=256)
    assert not isinstance(e.value, CorruptTokenizerError)
