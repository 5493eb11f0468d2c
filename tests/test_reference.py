"""Self-tests of the oracle (tests/reference.py) on tiny examples worked out by hand.

Every expected value here was computed on paper from the contract in docs/design.md, never by running
the oracle. Byte values used below: a=97 b=98 c=99 d=100 x=120 space=32.
"""

from __future__ import annotations

import itertools
import unicodedata

import pytest
import reference as R

A, B, C, D, X, SP = 97, 98, 99, 100, 120, 32


# --- training -------------------------------------------------------------------------------


def test_pair_in_aaa_counts_twice() -> None:
    # "aaa" holds (a, a) at positions 0 and 1: count 2 per occurrence, 3 occurrences.
    assert R.train_counts({b"aaa": 3}, 257) == [(A, A, 256, 6)]


def test_merge_is_left_to_right_without_overlap() -> None:
    # "aaaa": (a,a) x3 -> [aa, aa]; then (aa, aa) x1 -> [aaaa].
    assert R.train_counts({b"aaaa": 1}, 1000, min_frequency=1) == [
        (A, A, 256, 3),
        (256, 256, 257, 1),
    ]


def test_odd_run_and_tie_on_right_token() -> None:
    # "aaaaa": (a,a) x4 -> [aa, aa, a]. Then (aa,aa) and (aa,a) both count 1; left bytes
    # equal ("aa"), right bytes b"a" < b"aa", so (aa, a) wins -> [aa, aaa]; then (aa, aaa).
    assert R.train_counts({b"aaaaa": 1}, 1000, min_frequency=1) == [
        (A, A, 256, 4),
        (256, A, 257, 1),
        (256, 257, 258, 1),
    ]


def test_tie_on_left_token() -> None:
    # (a,b) and (b,a) both count 1: b"a" < b"b", so (a,b) goes first.
    assert R.train_counts({b"ab": 1, b"ba": 1}, 1000, min_frequency=1) == [
        (A, B, 256, 1),
        (B, A, 257, 1),
    ]


def test_tie_break_compares_bytes_not_ids() -> None:
    # Step 1: (a,b)=5+1=6, (b,c)=1+1=2 -> ab=256; words [ab]x5, [ab,c], [b,c].
    # Step 2: (ab,c)=1 and (b,c)=1 tie. By bytes b"ab" < b"b" -> (ab, c) first,
    # although by ids (98, 99) < (256, 99).
    assert R.train_counts({b"ab": 5, b"abc": 1, b"bc": 1}, 1000, min_frequency=1) == [
        (A, B, 256, 6),
        (256, C, 257, 1),
        (B, C, 258, 1),
    ]


def test_highest_count_wins_over_bytes_order() -> None:
    # (c,d)=3 beats (a,b)=2 although b"a" < b"c".
    assert R.train_counts({b"ab": 2, b"cd": 3}, 1000) == [(C, D, 256, 3), (A, B, 257, 2)]


def test_min_frequency_stops_training() -> None:
    # (a,b)=3 is merged; then only (c,d)=1 is left, below 2.
    assert R.train_counts({b"ab": 3, b"cd": 1}, 1000) == [(A, B, 256, 3)]
    assert R.train_counts({b"ab": 3, b"cd": 1}, 1000, min_frequency=4) == []
    assert R.train_counts({b"ab": 3, b"cd": 1}, 1000, min_frequency=1) == [
        (A, B, 256, 3),
        (C, D, 257, 1),
    ]


def test_vocab_size_counts_special_tokens() -> None:
    words = {b"ab": 3, b"cd": 2}
    # 256 bytes + 1 merge + 1 special = 258.
    assert R.train_counts(words, 258, special_tokens=["<s>"]) == [(A, B, 256, 3)]
    assert R.train_counts(words, 258) == [(A, B, 256, 3), (C, D, 257, 2)]
    assert R.train_counts(words, 256) == []
    with pytest.raises(ValueError):
        R.train_counts(words, 256, special_tokens=["<s>"])


def test_no_pairs_left_stops_training() -> None:
    assert R.train_counts({b"a": 100, b"b": 7}, 1000) == []
    assert R.train_counts({}, 1000) == []


def test_str_keys_and_zero_counts() -> None:
    # "é" is C3 A9 in UTF-8; the str and bytes keys are the same word; zero counts vanish.
    assert R.train_counts({"é": 1, "é".encode(): 1, b"xy": 0}, 1000) == [(0xC3, 0xA9, 256, 2)]


