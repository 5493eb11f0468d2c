"""The translator between Rust regex syntax (fancy-regex: bytebpe and tiktoken) and
Oniguruma's Ruby syntax (Hugging Face): `to_oniguruma`, `from_oniguruma`, and
`rust_pattern`, which picks the bytebpe pattern for an imported Oniguruma regex.

Possessive intervals (`{1,3}+`, which Oniguruma reads as a repeated interval) become
atomic groups; `$` and `^` (line anchors in Oniguruma, text anchors in Rust) become `\\z`
and `\\A`; escapes whose meaning differs between the engines (`\\w`, `\\b`, ...) are
spelled out; inline flags are renamed. A construct without an equivalent raises
ValueError.
"""

from __future__ import annotations

import re

from bytebpe.patterns import builtin_sources

__all__ = ["from_oniguruma", "rust_pattern", "to_oniguruma"]

_INTERVAL = re.compile(r"\{(\d*)(,(\d*))?\}")


class _Item:
    __slots__ = ("atom", "text")

    def __init__(self, text: str, atom: bool) -> None:
        self.text = text
        self.atom = atom


def _read_escape(p: str, i: int) -> int:
    """End of the escape sequence starting at p[i] == '\\'."""
    if i + 1 >= len(p):
        raise ValueError("the pattern ends with a lone backslash")
    c = p[i + 1]
    if c in "pPxu" and i + 2 < len(p) and p[i + 2] == "{":
        end = p.find("}", i + 3)
        if end < 0:
            raise ValueError(f"unterminated \\{c}{{ at position {i}")
        return end + 1
    if c in "pP":
        return i + 3
    if c == "x":
        return i + 4
    if c == "u":
        return i + 6
    if c == "k" and i + 2 < len(p) and p[i + 2] in "<'":
        end = p.find(">" if p[i + 2] == "<" else "'", i + 3)
        if end < 0:
            raise ValueError(f"unterminated \\k at position {i}")
        return end + 1
    return i + 2


def _read_class(p: str, i: int, target: str) -> int:
    """End of the character class starting at p[i] == '['."""
    j = i + 1
    depth = 1
    first = True
    while j < len(p):
        c = p[j]
        if first and c == "^":
            j += 1
            if j < len(p) and p[j] == "]":
                j += 1
            first = False
            continue
        if first and c == "]":
            j += 1
            first = False
            continue
        first = False
        if c == "\\":
            j = _read_escape(p, j)
        elif c == "[":
            if p.startswith("[:", j):
                end = p.find(":]", j + 2)
                if end < 0:
                    raise ValueError(f"unterminated POSIX class at position {j}")
                j = end + 2
            else:
                depth += 1
                j += 1
                first = True
        elif c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
        else:
            if target == "oniguruma" and p.startswith(("--", "~~"), j):
                raise ValueError(
                    f"the class set operation {p[j:j + 2]!r} at position {j} has no "
                    "Oniguruma equivalent"
                )
            j += 1
    raise ValueError(f"unterminated character class at position {i}")


# Rust's \\w is Alphabetic + M + Nd + Pc + Join_Control; Oniguruma's is L + M + Nd + Pc.
_RUST_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
_ONIG_WORD = r"\p{L}\p{M}\p{Nd}\p{Pc}"


def _word_escapes(word: str) -> tuple[dict[str, str], dict[str, str]]:
    """(escape -> replacement outside a class, escape -> replacement inside a class)."""
    w, nw = f"[{word}]", f"[^{word}]"
    return (
        {"\\w": w, "\\W": nw,
         "\\b": f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))",
         "\\B": f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"},
        {"\\w": word, "\\W": nw},
    )


_ESCAPES = {
    # Escapes whose meaning differs between the engines, per target.
    "oniguruma": _word_escapes(_RUST_WORD),
    "rust": (
        {**_word_escapes(_ONIG_WORD)[0], "\\h": "[0-9a-fA-F]", "\\H": "[^0-9a-fA-F]",
         "\\Z": "(?=\\n?\\z)"},
        {**_word_escapes(_ONIG_WORD)[1], "\\h": "0-9a-fA-F", "\\H": "[^0-9a-fA-F]"},
    ),
}


