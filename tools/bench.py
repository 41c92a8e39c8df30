"""Benchmarks: how close the library gets to the machine, and how long the book takes.

    python tools/bench.py            # or: make bench   (a few minutes)
    python tools/bench.py --full     # also a clean `make book`, a no-change rebuild and `make test`

This is a measurement, not a test: nothing here fails because the machine is slow. It
prints one table and writes the same numbers as JSON to ``_build/bench/bench.json``
(``--out`` to change). Each section:

1. **Attention against the machine's limit.** The peak is the FLOP rate of a large float64
   matrix product (``A @ A``, the best thing NumPy's BLAS does). Attention is timed at the
   sizes below and its FLOP rate is divided by that peak, measured in the same run.
   **1b.** ``multi_head_attention`` with and without weights beside PyTorch's
   ``nn.MultiheadAttention`` on the same layer (``tools/bench_torch.py``; PyTorch is
   installed for it where pip offers a CPU build, and the section is skipped otherwise;
   ``--no-torch`` skips it).
2. **Slider frames.** Every ``frame_slider(...)`` call in ``chapters/*.ipynb``, timed while the
   chapter runs (a hook cell wraps ``attention_lib.widgets.frame_slider``), so new chapters
   are measured without any edit here.
3. **Chapters.** Each chapter executed in a fresh kernel (nbclient), with its slowest cell.
4. **Pretrained model** (if ``attention_lib.pretrained`` and its weights are installed),
   and **chapter 12's decoder**: its training time and the KV cache per token, on one BLAS
   thread (``--decoder`` runs only this).
5. ``--full`` only: the build and the test suite, as ``make`` runs them.

FLOP convention (one multiply-add = 2 FLOPs; softmax, masks and checks are *not* counted, so
they show up as lost efficiency rather than as work):

* ``scaled_dot_product_attention``, one head: scores ``2 n^2 d_k`` + blend ``2 n^2 d_v``.
* ``multi_head_attention``: projections ``4 x 2 n d_model^2`` (W_q, W_k, W_v, W_o), scores
  ``2 n^2 d_model`` and blend ``2 n^2 d_model`` (summed over the h heads of width d_model/h).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import bench_torch
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "bench" / "bench.json"
TARGETS = {  # the targets of issues #10 and #32, in seconds or as a fraction of peak
    "mha_float64_ratio": 0.60,
    "slider_s": 1.0,
    "book_clean_s": 60.0,
    "book_nochange_s": 10.0,
    "make_test_s": 180.0,
}


# --- 0. The machine -----------------------------------------------------------------------


def machine() -> dict:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    flags = ""
    with contextlib.suppress(OSError):
        text = Path("/proc/cpuinfo").read_text()
        flags = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    simd = [f for f in ("avx2", "fma", "avx512f") if f" {f}" in flags]
    with contextlib.suppress(OSError, StopIteration):  # a virtual machine may hide the name
        text = Path("/proc/cpuinfo").read_text()
        family, model = (
            next(ln for ln in text.splitlines() if ln.startswith(key)).split(":")[1].strip()
            for key in ("cpu family", "model\t")
        )
        cpu += f" (family {family}, model {model})"
    info = {
        "cpu": cpu,
        "simd": simd,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas_name(),
        "load_before": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    return info


def blas_name() -> str:
    """The BLAS NumPy links against (``np.show_config``), its kernels and its threads."""
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        name = " ".join(str(x) for x in (blas.get("name"), blas.get("version")) if x)
    except Exception:  # older NumPy: no dict form
        name = "unknown"
    with contextlib.suppress(Exception):  # what threadpoolctl finds loaded, if anything
        from threadpoolctl import threadpool_info

        lib = next(lib for lib in threadpool_info() if lib["user_api"] == "blas")
        kernels = f"{lib['architecture']} kernels, " if lib.get("architecture") else ""
        name += f" ({kernels}{lib['num_threads']} threads)"
    return name


# --- 1. Attention against the peak --------------------------------------------------------


def best_time(fn, *, repeat: int, budget: float = 3.0, warm_up=True) -> tuple[float, float]:
    """(best, median) wall time of ``fn()`` over ``repeat`` runs after one warm-up.

    The best run is the one least disturbed by other work on the machine, so the ratios use
    it; the median is kept to show how noisy the run was. Stops early after ``budget`` s.
    The runs start 0.15 s after the warm-up: after a product on two threads, BLAS's idle
    thread spins on a core for about 0.1 s, and the library's own threads (the fast route
    of attention) would share the cores with it (``attention_lib/parallel.py``).
    """
    if warm_up:
        fn()
    time.sleep(0.15)
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget and len(times) >= 3:
            break
    return min(times), statistics.median(times)


def peak(dtype, sizes=(2048, 3072)) -> dict:
    """The best FLOP rate of a square matrix product; the machine's practical limit."""
    rng = np.random.default_rng(0)
    best = {"gflops": 0.0}
    for N in sizes:
        A = rng.standard_normal((N, N)).astype(dtype)
        t, med = best_time(lambda A=A: A @ A, repeat=7)
        rate = 2 * N**3 / t / 1e9
        if rate > best["gflops"]:
            best = {"gflops": rate, "n": N, "median_gflops": 2 * N**3 / med / 1e9}
    return best