def test_counts_are_exact_beyond_64_bits() -> None:
    big = 2**64 + 3
    assert R.train_counts({b"aaa": big}, 257) == [(A, A, 256, 2 * big)]


def test_no_duplicate_tokens_in_runs() -> None:
    # Runs of one letter are where "aaa" = aa+a = a+aa could clash. Worked by hand:
    # words "aaa"x1, "aaaaaa"x1 (3 and 6 a's).
    # 1: (a,a) = 2 + 5 = 7          -> [aa, a], [aa, aa, aa]
    # 2: (aa,aa) = 2, (aa,a) = 1    -> (aa, aa) = aaaa: [aa, a], [aaaa, aa]
    # 3: (aa,a) = 1, (aaaa,aa) = 1  -> tie, b"aa" < b"aaaa": aaa; then (aaaa, aa).
    assert R.train_counts({b"aaa": 1, b"aaaaaa": 1}, 1000, min_frequency=1) == [
        (A, A, 256, 7),
        (256, 256, 257, 2),
        (256, A, 258, 1),
        (257, 256, 259, 1),
    ]


def test_duplicate_tokens_never_arise() -> None:
    """The "reuse an existing token" rule (contract item 3) is unreachable in practice.

    Why: a merge never crosses a token boundary, so a stretch of bytes that is exactly
    covered by tokens in a word evolves like the word made of those bytes alone. Two
    stretches with the same bytes are therefore always split the same way, and once
    "aaa" exists no word can still hold [a, aa] or [aa, a]. An exhaustive search over
    129,240 two-word corpora (words of 2-5 letters over "abc") found no duplicate; this
    runs a smaller exhaustive search as a guard. The oracle still implements the rule.
    """
    words = [bytes(w) for n in range(2, 6) for w in itertools.product(b"ab", repeat=n)]
    for first, second in itertools.combinations(words, 2):
        merges = R.train_counts({first: 1, second: 2}, 10**6, min_frequency=1)
        new_ids = [token_id for _, _, token_id, _ in merges]
        assert new_ids == list(range(256, 256 + len(merges))), (first, second, merges)


def test_warm_start_reuses_the_id_of_an_unreachable_token() -> None:
    # The start: the 256 bytes, "abc" at 256 (no "ab" or "bc": unreachable by merging),
    # and a hole at 257 for a special token. Segmenting by the start's ranks: "abc" is a
    # token, so that word is [abc]; "abcd" and "xabc" hold no token pair: bytes.
    #   words [abc] x5, [a, b, c, d] x2, [x, a, b, c] x1
    # 1: (a,b) = 3 and (b,c) = 3 tie; b"a" < b"b": "ab", the next free id, 258 (257 is
    #    reserved)                   -> [ab, c, d] x2, [x, ab, c] x1
    # 2: (ab,c) = 3: its bytes "abc" already are token 256, which it reuses (no new id)
    #                                -> [abc, d] x2, [x, abc] x1
    # 3: (abc,d) = 2: "abcd" = 259. Then (x, abc) = 1 is below min_frequency.
    start = [bytes([i]) for i in range(256)] + [b"abc", b""]
    words = {b"abc": 5, b"abcd": 2, b"xabc": 1}
    expected = [(A, B, 258, 3), (258, C, 256, 3), (256, D, 259, 2)]
    kw = {"special_tokens": ["<s>"], "start": start, "reserved": [257]}
    assert R.train_counts(words, 1000, **kw) == expected
    # vocab_size counts tokens: 257 + 1 special = 258 at the start; the reuse adds none,
    # so 260 holds all three merges. At 259 the vocabulary is full after "ab": training
    # stops before choosing another pair, even one that would reuse an id.
    assert R.train_counts(words, 260, **kw) == expected
    assert R.train_counts(words, 259, **kw) == expected[:1]
    # Without the hole, new ids are 257 and 258.
    assert R.train_counts(words, 1000, start=start[:257]) == [
        (A, B, 257, 3),
        (257, C, 256, 3),
        (256, D, 258, 2),
    ]


def test_warm_start_segments_words_by_rank() -> None:
    # Start: "bc" (256) before "ab" (257). "abcd" segments as a, bc, d (the lower rank
    # first), so (a, b) never occurs: (a,bc) = 3 and (bc,d) = 3 tie, b"a" < b"bc" ->
    # "abc" = 258; then (abc,d) = 3 -> "abcd" = 259.
    start = [bytes([i]) for i in range(256)] + [b"bc", b"ab"]
    assert R.train_counts({b"abcd": 3}, 1000, start=start) == [
        (A, 256, 258, 3),
        (258, D, 259, 3),
    ]


