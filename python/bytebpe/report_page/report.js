// The bytebpe report page: unpacks the data embedded in this file and draws every
// section (plain DOM and SVG, no libraries, nothing fetched).
"use strict";
(function () {
  const R = (window.bytebpeReport = { ready: false, errors: [] });
  window.addEventListener("error", (e) => R.errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => R.errors.push(String(e.reason)));

  // ---------------------------------------------------------------- unpacking
  async function inflate(b64) {
    const bin = atob(b64);
    const packed = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) packed[i] = bin.charCodeAt(i);
    const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  function varints(bytes, shift) {
    const out = [];
    let v = 0, mul = 1;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      v += (b & 0x7f) * mul;
      if (b & 0x80) mul *= 128;
      else { out.push(v - shift); v = 0; mul = 1; }
    }
    return out;
  }

  async function load() {
    const blob = await inflate(document.getElementById("bytebpe-data").textContent.trim());
    const n = new DataView(blob.buffer, blob.byteOffset).getUint32(0, true);
    const head = JSON.parse(new TextDecoder().decode(blob.subarray(4, 4 + n)));
    const body = blob.subarray(4 + n);
    const cols = {};
    for (const [name, [off, len, shift]] of Object.entries(head.columns)) {
      const part = body.subarray(off, off + len);
      cols[name] = shift === null ? part : varints(part, shift);
    }
    return [head, cols];
  }

  // ---------------------------------------------------------------- helpers
  const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toLocaleString("en-US"));
  const fix = (x, d = 2) => (x === null || x === undefined || !isFinite(x) ? "–" : Number(x).toFixed(d));
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const hex2 = (b) => b.toString(16).toUpperCase().padStart(2, "0");
  const el = (id) => document.getElementById(id);
  const fatal = new TextDecoder("utf-8", { fatal: true });
  const hexToBytes = (h) => { const o = new Uint8Array(h.length / 2); for (let i = 0; i < o.length; i++) o[i] = parseInt(h.substr(2 * i, 2), 16); return o; };
  const bytesToHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const sum = (a) => a.reduce((s, x) => s + x, 0);

  function visChar(ch) {
    switch (ch) {
      case " ": return '<span class="ws">·</span>';
      case "\n": return '<span class="ws">↵</span>';
      case "\t": return '<span class="ws">→</span>';
      case "\r": return '<span class="ws">␍</span>';
    }
    const cp = ch.codePointAt(0);
    if (cp < 0x20 || cp === 0x7f) return '<span class="bx">\\x' + hex2(cp) + "</span>";
    if (/\s/u.test(ch) || (cp >= 0x200b && cp <= 0x200f) || cp === 0xfeff)
      return '<span class="bx">\\u' + cp.toString(16).toUpperCase().padStart(4, "0") + "</span>";
    return esc(ch);
  }

  // Splits bytes into valid characters and stray bytes: [[isChar, text or byte], ...].
  function utf8Units(b) {
    const out = [];
    let i = 0;
    while (i < b.length) {
      const c = b[i];
      const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      let ch = null;
      if (n === 1) ch = String.fromCharCode(c);
      else if (n > 1 && i + n <= b.length) {
        try { ch = fatal.decode(b.subarray(i, i + n)); } catch (e) { ch = null; }
      }
      if (ch === null) { out.push([false, c]); i += 1; } else { out.push([true, ch]); i += n; }
    }
    return out;
  }

  // A token drawn with visible whitespace and escaped bytes (HTML).
  function vis(b) {
    return utf8Units(b).map(([ok, x]) => (ok ? visChar(x) : '<span class="bx">\\x' + hex2(x) + "</span>")).join("");
  }

  // Running text: characters as they are (newlines marked), stray bytes escaped.
  function visText(b) {
    return utf8Units(b).map(([ok, x]) => {
      if (!ok) return '<span class="bx">\\x' + hex2(x) + "</span>";
      if (x === "\n") return '<span class="ws">↵</span>\n';
      if (x === "\t" || x === " ") return x;
      return visChar(x);
    }).join("");
  }

  // ---------------------------------------------------------------- the vocabulary
  let D, C, N, tokenCache, children, usageTotal, special;

  function setup(head, cols) {
    D = head; C = cols;
    N = C.left.length;
    tokenCache = new Array(N);
    special = new Map(D.summary.special_tokens.map(([text, id]) => [id, new TextEncoder().encode(text)]));
    const ex = C.explicit_ids, lens = C.explicit_lens;
    let off = 0;
    for (let k = 0; k < ex.length; k++) { tokenCache[ex[k]] = C.explicit_bytes.subarray(off, off + lens[k]); off += lens[k]; }
    children = Array.from({ length: N }, () => []);
    for (let t = 0; t < N; t++) {
      if (C.left[t] >= 0) { children[C.left[t]].push(t); if (C.right[t] !== C.left[t]) children[C.right[t]].push(t); }
    }
    usageTotal = new Array(N).fill(0);
    D.evals.forEach((e, i) => { const u = C["usage_" + i]; for (let t = 0; t < N; t++) usageTotal[t] += u[t]; });
  }

  const building = new Set();
  function tokenBytes(t) {
    if (t >= N || t < 0) return special.get(t) || new Uint8Array(0);
    let b = tokenCache[t];
    if (b) return b;
    if (t < 256) return Uint8Array.of(t);
    if (C.left[t] < 0 || building.has(t)) return special.get(t) || new Uint8Array(0);
    building.add(t);
    const l = tokenBytes(C.left[t]), r = tokenBytes(C.right[t]);
    building.delete(t);
    b = new Uint8Array(l.length + r.length);
    b.set(l); b.set(r, l.length);
    tokenCache[t] = b;
    return b;
  }
  R.tokenHex = (t) => bytesToHex(tokenBytes(t));

  function chip(t, extra = "") {
    const cls = special.has(t) && t >= N ? "chip sp" : "chip";
    return `<span class="${cls}" data-t="${t}">${vis(tokenBytes(t))}</span>${extra}`;
  }
  const chips = (ids, limit) => ids.slice(0, limit).map((t) => chip(t)).join("") + (ids.length > limit ? ` <span class="note">… and ${fmt(ids.length - limit)} more</span>` : "");

  // ---------------------------------------------------------------- charts (SVG)
  function ticksLog(lo, hi) {
    const out = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      for (const m of [1, 2, 5]) { const v = m * 10 ** e; if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v); }
    }
    return out.length >= 2 ? out : [lo, hi];
  }
  function ticksLin(lo, hi) {
    const span = hi - lo || 1, step0 = span / 5, mag = 10 ** Math.floor(Math.log10(step0));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= 6);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
    return out;
  }
  const short = (v) => (v >= 1e9 ? fix(v / 1e9, v % 1e9 ? 1 : 0) + "G" : v >= 1e6 ? fix(v / 1e6, v % 1e6 ? 1 : 0) + "M" : v >= 1e3 ? fix(v / 1e3, v % 1e3 ? 1 : 0) + "k" : String(+v.toFixed(2)));
  const PALETTE = ["#2f6fdf", "#e07b24", "#1f9d55", "#c2379b", "#8a6d00", "#0e8fa8", "#6b4fd8", "#b33a3a"];

  function lineChart(o) {
    const W = o.width || 560, H = o.height || 300, m = { l: 58, r: 14, t: 14, b: 42 };
    const xs = o.series.flatMap((s) => s.xs), ys = o.series.flatMap((s) => s.ys).filter((y) => !o.logY || y > 0);
    if (!xs.length || !ys.length) return '<p class="note">Nothing to draw.</p>';
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (!o.logY && o.zeroY) y0 = Math.min(0, y0);
    if (x0 === x1) x1 = x0 + 1;
    if (y0 === y1) { y1 = y0 * 1.1 + 1; }
    const fx = o.logX ? (x) => (Math.log(x) - Math.log(x0)) / (Math.log(x1) - Math.log(x0)) : (x) => (x - x0) / (x1 - x0);
    const fy = o.logY ? (y) => (Math.log(y) - Math.log(y0)) / (Math.log(y1) - Math.log(y0)) : (y) => (y - y0) / (y1 - y0);
    const px = (x) => m.l + fx(x) * (W - m.l - m.r), py = (y) => H - m.b - fy(y) * (H - m.t - m.b);
    let s = `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(o.label || "")}">`;
    for (const v of o.logX ? ticksLog(x0, x1) : ticksLin(x0, x1)) {
      s += `<line class="grid" x1="${px(v)}" x2="${px(v)}" y1="${m.t}" y2="${H - m.b}"/><text x="${px(v)}" y="${H - m.b + 14}" text-anchor="middle">${short(v)}</text>`;
    }
    for (const v of o.logY ? ticksLog(y0, y1) : ticksLin(y0, y1)) {
      s += `<line class="grid" x1="${m.l}" x2="${W - m.r}" y1="${py(v)}" y2="${py(v)}"/><text x="${m.l - 6}" y="${py(v) + 4}" text-anchor="end">${short(v)}</text>`;
    }
    s += `<line class="axis" x1="${m.l}" x2="${W - m.r}" y1="${H - m.b}" y2="${H - m.b}"/><line class="axis" x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${H - m.b}"/>`;
    s += `<text class="title" x="${(W + m.l) / 2}" y="${H - 6}" text-anchor="middle">${esc(o.xLabel)}</text>`;
    s += `<text class="title" transform="translate(13 ${(H - m.b) / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`;
    o.series.forEach((ser, i) => {
      const pts = ser.xs.map((x, k) => [x, ser.ys[k]]).filter(([x, y]) => (!o.logX || x > 0) && (!o.logY || y > 0));
      const d = pts.map(([x, y], k) => (k ? "L" : "M") + px(x).toFixed(1) + " " + py(y).toFixed(1)).join("");
      s += `<path d="${d}" fill="none" stroke="${ser.color || PALETTE[i % PALETTE.length]}" stroke-width="1.8"><title>${esc(ser.name)}</title></path>`;
    });
    s += "</svg>";
    if (o.series.length > 1 || o.legend) {
      s += '<div class="legend">' + o.series.map((ser, i) => `<span><i style="background:${ser.color || PALETTE[i % PALETTE.length]}"></i>${esc(ser.name)}</span>`).join("") + "</div>";
    }
    return s;
  }

  function barChart(labels, values, o = {}) {
    const W = o.width || 560, H = o.height || 220, m = { l: 50, r: 10, t: 10, b: 36 };
    const max = Math.max(1, ...values), bw = (W - m.l - m.r) / values.length;
    let s = `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(o.label || "")}">`;
    for (const v of ticksLin(0, max)) {
      const y = H - m.b - (v / max) * (H - m.t - m.b);
      s += `<line class="grid" x1="${m.l}" x2="${W - m.r}" y1="${y}" y2="${y}"/><text x="${m.l - 6}" y="${y + 4}" text-anchor="end">${short(v)}</text>`;
    }
    const every = Math.ceil(values.length / 24);
    values.forEach((v, i) => {
      const h = (v / max) * (H - m.t - m.b), x = m.l + i * bw;
      s += `<rect x="${x + 1}" y="${H - m.b - h}" width="${Math.max(1, bw - 2)}" height="${h}" fill="#2f6fdf" opacity="0.75"><title>${esc(labels[i])}: ${fmt(v)}</title></rect>`;
      if (i % every === 0) s += `<text x="${x + bw / 2}" y="${H - m.b + 13}" text-anchor="middle">${esc(labels[i])}</text>`;
    });
    s += `<line class="axis" x1="${m.l}" x2="${W - m.r}" y1="${H - m.b}" y2="${H - m.b}"/>`;
    if (o.xLabel) s += `<text class="title" x="${(W + m.l) / 2}" y="${H - 4}" text-anchor="middle">${esc(o.xLabel)}</text>`;
    return s + "</svg>";
  }

  const bar = (v, max, w = 160) => `<span class="bar" style="width:${max ? Math.max(1, (w * v) / max) : 0}px"></span>`;

  // ---------------------------------------------------------------- sections
  function summary() {
    const S = D.summary, o = S.origin || {}, L = (S.ledger && S.ledger.training) || null;
    const cards = [
      ["vocabulary size", fmt(S.vocab_size)], ["merged tokens", fmt(S.merged)],
      ["special tokens", fmt(S.special_tokens.length)], ["pattern", S.pattern_name || "custom"],
    ];
    if (L) cards.push(["training documents", fmt(L.documents)], ["training bytes", fmt(L.bytes)]);
    if (o.merge_seconds !== undefined) cards.push(["merge loop", fix(o.merge_seconds, 1) + " s"]);
    cards.push(["eval sets", fmt(D.evals.length)]);
    let h = `<h2>Summary</h2><p class="note">Generated ${esc(D.generated)} by bytebpe ${esc(D.bytebpe_version)}.</p>`;
    h += '<div class="cards">' + cards.map(([k, v]) => `<div class="card"><div class="v">${esc(v)}</div><div class="k">${esc(k)}</div></div>`).join("") + "</div>";
    const rows = [["source", `${esc(o.kind || "")}${o.path ? ": <code>" + esc(o.path) + "</code>" : o.name ? ": " + esc(o.name) : ""}`]];
    if (o.file_bytes !== undefined) rows.push(["file", `${fmt(o.file_bytes)} bytes, modified ${esc(o.modified)}`]);
    rows.push(["pattern", `<pre class="pattern">${esc(S.pattern)}</pre>`]);
    rows.push(["special tokens", S.special_tokens.length ? S.special_tokens.map(([t, i]) => `<code>${esc(t)}</code> = ${i}`).join(", ") : "none"]);
    rows.push(["merge log", S.has_counts ? `${fmt(S.merges_logged)} merges with their counts${S.duplicate_merges ? `, of which ${fmt(S.duplicate_merges)} reached an existing token (no new id)` : ""}` : "none (an imported vocabulary): parts below are found by merging each token's bytes"]);
    if (S.derived_parts && S.has_counts) rows.push(["parts derived", `${fmt(S.derived_parts)} tokens without a merge in the log (a base vocabulary); their parts are found by merging`]);
    if (o.kind === "run store") {
      rows.push(["run", `${o.complete ? "complete" : "<b>in progress or stopped</b> (a prefix of the run)"}; counting ${o.counting.finished ? "finished" : "not finished"}: ${fmt(o.counting.documents)} documents, ${fmt(o.counting.bytes)} bytes`]);
      rows.push(["settings", Object.entries(o.settings).map(([k, v]) => `${esc(k)} = <code>${esc(v)}</code>`).join(", ")]);
      if (o.first_merge) rows.push(["merging", `first merge committed ${esc(o.first_merge)}, last ${esc(o.last_merge)} (${fix(o.merge_seconds, 1)} s)`]);
    }
    if (L) {
      const inv = sum(Object.values(L.invalid_utf8_bytes || {}));
      const lossy = inv + (L.lone_surrogates || 0) + (L.unmatched_bytes || 0) + (L.pieces_cut || 0) + (L.dropped_word_mass || 0) + sum(Object.values(L.rejected_items || {}));
      rows.push(["loss ledger", lossy ? `<span class="badc">not clean</span>: invalid UTF-8 ${fmt(inv)} bytes, lone surrogates ${fmt(L.lone_surrogates)}, unmatched ${fmt(L.unmatched_bytes)} bytes, pieces cut ${fmt(L.pieces_cut)}, dropped word mass ${fmt(L.dropped_word_mass)} (${fmt(L.dropped_bytes)} bytes) — see Loss` : '<span class="good">clean</span>: nothing lost or altered']);
    } else rows.push(["loss ledger", "not recorded (imported tokenizer or older file)"]);
    h += "<table>" + rows.map(([k, v]) => `<tr><th>${k}</th><td>${v}</td></tr>`).join("") + "</table>";
    if (D.baseline) {
      const B = D.baseline, bo = B.origin || {};
      h += `<p>Compared with the baseline <b>${esc(bo.path || bo.name || bo.kind || "")}</b> (${fmt(B.vocab_size)} tokens, pattern ${esc(B.pattern_name || "custom")}).</p>`;
    }
    el("summary").innerHTML = h;
  }

  function explorer() {
    el("explorer").innerHTML = `<h2>Merge tree explorer</h2>
      <p class="note">Search by text (a leading space counts; ␣ also means a space), by escaped bytes (<code>\\xe2\\x80</code>, <code>\\n</code>, <code>\\t</code>) or by id (<code>#1234</code>). Whitespace is drawn visible: · space, ↵ newline, → tab; <span class="bx">\\xNN</span> is a byte that is not a whole character.</p>
      <input type="search" id="q" placeholder="search a token: the, \\n\\n, #300" autocomplete="off" spellcheck="false">
      <div id="results" class="chips"></div><div id="detail" class="detail"></div>`;
    const q = el("q");
    let timer = 0;  // a large vocabulary takes a moment to scan: wait for a pause in typing
    q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => search(q.value), N > 50000 ? 150 : 0); });
    q.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      clearTimeout(timer);
      search(q.value);
      const first = el("results").querySelector("[data-t]");
      if (first) select(+first.dataset.t);
    });
    // Start on the longest of the first tokens used most on the eval sets, or the last merge.
    let start = N - 1, best = -1;
    for (let t = 0; t < N; t++) if (usageTotal[t] * tokenBytes(t).length > best) { best = usageTotal[t] * tokenBytes(t).length; start = t; }
    if (N > 256) select(start);
  }

  function parseQuery(s) {
    s = s.replace(/␣/g, " ");
    if (/^#\d+$/.test(s.trim())) return { id: +s.trim().slice(1) };
    const out = { bytes: null, id: /^\d+$/.test(s) ? +s : null };
    if (s.includes("\\")) {
      const bytes = [];
      for (let i = 0; i < s.length; i++) {
        const c = s[i];
        if (c === "\\" && i + 1 < s.length) {
          const n = s[i + 1];
          if (n === "x" && /^[0-9a-fA-F]{2}$/.test(s.substr(i + 2, 2))) { bytes.push(parseInt(s.substr(i + 2, 2), 16)); i += 3; continue; }
          if (n === "u" && /^[0-9a-fA-F]{4}$/.test(s.substr(i + 2, 4))) { bytes.push(...new TextEncoder().encode(String.fromCodePoint(parseInt(s.substr(i + 2, 4), 16)))); i += 5; continue; }
          const simple = { n: 10, t: 9, r: 13, s: 32, "\\": 92, "0": 0 }[n];
          if (simple !== undefined) { bytes.push(simple); i += 1; continue; }
        }
        bytes.push(...new TextEncoder().encode(c));
      }
      out.bytes = Uint8Array.from(bytes);
    } else out.bytes = new TextEncoder().encode(s);
    return out;
  }

  function indexOf(hay, needle) {
    outer: for (let i = 0; i + needle.length <= hay.length; i++) {
      for (let k = 0; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
      return i;
    }
    return -1;
  }

  function search(s) {
    const box = el("results");
    if (!s) { box.innerHTML = ""; return; }
    const q = parseQuery(s), found = [];
    if (q.id !== null && q.id !== undefined && (q.id < N || special.has(q.id))) found.push([-1, 0, q.id]);
    if (q.bytes && q.bytes.length) {
      for (let t = 0; t < N; t++) {
        const b = tokenBytes(t), at = indexOf(b, q.bytes);
        if (at < 0) continue;
        const rank = b.length === q.bytes.length ? 0 : at === 0 ? 1 : 2;
        found.push([rank, b.length, t]);
      }
      for (const [t, b] of special) if (t >= N && indexOf(b, q.bytes) >= 0) found.push([b.length === q.bytes.length ? 0 : 2, b.length, t]);
    }
    found.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    const seen = new Set(), ids = [];
    for (const [, , t] of found) if (!seen.has(t)) { seen.add(t); ids.push(t); }
    box.innerHTML = ids.length ? `<span class="note">${fmt(ids.length)} token${ids.length === 1 ? "" : "s"}${ids.length > 120 ? ", first 120" : ""}: </span>` + ids.slice(0, 120).map((t) => chip(t)).join("") : '<span class="note">no token matches</span>';
  }

  function facts(t) {
    const b = tokenBytes(t), out = [`id <b>${t}</b>`, `<b>${b.length}</b> byte${b.length === 1 ? "" : "s"}`, `<code>${bytesToHex(b).replace(/(..)/g, "$1 ").trim()}</code>`];
    if (t < N && C.merge_rank[t] >= 0) out.push(`merge <b>#${fmt(C.merge_rank[t] + 1)}</b> of ${fmt(D.summary.merges_logged)}`, `count at merge <b>${fmt(C.count[t])}</b>`);
    if (t < N && C.derived[t]) out.push("parts found by merging (no log)");
    if (t < N && D.evals.length) out.push(`used <b>${fmt(usageTotal[t])}</b>× on the eval sets (` + D.evals.map((e, i) => `${esc(e.name)} ${fmt(C["usage_" + i][t])}`).join(", ") + ")");
    if (special.has(t)) out.push("special token");
    return out.join(" · ");
  }

  function tree(t, depth) {
    const l = t < N ? C.left[t] : -1, r = t < N ? C.right[t] : -1;
    const meta = `<span class="meta">#${t}${t < N && C.count[t] >= 0 ? " · count " + fmt(C.count[t]) : ""}${t < N && C.derived[t] ? " · derived" : ""}</span>`;
    if (l < 0) return `<li>${chip(t)}${meta}</li>`;
    const inner = `<ul class="tree">${tree(l, depth + 1)}${tree(r, depth + 1)}</ul>`;
    return `<li><details${depth < 4 ? " open" : ""}><summary>${chip(t)}${meta}</summary>${inner}</details></li>`;
  }

  function select(t) {
    const made = t < N ? children[t].slice() : [];
    made.sort((a, b) => C.count[b] - C.count[a] || a - b);
    const dups = (D.duplicates || []).filter((d) => d[3] === t);
    let h = `<h3>Token</h3><div><span class="big" data-t="${t}">${vis(tokenBytes(t))}</span></div><div class="facts">${facts(t)}</div>`;
    h += `<div class="row"><div class="col"><h3>How it was built</h3>`;
    h += t < N && C.left[t] < 0 && tokenBytes(t).length === 1 ? '<p class="note">A byte: one of the 256 base tokens.</p>' : t < N && C.left[t] < 0 ? '<p class="note">No two tokens make it.</p>' : "";
    h += `<ul class="tree root" id="tree">${tree(t, 0)}</ul>`;
    if (dups.length) h += `<p class="note">Also reached later as ` + dups.map((d) => `${chip(d[1])}+${chip(d[2])} (merge #${fmt(d[0] + 1)}, count ${fmt(d[4])})`).join(", ") + "</p>";
    h += `</div><div class="col"><h3>Built from it (${fmt(made.length)})</h3><div class="chips" id="made">`;
    h += made.length ? made.slice(0, 150).map((c) => chip(c, `<span class="meta">${C.count[c] >= 0 ? fmt(C.count[c]) : ""}</span>`)).join(" ") : '<span class="note">nothing: no merge uses it</span>';
    if (made.length > 150) h += `<span class="note"> … and ${fmt(made.length - 150)} more</span>`;
    h += "</div></div></div>";
    el("detail").innerHTML = h;
    el("detail").dataset.t = String(t);
  }

  function growth() {
    let h = "<h2>Growth</h2>";
    const counts = C.log_count;
    if (counts.length) {
      const n = counts.length, xs = [], ys = [];
      let last = -1;
      for (let k = 0; k <= 1200; k++) {
        const i = Math.min(n - 1, Math.round(Math.exp((Math.log(n) * k) / 1200)) - 1);
        if (i !== last && counts[i] > 0) { xs.push(i + 1); ys.push(counts[i]); last = i; }
      }
      h += '<div class="row"><div class="col"><h3>Count at merge time against rank (log-log)</h3>';
      h += lineChart({ series: [{ name: "merge count", xs, ys }], logX: true, logY: true, xLabel: "merge rank", yLabel: "pair count when merged", label: "merge count against rank" });
      h += `<p class="note">${fmt(n)} merges; the first was counted ${fmt(counts[0])} times, the last ${fmt(counts[n - 1])}. A straight line is Zipf's law; a bend at the end means training stopped on min_frequency or the corpus ran thin.</p></div>`;
    } else h += '<div class="row"><div class="col"><p class="note">No merge log (an imported vocabulary): no counts to draw.</p></div>';
    if (D.evals.length) {
      h += '<div class="col"><h3>Bytes per token against vocabulary size</h3>';
      h += lineChart({ series: D.evals.filter((e) => e.growth.length).map((e) => ({ name: e.name, xs: D.growth_sizes, ys: e.growth })), logX: true, xLabel: "vocabulary size (first N tokens of the merge log)", yLabel: "bytes per token", label: "compression against vocabulary size", legend: true, zeroY: false });
      h += '<p class="note">Each eval set encoded with the first N tokens only, from one encoding with the full vocabulary (exact: a token\'s merges stop at the first rank ≥ N). Flat tails mean new tokens no longer help this text.</p></div>';
    }
    el("growth").innerHTML = h + "</div>";
  }

  function fairness() {
    if (!D.evals.length) { el("fairness").innerHTML = '<h2>Fairness across eval sets</h2><p class="note">No eval sets.</p>'; return; }
    const B = D.baseline;
    let h = `<h2>Fairness across eval sets</h2><p class="note">Bytes per token (higher is better compression), tokens per whitespace-separated word (fertility; lower is better), each against the best set (1.00 is the best; 2.00 means twice the tokens for the same amount of text), and Renyi efficiency of order ${D.renyi_alpha} of the token distribution over log2 of the tokens used (as the tokenization-scorer package computes it; higher means tokens are used more evenly).</p>`;
    const maxB = Math.max(...D.evals.map((e) => e.bytes_per_token || 0));
    h += '<table id="fair"><tr><th>eval set</th><th class="n">documents</th><th class="n">bytes</th><th class="n">words</th><th class="n">tokens</th><th class="n">bytes/token</th><th></th><th class="n">× best</th><th class="n">tokens/word</th><th class="n">× best</th><th class="n">Renyi</th><th class="n">tokens used</th>';
    if (B) h += '<th class="n">baseline bytes/token</th><th class="n">tokens vs baseline</th>';
    h += "</tr>";
    D.evals.forEach((e, i) => {
      h += `<tr data-set="${esc(e.name)}"><td><b>${esc(e.name)}</b>${e.truncated ? " <span class=note>(first " + fmt(e.bytes) + " bytes)</span>" : ""}<div class="note">${esc(e.source)}</div></td><td class="n">${fmt(e.documents)}</td><td class="n">${fmt(e.bytes)}</td><td class="n">${fmt(e.words)}</td><td class="n">${fmt(e.tokens)}</td><td class="n bpt">${fix(e.bytes_per_token, 3)}</td><td>${bar(e.bytes_per_token, maxB, 70)}</td><td class="n">${fix(e.bpt_ratio)}</td><td class="n tpw">${fix(e.tokens_per_word, 3)}</td><td class="n">${fix(e.fertility_ratio)}</td><td class="n renyi">${fix(e.renyi, 4)}</td><td class="n">${fmt(e.distinct_tokens)}</td>`;
      if (B) {
        const b = B.evals[i];
        const ratio = b.tokens ? e.tokens / b.tokens : null;
        h += `<td class="n">${fix(b.bytes_per_token, 3)}</td><td class="n ${ratio < 1 ? "good" : ratio > 1 ? "badc" : ""}">${ratio === null ? "–" : fix(ratio * 100, 1) + "%"}</td>`;
      }
      h += "</tr>";
    });
    el("fairness").innerHTML = h + "</table>";
  }

  function composition() {
    const P = D.composition;
    let h = `<h2>Composition</h2><p class="note">Over the ${fmt(D.summary.merged)} merged tokens (all but the 256 bytes). A token's block is that of its first character that is not whitespace.</p><div class="row"><div class="col"><h3>Token length (bytes)</h3>`;
    const maxLen = P.lengths.length ? P.lengths[P.lengths.length - 1][0] : 0, cap = Math.min(maxLen, 32);
    const labels = [], values = [];
    for (let L = 1; L <= cap; L++) { labels.push(String(L)); values.push(0); }
    if (maxLen > cap) { labels.push(cap + 1 + "+"); values.push(0); }
    for (const [L, c] of P.lengths) values[Math.min(L, cap + 1) - 1] += c;
    h += barChart(labels, values, { xLabel: "bytes", label: "token length histogram" });
    const mean = sum(P.lengths.map(([L, c]) => L * c)) / Math.max(1, sum(P.lengths.map(([, c]) => c)));
    h += `<p class="note">Mean ${fix(mean)} bytes, longest ${fmt(maxLen)}.</p></div><div class="col"><h3>Kinds</h3><table id="kinds">`;
    const maxK = Math.max(...P.kinds.map(([, c]) => c));
    for (const [k, c] of P.kinds) h += `<tr><td>${esc(k)}</td><td class="n">${fmt(c)}</td><td>${bar(c, maxK, 120)}</td><td class="chips">${chips(P.kind_examples[k] || [], 8)}</td></tr>`;
    h += "</table>";
    if (P.digits_by_length.length) h += `<p>Digit tokens by number of digits: ${P.digits_by_length.map(([L, c]) => `${L}: ${fmt(c)}`).join(", ")}</p>`;
    if (P.whitespace.length) h += `<p>Whitespace tokens: ${P.whitespace.map(([k, c]) => `${esc(k)} ${fmt(c)}`).join(", ")}</p>`;
    h += "</div></div><h3>By Unicode block</h3><table id=\"blocks-vocab\">";
    const maxB = P.blocks.length ? P.blocks[0][1] : 0;
    for (const [b, c] of P.blocks.slice(0, 30)) h += `<tr><td>${esc(b)}</td><td class="n">${fmt(c)}</td><td>${bar(c, maxB, 160)}</td><td class="chips">${chips(P.block_examples[b] || [], 10)}</td></tr>`;
    h += "</table>";
    if (P.blocks.length > 30) h += `<p class="note">and ${P.blocks.length - 30} more blocks.</p>`;
    h += `<h3>Code operators (${fmt(C.operators.length)})</h3><div class="chips">${chips(C.operators, 120)}</div>`;
    el("composition").innerHTML = h;
  }

  function health() {
    const H = D.health_counts;
    const group = (title, key, note, limit) => {
      const ids = C["health_" + key];
      if (ids === undefined) return `<h3>${title}</h3><p class="note">${note} Not available: ${key === "intermediate" ? "no merge counts (imported vocabulary)" : "no eval sets"}.</p>`;
      return `<h3>${title}: <span class="count" id="health-${key}">${fmt(ids.length)}</span></h3><p class="note">${note}</p><div class="chips">${ids.length ? chips(ids, limit) : '<span class="good">none</span>'}</div>`;
    };
    let h = "<h2>Health</h2>";
    h += group("Unreachable", "unreachable", "Tokens no text can produce by merging: encoding their own bytes gives other tokens (<code>verify()</code>). They only appear when a whole piece equals them.", 200);
    if (D.health_problems.length > H.unreachable) h += '<ul class="note">' + D.health_problems.map((p) => `<li>${esc(p)}</li>`).join("") + "</ul>";
    h += group("Not valid UTF-8 on their own", "not_utf8", "Pieces of characters (or invalid bytes): they decode only next to their neighbours.", 80);
    h += group("Never used on the eval sets", "unused", "Merged tokens the encoder did not emit on any eval set, earliest learned first.", 150);
    h += group("Intermediate-only", "intermediate", "Every occurrence in the training text was merged on into longer tokens (from the merge log's counts), so the token is a step on the way, not a token of the training text.", 150);
    if (C.health_unused_bytes) h += `<p class="note">Byte tokens never used on the eval sets: ${fmt(C.health_unused_bytes.length)} of 256.</p>`;
    el("health").innerHTML = h;
  }

  function heatColor(v, max) {
    if (!v) return "";
    const f = Math.log1p(v) / Math.log1p(max);
    const light = 92 - 52 * f;
    return `background:hsl(18,85%,${light}%);color:${f > 0.55 ? "#fff" : "#5a2a10"}`;
  }

  function loss() {
    const L = D.summary.ledger && D.summary.ledger.training;
    let h = "<h2>Loss</h2>";
    if (L) {
      const inv = L.invalid_utf8_bytes || {};
      h += '<h3>Training ledger</h3><table id="ledger"><tr><th>what</th><th class="n">count</th></tr>';
      h += `<tr><td>documents / bytes seen</td><td class="n">${fmt(L.documents)} / ${fmt(L.bytes)}</td></tr>`;
      for (const [k, v] of Object.entries(inv)) h += `<tr><td>invalid UTF-8: ${esc(k.replace(/_/g, " "))} (bytes, kept as byte tokens)</td><td class="n">${fmt(v)}</td></tr>`;
      for (const k of ["lone_surrogates", "unmatched_bytes", "pieces_cut", "dropped_word_mass", "dropped_bytes"]) h += `<tr><td>${esc(k.replace(/_/g, " "))}</td><td class="n">${fmt(L[k] || 0)}</td></tr>`;
      for (const [k, v] of Object.entries(L.rejected_items || {})) h += `<tr><td>rejected items: ${esc(k)}</td><td class="n">${fmt(v)}</td></tr>`;
      h += "</table>";
      if ((L.invalid_utf8_examples || []).length) h += "<p class=note>First examples: " + L.invalid_utf8_examples.map((e) => `${esc(e.kind)} at document ${fmt(e.document)}, byte ${fmt(e.offset)}`).join("; ") + "</p>";
    } else h += '<p class="note">No training ledger (imported tokenizer or older file).</p>';
    if (!D.evals.length) { el("loss").innerHTML = h; return; }
    // Bytes that did not reach a whole-character token on the eval sets, by byte value.
    const inv = new Array(256).fill(0), split = new Array(256).fill(0);
    for (const e of D.evals) for (let b = 0; b < 256; b++) { inv[b] += e.invalid_bytes[b]; split[b] += e.split_bytes[b]; }
    const tot = inv.map((v, b) => v + split[b]), max = Math.max(1, ...tot);
    h += `<h3>Byte heatmap: bytes of the eval sets outside whole-character tokens</h3><p class="note">Each cell is a byte value (row = high nibble, column = low nibble): how often it occurred in invalid UTF-8 (by the ledger's rules) or in a character the tokenizer cut into pieces (byte fallback). The training ledger keeps no byte values, so the eval sets stand in. ASCII (rows 0–7) can never be cut.</p>`;
    h += '<div class="heat" id="heat"><div></div>';
    for (let c = 0; c < 16; c++) h += `<div class="lab">_${c.toString(16).toUpperCase()}</div>`;
    for (let r = 0; r < 16; r++) {
      h += `<div class="lab">${r.toString(16).toUpperCase()}_</div>`;
      for (let c = 0; c < 16; c++) {
        const b = r * 16 + c;
        h += `<div class="heat-cell" data-byte="${b}" data-count="${tot[b]}" style="${heatColor(tot[b], max)}" title="0x${hex2(b)}: ${fmt(inv[b])} in invalid UTF-8, ${fmt(split[b])} in cut characters">${tot[b] ? short(tot[b]) : ""}</div>`;
      }
    }
    h += "</div>";
    // Unicode blocks: share of each block's characters cut, per eval set.
    const blocks = new Map();
    D.evals.forEach((e, i) => { for (const [name, chars, cut] of e.blocks) { if (!blocks.has(name)) blocks.set(name, D.evals.map(() => [0, 0])); blocks.get(name)[i] = [chars, cut]; } });
    const order = [...blocks.entries()].sort((a, b) => sum(b[1].map((x) => x[0])) - sum(a[1].map((x) => x[0])));
    h += `<h3>By Unicode block: characters cut into pieces</h3><p class="note">Share of each block's characters (on each eval set) the tokenizer did not keep inside one token; colour by share.</p><table class="blocks" id="block-heat"><tr><th>block</th>${D.evals.map((e) => `<th class="n">${esc(e.name)}</th>`).join("")}</tr>`;
    for (const [name, per] of order.slice(0, 40)) {
      h += `<tr><td>${esc(name)}</td>` + per.map(([chars, cut]) => {
        if (!chars) return '<td class="cell"></td>';
        const share = cut / chars;
        return `<td class="cell${share > 0.45 ? " dark" : ""}" style="${share ? `background:hsl(18,85%,${92 - 52 * Math.sqrt(share)}%)` : ""}" title="${fmt(cut)} of ${fmt(chars)} characters cut">${share ? fix(share * 100, share < 0.1 ? 2 : 1) + "%" : "0"} <span class="note">of ${short(chars)}</span></td>`;
      }).join("") + "</tr>";
    }
    h += "</table>";
    h += '<h3>Per eval set</h3><table><tr><th>eval set</th><th class="n">invalid UTF-8 bytes</th><th>by kind</th><th class="n">characters cut</th><th>first examples</th></tr>';
    for (const e of D.evals) {
      const kinds = Object.entries(e.invalid).filter(([, v]) => v).map(([k, v]) => `${esc(k.replace(/_/g, " "))} ${fmt(v)}`).join(", ") || "none";
      const exs = e.examples.slice(0, 12).map((x) => x.kind === "split_character" ? `<span title="cut character">${esc(x.char)}</span> → ${x.tokens.map((t) => chip(t)).join("")}` : `${esc(x.kind.replace(/_/g, " "))} in document ${fmt(x.document)} at byte ${fmt(x.offset)}: <span class="mono">${visText(hexToBytes(x.context))}</span>`).join("<br>");
      h += `<tr><td>${esc(e.name)}</td><td class="n">${fmt(sum(Object.values(e.invalid)))}</td><td>${kinds}</td><td class="n">${fmt(e.split_chars)}</td><td>${exs || '<span class="note">none</span>'}</td></tr>`;
    }
    el("loss").innerHTML = h + "</table>";
  }

  // Running text in token spans. A character cut across tokens is drawn whole in the
  // span holding its first byte (dashed underline); the spans holding only its other
  // bytes are thin coloured slivers, still hoverable.
  function sampleHTML(ids, bytesOf, attr) {
    const parts = ids.map(bytesOf);
    const all = new Uint8Array(sum(parts.map((p) => p.length)));
    const starts = [];
    let off = 0;
    for (const p of parts) { starts.push(off); all.set(p, off); off += p.length; }
    const units = utf8Units(all);
    let k = 0, at = 0;
    const html = parts.map(() => "");
    const cut = parts.map(() => false);
    for (const [ok, x] of units) {
      const len = ok ? new TextEncoder().encode(x).length : 1;
      while (k + 1 < parts.length && starts[k + 1] <= at) k++;
      const end = at + len;
      let last = k;
      while (last + 1 < parts.length && starts[last + 1] < end) last++;
      html[k] += ok ? (x === "\n" ? '<span class="ws">↵</span>\n' : x === " " || x === "\t" ? x : visChar(x)) : '<span class="bx">\\x' + hex2(x) + "</span>";
      if (last > k) cut[k] = true;
      at = end;
    }
    return ids.map((t, i) => {
      const cls = `tk c${i % 6}${html[i] ? (cut[i] ? " cut" : "") : " cont"}`;
      return `<span class="${cls}" ${attr}="${t}">${html[i]}</span>`;
    }).join("");
  }

  function sample() {
    if (!D.evals.length) { el("sample").innerHTML = '<h2>Sample</h2><p class="note">No eval sets.</p>'; return; }
    const B = D.baseline;
    let h = `<h2>Sample</h2><p class="note">The start of each eval set, each token on its own colour. Hover a token for its id, bytes and merge rank; click it to open it in the merge tree.</p>`;
    h += '<div id="sample-tabs">' + D.evals.map((e, i) => `<button data-i="${i}" class="${i ? "" : "on"}">${esc(e.name)}</button> `).join("") + "</div><div id=\"sample-body\"></div>";
    if (B && B.words) {
      const w = B.words;
      const split = (xs) => xs.slice(0, 10).map((x) => `<span class="chip">${vis(hexToBytes(x))}</span>`).join("") + (xs.length > 10 ? ` <span class="note">… ${fmt(xs.length)} tokens</span>` : "");
      const word = (w) => { const cps = Array.from(w); return cps.length > 40 ? cps.slice(0, 40).join("") + "…" : w; };
      const row = (r) => `<tr><td class="w">${vis(new TextEncoder().encode(word(r.word)))}</td><td class="n">${fmt(r.count)}</td><td>${split(r.mine)}</td><td>${split(r.baseline)}</td><td class="n ${r.saved > 0 ? "good" : "badc"}">${r.saved > 0 ? "+" : ""}${fmt(r.saved)}</td></tr>`;
      const head = '<tr><th>word</th><th class="n">occurrences</th><th>this tokenizer</th><th>baseline</th><th class="n">tokens saved</th></tr>';
      h += `<h3>Where the two differ most</h3><p class="note">Of the ${fmt(w.words)} most frequent words at the start of the eval sets (each with a leading space, as in running text): tokens saved = (baseline tokens − these tokens) × occurrences.</p>`;
      h += `<h3>This tokenizer does better</h3><table class="diff" id="diff-better">${head}${w.better.map(row).join("")}</table><h3>The baseline does better</h3><table class="diff" id="diff-worse">${head}${w.worse.map(row).join("")}</table>`;
    }
    el("sample").innerHTML = h;
    const show = (i) => {
      const e = D.evals[i];
      let body = `<div class="row"><div class="col"><h3>This tokenizer: ${fmt(e.sample_ids.length)} tokens for ${fmt(e.sample_hex.length / 2)} bytes</h3><div class="sample" id="sample-main">${sampleHTML(e.sample_ids, tokenBytes, "data-t")}</div></div>`;
      if (B) {
        const b = B.evals[i], bb = (t) => hexToBytes(b.sample_tokens[String(t)] || "");
        body += `<div class="col"><h3>Baseline: ${fmt(b.sample_ids.length)} tokens</h3><div class="sample" id="sample-base">${sampleHTML(b.sample_ids, bb, "data-bt")}</div></div>`;
      }
      el("sample-body").innerHTML = body + "</div>";
      el("sample-body").dataset.i = String(i);
      for (const btn of el("sample-tabs").querySelectorAll("button")) btn.classList.toggle("on", +btn.dataset.i === i);
    };
    el("sample-tabs").addEventListener("click", (ev) => { const b = ev.target.closest("button"); if (b) show(+b.dataset.i); });
    show(0);
    R.showSample = show;
  }

  // ---------------------------------------------------------------- tooltip and clicks
  function tipFor(target) {
    if (target.dataset.t !== undefined) {
      const t = +target.dataset.t, b = tokenBytes(t);
      let s = `<div class="mono">${vis(b)}</div>id ${t} · ${b.length} bytes · <span class="mono">${bytesToHex(b)}</span>`;
      if (t < N && C.merge_rank[t] >= 0) s += `<br>rank ${t} · merge #${fmt(C.merge_rank[t] + 1)} · count ${fmt(C.count[t])}`;
      else if (b.length === 1 && t < N) s += "<br>rank " + t + " · a byte";
      else s += "<br>rank " + t;
      return s;
    }
    if (target.dataset.bt !== undefined) {
      const i = +el("sample-body").dataset.i, t = +target.dataset.bt;
      const b = hexToBytes(D.baseline.evals[i].sample_tokens[String(t)] || "");
      return `<div class="mono">${vis(b)}</div>baseline id (rank) ${t} · ${b.length} bytes · <span class="mono">${bytesToHex(b)}</span>`;
    }
    return null;
  }

  function wire() {
    const tip = el("tip");
    document.addEventListener("mouseover", (e) => {
      const t = e.target.closest("[data-t],[data-bt]");
      const html = t ? tipFor(t) : null;
      if (!html) { tip.style.display = "none"; return; }
      tip.innerHTML = html;
      tip.style.display = "block";
    });
    document.addEventListener("mousemove", (e) => {
      if (tip.style.display === "block") {
        const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
        tip.style.left = x + "px";
        tip.style.top = e.clientY + 16 + "px";
      }
    });
    document.addEventListener("click", (e) => {
      const t = e.target.closest("[data-t]");
      if (!t) return;
      if (t.closest("summary")) e.preventDefault();  // a chip in the tree opens, the arrow folds
      select(+t.dataset.t);
      if (!t.closest("#explorer")) el("explorer").scrollIntoView({ behavior: "smooth" });
    });
  }

  // ---------------------------------------------------------------- start
  async function main() {
    const [head, cols] = await load();
    setup(head, cols);
    R.data = head;
    R.vocabSize = N;
    R.search = (s) => { el("q").value = s; search(s); };
    R.select = select;
    for (const f of [summary, explorer, growth, fairness, composition, health, loss, sample]) {
      try { f(); } catch (err) { R.errors.push(f.name + ": " + err); console.error(err); }
    }
    wire();
    el("loading").remove();
    R.ready = true;
    document.body.dataset.ready = "1";
  }
  main().catch((err) => {
    R.errors.push(String(err));
    el("loading").textContent = "This report could not be unpacked: " + err + " (it needs a browser with DecompressionStream: Chrome 80+, Firefox 113+, Safari 16.4+).";
    throw err;
  });
})();
