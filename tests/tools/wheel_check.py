"""`make wheel-check`: the README's install section run as written in a clean virtualenv, then a small job run with
the installed `deltainc` from a folder outside the checkout.

    python tests/tools/wheel_check.py VENV

VENV is a fresh virtualenv; the Makefile built dist/ before (the section's `make dist`). The install section's
```bash blocks run in order, from the checkout's root with VENV activated, each line as written: the first installs
the wheel with its declared dependencies only. Then, in a temporary folder outside the checkout,
tests/tools/wheel_smoke.py imports every module and writes a small job over the seven transactions, and `deltainc
validate`, `run`, `status` and `report` of that job run as the commands a user types, each in a process of its own;
any of them that fails, or whose output names an import error, fails the check. The other blocks (the Connect extra)
run last, so that what they install cannot hide a dependency the wheel forgot.
Standard library only: it runs with any Python 3.10+.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
IMPORT_ERROR = re.compile(r"\b(ModuleNotFoundError|ImportError)\b")
DONE_BEFORE = "make dist"  # the Makefile's wheel-check target depends on dist: the wheel is built once


class CheckFailed(Exception):
    """A step of the check failed; the message says which and shows its output."""


def install_blocks(readme: str) -> list[str]:
    """The ```bash blocks of the README's `## Install` section, in order, with the `make dist` line left out."""
    if "\n## Install\n" not in readme:
        raise CheckFailed("README.md has no '## Install' section")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    blocks = []
    for code in FENCE.findall(section):
        lines = code.splitlines()
        makes = [line for line in lines if line.startswith("make ")]
        if any(not line.startswith(DONE_BEFORE + " ") and line != DONE_BEFORE for line in makes):
            raise CheckFailed(f"the install section runs {makes}; the wheel check knows only `{DONE_BEFORE}`")
        blocks.append("\n".join(line for line in lines if not line.startswith("make ")))
    if not blocks:
        raise CheckFailed("README.md's install section has no ```bash block")
    return blocks


def clean_env(venv: Path) -> dict[str, str]:
    """This environment with `venv` activated, and nothing that would let the checkout or deltainc's settings in."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DELTAINC_", "PYTHON", "PYSPARK_", "SPARK_")) and name != "VIRTUAL_ENV"
    }
    return {
        **kept,
        "VIRTUAL_ENV": str(venv),
        "PATH": f"{venv / 'bin'}{os.pathsep}{kept.get('PATH', '')}",
        "DELTAINC_SPARK__SHUFFLE_PARTITIONS": "2",  # sized for a small job, as a user's settings would be
    }


def step(name: str, command: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run `command`; its stdout, or CheckFailed when it exits non-zero or its output names an import error."""
    clock = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    print(f"{name}: exit {done.returncode} in {time.monotonic() - clock:.0f} s", flush=True)
    output = f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    if done.returncode != 0:
        raise CheckFailed(f"{name} exited {done.returncode}\n{output}")
    if IMPORT_ERROR.search(done.stdout + done.stderr):
        raise CheckFailed(f"{name} names an import error\n{output}")
    return done.stdout


def run_job(venv: Path, folder: Path, env: dict[str, str]) -> None:
    """The seed example and its job's commands from `folder`, with the wheel's `deltainc`."""
    deltainc = str(venv / "bin" / "deltainc")
    step("deltainc --version", [deltainc, "--version"], folder, env)
    step(
        "tests/tools/wheel_smoke.py",
        [str(venv / "bin" / "python"), str(ROOT / "tests" / "tools" / "wheel_smoke.py")],
        folder,
        env,
    )
    step("deltainc validate seed", [deltainc, "validate", "seed"], folder, env)
    step("deltainc run seed", [deltainc, "run", "seed"], folder, env)
    status = json.loads(step("deltainc status seed --json", [deltainc, "status", "seed", "--json"], folder, env))
    if status["problem"] is not None or status["watermark"] is None:
        raise CheckFailed(f"the status after the run shows no watermark or a problem: {status}")
    if status["watermark"] != status["latest_available"] or status["runs"][0]["status"] != "succeeded":
        raise CheckFailed(f"the run did not catch the job up to its sources' latest day: {status}")
    step("deltainc report seed", [deltainc, "report", "seed"], folder, env)
    if not (folder / "seed-report.html").is_file():
        raise CheckFailed(f"deltainc report wrote no {folder / 'seed-report.html'}")


def main(venv: Path) -> int:
    venv = venv.absolute()
    env = clean_env(venv)
    folder = Path(tempfile.mkdtemp(prefix="deltainc-wheel-check-"))
    try:
        first, *others = install_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
        step("README install section, block 1", ["bash", "-ec", first], ROOT, env)
        run_job(venv, folder, env)
        for number, block in enumerate(others, start=2):
            step(f"README install section, block {number}", ["bash", "-ec", block], ROOT, env)
        if others:  # the Connect extra: its client imports
            step(
                "the Connect client imports",
                [str(venv / "bin" / "python"), "-c", "import pyspark.sql.connect.session"],
                folder,
                env,
            )
    except CheckFailed as exc:
        print(f"the wheel check failed (its job's folder is kept: {folder}): {exc}")
        return 1
    shutil.rmtree(folder)
    version = subprocess.run([str(venv / "bin" / "deltainc"), "--version"], capture_output=True, text=True, env=env)
    print(
        f"{version.stdout.strip()} from the wheel: the README's install section as written, every module imports, "
        "the seed example gives its outcomes, and validate, run, status and report of a job exit 0"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
