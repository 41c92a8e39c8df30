"""Number exercises per chapter: "Exercise 4.2" is the second exercise of chapter 4.

sphinx-exercise numbers exercises through Sphinx's figure numbering, which counts across
the whole book (Exercise 13) or restarts with each part of the table of contents. After
Sphinx has assigned its numbers, this extension renumbers the exercises of each page
``chapters/NN_topic`` as ``(NN, 1), (NN, 2), ...`` in page order. ``{numref}`` links and
the exercise titles both read these numbers, so they agree.

A small Sphinx extension, loaded through ``local_extensions`` in ``_config.yml``.
"""

import re

CHAPTER = re.compile(r"(?:^|/)(\d+)_[^/]+$")


def renumber(app, env):
    for docname, numbers in env.toc_fignumbers.items():
        match = CHAPTER.search(docname)
        exercises = numbers.get("exercise")
        if not match or not exercises:
            continue
        chapter = int(match.group(1))
        in_order = sorted(exercises, key=exercises.get)  # Sphinx numbered in page order
        numbers["exercise"] = {ids: (chapter, k) for k, ids in enumerate(in_order, start=1)}
    return []


def setup(app):
    app.connect("env-get-updated", renumber, priority=900)  # after Sphinx's own numbering
    return {"parallel_read_safe": True, "parallel_write_safe": True}