def _rewrite_class(text: str, target: str) -> str:
    """A character class with the escapes that differ between the engines replaced."""
    table = _ESCAPES[target][1]
    out = []
    j = 0
    while j < len(text):
        if text[j] == "\\":
            end = _read_escape(text, j)
            out.append(table.get(text[j:end], text[j:end]))
            j = end
        else:
            out.append(text[j])
            j += 1
    return "".join(out)


def _translate(p: str, target: str) -> str:
    """Translates between Rust regex syntax (fancy-regex, bytebpe and tiktoken) and
    Oniguruma's Ruby syntax (Hugging Face). `target` is "oniguruma" or "rust"."""
    to_onig = target == "oniguruma"
    stack: list[list[_Item]] = [[]]
    openers: list[str] = []
    # Per open group: whether Rust's multi-line flag is on (then ^ and $ are line anchors,
    # as Oniguruma's always are).
    multiline = [False]
    i = 0
    n = len(p)
    while i < n:
        cur = stack[-1]
        c = p[i]
        if c == "\\":
            end = _read_escape(p, i)
            cur.append(_Item(_ESCAPES[target][0].get(p[i:end], p[i:end]), True))
            i = end
        elif c == "[":
            end = _read_class(p, i, target)
            cur.append(_Item(_rewrite_class(p[i:end], target), True))
            i = end
        elif c == "(":
            if p.startswith("(?#", i):
                end = p.find(")", i)
                if end < 0:
                    raise ValueError(f"unterminated comment at position {i}")
                i = end + 1
                continue
            if p.startswith("(?P=", i):
                end = p.find(")", i)
                if end < 0:
                    raise ValueError(f"unterminated backreference at position {i}")
                cur.append(_Item(f"\\k<{p[i + 4:end]}>", True))
                i = end + 1
                continue
            opener = None
            for prefix in ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"):
                if p.startswith(prefix, i):
                    opener = prefix
                    break
            if opener is None and p.startswith(("(?P<", "(?<"), i):
                start = i + (4 if p[i + 2] == "P" else 3)
                end = p.find(">", start)
                if end < 0:
                    raise ValueError(f"unterminated group name at position {i}")
                opener = f"(?<{p[start:end]}>"
                i = end + 1 - len(opener)  # so that i += len(opener) lands after '>'
            elif opener is None and p.startswith("(?", i):
                m = re.compile(r"\(\?([A-Za-z-]*)([:)])").match(p, i)
                if m is None:
                    raise ValueError(f"unsupported group syntax at position {i}")
                flags, lines = _translate_flags(m.group(1), target)
                if m.group(2) == ")":
                    if cur and cur[-1].text != "|":
                        raise ValueError(
                            f"the inline flag group {m.group(0)!r} at position {i} is not at "
                            "the start of a group or alternative; the engines scope it "
                            "differently, "
                            f"write (?{m.group(1)}:...) instead"
                        )
                    if flags:
                        cur.append(_Item(f"(?{flags})", False))
                    if lines is not None:
                        multiline[-1] = lines
                    i = m.end()
                    continue
                opener = f"(?{flags}:"
                openers.append(opener)
                stack.append([])
                multiline.append(multiline[-1] if lines is None else lines)
                i = m.end()
                continue
            elif opener is None:
                opener = "("
            openers.append(opener)
            stack.append([])
            multiline.append(multiline[-1])
            i += len(opener)
        elif c == ")":
            if not openers:
                raise ValueError(f"unbalanced ')' at position {i}")
            inner = "".join(item.text for item in stack.pop())
            multiline.pop()
            stack[-1].append(_Item(openers.pop() + inner + ")", True))
            i += 1
        elif c == "|":
            cur.append(_Item("|", False))
            i += 1
        elif c in "*+?" or (c == "{" and _INTERVAL.match(p, i)):
            if not cur or not cur[-1].atom:
                raise ValueError(f"quantifier {c!r} at position {i} follows nothing")
            if c == "{":
                m = _INTERVAL.match(p, i)
                assert m is not None
                low, comma, high = m.group(1), m.group(2), m.group(3)
                quant = "{" + (low or "0") + ("," + (high or "") if comma else "") + "}"
                if not to_onig and not comma and not low:
                    raise ValueError(f"empty repetition '{{}}' at position {i}")
                i = m.end()
            else:
                quant = c
                i += 1
            modifier = p[i] if i < n and p[i] in "?+" else ""
            i += len(modifier)
            atom = cur[-1].text
            if c == "{" and modifier == "+":
                # Possessive interval in Rust; in Oniguruma `{n,m}+` repeats the interval.
                if to_onig:
                    cur[-1] = _Item(f"(?>{atom}{quant})", True)
                else:
                    cur[-1] = _Item(f"(?:{atom}{quant})+", True)
            else:
                cur[-1] = _Item(atom + quant + modifier, True)
        elif c in "^$":
            if not to_onig:
                text = f"(?m:{c})"  # Oniguruma's ^ and $ are line anchors
            elif multiline[-1]:
                text = c
            else:
                text = "\\A" if c == "^" else "\\z"
            cur.append(_Item(text, True))
            i += 1
        else:
            cur.append(_Item(c, True))
            i += 1
    if openers:
        raise ValueError("unbalanced '(': a group is not closed")
    return "".join(item.text for item in stack[0])


