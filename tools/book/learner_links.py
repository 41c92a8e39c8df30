"""Point each chapter page's Colab, Binder and download buttons at its learner edition.

The theme builds those buttons from the page's source, ``chapters/NN_topic.ipynb``: the
course's source, with its test cells and MyST that Colab shows raw. This extension swaps
in ``notebooks/NN_topic.ipynb``, the learner edition (``tools/editions/learner.py``):

* the Colab and Binder links name it in the repository (so a fork's buttons open the
  fork's copy, after its one ``repository: url:`` change): Colab opens
  ``notebooks/NN_topic.ipynb``, Binder's JupyterLab (with jupyterlab-myst) the form whose
  folds it typesets, ``notebooks/lab/NN_topic.ipynb``;
* the download link serves the copy put beside the pages, ``notebooks/NN_topic.ipynb``.

Where a chapter has no learner edition (the course site of ``make book-course``, whose
downloads are the student copies), its buttons are left as they are.

A small Sphinx extension, loaded through ``local_extensions`` in ``_config.yml``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

FOLDER = "notebooks"
CHAPTER = re.compile(r"chapters/(\d\d_\w+)")


def edition(app, pagename: str) -> Path | None:
    match = CHAPTER.fullmatch(pagename)
    path = Path(app.srcdir) / FOLDER / f"{match.group(1)}.ipynb" if match else None
    return path if path and path.is_file() else None


def retarget(app, pagename, templatename, context, doctree):
    path = edition(app, pagename)
    if path is None:
        return
    source = f"chapters/{path.name}"
    download = f"{context['pathto'](FOLDER, 1)}/{path.name}"  # "../notebooks/05_x.ipynb"

    def visit(buttons: list) -> list:
        kept, downloads = [], 0
        for button in buttons:
            if isinstance(button.get("buttons"), list):
                button["buttons"] = visit(button["buttons"])
            url = button.get("url", "")
            if url.endswith(f"_sources/{source}"):
                downloads += 1
                if downloads > 1:  # the notebook and its "source" are one file here
                    continue
                button["url"] = download
                button["tooltip"] = "Download this chapter's notebook"
            elif source in url and "binder" in url:  # the path in the repository
                button["url"] = url.replace(source, f"{FOLDER}/lab/{path.name}")
            elif source in url:  # Colab
                button["url"] = url.replace(source, f"{FOLDER}/{path.name}")
            kept.append(button)
        return kept

    context["header_buttons"] = visit(context.get("header_buttons", []))


def copy_editions(app, exception):
    """Put the learner editions beside the pages, where the download links find them."""
    if exception is not None or app.builder.format != "html":
        return
    found = sorted((Path(app.srcdir) / FOLDER).glob("*.ipynb"))
    if not found:
        return
    target = Path(app.outdir) / FOLDER
    target.mkdir(exist_ok=True)
    for path in found:
        shutil.copy2(path, target / path.name)


def setup(app):
    app.connect("html-page-context", retarget, priority=600)  # after the theme's buttons
    app.connect("build-finished", copy_editions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
