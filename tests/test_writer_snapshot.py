"""``trace_handler(..., memory_snapshot=True)``: the allocator's history recorded between spans and each span's
snapshot written beside its trace, where discovery finds it as the span's.

No GPU is lent to these tests: on this machine's CPU torch the handler must say once that it records nothing and
write the spans as always; the dump itself is exercised with an object standing for ``torch.cuda.memory`` that
writes a hand-made snapshot the way ``_dump_snapshot`` writes its file (that path has not run against real CUDA).
"""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path
from typing import Any

import pytest

from profscope.tb_plugin import layout
from profscope.tb_plugin.store import discovery
from profscope.writer import trace_handler
from profscope.writer.torch_handler import MemoryHistory

import snapshot_gen as gen

torch = pytest.importorskip("torch")


def _profile(handler: Any, spans: int = 2) -> None:
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=spans)
    with torch.profiler.profile(on_trace_ready=handler, schedule=schedule) as prof:
        for _ in range(2 * spans + 1):
            torch.randn(64, 64).sum()
            prof.step()


def test_without_cuda_it_says_so_once_and_writes_the_spans(tmp_path: Path) -> None:
    assert not torch.cuda.is_available()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        handler = trace_handler(tmp_path, "run", "w0", memory_snapshot=True, event_file=False,
                                cpu_sample_interval=None)
        _profile(handler)
    said = [w for w in caught if "memory_snapshot=True records nothing" in str(w.message)]
    assert len(said) == 1
    assets = tmp_path / "run" / "plugins" / "profscope"
    assert len(list(assets.glob("*.trace.json.gz"))) == 2
    assert not list(assets.glob("*.pickle"))


class _CudaMemory:
    """Stands for torch.cuda.memory: records the calls; ``_dump_snapshot`` writes a hand-made snapshot."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _record_memory_history(self, **kwargs: Any) -> None:
        self.calls.append(("record", kwargs))

    def _dump_snapshot(self, filename: str) -> None:
        self.calls.append(("dump", {"filename": filename}))
        with open(filename, "wb") as f:
            pickle.dump(gen.training_snapshot(steps=1), f)


def test_each_span_gets_its_snapshot_beside_its_trace(tmp_path: Path) -> None:
    handler = trace_handler(tmp_path, "run", "w0", event_file=False, cpu_sample_interval=None)
    memory = _CudaMemory()
    handler.memory_history = MemoryHistory(max_entries=5000, memory=memory)
    _profile(handler)
    assets = tmp_path / "run" / "plugins" / "profscope"
    spans = [s.span for s in handler.spans]
    assert sorted(p.name for p in assets.glob("*.pickle")) == sorted(layout.writer_snapshot_name("w0", s) for s in spans)
    assert not [p for p in assets.iterdir() if p.name.startswith(layout.TEMP_PREFIX)]
    # Recording starts at once, and afresh (history cleared) after each dump.
    kinds = [(kind, args.get("clear_history")) for kind, args in memory.calls]
    assert kinds == [("record", False), ("dump", None), ("record", True), ("dump", None), ("record", True)]
    assert all(args["max_entries"] == 5000 and args["enabled"] == "all" for kind, args in memory.calls
               if kind == "record")
    found = discovery.scan(str(tmp_path)).snapshots
    assert sorted((s.worker, s.span) for s in found) == sorted(("w0", s) for s in spans)