def attention_rows(peaks: dict, quick: bool) -> list[dict]:
    import attention_lib as al

    rng = np.random.default_rng(0)
    rows = []
    n, d_model, h = 1024, 512, 8
    for dtype in (np.float64, np.float32):
        X = rng.standard_normal((n, d_model)).astype(dtype)
        Ws = [rng.standard_normal((d_model, d_model)) / d_model**0.5 for _ in "qkvo"]
        Ws = [W.astype(dtype) for W in Ws]
        flops = 4 * 2 * n * d_model**2 + 2 * 2 * n**2 * d_model
        shape = f"d_model={d_model}, h={h}"
        # The two take turns for 8 s, so that a busy spell on the machine hits both; the
        # CPU that other processes used during each best run is kept ("others").
        turns = bench_torch.take_turns(
            {
                "multi_head_attention": functools.partial(al.multi_head_attention, X, *Ws, h),
                "  its matmuls alone (ceiling)": functools.partial(products_only, X, Ws, h),
            },
            seconds=8.0,
        )
        for what, run in turns.items():
            t, med = run["best_ms"] / 1e3, run["median_ms"] / 1e3
            rows.append(_rate_row(what, n, dtype, shape, flops, t, med, peaks))
            rows[-1]["others_cores"] = run["others_cores"]
    d_k = 64
    sizes = (128, 512, 1024) if quick else (128, 256, 512, 1024, 2048, 4096)
    for dtype in (np.float64, np.float32):
        for n in sizes:
            Q, K, V = (rng.standard_normal((n, d_k)).astype(dtype) for _ in "qkv")
            repeat = 30 if n <= 512 else 9 if n <= 2048 else 4
            t, med = best_time(
                lambda Q=Q, K=K, V=V: al.scaled_dot_product_attention(Q, K, V), repeat=repeat
            )
            rows.append(
                _rate_row(
                    "scaled_dot_product_attention",
                    n,
                    dtype,
                    f"d_k={d_k}",
                    2 * 2 * n**2 * d_k,
                    t,
                    med,
                    peaks,
                )
            )
    return rows


def ladder_rows(peaks: dict) -> list[dict]:
    """Chapter 9's three forms of the same attention (n = 128, d_k = 64), against the peak."""
    try:
        from attention_lib import chunked
    except ImportError:
        return []
    import attention_lib as al

    n, d_k = 128, 64
    Q, K, V = np.random.default_rng(1).standard_normal((3, n, d_k))
    flops = 2 * 2 * n**2 * d_k
    rows = []
    for name, fn, repeat in [
        ("  ladder: attention_loop", chunked.attention_loop, 1),
        ("  ladder: attention_by_rows", chunked.attention_by_rows, 5),
        ("  ladder: matrix form", al.scaled_dot_product_attention, 30),
    ]:
        t, med = best_time(lambda fn=fn: fn(Q, K, V), repeat=repeat, warm_up=repeat > 1)
        rows.append(_rate_row(name, n, np.float64, f"d_k={d_k}", flops, t, med, peaks))
    return rows


