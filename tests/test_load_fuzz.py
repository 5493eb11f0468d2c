"""Random damage to tokenizer files and random special ids, through every loader: a file
either loads (as the same tokenizer, where a checksum covers it) or is refused with
CorruptTokenizerError; never another exception type. Deterministic (derandomized) and
bounded in examples."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bytebpe import CorruptTokenizerError, Tokenizer
from bytebpe.file_format import _digest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("tokenizers")

FUZZ = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(
        ["hello world, low lower lowest"] * 20, 270, special_tokens=["<|eot|>"], progress=False
    )


@pytest.fixture(scope="module")
def files(tok: Tokenizer, tmp_path_factory: Any) -> dict[str, bytes]:
    where = tmp_path_factory.mktemp("valid")
    tok.save(where / "tok.json")
    tok.save_huggingface(where / "tokenizer.json")
    tok.save_tiktoken(where / "tok.tiktoken")
    names = {"bytebpe": "tok.json", "huggingface": "tokenizer.json", "tiktoken": "tok.tiktoken",
             "sidecar": "tok.tiktoken.json"}
    return {kind: (where / name).read_bytes() for kind, name in names.items()}


@st.composite
def damaged(draw: Any, data: bytes) -> bytes:
    """`data` with one to three edits: a byte changed, a span cut or repeated, bytes
    inserted, a digit changed (ids and counts), a quote or bracket removed."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        edit = draw(st.sampled_from(["byte", "cut", "repeat", "insert", "digit", "syntax"]))
        if edit == "byte":
            out[at] = draw(st.integers(0, 255))
        elif edit == "cut":
            del out[at:at + draw(st.integers(1, 64))]
        elif edit == "repeat":
            out[at:at] = out[at:at + draw(st.integers(1, 64))]
        elif edit == "insert":
            out[at:at] = draw(st.sampled_from(
                [b"-", b"9999999999", b"[", b"]", b"{", b"null", b",", b'"', b"\xff", b"-1"]))
        elif edit == "digit":
            digits = [i for i, b in enumerate(out) if 48 <= b <= 57]
            if digits:
                out[digits[at % len(digits)]] = draw(st.integers(48, 57))
        else:
            marks = [i for i, b in enumerate(out) if b in b'"[]{},:']
            if marks:
                del out[marks[at % len(marks)]]
    return bytes(out)


def _load_or_refuse(path: Any, **kw: Any) -> Tokenizer | None:
    try:
        return Tokenizer.load(path, **kw)
    except CorruptTokenizerError:
        return None


@FUZZ
@given(data=st.data())
def test_a_damaged_bytebpe_file_is_refused_or_identical(tok, files, tmp_path, data):
    path = tmp_path / "fuzz.json"
    path.write_bytes(data.draw(damaged(files["bytebpe"])))
    loaded = _load_or_refuse(path)
    assert loaded is None or loaded == tok


@FUZZ
@given(data=st.data())
def test_a_damaged_ranks_file_is_refused_or_identical(tok, files, tmp_path, data):
    path = tmp_path / "fuzz.tiktoken"
    path.write_bytes(data.draw(damaged(files["tiktoken"])))
    (tmp_path / "fuzz.tiktoken.json").write_bytes(files["sidecar"])
    loaded = _load_or_refuse(path)
    assert loaded is None or loaded == tok


@FUZZ
@given(data=st.data())
def test_a_damaged_sidecar_is_refused_or_loads(tok, files, tmp_path, data):
    # The sidecar has no checksum of its own: an edit of its pattern may load as another
    # tokenizer, but never raises anything but CorruptTokenizerError.
    path = tmp_path / "fuzz.tiktoken"
    path.write_bytes(files["tiktoken"])
    (tmp_path / "fuzz.tiktoken.json").write_bytes(data.draw(damaged(files["sidecar"])))
    _load_or_refuse(path)


@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_a_damaged_tokenizer_json_is_refused_or_loads(tok, files, tmp_path, data):
    # Checked against Hugging Face's own encoding when it loads (so faithful to the file).
    path = tmp_path / "fuzz-tokenizer.json"
    path.write_bytes(data.draw(damaged(files["huggingface"])))
    _load_or_refuse(path)


# ==================== random special ids


def _special_ids() -> st.SearchStrategy[int]:
    near = st.integers(250, 270 + 2**16 + 8)
    far = st.integers(-(2**33), 2**33)
    edges = st.sampled_from([-1, 0, 255, 256, 269, 270, 271, 2**31 - 1, 2**31, 2**32 - 1, 2**32])
    return st.one_of(near, far, edges)


def _round_trips(loaded: Tokenizer, special_id: int) -> None:
    assert loaded.special_tokens == {"<|s|>": special_id}
    ids = loaded.encode("hello <|s|>", allowed_special="all")
    assert ids[-1] == special_id
    assert loaded.decode(ids) == "hello <|s|>"


@settings(FUZZ, max_examples=30)
@given(special_id=_special_ids(), how=st.sampled_from(["bytebpe", "sidecar", "argument",
                                                        "added_tokens"]))
def test_random_special_ids_are_refused_or_round_trip(tok, files, tmp_path, special_id, how):
    plain = Tokenizer.train_from_iterator(["hello world"] * 20, 262, progress=False)
    if how == "bytebpe":
        path = tmp_path / "ids.json"
        plain.save(path)
        state = json.loads(path.read_text())
        state["special_tokens"] = [["<|s|>", special_id]]
        state["vocab_size"] = plain.vocab_size + 1
        state["sha256"] = _digest(state)
        path.write_text(json.dumps(state))
    elif how in ("sidecar", "argument"):
        path = tmp_path / "ids.tiktoken"
        plain.save_tiktoken(path)
        if how == "sidecar":
            side = tmp_path / "ids.tiktoken.json"
            meta = json.loads(side.read_text())
            meta["special_tokens"] = {"<|s|>": special_id}
            side.write_text(json.dumps(meta))
    else:
        path = tmp_path / "ids-tokenizer.json"
        plain.save_huggingface(path)
        doc = json.loads(path.read_text())
        doc["added_tokens"] = [{"id": special_id, "content": "<|s|>", "single_word": False,
                                "lstrip": False, "rstrip": False, "normalized": False,
                                "special": True}]
        path.write_text(json.dumps(doc))
    try:
        if how == "argument":
            loaded = Tokenizer.from_tiktoken(path, special_tokens={"<|s|>": special_id})
        else:
            loaded = Tokenizer.load(path)
    except ValueError as e:  # CorruptTokenizerError, or a bad argument
        assert how == "argument" or isinstance(e, CorruptTokenizerError)
        assert str(special_id) in str(e)
        return
    _round_trips(loaded, special_id)
