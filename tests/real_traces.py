"""The real traces of ``tests/data``, as their profilers wrote them.

Large plain files are stored gzipped in the repository (listed in ``tests/data/compressed.txt``).
``root()`` unpacks a copy of the whole tree once per process into a temporary folder, with those
files restored under their original names, so tests and benchmarks see exactly what the
profilers wrote, in the folder layouts they wrote it in. The copy is removed when the process
exits. Nothing here reads anything outside the repository.
"""

from __future__ import annotations

import atexit
import gzip
import os
import shutil
import tempfile
import time
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
COMPRESSED_LIST = DATA / "compressed.txt"


class MissingTestData(FileNotFoundError):
    """A real trace that a test needs is not in ``tests/data``."""


def compressed_files() -> list[str]:
    """The original paths (relative to ``tests/data``) of the files stored as ``<path>.gz``."""
    lines = COMPRESSED_LIST.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@lru_cache(maxsize=None)
def root() -> Path:
    """A private copy of ``tests/data`` with every stored-gzipped file restored (made once per process)."""
    if not DATA.is_dir():
        raise MissingTestData(f"{DATA} is missing: the repository's test data is incomplete")
    target = Path(tempfile.mkdtemp(prefix="profscope-real-traces-")) / "data"
    atexit.register(shutil.rmtree, target.parent, True)
    shutil.copytree(DATA, target)
    for relative in compressed_files():
        stored = target / (relative + ".gz")
        if not stored.is_file():
            raise MissingTestData(f"{DATA / (relative + '.gz')} is listed in {COMPRESSED_LIST.name} but missing")
        with gzip.open(stored, "rb") as src, open(target / relative, "wb") as dest:
            shutil.copyfileobj(src, dest)
        stored.unlink()
    # Finished runs: a day old, whenever the repository was cloned, so discovery never waits for them to settle.
    finished = time.time() - 86400
    for file in target.rglob("*"):
        os.utime(file, (finished, finished))
    return target


def path(relative: str) -> Path:
    """A file or folder of the real traces (``"torch213/mlp_train_sched"``...); raises when it is missing."""
    found = root() / relative
    if not found.exists():
        raise MissingTestData(f"tests/data/{relative} is missing (a test or benchmark needs it)")
    return found
