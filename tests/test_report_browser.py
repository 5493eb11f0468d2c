"""The report in a real headless browser: Debian's chromium driven by selenium through
Debian's chromedriver (`make install-browser` installs both; nothing is downloaded at
test time: selenium is pointed at /usr/bin/chromedriver, so its manager never runs).

The page must load with no console error, find a token by text and show its parts, draw
the 256 cells of the byte heatmap with the counts the Python side computed, and colour
a sample whose tokens decode back to the text. A screenshot is kept in tests/artifacts/.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy")
webdriver = pytest.importorskip("selenium.webdriver")

from bytebpe import Tokenizer  # noqa: E402
from bytebpe.report import build_report  # noqa: E402

CHROMIUM = os.environ.get("BYTEBPE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BYTEBPE_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
    pytest.skip(f"no headless browser: {CHROMIUM} and {CHROMEDRIVER} are needed "
                "(run `make install-browser`)", allow_module_level=True)

TEXT = [
    "The report shows which tokens the vocabulary learned and how each was built.\n",
    "def tokenize(text):\n    return [t for t in text.split() if t != '']\n",
    "Привет, мир! 日本語のテキスト。 Ελληνικά 😀\n",
] * 25
BROKEN = [b"valid line\n", b"bad \xff\xfe bytes \xe2\x82 here\n"]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(TEXT, vocab_size=400, progress=False,
                                         special_tokens=["<|endoftext|>"])


@pytest.fixture(scope="module")
def page(tmp_path_factory, tok):
    base = Tokenizer.train_from_iterator(TEXT, vocab_size=300, progress=False)
    report = build_report(tok, eval={"mixed": TEXT, "broken": BROKEN}, baseline=base)
    path = tmp_path_factory.mktemp("report") / "report.html"
    report.save(path)
    return path, report, base


@pytest.fixture(scope="module")
def driver(page):
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    d.set_page_load_timeout(60)
    try:
        d.get(page[0].as_uri())
        deadline = time.monotonic() + 30
        while not d.execute_script("return !!(window.bytebpeReport && "
                                   "(window.bytebpeReport.ready || window.bytebpeReport.errors.length))"):
            assert time.monotonic() < deadline, "the report never finished drawing"
            time.sleep(0.05)
        yield d
    finally:
        d.quit()


def test_loads_without_console_errors(driver):
    errors = driver.execute_script("return window.bytebpeReport.errors")
    assert errors == []
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []
    assert driver.execute_script("return window.bytebpeReport.ready") is True
    for section in ("summary", "explorer", "growth", "fairness", "composition", "health",
                    "loss", "sample"):
        assert driver.find_element("id", section).text.strip(), f"section {section} is empty"
    assert not driver.find_elements("id", "loading")


def test_search_shows_a_tokens_parts(driver, tok):
    from selenium.webdriver.common.keys import Keys

    # A merged token whose parts are merged tokens too: the tree has two levels.
    merges = {m.token: m for m in tok.merges()}
    target = next(t for t in sorted(merges, key=lambda t: -len(tok.token_bytes(t)))
                  if merges[t].left >= 256 and tok.token_bytes(t).isascii()
                  and tok.token_bytes(t).decode().isprintable())
    text = tok.token_bytes(target).decode()
    box = driver.find_element("id", "q")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    shown = driver.find_element("css selector", "#detail").get_attribute("data-t")
    assert int(shown) == target, "the exact match comes first"
    tree = driver.find_element("css selector", "#tree > li > details > ul.tree")
    parts = [int(e.get_attribute("data-t"))
             for e in tree.find_elements("xpath", "./li/*[self::details]/summary/span[@data-t] | ./li/span[@data-t]")]
    assert parts == [merges[target].left, merges[target].right]
    assert f"count {merges[target].count:,}" in driver.find_element("id", "tree").text
    # Clicking a part in the tree opens that part.
    driver.find_element("css selector", f"#tree > li > details > ul.tree > li [data-t='{merges[target].right}']").click()
    assert int(driver.find_element("id", "detail").get_attribute("data-t")) == merges[target].right
    # ... and what was built from its left part lists the target.
    driver.execute_script(f"window.bytebpeReport.select({merges[target].left})")
    made = [int(e.get_attribute("data-t")) for e in driver.find_elements("css selector", "#made [data-t]")]
    assert target in made


def test_search_by_id_and_escaped_bytes(driver, tok):
    driver.execute_script("window.bytebpeReport.search('#300')")
    first = driver.find_element("css selector", "#results [data-t]")
    assert first.get_attribute("data-t") == "300"
    newline_tokens = [t for t in range(256, tok.vocab_size) if b"\n" in tok.token_bytes(t)]
    driver.execute_script("window.bytebpeReport.search('\\\\n')")
    found = {int(e.get_attribute("data-t")) for e in driver.find_elements("css selector", "#results [data-t]")}
    assert set(newline_tokens) <= found and 10 in found


def test_search_finds_special_tokens(driver, tok):
    eot = tok.special_tokens["<|endoftext|>"]
    driver.execute_script("window.bytebpeReport.search('<|endoftext|>')")
    first = driver.find_element("css selector", "#results [data-t]")
    assert int(first.get_attribute("data-t")) == eot
    assert "chip sp" in first.get_attribute("class")
    assert "<|endoftext|>" in driver.find_element("id", "summary").text


def test_heatmap_has_256_cells_with_the_computed_counts(driver, page):
    report = page[1]
    cells = driver.find_elements("css selector", "#heat .heat-cell")
    assert len(cells) == 256
    want = [sum(e["invalid_bytes"][b] + e["split_bytes"][b] for e in report.figures["evals"])
            for b in range(256)]
    got = driver.execute_script(
        "return Array.from(document.querySelectorAll('#heat .heat-cell'), "
        "c => [+c.dataset.byte, +c.dataset.count])")
    assert got == [[b, want[b]] for b in range(256)]
    assert want[0xFF] == 1 and sum(want[:128]) == 0


def test_sample_colouring_decodes_to_the_text(driver, page, tok):
    report, base = page[1], page[2]
    for i, e in enumerate(report.figures["evals"]):
        driver.execute_script(f"window.bytebpeReport.showSample({i})")
        want = bytes.fromhex(e["sample_hex"])
        ids = driver.execute_script(  # one round trip, not one per span
            "return Array.from(document.querySelectorAll('#sample-main [data-t]'), s => +s.dataset.t)")
        assert tok.decode_bytes(ids) == want
        # The page rebuilds each token's bytes from its parts: those join to the text too.
        got = driver.execute_script(
            "return Array.from(document.querySelectorAll('#sample-main [data-t]'), "
            "s => window.bytebpeReport.tokenHex(+s.dataset.t)).join('')")
        assert got == want.hex()
        base_ids = driver.execute_script(
            "return Array.from(document.querySelectorAll('#sample-base [data-bt]'), s => +s.dataset.bt)")
        assert base.decode_bytes(base_ids) == want
        # Colours alternate, so neighbouring tokens never share one.
        classes = driver.execute_script(
            "return Array.from(document.querySelectorAll('#sample-main .tk'), s => s.className)")
        assert all(a != b for a, b in zip(classes, classes[1:]))


def test_hover_shows_id_bytes_and_rank(driver, tok):
    from selenium.webdriver.common.action_chains import ActionChains

    driver.execute_script("window.bytebpeReport.showSample(0)")
    span = next(s for s in driver.find_elements("css selector", "#sample-main [data-t]")
                if int(s.get_attribute("data-t")) >= 256)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", span)
    ActionChains(driver).move_to_element(span).perform()
    tip = driver.find_element("id", "tip")
    t = int(span.get_attribute("data-t"))
    assert tip.is_displayed()
    assert f"id {t}" in tip.text and tok.token_bytes(t).hex() in tip.text
    assert "merge #" in tip.text and f"rank {t}" in tip.text


def test_fairness_table_shows_the_figures(driver, page):
    report = page[1]
    rows = driver.find_elements("css selector", "#fair tr[data-set]")
    assert [r.get_attribute("data-set") for r in rows] == [e["name"] for e in report.figures["evals"]]
    for r, e in zip(rows, report.figures["evals"]):
        assert r.find_element("css selector", ".bpt").text == f"{e['bytes_per_token']:.3f}"
        assert r.find_element("css selector", ".tpw").text == f"{e['tokens_per_word']:.3f}"


def test_screenshot(driver):
    ARTIFACTS.mkdir(exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1280, min(height, 6000))
    path = ARTIFACTS / "report.png"
    assert driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    driver.set_window_size(1280, 1000)


def test_permuted_byte_ids_in_the_page(driver, tok, tmp_path):
    """A tokenizer.json numbering its bytes otherwise (as GPT-2's does): the page's own
    token table still spells the sample exactly. (Runs last: it loads another page.)"""
    import json

    pytest.importorskip("tokenizers")
    tok.save_huggingface(tmp_path / "tokenizer.json")
    doc = json.loads((tmp_path / "tokenizer.json").read_text())
    vocab = doc["model"]["vocab"]
    vocab["t"], vocab["e"] = vocab["e"], vocab["t"]
    (tmp_path / "permuted.json").write_text(json.dumps(doc))
    report = build_report(str(tmp_path / "permuted.json"), eval={"mixed": TEXT})
    path = tmp_path / "permuted.html"
    report.save(path)
    driver.get(path.as_uri())
    deadline = time.monotonic() + 30
    while not driver.execute_script("return !!(window.bytebpeReport && window.bytebpeReport.ready)"):
        assert time.monotonic() < deadline and not driver.execute_script(
            "return window.bytebpeReport && window.bytebpeReport.errors.length")
        time.sleep(0.05)
    got = driver.execute_script(
        "return Array.from(document.querySelectorAll('#sample-main [data-t]'), "
        "s => window.bytebpeReport.tokenHex(+s.dataset.t)).join('')")
    assert got == report.figures["evals"][0]["sample_hex"]
    assert driver.execute_script("return window.bytebpeReport.tokenHex(116)") == b"e".hex()


def test_inline_display_runs_in_its_iframe(driver, page, tmp_path):
    """What Jupyter shows (`_repr_html_`): the page inside an iframe's srcdoc draws itself
    there too. (Loads another page, like the test above.)"""
    report = page[1]
    host = tmp_path / "notebook.html"
    host.write_text("<!DOCTYPE html><html><body><p>cell output:</p>"
                    + report._repr_html_() + "</body></html>", encoding="utf-8")
    driver.get(host.as_uri())
    driver.switch_to.frame(driver.find_element("tag name", "iframe"))
    try:
        deadline = time.monotonic() + 30
        while not driver.execute_script("return !!(window.bytebpeReport && window.bytebpeReport.ready)"):
            assert time.monotonic() < deadline, "the inline report never finished drawing"
            time.sleep(0.05)
        assert driver.execute_script("return window.bytebpeReport.errors") == []
        assert len(driver.find_elements("css selector", "#heat .heat-cell")) == 256
    finally:
        driver.switch_to.default_content()
