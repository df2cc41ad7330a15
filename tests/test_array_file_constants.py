"""A column holding one value throughout is stored as that value: read back equal, in no memory, never mistaken."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profscope.tb_plugin.ingest.load import load_trace
from profscope.tb_plugin.model import array_file
from profscope.tb_plugin.model.trace_model import TABLE_TYPES

from conftest import real_trace

RESNET = "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"


def test_constant_arrays_round_trip_as_broadcast_views(tmp_path: Path) -> None:
    n = 50_000
    almost = np.full(n, 7, dtype=np.int64)
    almost[n - 2] = 8  # off the sampled positions: only the full comparison sees it
    arrays = {
        "ids": np.full(n, -1, dtype=np.int64),
        "nan": np.full(n, np.nan, dtype=np.float32),
        "flags": np.zeros(n, dtype=bool),
        "almost": almost,
        "short": np.full(10, 3, dtype=np.int32),
        "varied": np.arange(n, dtype=np.int32),
    }
    path = tmp_path / "a.bin"
    array_file.write_arrays(str(path), {"what": "test"}, arrays, constants=True)
    header, back = array_file.read_arrays(str(path))
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and np.array_equal(back[name], array, equal_nan=True), name
    stored_as_value = {name for name, array in back.items() if array.strides == (0,)}
    assert stored_as_value == {"ids", "nan", "flags"}
    assert not back["ids"].flags.writeable  # as the memory-mapped columns
    assert set(header["checksums"]) == {"almost", "short", "varied"}  # the others are covered by the header's
    assert path.stat().st_size < almost.nbytes + arrays["varied"].nbytes + 4096  # the constant ones take no room


def test_a_model_round_trips_with_its_constant_columns(tmp_path: Path) -> None:
    model = load_trace(str(real_trace(RESNET)))
    path = tmp_path / "span.model"
    array_file.write_model(str(path), model)
    back = array_file.read_model(str(path))
    constant = []
    for table_name in TABLE_TYPES:
        table, read = getattr(model, table_name), getattr(back, table_name)
        for name in table.__dataclass_fields__:
            written, loaded = getattr(table, name), getattr(read, name)
            assert loaded.dtype == written.dtype and np.array_equal(loaded, written, equal_nan=True), name
            if len(loaded) >= 4096 and loaded.strides == (0,):
                constant.append(f"{table_name}.{name}")
    # A single-GPU trace without collectives or Python frames: those columns hold "none" throughout.
    assert {"slices.collective", "slices.group_size", "slices.python_id"} <= set(constant)
