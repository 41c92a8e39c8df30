"""Sections 2 and 3 of ``make bench``: each chapter in a fresh kernel, and its sliders.

Every ``frame_slider(...)`` call in ``chapters/*.ipynb`` is timed while the chapter runs (a
hook cell wraps ``attention_lib.widgets.frame_slider``), so new chapters are measured
without any edit here; each chapter's slowest cell is reported beside its total.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

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
