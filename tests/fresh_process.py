"""Run Python in a fresh interpreter with Django set up from the environment.

Settings are read once, at import, so checking what a given environment
produces needs a new process. Every variable config/settings.py reads is
removed first, so the child sees only what the test passes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETTINGS_VARIABLES = frozenset(
    re.findall(r'env_\w+\(\s*"([A-Z0-9_]+)"', (REPO / "config" / "settings.py").read_text())
)


def run_django(
    code: str, *, data_dir: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in SETTINGS_VARIABLES}
    environ.update(DJANGO_SETTINGS_MODULE="config.settings", DATA_DIR=str(data_dir), **env)
    return subprocess.run(
        [sys.executable, "-c", "import django\ndjango.setup()\n" + code],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
