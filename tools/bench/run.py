"""Benchmarks: how close the library gets to the machine, and how long the book takes.

    python tools/bench/run.py         # or: make bench   (a few minutes)
    python tools/bench/run.py --full  # also a clean `make book`, a no-change rebuild, `make test`

This is a measurement, not a test: nothing here fails because the machine is slow. It
prints one table (``report.py``) and writes the same numbers as JSON to
``_build/bench/bench.json`` (``--out`` to change). Each section:

1. **Attention against the machine's limit** (``throughput.py``): the FLOP rate of
   attention at several sizes, divided by the peak of a large matrix product measured in
   the same run.
   **1b.** ``multi_head_attention`` with and without weights beside PyTorch's
   ``nn.MultiheadAttention`` on the same layer (``vs_pytorch.py``; PyTorch is installed for
   it where pip offers a CPU build, and the section is skipped otherwise; ``--no-torch``
   skips it).
2. **Slider frames** and 3. **chapters** (``chapter_runs.py``): each chapter executed in a
   fresh kernel (nbclient), with its slowest cell and the time each slider's frames take.
4. **Pretrained model** (if ``attention_lib.pretrained`` and its weights are installed),
   and **chapter 12's decoder**: its training time and the KV cache per token, on one BLAS
   thread (``models.py``; ``--decoder`` runs only this).
5. ``--full`` only: the build and the test suite, as ``make`` runs them (``build_times.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the bench package
from bench import build_times, chapter_runs, models, report, throughput, vs_pytorch  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "_build" / "bench" / "bench.json"


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
        print("\n".join(report.decoder_lines(models.decoder_bench())))
        return 0
    r = {"machine": throughput.machine(), "targets": report.TARGETS}
    print("measuring the peak and attention...", flush=True)
    peaks = {"float64": throughput.peak(np.float64), "float32": throughput.peak(np.float32)}
    r["peak"] = peaks
    r["attention"] = throughput.attention_rows(peaks, args.quick) + throughput.ladder_rows(peaks)
    if not args.no_torch:
        print("comparing multi_head_attention with PyTorch's...", flush=True)
        r["torch"] = vs_pytorch.compare(r["peak"]["float64"]["gflops"])
    # Did the machine get busier meanwhile?
    r["peak_after"] = throughput.peak(np.float64, sizes=(2048,))
    throughput.best_peak(r)
    r["chapters"] = []
    if not args.no_chapters:
        for path in sorted((ROOT / "chapters").glob("*.ipynb")):
            print(f"running {path.name}...", flush=True)
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    r["chapters"].append(chapter_runs.run_chapter(path))
            except Exception as err:  # a broken chapter is reported, not fatal
                r["chapters"].append({"chapter": path.stem, "error": str(err)[:200]})
    r["pretrained"] = models.pretrained()
    print("training chapter 12's decoder...", flush=True)
    r["decoder"] = models.decoder_bench()
    if args.full:
        print("timing make book and make test (several minutes)...", flush=True)
        r["build"] = build_times.build_and_test()
    r["machine"]["load_after"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    r["bench_s"] = time.perf_counter() - t0
    text = report.table(r)
    print("\n" + text + f"\n\nmake bench took {r['bench_s']:.0f} s; JSON: {args.out}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(r, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
