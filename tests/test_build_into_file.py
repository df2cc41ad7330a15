"""The parser builds a model's large columns straight into its cache file (``ArrayFileWriter.allocate``).

The model read back from that file equals the model built in memory; a file system that cannot reserve space makes
the build fall back to memory; a failed parse leaves nothing in the cache folder.
"""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path

import numpy as np
import pytest

from profscope.tb_plugin.ingest.load import load_trace, load_trace_stream
from profscope.tb_plugin.model import array_file
from profscope.tb_plugin.model.trace_model import TABLE_TYPES, TraceModel

from conftest import real_trace

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def _assert_same_model(a: TraceModel, b: TraceModel) -> None:
    for table_name in TABLE_TYPES:
        ta, tb = getattr(a, table_name), getattr(b, table_name)
        for name in ta.__dataclass_fields__:
            x, y = getattr(ta, name), getattr(tb, name)
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), f"{table_name}.{name}"
    assert a.tracks == b.tracks and a.strings == b.strings and a.steps.number.tolist() == b.steps.number.tolist()


def _load_into(path: Path, writer: array_file.ArrayFileWriter) -> TraceModel:
    trace = real_trace(RESNET)
    return load_trace_stream(lambda: open(trace, "rb"), trace.name, allocate=writer.allocate)


def test_a_model_built_into_its_file_reads_back_equal(tmp_path: Path) -> None:
    expected = load_trace(str(real_trace(RESNET)))
    target = tmp_path / "span.model"
    writer = array_file.ArrayFileWriter(str(target))
    built = _load_into(target, writer)
    placed = set(writer.allocated)
    assert {"slices.start", "slices.name", "slices.track"} <= placed  # gathered in place, not copied later
    assert all(name.startswith("slices.") for name in placed)
    assert built.slices.start is writer.allocated["slices.start"][0]
    _assert_same_model(built, expected)
    array_file.write_model(str(target), built, writer=writer)
    _assert_same_model(array_file.read_model(str(target)), expected)
    assert sorted(os.listdir(tmp_path)) == ["span.model"]


def test_without_reserved_space_the_build_falls_back_to_memory(tmp_path: Path, monkeypatch) -> None:
    def no_room(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.EOPNOTSUPP, "fallocate is not supported here")

    monkeypatch.setattr(array_file.os, "posix_fallocate", no_room)
    target = tmp_path / "span.model"
    writer = array_file.ArrayFileWriter(str(target))
    built = _load_into(target, writer)
    assert not writer.allocated
    array_file.write_model(str(target), built, writer=writer)
    _assert_same_model(array_file.read_model(str(target)), load_trace(str(real_trace(RESNET))))


def _parse_job(trace: Path, cache: Path):
    from profscope.tb_plugin.store import parse_jobs
    from profscope.tb_plugin.store.cache import SourceIdentity
    from profscope.tb_plugin.store.storage import FileAccess

    st = trace.stat()
    identity = SourceIdentity(str(trace), st.st_size, st.st_mtime_ns)
    outcome = parse_jobs.parse_into_cache(str(trace), str(cache), identity, 0, FileAccess(roots=(str(trace.parent),)))
    return outcome, identity


def test_the_parse_job_publishes_the_model_it_built_in_place(tmp_path: Path) -> None:
    from profscope.tb_plugin.store.cache import ModelCache

    trace = tmp_path / "logs" / real_trace(RESNET).name
    trace.parent.mkdir()
    trace.write_bytes(real_trace(RESNET).read_bytes())
    cache = tmp_path / "cache"
    cache.mkdir()
    outcome, identity = _parse_job(trace, cache)
    assert outcome.error is None and outcome.model is None, outcome
    stored = ModelCache(str(cache)).load(identity)
    assert stored is not None
    _assert_same_model(stored, load_trace(str(trace)))
    assert not [name for name in os.listdir(cache) if name.startswith(".tmp-")]


