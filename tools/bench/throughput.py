"""Sections 0 and 1 of ``make bench``: the machine, and attention against its peak.

The peak is the FLOP rate of a large float64 matrix product (``A @ A``, the best thing
NumPy's BLAS does). Attention is timed at the sizes below and its FLOP rate is divided by
that peak, measured in the same run; chapter 9's three forms of attention are timed too.

FLOP convention (one multiply-add = 2 FLOPs; softmax, masks and checks are *not* counted, so
they show up as lost efficiency rather than as work):

* ``scaled_dot_product_attention``, one head: scores ``2 n^2 d_k`` + blend ``2 n^2 d_v``.
* ``multi_head_attention``: projections ``4 x 2 n d_model^2`` (W_q, W_k, W_v, W_o), scores
  ``2 n^2 d_model`` and blend ``2 n^2 d_model`` (summed over the h heads of width d_model/h).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench import vs_pytorch

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
        turns = vs_pytorch.take_turns(
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
