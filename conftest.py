"""pytest, wherever it runs in this repository: checks that execute chapters are not run again
while nothing they read has changed (tools/reuse.py; ``FULL=1`` runs everything)."""

pytest_plugins = ["tools.reuse"]