def test_train_pretokenizes_documents() -> None:
    # cl100k: "ab ab ab" -> "ab", " ab", " ab". Pairs: (a,b)=3, (space,a)=2.
    assert R.train(["ab ab ab"], 1000) == [(A, B, 256, 3), (SP, 256, 257, 2)]


def test_special_tokens_are_not_counted() -> None:
    # "<s>" would give (<, s) and (s, >) twice each if it were text.
    merges = R.train(["ab<s>ab<s>"], 1000, special_tokens=["<s>"])
    assert merges == [(A, B, 256, 2)]
    # The special token takes the next id after the merged tokens, in the vocab size.
    assert R.train(["ab<s>ab<s>xy xy"], 258, special_tokens=["<s>"]) == [(A, B, 256, 2)]


# --- pretokenization --------------------------------------------------------------------------


def test_max_token_length_cuts_pieces() -> None:
    # ASCII: cut every 3 bytes.
    assert R.cut_piece(b"abcdefgh", 3) == [b"abc", b"def", b"gh"]
    assert R.cut_piece(b"abc", 3) == [b"abc"] and R.cut_piece(b"abc", None) == [b"abc"]
    # "aé€b" = 61 | C3 A9 | E2 82 AC | 62. At 4: the byte after "aé" (E2) starts a
    # character, so the first cut is after 3 bytes; "€b" is 4 bytes and fits.
    assert R.cut_piece("aé€b".encode(), 4) == ["aé".encode(), "€b".encode()]
    # "😀" (F0 9F 98 80) at 2: no character start within reach, so exactly 2 bytes.
    assert R.cut_piece("😀".encode(), 2) == [b"\xf0\x9f", b"\x98\x80"]
    # "😀x" at 3: F0 9F 98 | 80 78.
    assert R.cut_piece("😀x".encode(), 3) == [b"\xf0\x9f\x98", b"\x80x"]
    # Through pretokenize: cl100k pieces "Hello", " world" cut at 4.
    assert R.pretokenize("Hello world", "cl100k", max_token_length=4) == [
        b"Hell",
        b"o",
        b" wor",
        b"ld",
    ]



def test_cl100k_pieces() -> None:
    assert R.pretokenize("Hello world's 12345  \n\n  x", "cl100k") == [
        b"Hello",
        b" world",
        b"'s",
        b" ",
        b"123",
        b"45",
        b"  \n\n",
        b" ",
        b" x",
    ]


def test_gpt2_pieces() -> None:
    assert R.pretokenize("I'm 42!!  ok", "gpt2") == [
        b"I",
        b"'m",
        b" 42",
        b"!!",
        b" ",
        b" ok",
    ]


def test_o200k_pieces() -> None:
    assert R.pretokenize("HelloWorld's 1234", "o200k") == [
        b"Hello",
        b"World's",
        b" ",
        b"123",
        b"4",
    ]


def test_gaps_of_a_custom_pattern_are_pieces() -> None:
    assert R.pretokenize("--ab..cd!", r"[a-z]+") == [b"--", b"ab", b"..", b"cd", b"!"]
    assert R.pretokenize("abc", r"\d+") == [b"abc"]
    assert R.pretokenize("", "cl100k") == []


def test_dollar_is_the_end_of_text_only() -> None:
    # Python's "$" would also match before the final "\n" and make "a" a match.
    assert R.pretokenize("a\n", r"a$") == [b"a\n"]
    assert R.pretokenize("\na", r"a$") == [b"\n", b"a"]
    assert R.pretokenize("a\n", r"a\z") == [b"a\n"]
    # "$" inside a class and escaped stays a literal dollar.
    assert R.pretokenize("$x$", r"[$]") == [b"$", b"x", b"$"]
    assert R.pretokenize("$x$", r"\$x") == [b"$x", b"$"]


def test_oracle_refuses_what_it_does_not_model() -> None:
    with pytest.raises(ValueError):
        R.to_python_pattern(r"(?m)a$")
    with pytest.raises(ValueError):
        R.to_python_pattern(r"[a[b]]")


