"""Where the tests find the shared reference material (Gemmini's RTL and gemmini-rocc-tests):
$BACO_SHARED, else a `shared` folder beside the repository (../shared) or beside the folder
of worktrees holding it (../../shared). Tests that need it skip with a reason when it is absent;
the product never reads it."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path | None:
    candidates = [os.environ.get("BACO_SHARED")] + [str(p / "shared") for p in (ROOT.parent, ROOT.parent.parent)]
    return next((Path(c) for c in candidates if c and (Path(c) / "reference").is_dir()), None)


def reference(*parts) -> Path:
    """A path under shared/reference, or a skip when it is not there."""
    base = shared_dir()
    if base is None or not (base / "reference" / Path(*parts)).exists():
        pytest.skip(f"no shared reference {'/'.join(parts)} (../shared/reference or $BACO_SHARED)")
    return base / "reference" / Path(*parts)
