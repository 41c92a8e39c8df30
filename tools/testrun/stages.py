"""`make test`: every check of the project, run as stages that share the machine's cores.

    python tools/testrun/stages.py [stage ...]      (no argument: all stages)

Each stage is one command. A stage starts as soon as the stages it needs have passed and
there is room for it: ``cores`` is how many cores it keeps busy, and the stages running
may ask for ``SLACK`` more than the machine has, because every stage also waits (for
kernels, pip, a browser), and a core left idle is time lost. Stages start in list order,
longest first, so a wide stage is never starved by narrow ones behind it and no long
stage is left to run alone at the end. Each chapter runs once in the project's environment
(the book build, whose execution cache the unit tests then read) and once in the learner's
(strict nbval, on a kernel of the Binder environment), besides the Colab-like and the
classroom checks, which need environments of their own.

Every stage gets one BLAS thread per process (``ONE_THREAD``). Output goes to
``_build/test-logs/<stage>.log``; a failing stage prints its last lines. At the end a table
shows every stage, its wall-clock time and the CPU time of its processes, so a slow stage
is seen at once. (Chromium's processes are not children the stage waits for, so the
browser checks' CPU column leaves out the browser; the last line, the CPU the whole
machine spent meanwhile from ``/proc/stat``, has it.) The exit status is 1 if any stage
failed.

The checks that execute chapters (strict nbval, the Colab and student-copy runs, the
graders) are not run again while their inputs are unchanged (``tools/testrun/reuse.py``); the
table's last line says how many were reused. ``FULL=1`` (``make test FULL=1``) runs all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "_build" / "test-logs"
PY = str(ROOT / ".venv" / "bin" / "python")
CORES = os.cpu_count() or 2
SLACK = 2  # cores' worth of stages beyond CORES that may run at once
# Every stage runs beside others on the same cores, so each process gets one BLAS thread:
# the course's matrices are tiny, and OpenBLAS threads that spin waiting for a busy core
# made chapter 10's training cells 3-4 times slower (nbval, 2 cores: 78 s for one cell).
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class Stage:
    name: str
    command: list[str]
    needs: tuple[str, ...] = ()
    cores: int = 1
    what: str = ""


def pytest(*args: str) -> list[str]:
    return [PY, "-m", "pytest", "-q", *args]


# Hypothesis's pytest plugin imports hypothesis when a session ends: 1.1 s of CPU in each
# process. Only the unit tests use it; the other stages' pytest processes leave it out.
NO_HYPOTHESIS = ("-p", "no:hypothesispytest")


STAGES = [
    Stage("lint", ["make", "--no-print-directory", "lint"], cores=1, what="ruff check and format"),
    Stage(
        "binder-env",
        [PY, "tools/classroom/envs.py", "binder"],
        cores=0,  # mostly waiting for pip
        what="the Binder environment and its kernel (cached by the hash of its inputs)",
    ),
    Stage(
        "book",
        ["make", "--no-print-directory", "site-build"],
        needs=("lint",),
        what="jupyter-book -W -n: executes each chapter once (cached), zero warnings",
    ),
    Stage(
        "nbval",
        ["make", "--no-print-directory", "nbval", "XDIST="],
        needs=("lint", "binder-env"),
        what="strict nbval on the Binder kernel: runs each chapter, compares every output",
    ),
    Stage(
        "binder",
        pytest("tests/binder", *NO_HYPOTHESIS),
        needs=("binder-env", "book"),
        what="Binder's environment, Colab's setup cells, JupyterLab's rendering",
    ),
    Stage(
        "site",
        pytest("tests/site", "-rs", "-n", "2", "--dist", "loadgroup", *NO_HYPOTHESIS),
        needs=("book",),
        cores=2,
        what="browser checks on the built site",
    ),
    Stage(
        "classroom",
        pytest("tests/classroom", *NO_HYPOTHESIS),
        needs=("lint",),
        what="otter run and nbgrader autograde for real; the student repository runs",
    ),
    Stage(
        "unit",
        pytest(
            "tests",
            "--ignore=tests/site",
            "--ignore=tests/binder",
            "--ignore=tests/classroom",
            "-n",
            str(CORES),
            "--dist",
            "loadfile",
        ),
        needs=("book",),
        cores=CORES,
        what="library, checkers, grader, house rules; reads the book's executed chapters",
    ),
]


def machine_cpu() -> float | None:
    """Seconds of CPU the whole machine has spent (user, nice, system), where Linux says."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    return sum(int(x) for x in fields[1:4]) / os.sysconf("SC_CLK_TCK")


