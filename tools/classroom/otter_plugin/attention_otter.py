"""The otter plugin that grades a submission with the course's grader, outside the kernel.

``otter run`` and Gradescope's ``run_autograder`` execute the submitted notebook in a
Jupyter kernel and read the test results back from it, so whatever the student's cells
do in that kernel (patch the checkers, patch otter, leave a process behind) can change
the scores. With this plugin (``otter_export.py`` names it in ``otter_config.json``):

1. ``before_execution``: the course's grader (``grader/`` in the autograder zip, the
   same ``tools/grade.py`` as ``make grade``) grades the submitted notebook: the answer
   cells run in its bubblewrap sandbox, the checkers in the grader's process, with
   unseen cases and tripwires. Then otter gets an empty notebook, so none of the
   student's code runs in otter's kernel at all.
2. ``after_grading``: each question's score and message are replaced by the grader's;
   otter then writes ``results.json`` as usual, from those.

Where bubblewrap cannot run, grading fails (every question 0, with the reason) unless the
plugin's configuration says ``{"sandbox": "optional"}``: then the answer cells run in a
plain process of the autograder's user, still outside the kernel.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from otter.plugins import AbstractOtterPlugin
from otter.test_files.abstract_test import TestCaseResult

QUESTIONS = "questions.json"  # in grader/: {otter question name: gradebook column}


class GraderFailed(Exception):
    """The course's grader did not grade the submission; the message says why."""


def grader_dir(submission_path: str) -> Path:
    """``<autograder>/source/grader``: shipped in the zip, never in the student's files."""
    return Path(submission_path).resolve().parents[1] / "source" / "grader"


def run_grader(grader: Path, notebook: Path, unsafe: bool, seed: int) -> dict:
    """The grader's state for ``notebook``: ``{"points": ..., "feedback": ...}``."""
    with tempfile.TemporaryDirectory() as work:
        folder, out = Path(work) / "submissions", Path(work) / "grades"
        folder.mkdir()
        (folder / "submission.ipynb").write_bytes(notebook.read_bytes())
        command = [sys.executable, str(grader / "tools" / "grade.py"), str(folder)]
        command += ["--out", str(out), "--seed", str(seed), "--jobs", "1"]
        command += ["--unsafe-no-sandbox"] if unsafe else []
        env = {**os.environ, "PYTHONPATH": str(grader)}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise GraderFailed(reason)
        state = json.loads((out / ".state.json").read_text())
    (chapters,) = state["students"].values()
    if len(chapters) != 1:
        raise GraderFailed("the submission holds no chapter the grader knows")
    return next(iter(chapters.values()))


class AttentionGrader(AbstractOtterPlugin):
    def before_execution(self, submission):
        grader = grader_dir(self.submission_path)
        self.columns = json.loads((grader / QUESTIONS).read_text())
        config = self.plugin_config or {}
        seed = secrets.randbits(63)
        try:
            try:
                self.verdict = run_grader(grader, Path(self.submission_path), False, seed)
            except GraderFailed:
                if config.get("sandbox") != "optional":
                    raise
                self.verdict = run_grader(grader, Path(self.submission_path), True, seed)
            self.error = None
        except (GraderFailed, subprocess.TimeoutExpired, OSError, ValueError) as err:
            self.verdict, self.error = None, f"the course's grader could not grade this: {err}"
        submission.cells = []  # nothing of the student's runs in otter's kernel
        return submission

    def after_grading(self, results):
        lines = {}
        if self.verdict is not None:
            for line in self.verdict["feedback"]:
                if line.startswith("[") and "] " in line:
                    lines[line[1 : line.index("] ")]] = line
        for name, test_file in results.results.items():
            column = self.columns.get(name)
            points = (self.verdict or {}).get("points", {}).get(column)
            score = test_file.possible if points else 0
            message = lines.get(column) or self.error or "not graded"
            test_file.update_score(score)
            test_file.test_case_results = [
                TestCaseResult(case, message, bool(points)) for case in test_file.test_cases
            ]
        status = ", ".join((self.verdict or {}).get("status", [])) or "not graded"
        lines = [f"Graded by the course's grader ({status})."]
        lines += [self.error] if self.error else (self.verdict or {}).get("feedback", [])
        lines += [f"flag: {f}" for f in (self.verdict or {}).get("flags", [])]
        results.set_output("\n".join(lines))