def _translate_flags(flags: str, target: str) -> tuple[str, bool | None]:
    """(the flags for the target engine, Rust's multi-line flag if set or cleared)."""
    out = []
    lines = None
    on = True
    for f in flags:
        if f == "-":
            on = False
            out.append(f)
        elif f in "ix":
            out.append(f)
        elif target == "oniguruma" and f == "s":
            out.append("m")  # dot matches newline: Rust `s` is Oniguruma (Ruby) `m`
        elif target == "oniguruma" and f == "m":
            lines = on  # handled by the ^/$ translation
        elif target == "rust" and f == "m":
            out.append("s")
        else:
            raise ValueError(f"the inline flag {f!r} has no equivalent in the other engine")
    return "".join(out).rstrip("-"), lines


def _untranslate(onig: str) -> str:
    """Undoes `to_oniguruma`'s rewrites textually (a guess, checked by the caller)."""
    w = _RUST_WORD
    s = onig.replace(f"(?:(?<=[{w}])(?![{w}])|(?<![{w}])(?=[{w}]))", "\\b")
    s = s.replace(f"(?:(?<=[{w}])(?=[{w}])|(?<![{w}])(?![{w}]))", "\\B")
    s = s.replace(f"[^{w}]", "\\W").replace(f"[{w}]", "\\w").replace(w, "\\w")
    atom = r"\\p\{[^}]*\}|\\.|\[(?:[^\]\\]|\\.)*\]|[^\\()\[]"
    s = re.sub(rf"\(\?>({atom})(\{{\d+(?:,\d*)?\}})\)", r"\1\2+", s)
    return s.replace("\\z", "$").replace("\\A", "^")


def rust_pattern(onig: str) -> str:
    """The bytebpe pattern for a Hugging Face Split regex: a built-in when the regex is
    bytebpe's export of one, else bytebpe's own pattern when the regex is its export,
    else the general translation."""
    for pattern in builtin_sources():
        if to_oniguruma(pattern) == onig:
            return pattern
    candidate = _untranslate(onig)
    try:
        if to_oniguruma(candidate) == onig:
            return candidate
    except ValueError:
        pass
    return from_oniguruma(onig)


def to_oniguruma(pattern: str) -> str:
    """bytebpe's pattern (Rust regex syntax) in Oniguruma's syntax, same matches."""
    try:
        return _translate(pattern, "oniguruma")
    except ValueError as e:
        raise ValueError(
            f"cannot export the pattern {pattern!r} to Hugging Face (Oniguruma): {e}"
        ) from None


def from_oniguruma(pattern: str) -> str:
    """A Hugging Face (Oniguruma) pattern in bytebpe's Rust regex syntax."""
    try:
        return _translate(pattern, "rust")
    except ValueError as e:
        raise ValueError(f"cannot import the Hugging Face pattern {pattern!r}: {e}") from None