def run(selected: list[Stage]) -> int:
    LOGS.mkdir(parents=True, exist_ok=True)
    machine_start = machine_cpu()
    names = {stage.name for stage in selected}
    waiting = list(selected)
    running: dict[str, tuple[subprocess.Popen, float, Stage]] = {}
    done: dict[str, tuple[int, float, float]] = {}  # return code, wall and CPU seconds
    start = time.monotonic()
    while waiting or running:
        busy = sum(stage.cores for _, _, stage in running.values())
        for stage in list(waiting):
            needs = [done.get(n) for n in stage.needs if n in names]
            if any(need is not None and need[0] != 0 for need in needs):
                waiting.remove(stage)  # a stage it needs failed: skip this one
                done[stage.name] = (-1, 0.0, 0.0)
                continue
            if None in needs:
                continue  # still waiting for a stage it needs
            if running and busy + stage.cores > CORES + SLACK:
                break  # no room: later stages must not jump ahead of this one
            log = (LOGS / f"{stage.name}.log").open("w")
            process = subprocess.Popen(
                stage.command,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **ONE_THREAD},
            )
            running[stage.name] = (process, time.monotonic(), stage)
            busy += stage.cores
            waiting.remove(stage)
            print(f"[{time.monotonic() - start:6.0f} s] start  {stage.name}: {stage.what}")
        for name, (process, began, _) in list(running.items()):
            # wait4 also gives the CPU time of the stage and every process it waited for.
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                process.returncode = os.waitstatus_to_exitcode(status)
                seconds = time.monotonic() - began
                done[name] = (process.returncode, seconds, usage.ru_utime + usage.ru_stime)
                del running[name]
                verdict = "ok" if process.returncode == 0 else f"FAILED ({process.returncode})"
                print(f"[{time.monotonic() - start:6.0f} s] {verdict:6} {name} in {seconds:.0f} s")
                if process.returncode:
                    tail = (LOGS / f"{name}.log").read_text(errors="replace").splitlines()[-40:]
                    print("\n".join(f"    {line}" for line in tail))
        time.sleep(0.2)
    total = time.monotonic() - start
    print(f"\n{'stage':<11} {'result':<8} {'seconds':>7} {'CPU s':>6}  what it checks")
    for stage in selected:
        code, seconds, cpu = done[stage.name]
        result = {0: "ok", -1: "skipped"}.get(code, "FAILED")
        print(f"{stage.name:<11} {result:<8} {seconds:7.0f} {cpu:6.0f}  {stage.what}")
    cpu = sum(cpu for _, _, cpu in done.values())
    print(f"{'total':<11} {'':<8} {total:7.0f} {cpu:6.0f}  wall clock on {CORES} cores")
    if machine_start is not None:  # the browsers too, and whatever else was running
        print(
            f"{'machine':<11} {'':<8} {'':>7} {machine_cpu() - machine_start:6.0f}  "
            "CPU of the whole machine meanwhile"
        )
    reused = {stage.name: _reused(stage.name) for stage in selected}
    if any(reused.values()):
        counts = ", ".join(f"{name} {n}" for name, n in reused.items() if n)
        print(f"{'reused':<11} {'':<8} {'':>7} {'':>6}  passing runs whose inputs are unchanged: "
              f"{counts} (FULL=1 runs them)")  # fmt: skip
    return 0 if all(code == 0 for code, _, _ in done.values()) else 1


def _reused(name: str) -> int:
    """How many passing runs a stage's log says it reused (tools/testrun/reuse.py)."""
    path = LOGS / f"{name}.log"
    log = path.read_text(errors="replace") if path.exists() else ""
    return sum(int(n) for n in re.findall(r"^reused (\d+) passing runs", log, re.M))


def main(argv: list[str]) -> int:
    sys.stdout.reconfigure(line_buffering=True)  # progress lines appear as they happen in CI
    by_name = {stage.name: stage for stage in STAGES}
    unknown = [name for name in argv if name not in by_name]
    if unknown:
        print(f"unknown stage(s) {unknown}; stages: {', '.join(by_name)}", file=sys.stderr)
        return 2
    return run([by_name[name] for name in argv] if argv else STAGES)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
