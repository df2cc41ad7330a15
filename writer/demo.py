"""``profscope demo``: profile a small training job so the UI has something to show.

Three runs under ``<logdir>/demo/``, each with two spans of ``active_steps`` steps
(``schedule(wait=1, warmup=1, active=N, repeat=2)``), ``record_shapes``,
``profile_memory`` and ``with_stack``; synthetic data through a ``DataLoader``
(nothing is downloaded):

* ``cnn_bs32`` and ``cnn_bs64``: a small CNN at two batch sizes, written by
  Profscope's writer (two runs to compare);
* ``mlp_torch_handler``: an MLP written by torch's own ``tensorboard_trace_handler``,
  the other file layout Profscope reads.

Runs on CUDA when available, else on the CPU (a few seconds on two cores).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .torch_handler import ProfscopeWriter

DEMO_FOLDER = "demo"
DEMO_WORKER = "worker0"
_IMAGE_SHAPE = (1, 28, 28)
_CLASSES = 10
_WAIT_STEPS = 1
_WARMUP_STEPS = 1
_WINDOWS = 2


class DemoError(RuntimeError):
    pass


@dataclass(frozen=True)
class DemoRun:
    run: str
    model: str
    batch_size: int
    layout: str  # "writer" or "torch"


DEMO_RUNS = (
    DemoRun(f"{DEMO_FOLDER}/cnn_bs32", "cnn", 32, "writer"),
    DemoRun(f"{DEMO_FOLDER}/cnn_bs64", "cnn", 64, "writer"),
    DemoRun(f"{DEMO_FOLDER}/mlp_torch_handler", "mlp", 32, "torch"),
)


def _build_model(kind: str) -> Any:
    from torch import nn

    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 7 * 7, _CLASSES),
        )
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(28 * 28, 256),
        nn.ReLU(),
        nn.Linear(256, 128),
        nn.ReLU(),
        nn.Linear(128, _CLASSES),
    )


def _train_profiled(demo: DemoRun, logdir: Path, active_steps: int, device: Any) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    steps = _WINDOWS * (_WAIT_STEPS + _WARMUP_STEPS + active_steps)
    images = torch.randn(steps * demo.batch_size, *_IMAGE_SHAPE)
    labels = torch.randint(0, _CLASSES, (steps * demo.batch_size,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=demo.batch_size, shuffle=True, drop_last=True)
    model = _build_model(demo.model).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    on_trace_ready: Callable[[Any], None]
    if demo.layout == "writer":
        on_trace_ready = ProfscopeWriter(
            logdir, demo.run, DEMO_WORKER, batch_size=demo.batch_size, tags={"model": demo.model, "lr": 0.01}
        )
    else:
        on_trace_ready = torch.profiler.tensorboard_trace_handler(
            str(logdir / demo.run), worker_name=DEMO_WORKER, use_gzip=True
        )
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with warnings.catch_warnings():
        # torch warns that each window starts afresh, which is what the demo wants.
        warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle.*")
        with profile(
            activities=activities,
            schedule=schedule(wait=_WAIT_STEPS, warmup=_WARMUP_STEPS, active=active_steps, repeat=_WINDOWS),
            on_trace_ready=on_trace_ready,
            record_shapes=True,
            profile_memory=True,
            with_stack=True,
        ) as prof:
            for batch, target in loader:
                with record_function("data/to_device"):
                    batch, target = batch.to(device, non_blocking=True), target.to(device, non_blocking=True)
                with record_function("train/forward"):
                    loss = loss_fn(model(batch), target)
                with record_function("train/backward"):
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                with record_function("train/optimizer"):
                    optimizer.step()
                prof.step()
    if isinstance(on_trace_ready, ProfscopeWriter):
        on_trace_ready.close()  # the last spans' scalars are in the event file before it is listed


def _written_files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def run_demo(logdir: str | os.PathLike[str], active_steps: int = 3, log: Callable[[str], None] = print) -> list[Path]:
    """Write the demo runs under ``<logdir>/demo``; returns the files written."""
    try:
        import torch
    except ImportError:
        raise DemoError("the demo needs PyTorch: pip install 'profscope[torch]'") from None
    if active_steps < 1:
        raise DemoError("--steps must be at least 1")
    logdir = Path(logdir)
    demo_root = logdir / DEMO_FOLDER
    if demo_root.exists() and any(demo_root.iterdir()):
        raise DemoError(f"{demo_root} already exists; remove it or choose another --logdir")

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    log(f"profiling on {device.type}: {len(DEMO_RUNS)} runs x {_WINDOWS} spans x {active_steps} steps")
    written: list[Path] = []
    for demo in DEMO_RUNS:
        _train_profiled(demo, logdir, active_steps, device)
        files = _written_files(logdir / demo.run)
        log(f"{demo.run}  ({demo.model}, batch size {demo.batch_size}, {demo.layout} layout)")
        for path in files:
            log(f"  {path}")
        written.extend(files)
    log(f"view them with: tensorboard --logdir {logdir}")
    return written
