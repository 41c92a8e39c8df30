"""Section 1b of `make bench`: the library's multi-head attention beside PyTorch's.

    python tools/bench/run.py         # prints this section among the others
    python tools/bench/vs_pytorch.py  # this section alone

Both compute the same layer: n = 1024 tokens, d_model = 512, h = 8 heads, float64, no
biases, the same four weight matrices (PyTorch multiplies by ``W.T``, so it gets the
transposes), ``batch_first=True`` and one sequence. PyTorch runs
``nn.MultiheadAttention`` in inference mode twice: returning the weights of every head
(``need_weights=True, average_attn_weights=False``, what ``al.multi_head_attention``
returns) and with ``need_weights=False``, its fused route. The four calls take turns,
round after round for 30 s, each after a pause of 0.15 s, so that a busy spell on the
machine slows all of them alike; each keeps its best round.

PyTorch is optional and for this comparison only. ``requirements-bench.txt`` pins it;
:func:`install` installs it with pip where pip offers a CPU build, and otherwise the
section is skipped with one line (see that file).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
N, D_MODEL, H = 1024, 512, 8
FLOPS = 4 * 2 * N * D_MODEL**2 + 2 * 2 * N**2 * D_MODEL  # as section 1 counts them


def install() -> str | None:
    """Make ``import torch`` work; ``None`` if it does, else why not, in one line."""
    if importlib.util.find_spec("torch") is not None:
        return None
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "-r"]
    pip += [str(ROOT / "requirements-bench.txt"), "-c", str(ROOT / "constraints.txt")]
    plan = subprocess.run([*pip, "--dry-run", "--report", "-"], capture_output=True, text=True)
    if plan.returncode != 0:
        return "pip cannot install requirements-bench.txt: " + _last_line(plan.stderr)
    names = [item["metadata"]["name"] for item in json.loads(plan.stdout)["install"]]
    cuda = [name for name in names if name.lower().startswith("nvidia-")]
    if cuda:
        return (
            f"pip offers only PyTorch's CUDA build here ({len(cuda)} nvidia-* packages, "
            "several GB); install a CPU build of torch by hand to compare"
        )
    print("installing PyTorch (CPU build) from requirements-bench.txt...", flush=True)
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0:
        return "pip install -r requirements-bench.txt failed: " + _last_line(done.stderr)
    importlib.invalidate_caches()
    return None


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:160] if lines else "no message"


def _cpu_of_others() -> tuple[int, int] | None:
    """Clock ticks that all processes, and this one, have spent on the CPU (Linux only)."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        with open("/proc/self/stat") as f:
            mine = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(ticks) - ticks[3] - ticks[4], int(mine[11]) + int(mine[12])


def take_turns(calls: dict, seconds: float, min_rounds: int = 5, pause=()) -> dict:
    """Each call's best and median time over rounds in which every call runs once.

    ``others`` is the CPU that other processes used during the best run, in cores (0 on
    a quiet machine, up to the number of cores), or ``None`` where it cannot be read.
    After the calls named in ``pause`` the next one waits 0.15 s: when BLAS has used
    two threads, its idle thread keeps spinning on a core for about 0.1 s, and it would
    slow the next call down (``attention_lib/parallel.py``); PyTorch's threads linger
    too (the library's best run, taking turns with PyTorch, was 64 ms without the
    pauses and 60 ms with them, against 58 ms alone).
    """
    runs = {name: [] for name in calls}
    for call in calls.values():
        call()  # the warm-up, not timed
    start, rounds = time.perf_counter(), 0
    while rounds < min_rounds or time.perf_counter() - start < seconds:
        for name, call in calls.items():
            before = _cpu_of_others()
            t0 = time.perf_counter()
            call()
            t = time.perf_counter() - t0
            after = _cpu_of_others()
            others = None
            if before and after:
                ticks = (after[0] - before[0]) - (after[1] - before[1])
                others = max(0, ticks) / os.sysconf("SC_CLK_TCK") / t
            runs[name].append((t, others))
            if name in pause:
                time.sleep(0.15)
        rounds += 1
    result = {}
    for name, times in runs.items():
        best, others = min(times, key=lambda run: run[0])
        result[name] = {
            "best_ms": best * 1e3,
            "median_ms": statistics.median(t for t, _ in times) * 1e3,
            "others_cores": others,
            "runs": len(times),
        }
    return result


