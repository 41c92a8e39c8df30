"""The notebooks made from a chapter for the people who run it, never edited by hand.

``learner`` (``make notebooks``, and the last step of ``make outputs``) writes the learner
edition, ``notebooks/``, which the site's Colab, Binder and download buttons open: its
first cell comes from ``setup_cell`` (it installs the library where it is missing), and
``myst`` turns the chapter's MyST into CommonMark with math. ``student`` (``make
student``) writes the student copies into ``_build_student/``: no solutions, no outputs,
and the marks the grader reads. Both read a chapter's exercises with ``tools/exercises.py``.
The course site (``tools/book/course_site.py``), the classroom exports and the grader's
benchmark build on ``student``; the course site also reads listings with ``myst``.
"""
