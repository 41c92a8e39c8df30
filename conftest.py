"""pytest, wherever it runs in this repository: checks that execute chapters are not run again
while their inputs are unchanged (tools/testrun/reuse.py; ``FULL=1`` runs everything)."""

pytest_plugins = ["tools.testrun.reuse"]