def test_empty_matches_skip_one_character() -> None:
    # Like fancy-regex's find_iter: after the empty match of x* at 0 the search goes on at
    # 1, so "b" is never matched and the text becomes one gap. (Python's finditer would
    # return "b", "b".)
    assert R.pretokenize("bb", r"x*|b") == [b"bb"]
    assert R.pretokenize("xbxx", r"x*|b") == [b"x", b"b", b"xx"]


def test_anchors_see_only_the_valid_run() -> None:
    # " " before the invalid byte is at the end of its run: \s++$ takes it alone.
    assert R.pretokenize(b"a \xff b", "cl100k") == [b"a", b" ", b"\xff", b" b"]


def test_invalid_bytes_are_one_byte_pieces() -> None:
    assert R.pretokenize(b"ab\xff\xfecd\xe2\x82", "cl100k") == [
        b"ab",
        b"\xff",
        b"\xfe",
        b"cd",
        b"\xe2",
        b"\x82",
    ]
    # A truncated sequence before valid text; an overlong "/" (C0 AF); a UTF-8-encoded
    # surrogate (ED A0 80); a code point above U+10FFFF (F4 90 80 80).
    assert R.pretokenize(b"\xe2\x82x", "cl100k") == [b"\xe2", b"\x82", b"x"]
    assert R.pretokenize(b"\xc0\xaf", "cl100k") == [b"\xc0", b"\xaf"]
    assert R.pretokenize(b"\xed\xa0\x80", "cl100k") == [b"\xed", b"\xa0", b"\x80"]
    assert R.pretokenize(b"\xf4\x90\x80\x80", "cl100k") == [b"\xf4", b"\x90", b"\x80", b"\x80"]
    # Valid multi-byte characters stay whole.
    assert R.pretokenize("é€😀".encode(), r".") == ["é".encode(), "€".encode(), "😀".encode()]


def test_lone_surrogates() -> None:
    with pytest.raises(UnicodeEncodeError):
        R.pretokenize("a\ud800b", "cl100k")
    assert R.pretokenize("a\ud800b", "cl100k", surrogates="surrogatepass") == [
        b"a",
        b"\xed",
        b"\xa0",
        b"\x80",
        b"b",
    ]


def test_special_tokens_split_the_document() -> None:
    assert R.pretokenize("a<|eot|>b<|eot|>", "cl100k", ["<|eot|>"]) == [b"a", b"b"]
    # The split happens before the pattern: " b" would otherwise be one piece.
    assert R.pretokenize(" <s>b", "cl100k", ["<s>"]) == [b" ", b"b"]
    # Longest match wins at one position.
    assert R.pretokenize("1<s>x2", "cl100k", ["<s>", "<s>x"]) == [b"1", b"2"]
    assert R.pretokenize("1<s>x2", "cl100k", ["<s>x", "<s>"]) == [b"1", b"2"]
    # Left to right, without overlap: "aaab" -> "aa" + "ab".
    assert R.pretokenize("aaab", "cl100k", ["aa"]) == [b"ab"]
    # In bytes with invalid UTF-8 too.
    assert R.pretokenize(b"\xff<s>\xfe", "cl100k", ["<s>"]) == [b"\xff", b"\xfe"]


def test_unicodedata_is_not_newer_than_rust() -> None:
    # is_unicode_stable trusts the stdlib's list of assigned code points; on a Python whose
    # Unicode is newer than bytebpe's regex tables it would let new letters through.
    version = tuple(int(part) for part in unicodedata.unidata_version.split(".")[:2])
    assert version <= R.RUST_UNICODE_VERSION, (
        f"unicodedata {unicodedata.unidata_version} is newer than Rust's "
        f"{R.RUST_UNICODE_VERSION}: give is_unicode_stable a fixed list of code points"
    )
    assert R.is_unicode_stable("a") and R.is_unicode_stable("\u4e2d")
    assert not R.is_unicode_stable("\u0378") and not R.is_unicode_stable("\ud800")


def test_builtin_patterns_are_tiktokens(monkeypatch: pytest.MonkeyPatch) -> None:
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    # The constructors would download the ranks; only their pat_str is needed.
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    monkeypatch.setattr(
        openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *args, **kwargs: {}
    )
    assert openai_public.r50k_base()["pat_str"] == R.GPT2_PATTERN
    assert openai_public.cl100k_base()["pat_str"] == R.CL100K_PATTERN
    assert openai_public.o200k_base()["pat_str"] == R.O200K_PATTERN


# --- encoding ---------------------------------------------------------------------------------


