"""The table that ``make bench`` prints, each number beside its target."""

from __future__ import annotations

import numpy as np

from bench import vs_pytorch

TARGETS = {  # the targets of issues #10 and #32, in seconds or as a fraction of peak
    "mha_float64_ratio": 0.60,
    "slider_s": 1.0,
    "book_clean_s": 60.0,
    "book_nochange_s": 10.0,
    "make_test_s": 180.0,
}


def pct(ratio: float) -> str:
    """A percentage with two significant digits, so that 0.06% does not print as 0%."""
    return f"{ratio:.0%}" if ratio >= 0.1 else f"{ratio:.1%}" if ratio >= 0.01 else f"{ratio:.2%}"


def mark(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def table(r: dict) -> str:
    m = r["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores ({', '.join(m['simd'])}); "
        f"Python {m['python']}, NumPy {m['numpy']}, BLAS {m['blas']}; "
        f"load {m['load_before']:.2f} before, {m['load_after']:.2f} after; {m['date']}"
    ]
    for name, p in r["peak"].items():
        lines.append(
            f"Peak {name} matmul ({p['n']}x{p['n']}): {p['gflops']:.1f} GFLOP/s "
            f"(median run {p['median_gflops']:.1f})"
            + (
                f"; the best of {', '.join(f'{g:.1f}' for g in p['measured'] if g)}, "
                "measured during the run"
                if "measured" in p
                else ""
            )
        )
    lines += [
        "",
        "1. Attention throughput (best of several runs; FLOPs as in the docstring)",
        f"{'function':<30}{'dtype':<9}{'n':>6}{'GFLOP':>8}{'best ms':>10}{'median':>9}"
        f"{'GFLOP/s':>9}{'% f64 peak':>12}{'% own peak':>12}",
    ]
    for a in r["attention"]:
        lines.append(
            f"{a['function']:<30}{a['dtype']:<9}{a['n']:>6}{a['gflop']:>8.2f}"
            f"{a['best_ms']:>10.2f}{a['median_ms']:>9.2f}{a['gflops']:>9.1f}"
            f"{pct(a['ratio_vs_float64_peak']):>11} {pct(a['ratio_vs_own_peak']):>11}"
        )
    mha = next(a for a in r["attention"] if a["function"] == "multi_head_attention")
    ceiling = next(a for a in r["attention"] if "ceiling" in a["function"])
    goal = TARGETS["mha_float64_ratio"]
    others = mha.get("others_cores")  # during its best run
    lines.append(
        f"Target: multi_head_attention float64 n=1024 >= {goal:.0%} of peak: "
        f"{mha['ratio_vs_float64_peak']:.0%} {mark(mha['ratio_vs_float64_peak'] >= goal)}; "
        f"its matmuls alone reach {ceiling['ratio_vs_float64_peak']:.0%}"
        + ("" if others is None else f"; other processes used {others:.2f} cores meanwhile")
    )
    if "torch" in r:
        lines += ["", *vs_pytorch.lines(r["torch"], goal)]
    lines += [
        "",
        "2-3. Chapters in a fresh kernel (wall = kernel start + all cells) and sliders",
        f"{'chapter':<26}{'wall s':>8}{'cells s':>9}  slowest cell",
    ]
    for c in r["chapters"]:
        if "error" in c:
            lines.append(f"{c['chapter']:<26}  FAILED: {c['error']}")
            continue
        s = c["slowest_cell"] or {"cell": "-", "seconds": 0.0, "first_line": ""}
        lines.append(
            f"{c['chapter']:<26}{c['wall_s']:>8.2f}{c['cells_s']:>9.2f}  "
            f"cell {s['cell']} {s['seconds']:.2f} s: {s['first_line']}"
        )
    lines.append(f"{'slider':<40}{'frames':>7}{'s total':>9}{'ms/frame':>10}  (target < 1 s)")
    for c in r["chapters"]:
        for s in c.get("sliders", []):
            label = f"{c['chapter']} cell {s.get('cell', '?')} ({s['description']})"
            lines.append(
                f"{label:<40}{s['frames']:>7}{s['seconds']:>9.3f}"
                f"{1e3 * s['seconds'] / s['frames']:>10.1f}  "
                f"{mark(s['seconds'] < TARGETS['slider_s'])}"
            )
    p = r["pretrained"]
    lines.append("")
    if "skipped" in p:
        lines.append(f"4. Pretrained model: skipped: {p['skipped']}")
    else:
        lines.append(
            f"4. Pretrained MiniLM: load_minilm() {p['load_s']:.2f} s; one sentence "
            f"({p['tokens']} tokens) model.attention: {p['forward_ms']:.1f} ms best, "
            f"{p['forward_median_ms']:.1f} ms median"
        )
    if "decoder" in r:
        lines += decoder_lines(r["decoder"])
    full = r.get("build")
    goals = TARGETS
    if full is None:
        lines.append("5. Book and tests: not measured (run with --full)")
    else:
        b = full["book"]
        lines += [
            "5. Book and tests (make, environment ready, _build/.vendor-cache kept)",
            f"   clean make book      {b['clean']['seconds']:7.1f} s  (target <= 60)  "
            f"{mark(b['clean']['ok'] and b['clean']['seconds'] <= TARGETS['book_clean_s'])}",
            f"   no-change make book  {b['nochange']['seconds']:7.1f} s  (target <= 10)  "
            f"{mark(b['nochange']['ok'] and b['nochange']['seconds'] <= goals['book_nochange_s'])}",
            f"   make test (clean)    {full['make_test_s']:7.1f} s  (target <= 180) "
            f"{mark(full['make_test_ok'] and full['make_test_s'] <= TARGETS['make_test_s'])}",
        ]
        for s in full["test_stages"]:
            extra = f"  {s.get('summary', '')}" + ("" if s["ok"] else "  FAILED")
            lines.append(f"     make {s['target']:<12}{s['seconds']:7.1f} s{extra}")
            for sec, name in s.get("slowest_tests", [])[:3]:
                lines.append(f"         {sec:6.2f} s  {name}")
    return "\n".join(lines)


def decoder_lines(d: dict) -> list[str]:
    b = d["baselines"]
    lines = [
        f"4b. Chapter 12's decoder ({d['n_params']:,} numbers), one BLAS thread: "
        f"{d['steps']} training steps in {d['train_s']:.1f} s (target <= 60, aim <= 20) "
        f"{mark(d['train_s'] <= 60)}; held-out perplexity {np.exp(d['held_out']):.1f} "
        f"(bigram {np.exp(b['bigram']):.1f}, unigram {np.exp(b['unigram']):.1f})",
    ]
    for k in d["kv_cache"]:
        lines.append(
            f"   token at t = {k['t']:>3}: full pass {k['full_ms']:6.2f} ms, KV cache "
            f"{k['cached_ms']:5.2f} ms, {k['full_ms'] / k['cached_ms']:4.1f}x faster"
        )
    return lines
