"""Re-execute chapter notebooks in place so their committed outputs are fresh.

    python tools/authoring/refresh_outputs.py chapters/*.ipynb
    python tools/authoring/refresh_outputs.py --retime chapters/09_all_at_once.ipynb

The result is deterministic: running it twice leaves `git diff` empty, on any Python
version. The outputs of a cell tagged nbval-ignore-output (timings it prints, a figure of
them) stay as committed while the cell's code is unchanged since the last commit.

--retime  store every cell's fresh output, timings included: then the printed numbers,
          the figure drawn from them and the prose checks all come from one run.

It also records no execution timestamps, stores no widget state, and drops the
widget-view outputs (they carry a random model id, and a slider's static HTML beside it
holds every frame) and the Python version. The plain-text line beside each widget stays,
and the website re-executes the chapters anyway, so its sliders are fresh.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def tidy(nb) -> None:
    """Drop what differs from run to run or only the website needs: widget views and
    state, and the static HTML form of a slider (it travels with its widget view)."""
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if data.pop(WIDGET_VIEW, None) is not None:
                data.pop("text/html", None)
    nb["metadata"].pop("widgets", None)


IGNORED = "nbval-ignore-output"  # outputs that differ from run to run: timings, widgets


def measured(nb) -> dict[str, tuple[str, list]]:
    """The outputs of each cell tagged nbval-ignore-output, by cell id, with its source."""
    return {
        cell.id: (cell.source, list(cell.outputs))
        for cell in nb.cells
        if cell.cell_type == "code" and IGNORED in cell.metadata.get("tags", [])
    }


def committed(path: Path):
    """The notebook as the last commit has it, or None (a new file, or no git)."""
    try:
        done = subprocess.run(
            ["git", "show", f"HEAD:./{path.name}"], cwd=path.parent, capture_output=True, text=True
        )
    except OSError:
        return None
    return nbformat.reads(done.stdout, as_version=4) if done.returncode == 0 else None


def keep_measurements(nb, before: dict[str, tuple[str, list]]) -> None:
    """Give a cell whose source is unchanged since the last commit the outputs (timings, a
    figure of them) it was committed with. (A cell edited since then shows fresh ones:
    comparing with the file on disk would keep the old timings under the new code.)

    A timing printed by a cell tagged nbval-ignore-output is new on every run; keeping the
    committed one while the code that measured it is unchanged keeps `make outputs`
    repeatable. The website executes each chapter itself and shows fresh numbers.
    """
    for cell in nb.cells:
        source, outputs = before.get(cell.get("id"), (None, []))
        if source == cell.source and outputs:
            cell.outputs = outputs


def refresh(path: Path, *, retime: bool = False) -> None:
    nb = nbformat.read(path, as_version=4)
    last = None if retime else committed(path)
    before = measured(last) if last is not None else {}
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
        coalesce_streams=True,  # one print can arrive in two chunks under load
    )
    client.execute()
    keep_measurements(nb, before)
    tidy(nb)
    nb.metadata.get("language_info", {}).pop("version", None)  # same file on any Python
    nbformat.validate(nb)
    nbformat.write(nb, path)
    print(f"refreshed {path}")


def main(args: list[str]) -> int:
    if not args or any(p in ("-h", "--help") for p in args):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if args else 2
    retime = "--retime" in args
    paths = [p for p in args if p != "--retime"]
    unknown = [p for p in paths if p.startswith("-") or not p.endswith(".ipynb")]
    if unknown:
        print(f"not a notebook: {', '.join(unknown)}\n\n{__doc__.strip()}", file=sys.stderr)
        return 2
    if not paths:
        print(f"no notebook given\n\n{__doc__.strip()}", file=sys.stderr)
        return 2
    for name in paths:
        refresh(Path(name), retime=retime)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
