"""Constants of the real-browser tests (their fixtures are in conftest.py)."""

import shutil
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