def compare(peak_gflops: float, seconds: float = 30.0) -> dict:
    """Time both libraries on the same layer; ``{"skipped": why}`` without PyTorch.

    A matrix product of the peak's kind takes its turn too, and the best of the peak
    given and its own runs is the peak the ratios use (``peak_gflops`` in the result).
    So does the same product in PyTorch (``torch_peak_gflops``): its own matrix library
    may be faster or slower than NumPy's on this CPU.
    """
    why = install()
    if why:
        return {"skipped": why}
    import torch

    import attention_lib as al

    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D_MODEL))
    Ws = [rng.standard_normal((D_MODEL, D_MODEL)) / D_MODEL**0.5 for _ in "qkvo"]
    mha = torch.nn.MultiheadAttention(
        D_MODEL, H, bias=False, batch_first=True, dtype=torch.float64
    ).eval()
    with torch.no_grad():  # row vectors here, column vectors there: PyTorch gets W.T
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W.T for W in Ws[:3]])))
        mha.out_proj.weight.copy_(torch.from_numpy(Ws[3].T))
    x = torch.from_numpy(X)[None]  # (1, n, d_model): one sequence, batch_first

    def torch_mha(need_weights: bool):
        with torch.inference_mode():
            return mha(x, x, x, need_weights=need_weights, average_attn_weights=False)

    ours, weights = al.multi_head_attention(X, *Ws, H)
    theirs, their_weights = torch_mha(True)
    agree = max(
        float(np.abs(theirs[0].numpy() - ours).max()),
        float(np.abs(their_weights[0].numpy() - weights).max()),
        float(np.abs(torch_mha(False)[0][0].numpy() - ours).max()),
    )
    calls = {
        "ours": lambda: al.multi_head_attention(X, *Ws, H),
        "ours_no_weights": lambda: al.multi_head_attention(X, *Ws, H, need_weights=False),
        "torch": lambda: torch_mha(True),
        "torch_no_weights": lambda: torch_mha(False),
        "peak": lambda: A @ A,
        "torch_peak": lambda: A_torch @ A_torch,  # PyTorch's own matrix library
    }
    A = rng.standard_normal((2048, 2048))
    A_torch = torch.from_numpy(A)
    load_before = os.getloadavg()[0]
    rows = take_turns(calls, seconds, pause=set(calls))  # each starts with idle threads
    peak_gflops = max(peak_gflops, 2 * 2048**3 / (rows.pop("peak")["best_ms"] / 1e3) / 1e9)
    torch_peak = 2 * 2048**3 / (rows.pop("torch_peak")["best_ms"] / 1e3) / 1e9
    for row in rows.values():
        row["ratio_vs_float64_peak"] = FLOPS / (row["best_ms"] / 1e3) / 1e9 / peak_gflops
    return {
        "peak_gflops": peak_gflops,
        "torch_peak_gflops": torch_peak,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "largest_difference": agree,
        "load": [load_before, os.getloadavg()[0]],
        "rows": rows,
    }


LABELS = {
    "ours": "al.multi_head_attention",
    "ours_no_weights": "al.multi_head_attention(need_weights=False)",
    "torch": "nn.MultiheadAttention, weights per head",
    "torch_no_weights": "nn.MultiheadAttention, need_weights=False",
}


def lines(c: dict, goal: float) -> list[str]:
    """The section as ``make bench`` prints it."""
    if "skipped" in c:
        return [f"1b. PyTorch comparison skipped: {c['skipped']}"]
    r = c["rows"]
    lines = [
        f"1b. Against PyTorch {c['torch']} ({c['torch_threads']} threads), float64, n={N}, "
        f"d_model={D_MODEL}, h={H}; same weights, results agree to "
        f"{c['largest_difference']:.1e}; load {c['load'][0]:.2f} before, {c['load'][1]:.2f} "
        f"after; peak {c['peak_gflops']:.1f} GFLOP/s (the same product in PyTorch: "
        f"{c['torch_peak_gflops']:.1f})",
        f"{'function':<46}{'best ms':>9}{'median':>9}{'% f64 peak':>12}{'others':>8}  vs PyTorch",
    ]
    for name, label in LABELS.items():
        row = r[name]
        others = "-" if row["others_cores"] is None else f"{row['others_cores']:.2f}"
        versus = ""
        if name.startswith("ours"):
            theirs = r[name.replace("ours", "torch")]["best_ms"]
            versus = f"{row['best_ms'] / theirs:.2f}x the time"
        lines.append(
            f"{label:<46}{row['best_ms']:>9.1f}{row['median_ms']:>9.1f}"
            f"{row['ratio_vs_float64_peak']:>11.0%} {others:>8}  {versus}"
        )
    ok_peak = r["ours"]["ratio_vs_float64_peak"] >= goal
    ok_weights = r["ours"]["best_ms"] <= r["torch"]["best_ms"]
    ok_alone = r["ours_no_weights"]["best_ms"] <= r["torch_no_weights"]["best_ms"]
    lines.append(
        f"Targets (issue #32): >= {goal:.0%} of peak {'ok' if ok_peak else 'MISSED'}; "
        f"<= 1.0x PyTorch with weights {'ok' if ok_weights else 'MISSED'}; without "
        f"weights <= 1.0x {'ok' if ok_alone else 'MISSED'}. 'others': cores that other "
        "processes used during the best run (0 = a quiet machine)"
    )
    return lines


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tools"))
    from bench.report import TARGETS
    from bench.throughput import peak

    peak_gflops = peak(np.float64)["gflops"]
    print(f"Peak float64 matmul: {peak_gflops:.1f} GFLOP/s")
    print("\n".join(lines(compare(peak_gflops), TARGETS["mha_float64_ratio"])))