def _ranks(*tokens: bytes) -> dict[bytes, int]:
    ranks = {bytes([i]): i for i in range(256)}
    for i, token in enumerate(tokens):
        ranks[token] = 256 + i
    return ranks


def test_encode_piece_that_is_a_token() -> None:
    assert R.encode_piece(_ranks(b"ab", b"bc", b"abc"), b"abc") == [258]


def test_encode_piece_merges_lowest_rank_first() -> None:
    # "abcd" is no token: ab(256) < bc(257) -> [ab, c, d]; abc(258) -> [abc, d].
    assert R.encode_piece(_ranks(b"ab", b"bc", b"abc"), b"abcd") == [258, D]
    # bc has the lower rank here: [a, bc]; "abc" is no token.
    assert R.encode_piece(_ranks(b"bc", b"ab"), b"abc") == [A, 256]


def test_encode_piece_ties_go_leftmost() -> None:
    assert R.encode_piece(_ranks(b"aa"), b"aaa") == [256, A]
    assert R.encode_piece(_ranks(b"aa"), b"aaaaa") == [256, 256, A]


def test_encode_ordinary_and_bytes() -> None:
    ranks = _ranks(b"ab", b" ab")
    # cl100k pieces "ab", " ab", " x"; " x" is no token: [space, x].
    assert R.encode_ordinary(ranks, "cl100k", "ab ab x") == [256, 257, 32, X]
    assert R.encode_bytes(ranks, "cl100k", b"ab\xffab") == [256, 0xFF, 256]


def test_ranks_from_merges() -> None:
    ranks = R.ranks_from_merges([(A, B, 256, 5), (256, C, 257, 2)])
    assert ranks[b"ab"] == 256 and ranks[b"abc"] == 257 and len(ranks) == 258


# --- the memory budget ------------------------------------------------------------------------


def test_prune_drops_below_the_threshold_and_splits_ties_by_bucket() -> None:
    def ten(_: int) -> int:
        return 10

    table = {b"a": 1, b"b": 1, b"c": 2, b"d": 3}  # 40 bytes at 10 a word
    assert R.prune(dict(table), 40, ten) is None
    # Target 25: above count 1 are c and d (20 <= 25), so t = 1; the room left (5) takes
    # no word of count 1.
    kept = dict(table)
    assert R.prune(kept, 25, ten) == R.Pruned(mass=2, covered=2, threshold=1, kept_buckets=
                                              min(R.tie_bucket(b"a"), R.tie_bucket(b"b")))
    assert kept == {b"c": 2, b"d": 3}
    # Target 35: room 15 takes one word of count 1: the one in the lower tie bucket.
    assert R.tie_bucket(b"a") != R.tie_bucket(b"b")
    first = min(b"a", b"b", key=R.tie_bucket)
    kept = dict(table)
    pruned = R.prune(kept, 35, ten)
    assert kept == {first: 1, b"c": 2, b"d": 3}
    assert pruned is not None and (pruned.mass, pruned.threshold) == (1, 1)
    # Target 5: even d alone (10) is too much: t = 3 and nothing is left.
    kept = dict(table)
    assert R.prune(kept, 5, ten) == R.Pruned(mass=7, covered=7, threshold=3,
                                             kept_buckets=R.tie_bucket(b"d"))
    assert kept == {}


def test_budget_estimates_and_limits() -> None:
    # Slot 46; a word over 7 bytes adds 3/2 of (varint length + bytes): 8 -> 14, 127 ->
    # 192, 128 (2-byte varint) -> 195.
    assert R.table_entry_cost(1) == R.table_entry_cost(7) == 46
    assert R.table_entry_cost(8) == 46 + 14 and R.table_entry_cost(127) == 46 + 192
    assert R.table_entry_cost(128) == 46 + 195
    # The loop: arena 20 + 4n, 16 per list entry (n - 1), a pair's 131 bytes (6/5 of them
    # from 3 bytes on); one byte: the warm start's sorted entry + ids, 25 + 32 + 32.
    assert R.merge_entry_cost(2) == 28 + 16 + 131
    assert R.merge_entry_cost(8) == 52 + 7 * 16 + 157
    assert R.merge_entry_cost(1) == 89
    run = R.BudgetRun(64 * R.MIB)  # 16 MiB for the data structures
    assert run.checkpoint_every == 128 * 1024
    assert (run.table_high, run.table_low) == (10 * R.MIB, 6 * R.MIB)
    assert run.merge_bytes == 16 * R.MIB // 10 * 9