def test_a_failed_parse_leaves_nothing_in_the_cache_folder(tmp_path: Path) -> None:
    truncated = tmp_path / "logs" / real_trace(RESNET).name
    truncated.parent.mkdir()
    truncated.write_bytes(real_trace(RESNET).read_bytes()[:200_000])  # a gzip stream cut short
    cache = tmp_path / "cache"
    cache.mkdir()
    outcome, _identity = _parse_job(truncated, cache)
    assert outcome.error and "truncated" in outcome.error
    assert os.listdir(cache) == []


def test_a_damaged_header_offset_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    array_file.write_arrays(str(path), {"what": "test"}, {"values": np.arange(1000, dtype=np.int64)})
    data = bytearray(path.read_bytes())
    header_offset = array_file._PREAMBLE.unpack_from(data, len(array_file._MAGIC))[0]
    for bad in (0, len(data) + 1, header_offset - 8):
        array_file._PREAMBLE.pack_into(data, len(array_file._MAGIC), bad, *array_file._PREAMBLE.unpack_from(
            path.read_bytes(), len(array_file._MAGIC))[1:])
        path.with_name("b.bin").write_bytes(bytes(data))
        with pytest.raises(ValueError):
            array_file.read_arrays(str(path.with_name("b.bin")))


def test_the_threaded_gathers_build_the_same_model(tmp_path: Path, monkeypatch) -> None:
    from profscope.tb_plugin.model import build

    expected = load_trace(str(real_trace(RESNET)))
    monkeypatch.setattr(build, "_GATHER_THREAD_MIN_ROWS", 0)  # the path of traces of a million slices and more
    target = tmp_path / "span.model"
    writer = array_file.ArrayFileWriter(str(target))
    built = _load_into(target, writer)
    _assert_same_model(built, expected)
    _assert_same_model(load_trace(str(real_trace(RESNET))), expected)  # in memory too


def _resident_pages(array: np.ndarray) -> int:
    """How many of the pages under ``array`` (page-aligned) are in memory (``mincore``)."""
    import ctypes

    pages = -(-array.nbytes // mmap.PAGESIZE)
    vector = (ctypes.c_ubyte * pages)()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    assert libc.mincore(array.ctypes.data, array.nbytes, vector) == 0, os.strerror(ctypes.get_errno())
    return sum(v & 1 for v in vector)


def _prefault_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == "profscope-prefault"]


@pytest.mark.skipif(array_file._MADVISE is None, reason="prefaulting is for Linux")
def test_allocated_columns_are_faulted_in_by_another_thread(tmp_path: Path, monkeypatch) -> None:
    """An allocated column's pages are in memory before anything writes them (MADV_POPULATE_WRITE on the
    prefault thread), a model built so reads back equal, and the thread is gone once the file is finished
    or aborted (the parser forks after that)."""
    writer = array_file.ArrayFileWriter(str(tmp_path / "probe.model"))
    column = writer.allocate("probe", np.int64, 1 << 20)  # 8 MB: over PREFAULT_MIN_BYTES
    assert column is not None and _prefault_threads()
    writer._stop_prefaulting()  # waits for the thread to be done
    assert _resident_pages(column) == -(-column.nbytes // mmap.PAGESIZE)
    assert not column.any()  # faulted in, nothing written
    writer.abort()

    monkeypatch.setattr(array_file, "PREFAULT_MIN_BYTES", 1)  # every column of the small real trace
    expected = load_trace(str(real_trace(RESNET)))
    writer = array_file.ArrayFileWriter(str(tmp_path / "m.model"))
    model = _load_into(tmp_path, writer)
    assert writer.allocated and _prefault_threads()
    path = array_file.write_model(str(tmp_path / "m.model"), model, writer=writer)
    assert not _prefault_threads()
    _assert_same_model(expected, array_file.read_model(path))

    writer = array_file.ArrayFileWriter(str(tmp_path / "aborted.model"))
    writer.allocate("probe", np.int64, 1 << 20)
    writer.abort()
    assert not _prefault_threads()
