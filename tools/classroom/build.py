"""Write the classroom exports into _build/classroom/ (`make classroom`).

    python tools/classroom/build.py [STEM ...]     # default: every chapter

otter (Gradescope) and nbgrader (JupyterHub) run from their own virtual environment,
_build/classroom-venv, built from requirements-classroom.txt (see envs.py).
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nbgrader_export  # noqa: E402
import otter_export  # noqa: E402
import student_repo  # noqa: E402
from common import OUT, all_stems  # noqa: E402
from envs import classroom_venv  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stems", nargs="*", help="chapters (05_softmax ...); default: all")
    parser.add_argument("--jobs", type=int, default=2, help="otter assign runs at once")
    args = parser.parse_args(argv)
    stems = args.stems or all_stems()
    venv = classroom_venv()
    for stem in stems:
        print(f"nbgrader: {nbgrader_export.build(stem)}")
    print(f"student repository: {student_repo.build()}")
    with ThreadPoolExecutor(args.jobs) as pool:
        for zipped in pool.map(lambda s: otter_export.build(s, venv), stems):
            print(f"otter: {zipped}")
    print(f"Classroom exports written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
