"""Default names for runs and workers, and checks on names given by users."""

from __future__ import annotations

import os
import socket
import sys
import time
from functools import lru_cache
from pathlib import Path, PurePath

from profscope.tb_plugin import layout

# Launchers can give every rank of one job the same run name through this variable.
RUN_ENV_VAR = "PROFSCOPE_RUN"


def default_run_name() -> str:
    """``$PROFSCOPE_RUN`` if set, else ``<YYYYmmdd-HHMMSS>_<hostname>`` (local time, now)."""
    from_env = os.environ.get(RUN_ENV_VAR, "").strip()
    if from_env:
        return from_env
    return f"{time.strftime('%Y%m%d-%H%M%S')}_{layout.safe_component(socket.gethostname())}"


def distributed_rank() -> int | None:
    """This process's rank: torch.distributed's when it is initialised, else ``$RANK``."""
    # Only look at torch.distributed when the job already imported it: the writer must
    # not pull torch into a process on its own.
    dist = sys.modules.get("torch.distributed")
    if dist is not None:
        try:
            if dist.is_available() and dist.is_initialized():
                return int(dist.get_rank())
        except (RuntimeError, ValueError):
            pass
    rank = os.environ.get("RANK", "").strip()
    return int(rank) if rank.isdigit() else None


def host_worker_name() -> str:
    """``<hostname>_<pid>``, made file-name safe: the worker name outside a distributed job."""
    return layout.safe_component(f"{socket.gethostname()}_{os.getpid()}")


def default_worker_name() -> str:
    """``rank<N>`` in a distributed job, else ``<hostname>_<pid>`` (made file-name safe)."""
    rank = distributed_rank()
    if rank is not None:
        return f"rank{rank}"
    return host_worker_name()


def check_run(run: str) -> PurePath:
    """A run is a relative folder under the logdir, possibly nested (``"group/exp1"``)."""
    if not isinstance(run, str) or not run.strip():
        raise ValueError("run must be a non-empty relative folder name, like 'exp1' or 'group/exp1'")
    path = PurePath(run)
    parts = run.replace("\\", "/").split("/")
    if path.is_absolute() or path.drive or any(part in ("", ".", "..") for part in parts):
        raise ValueError(
            f"run must be a relative folder name without '.' or '..' parts, like 'exp1' or 'group/exp1'; got {run!r}"
        )
    return path


def asset_folder(logdir: str | os.PathLike[str], run: str) -> Path:
    """``<logdir>/<run>/plugins/profscope``: where the writer's files of a run go."""
    return Path(logdir, check_run(run), *layout.ASSET_DIR)


@lru_cache(maxsize=1)
def profscope_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return "unknown"
    try:
        return version("profscope")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"
