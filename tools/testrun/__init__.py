"""``make test``: every check of the project, and what lets a rerun skip what already passed.

``stages`` runs the checks as stages that share the machine's cores, each as soon as the
stages it needs have passed (ruff, the Binder environment, the book build, strict nbval,
the Binder, browser and classroom checks, the unit tests), and ends with a table of their
times. ``reuse`` is a pytest plugin that the repository's ``conftest.py`` loads into every
pytest run: a check that executes chapters is not run again while its inputs are
unchanged (``FULL=1`` runs them all).
"""
