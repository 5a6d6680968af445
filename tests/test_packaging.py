"""The wheel, installed into a fresh virtualenv, works as the README's "Try it" says.

Builds the wheel from this checkout (``pip wheel . --no-deps``: it needs only
pip; the build backend comes from the package registry), installs it into a
new ``python -m venv`` with plain ``pip install WHEEL`` (the runtime
dependencies come from the registry too: allow a few minutes), and then, from
a directory outside the checkout so that nothing is imported from it:

* ``mcpeek --version`` prints the version of ``inspector/__init__.py``;
* ``mcpeek demo --headless`` runs the bundled session without the ``mcp`` SDK
  (a dev-only dependency, not installed) and reports the two deliberate
  violations;
* ``mcpeek lint`` of bundled example captures: the conformant one exits 0,
  the one with violations exits 1 naming its rules.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpeek.inspector import __version__

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT = 900  # seconds: the runtime dependencies come from the registry
DEMO_RULES = ["result.result-type-missing", "tools.output-schema"]
VIOLATIONS_RULES = [
    "notification.with-id",
    "progress.not-increasing",
    "response.unknown-id",
    "result.result-type-missing",
    "tools.output-schema",
]


@dataclass
class Installed:
    wheel: Path
    venv: Path
    workdir: Path  # outside the checkout

    def bin(self, name: str) -> str:
        scripts = "Scripts" if os.name == "nt" else "bin"
        return str(self.venv / scripts / name)

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["MCPEEK_HOME"] = str(self.workdir / "home")  # no capture lands in the user's state
        return subprocess.run(
            list(argv),
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("packaging")
    dist = root / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-w", str(dist), "-q"],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
    )
    _check(build, "pip wheel")
    wheels = list(dist.glob("mcpeek-*.whl"))
    assert len(wheels) == 1, wheels
    venv = root / "venv"
    _check(
        subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300
        ),
        "python -m venv",
    )
    workdir = root / "work"
    workdir.mkdir()
    result = Installed(wheels[0], venv, workdir)
    _check(
        result.run(result.bin("pip"), "install", "-q", str(wheels[0]), timeout=INSTALL_TIMEOUT),
        "pip install WHEEL",
    )
    yield result
    shutil.rmtree(root, ignore_errors=True)


def test_the_wheel_carries_the_version_the_license_and_the_demo(installed: Installed) -> None:
    assert installed.wheel.name == f"mcpeek-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"mcpeek-{__version__}.dist-info/METADATA").decode()
    assert f"mcpeek-{__version__}.dist-info/licenses/LICENSE" in names
    assert {"mcpeek/inspector/demo/server.py", "mcpeek/inspector/demo/client.py"} <= names
    # One import name: nothing at the top level another distribution could own too.
    tops = {name.split("/")[0] for name in names}
    assert tops == {"mcpeek", f"mcpeek-{__version__}.dist-info"}
    assert f"\nVersion: {__version__}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata


def test_installed_from_the_wheel_not_the_checkout(installed: Installed) -> None:
    code = "import importlib.util; from mcpeek import inspector; print(inspector.__file__); "
    code += "print(importlib.util.find_spec('mcp') is None)"
    proc = installed.run(installed.bin("python"), "-c", code)
    _check(proc, "from mcpeek import inspector")
    where, no_sdk = proc.stdout.splitlines()
    assert Path(where).resolve().is_relative_to(installed.venv.resolve())
    assert no_sdk == "True"  # the SDK is a dev dependency: the demo must do without it


def test_version(installed: Installed) -> None:
    proc = installed.run(installed.bin("mcpeek"), "--version")
    _check(proc, "mcpeek --version")
    assert proc.stdout.strip() == f"mcpeek {__version__}"


def test_demo_headless(installed: Installed) -> None:
    proc = installed.run(installed.bin("mcpeek"), "demo", "--headless")
    _check(proc, "mcpeek demo --headless")
    out = proc.stdout
    assert "→ tools/call deploy  ids 6→7  ← complete" in out
    assert "→ tools/call search  id 11  ← cancelled" in out
    rules = re.findall(r"^  (?:ERROR|WARNING|INFO)\s+(\S+)  \(\d+\)$", out, re.MULTILINE)
    assert sorted(rules) == DEMO_RULES
    capture = Path(re.findall(r"^capture: (.+)$", out, re.MULTILINE)[-1])
    try:
        lint = installed.run(installed.bin("mcpeek"), "lint", "--format", "json", str(capture))
        assert lint.returncode == 1, lint.stderr
        assert sorted(json.loads(line)["rule"] for line in lint.stdout.splitlines()) == DEMO_RULES
    finally:
        capture.unlink(missing_ok=True)


def test_mcp_without_the_sdk_says_what_to_install(installed: Installed) -> None:
    proc = installed.run(installed.bin("mcpeek"), "mcp")  # the SDK is the mcp extra's
    assert proc.returncode == 2
    hint = "pip install '.[mcp]' in mcpeek's clone"
    said = f"mcpeek: mcpeek mcp needs the official MCP SDK: {hint}\n"
    assert proc.stderr == said


@pytest.mark.parametrize(
    ("capture", "code", "rules"),
    [("modern-stdio.jsonl", 0, []), ("violations.jsonl", 1, VIOLATIONS_RULES)],
)
def test_lint_a_bundled_capture(
    installed: Installed, capture: str, code: int, rules: list[str]
) -> None:
    copy = installed.workdir / capture
    shutil.copyfile(REPO / "captures" / capture, copy)
    proc = installed.run(installed.bin("mcpeek"), "lint", capture)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stdout.startswith(f"{capture}: ")
    found = re.findall(r"^  (?:ERROR|WARNING|INFO)\s+(\S+)  \(\d+\)$", proc.stdout, re.MULTILINE)
    assert sorted(found) == rules


def test_packages_named_like_its_folders_do_not_shadow_it(installed: Installed) -> None:
    # django-rules installs a top-level ``rules``; other distributions own
    # ``inspector`` and ``tui``. Plant all three, broken, beside mcpeek.
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    proc = installed.run(installed.bin("python"), "-c", code)
    _check(proc, "find site-packages")
    site = Path(proc.stdout.strip())
    planted = [site / name for name in ("rules", "inspector", "tui")]
    try:
        for package in planted:
            package.mkdir()
            (package / "__init__.py").write_text("raise ImportError('a foreign package')\n")
        shutil.copyfile(REPO / "captures" / "violations.jsonl", installed.workdir / "v.jsonl")
        proc = installed.run(installed.bin("mcpeek"), "lint", "--format", "json", "v.jsonl")
        assert proc.returncode == 1, proc.stderr
        found = sorted({json.loads(line)["rule"] for line in proc.stdout.splitlines()})
        assert found == VIOLATIONS_RULES
        assert "Traceback" not in proc.stderr
    finally:
        for package in planted:
            shutil.rmtree(package, ignore_errors=True)