def products_only(X, Ws, h: int):
    """The matrix products of multi-head attention and nothing else: no softmax, no checks.

    Same shapes, blocks and threads as the library (``attention_lib.fast``), and a fresh
    ``(h, n, n)`` result each call, as the real function must return. Its rate is the
    ceiling that attention itself can reach.
    """
    from attention_lib import fast, parallel

    W_q, W_k, W_v, W_o = Ws
    n, d_model = X.shape
    d_k = d_model // h
    rows = max(1, fast._BLOCK // n)
    parts = [(i, slice(start, start + rows)) for i in range(h) for start in range(0, n, rows)]
    with parallel.threads(h * n * n) as n_threads:
        QKV = parallel.matmuls([(X, W, "X @ W") for W in (W_q, W_k, W_v)], n_threads)
        Q, K, V = (P.reshape(n, h, d_k).swapaxes(0, 1) for P in QKV)  # (h, n, d_k)
        weights = np.empty((h, n, n), X.dtype)
        merged = np.empty((n, d_model), X.dtype)
        heads = merged.reshape(n, h, d_k).swapaxes(0, 1)  # (h, n, d_k), a view

        def products(part, scratch):
            np.matmul(Q[part], K[part[0]].T, out=weights[part])
            np.matmul(weights[part], V[part[0]], out=heads[part])

        parallel.share_out(products, parts, None, None, n_threads)
        return parallel.matmuls([(merged, W_o, "heads @ W_o")], n_threads)[0], weights


def best_peak(r: dict) -> None:
    """Use the best float64 peak of the whole run for every ratio of sections 1 and 1b.

    On a busy machine one measurement of the peak can fall in a busy spell and make
    attention look faster than the machine; the best of them is its real limit.
    """
    seen = [r["peak"]["float64"]["gflops"], r["peak_after"]["gflops"]]
    seen.append(r.get("torch", {}).get("peak_gflops", 0.0))
    best = max(seen)
    r["peak"]["float64"].update(gflops=best, measured=seen)
    for row in r["attention"]:
        row["ratio_vs_float64_peak"] = row["gflops"] / best
        if row["dtype"] == "float64":
            row["ratio_vs_own_peak"] = row["gflops"] / best
    for row in r.get("torch", {}).get("rows", {}).values():
        row["ratio_vs_float64_peak"] *= r["torch"]["peak_gflops"] / best
    if "torch" in r and "rows" in r["torch"]:
        r["torch"]["peak_gflops"] = best


def _rate_row(what, n, dtype, shape, flops, t, med, peaks) -> dict:
    name = np.dtype(dtype).name
    rate = flops / t / 1e9
    return {
        "function": what,
        "n": n,
        "dtype": name,
        "shape": shape,
        "gflop": flops / 1e9,
        "best_ms": t * 1e3,
        "median_ms": med * 1e3,
        "gflops": rate,
        "ratio_vs_float64_peak": rate / peaks["float64"]["gflops"],
        "ratio_vs_own_peak": rate / peaks[name]["gflops"],
    }


# --- 2 and 3. Chapters and their sliders ----------------------------------------------------

HOOK = """\
import time as _bench_time
import attention_lib.widgets as _bench_widgets
_bench_sliders = []
_bench_frame_slider = _bench_widgets.frame_slider
def _bench_timed_slider(make_figure, values, **kwargs):
    values = list(values)
    t0 = _bench_time.perf_counter()
    try:
        return _bench_frame_slider(make_figure, values, **kwargs)
    finally:
        _bench_sliders.append({"description": kwargs.get("description"), "frames": len(values),
                               "seconds": _bench_time.perf_counter() - t0})
_bench_widgets.frame_slider = _bench_timed_slider
"""
REPORT = 'import json as _bench_json\nprint("BENCH-SLIDERS", _bench_json.dumps(_bench_sliders))'


def run_chapter(path: Path) -> dict:
    """Execute one chapter in a fresh kernel, with the slider hook first and a report last."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    nb.cells.insert(0, nbformat.v4.new_code_cell(HOOK))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    t0 = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - t0
    cells = []
    for original, cell in enumerate(nb.cells[1:-1]):
        if cell.cell_type != "code":
            continue
        timing = cell.metadata.get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            seconds = (_iso(end) - _iso(start)).total_seconds()
            first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
            cells.append({"cell": original, "seconds": seconds, "first_line": first[:60]})
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    sliders = json.loads(text.split("BENCH-SLIDERS", 1)[1]) if "BENCH-SLIDERS" in text else []
    slider_cells = [i for i in code_cells if "frame_slider(" in nb.cells[i + 1].source]
    for slider, cell in zip(sliders, slider_cells, strict=False):
        slider["cell"] = cell
    slowest = max(cells, key=lambda c: c["seconds"], default=None)
    return {
        "chapter": path.stem,
        "wall_s": wall,
        "cells_s": sum(c["seconds"] for c in cells),
        "slowest_cell": slowest,
        "sliders": sliders,
    }


def _iso(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


# --- 4. The pretrained model ----------------------------------------------------------------


def pretrained() -> dict:
    try:
        from attention_lib import pretrained as pre
    except ImportError as err:
        return {"skipped": f"attention_lib.pretrained is not available ({err})"}
    try:
        t0 = time.perf_counter()
        model = pre.load_minilm()
        load = time.perf_counter() - t0
    except Exception as err:  # not installed: the module says how to install it
        return {"skipped": f"load_minilm() failed: {type(err).__name__}: {str(err)[:120]}"}
    sentence = "I ate the cake and it was delicious."
    t, med = best_time(lambda: model.attention(sentence), repeat=10)
    tokens, weights = model.attention(sentence)
    return {
        "load_s": load,
        "forward_ms": t * 1e3,
        "forward_median_ms": med * 1e3,
        "tokens": len(tokens),
        "weights_shape": list(weights.shape),
    }


# --- 4b. Chapter 12's decoder --------------------------------------------------------------


def decoder_bench() -> dict:
    """Chapter 12 on one BLAS thread: its training run, and the KV cache per token.

    ``train_s`` is ``toy.decoder.train`` with the chapter's arguments (best of two runs);
    the KV cache is timed on an untrained model of the same width with 256 positions
    (the time does not depend on what the weights learned): per token at position ``t``,
    one cached step against a full forward pass over the ``t`` tokens.
    """
    from threadpoolctl import threadpool_limits

    from attention_lib import decoder
    from attention_lib.toy import decoder as food

    train, test = food.split()
    with threadpool_limits(1):
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            run = food.train(train, test)  # the chapter's defaults: 800 steps of 32
            runs.append(time.perf_counter() - t0)
        wide = decoder.init_params(len(food.VOCAB), food.D_MODEL, 256, food.D_FF)
        ids = np.random.default_rng(0).integers(2, len(food.VOCAB), size=256)
        kv = []
        for t in (16, 64, 256):
            cache = None
            for token in ids[: t - 1]:
                _, cache, _ = decoder.kv_cache_step(wide, food.HEADS, token, cache)
            step, _ = best_time(
                functools.partial(decoder.kv_cache_step, wide, food.HEADS, ids[t - 1], cache),
                repeat=30,
            )
            full_pass = functools.partial(decoder.forward, wide, ids[:t], food.HEADS)
            full, _ = best_time(full_pass, repeat=30)
            kv.append({"t": t, "full_ms": full * 1e3, "cached_ms": step * 1e3})
    return {
        "train_s": min(runs),
        "steps": int(run.steps[-1]),
        "held_out": float(run.test_loss[-1]),
        "baselines": food.baselines(train, test),
        "n_params": decoder.n_params(run.params),
        "kv_cache": kv,
    }


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


# --- 5. Book and tests (--full) -------------------------------------------------------------

CLEAN = ["_build/html", "_build/jupyter_execute", "_build/.jupyter_cache", "_build/.doctrees"]


def clean_book() -> None:
    """What a fresh clone lacks: the site, the execution cache and Sphinx's pickles.

    ``_build/.vendor-cache`` (and the ``vendor_site`` made from it) stay, so nothing is
    fetched from the network; they only hold pinned front-end files.
    """
    for folder in CLEAN:
        shutil.rmtree(ROOT / folder, ignore_errors=True)


def timed_make(target: str, env: dict | None = None) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    seconds = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    result = {"target": target, "seconds": seconds, "ok": proc.returncode == 0}
    durations = re.findall(r"^\s*(\d+\.\d+)s (call|setup|teardown)\s+(\S+)", out, re.MULTILINE)
    if durations:
        result["slowest_tests"] = [[float(s), f"{kind} {name}"] for s, kind, name in durations[:8]]
    summary = [ln for ln in out.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    if summary:
        result["summary"] = summary[-1].strip("= ")
    if not result["ok"]:
        result["tail"] = out[-2000:]
    return result


def test_stages() -> list[str]:
    """The prerequisites of ``test:`` in the Makefile, e.g. ``["lint", "unit", ...]``."""
    rule = re.search(r"^test:(.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    return rule[1].split() if rule else ["test"]


def build_and_test() -> dict:
    """A clean `make book`, a no-change rebuild, then `make test` from a clean build (as CI)."""
    clean_book()
    book = {"clean": timed_make("book")}
    book["nochange"] = timed_make("book")
    clean_book()
    # `make test` is its prerequisites run in order; timing them one by one gives the profile.
    stages = [timed_make(t, {"PYTEST_ADDOPTS": "--durations=8"}) for t in test_stages()]
    return {
        "book": book,
        "test_stages": stages,
        "make_test_s": sum(s["seconds"] for s in stages),
        "make_test_ok": all(s["ok"] for s in stages),
    }


# --- The table ------------------------------------------------------------------------------


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
        lines += ["", *bench_torch.lines(r["torch"], goal)]
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--full",
        action="store_true",
        help="also time a clean make book, a no-change rebuild and make test",
    )
    parser.add_argument("--quick", action="store_true", help="fewer attention sizes")
    parser.add_argument("--no-chapters", action="store_true", help="skip sections 2 and 3")
    parser.add_argument(
        "--no-torch", action="store_true", help="skip section 1b, the comparison with PyTorch"
    )
    parser.add_argument(
        "--decoder", action="store_true", help="only section 4b, chapter 12's decoder"
    )
    parser.add_argument("--out", type=Path, default=OUT, help=f"JSON file (default {OUT})")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    t0 = time.perf_counter()
    if args.decoder:
        print("\n".join(decoder_lines(decoder_bench())))
        return 0
    r = {"machine": machine(), "targets": TARGETS}
    print("measuring the peak and attention...", flush=True)
    r["peak"] = {"float64": peak(np.float64), "float32": peak(np.float32)}
    r["attention"] = attention_rows(r["peak"], args.quick) + ladder_rows(r["peak"])
    if not args.no_torch:
        print("comparing multi_head_attention with PyTorch's...", flush=True)
        r["torch"] = bench_torch.compare(r["peak"]["float64"]["gflops"])
    r["peak_after"] = peak(np.float64, sizes=(2048,))  # did the machine get busier meanwhile?
    best_peak(r)
    r["chapters"] = []
    if not args.no_chapters:
        for path in sorted((ROOT / "chapters").glob("*.ipynb")):
            print(f"running {path.name}...", flush=True)
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    r["chapters"].append(run_chapter(path))
            except Exception as err:  # a broken chapter is reported, not fatal
                r["chapters"].append({"chapter": path.stem, "error": str(err)[:200]})
    r["pretrained"] = pretrained()
    print("training chapter 12's decoder...", flush=True)
    r["decoder"] = decoder_bench()
    if args.full:
        print("timing make book and make test (several minutes)...", flush=True)
        r["build"] = build_and_test()
    r["machine"]["load_after"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    r["bench_s"] = time.perf_counter() - t0
    text = table(r)
    print("\n" + text + f"\n\nmake bench took {r['bench_s']:.0f} s; JSON: {args.out}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(r, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
