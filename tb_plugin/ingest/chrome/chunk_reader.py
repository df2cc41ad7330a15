"""One chunk's events into the raw columns: ``ChunkReader`` reads the structs of ``events.py`` (or the fields the C
scanner of ``columnar.py`` found) into slices, instants, flows, metadata and counters, keeping the strings interned
and the per-chunk statistics.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Optional, Sequence, Union

import msgspec
import numpy as np
from msgspec import Raw

from ...model.categories import ARGS_CATEGORIES, DEVICE_CATEGORIES
from ...model.interning import NO_STRING, OptionalStrings, RawJsonStrings, ScalarKeys, StringTable
from ...model.raw_columns import RawColumns, constant_part
from . import begin_end, columnar
from .events import (
    COLLECTIVE_ARGS_NAME, FLOW_PHASE, INVALID_EVENT, NAN, PHASE_CLASS, PHASE_COMPLETE, PHASE_FLOW, PHASE_INSTANT,
    PHASE_META, Args, float_column, get_args, get_dur, get_identity, get_ts, int_column, numbers_ns,
    optional_int_column, take_rows, times_ns,
)


class ChunkReader:
    """Turns decoded chunks of events into columns appended to a RawColumns."""

    def __init__(self, out: RawColumns, precise_start: bool = False) -> None:
        self.out = out
        # Paddle: keep ``args.start_time`` (sub-µs, relative) beside the integer ``ts`` of each slice.
        self.precise_start = precise_start
        strings = out.strings
        self.opt_strings = OptionalStrings(strings)
        self.raw_strings = RawJsonStrings(strings)
        self.scalars = ScalarKeys(strings)
        self.phases = StringTable()
        self.identities = StringTable()  # keys are (ph, name, cat, pid, tid) tuples here
        self._identity_table: tuple[np.ndarray, ...] = tuple(np.zeros(0, dtype=np.int32) for _ in range(5))
        self.bindings = StringTable()
        self.string_flow_ids = StringTable()
        self.last_phase_class = np.zeros(0, dtype=np.int8)
        self.last_ts = np.zeros(0, dtype=np.int64)  # the last chunk's times in ns (counters reuse them)
        self.phase_counts: dict[str, int] = {}
        self.category_counts: dict[str, int] = {}
        # Per category string id: which argument group its slices carry (decided once per category).
        self._category_kind: dict[int, int] = {}
        # Operator names whose slices can carry collective arguments (decided once per name).
        self._collective_name: dict[int, bool] = {}
        # Times were text in a chunk before (MindSpore): later chunks are decoded for that at once.
        self.text_times = False
        # The C scanner (columnar.py), when built; Paddle's traces (precise_start) need the msgspec path.
        self.scanner = None if precise_start else columnar.new_scanner()
        # Events decoded one by one (_decode_one_by_one): texts repaired, the first problem's byte.
        self.repaired_text = 0
        self.first_problem: Optional[int] = None

    def _kinds_of(self, cats: np.ndarray) -> np.ndarray:
        """Per slice: 0 other, 1 operator (shapes, stacks), 2 Python frame, 3 device activity."""
        unique, inverse = np.unique(cats, return_inverse=True)
        table = np.empty(len(unique), dtype=np.int8)
        for i, cat_id in enumerate(unique.tolist()):  # one step per distinct category of the chunk
            kind = self._category_kind.get(cat_id)
            if kind is None:
                text = self.out.strings.strings[cat_id]
                kind = (3 if text in DEVICE_CATEGORIES else 2 if text in ("python_function", "Python")
                        else 1 if text in ARGS_CATEGORIES else 0)
                self._category_kind[cat_id] = kind
            table[i] = kind
        return table[inverse.reshape(-1)]

    def _collective_names(self, names: np.ndarray) -> np.ndarray:
        unique, inverse = np.unique(names, return_inverse=True)
        table = np.empty(len(unique), dtype=bool)
        for i, name_id in enumerate(unique.tolist()):
            flag = self._collective_name.get(name_id)
            if flag is None:
                flag = bool(COLLECTIVE_ARGS_NAME.match(self.out.strings.strings[name_id]))
                self._collective_name[name_id] = flag
            table[i] = flag
        return table[inverse.reshape(-1)]

    def _identity_parts(self, identities: np.ndarray) -> tuple[np.ndarray, ...]:
        """(phase, name, category, pid, tid) ids of each identity id, from per-identity tables."""
        keys = self.identities.strings
        done = len(self._identity_table[0])
        if done < len(keys):  # new identities since the last chunk: intern their parts once
            strings = self.out.strings
            fresh = keys[done:]
            new = (
                [self.phases[k[0]] for k in fresh], [strings[k[1]] for k in fresh], [strings[k[2]] for k in fresh],
                [self.scalars[k[3]] for k in fresh], [self.scalars[k[4]] for k in fresh],
            )
            self._identity_table = tuple(
                np.concatenate([old, np.asarray(part, dtype=np.int32)]) for old, part in zip(self._identity_table, new)
            )
        return tuple(table[identities] for table in self._identity_table)

    def read(self, events: list[Any], first_event_id: int, numeric_times: bool = False) -> None:
        """Columns of a chunk decoded by msgspec (event structs)."""
        n = len(events)
        if numeric_times:
            ts, bad_ts = numbers_ns(np.fromiter(map(get_ts, events), dtype=np.float64, count=n))
            dur, bad_dur = numbers_ns(np.fromiter(map(get_dur, events), dtype=np.float64, count=n))
        else:
            ts, bad_ts = times_ns(list(map(get_ts, events)))
            dur, bad_dur = times_ns(list(map(get_dur, events)))
        bad = bad_ts if bad_dur is None else bad_dur if bad_ts is None else bad_ts | bad_dur
        if bad is not None:  # a time that is text but not a number: the event is invalid (as in _lenient_events)
            for row in np.flatnonzero(bad).tolist():
                events[row] = INVALID_EVENT
            ts[bad] = 0
            dur[bad] = 0
        # (ph, name, cat, pid, tid) repeat a lot: one lookup of the 5-tuple instead of five.
        identities = np.fromiter(map(self.identities.__getitem__, map(get_identity, events)), dtype=np.int64,
                                 count=n)
        self._read_rows(_StructFields(events, self), first_event_id, ts, dur, *self._identity_parts(identities))

    def read_scanned(self, chunk: columnar.ScannedChunk, texts: columnar.Texts, first_event_id: int,
                     index: int) -> bool:
        """Columns of chunk number ``index``, read by the C scanner; False, with nothing changed, when the chunk
        needs the event objects (metadata, counters, B/E pairs) or has a time that is no time: the msgspec path
        reads it then."""
        if not columnar.NEEDS_EVENTS.isdisjoint(texts.values(np.unique(chunk["ph"]))):
            return False
        ts, bad_ts = numbers_ns(chunk["ts"])
        dur, bad_dur = numbers_ns(chunk["dur"])
        if bad_ts is not None or bad_dur is not None:
            return False
        self.out.begin_chunk(index, first_event_id, chunk.rows)
        strings = self.out.strings
        self._read_rows(
            _ScannedFields(chunk, texts, self), first_event_id, ts, dur,
            texts.ids(chunk["ph"], "phase", self.phases.__getitem__).astype(np.int32),
            texts.ids(chunk["name"], "string", strings.__getitem__).astype(np.int32),
            texts.ids(chunk["cat"], "string", strings.__getitem__).astype(np.int32),
            texts.ids(chunk["pid"], "scalar", self.scalars.__getitem__).astype(np.int32),
            texts.ids(chunk["tid"], "scalar", self.scalars.__getitem__).astype(np.int32),
        )
        return True

    def _read_rows(self, fields: _Fields, first_event_id: int, ts: np.ndarray, dur: np.ndarray,
                   phase_ids: np.ndarray, names: np.ndarray, cats: np.ndarray, pids: np.ndarray,
                   tids: np.ndarray) -> None:
        n = len(ts)
        self.last_ts = ts
        for phase_id, count in zip(*np.unique(phase_ids, return_counts=True)):
            ph = self.phases.strings[int(phase_id)]
            self.phase_counts[ph] = self.phase_counts.get(ph, 0) + int(count)
        phase_class = np.array([PHASE_CLASS.get(p, -1) for p in self.phases.strings], dtype=np.int8)[phase_ids]
        self.last_phase_class = phase_class
        event_id = np.arange(first_event_id, first_event_id + n, dtype=np.int64)
        if not begin_end.PHASES.isdisjoint(self.phases.strings):  # B/E or b/e seen: kept for pairing
            begin_end.collect(self.out, fields.events, phase_ids, self.phases.strings, event_id, names, cats, pids,
                              tids, ts)
        strings = self.out.strings
        for cat_id, count in zip(*np.unique(cats, return_counts=True)):
            text = strings.strings[int(cat_id)]
            self.category_counts[text] = self.category_counts.get(text, 0) + int(count)

        rows = np.flatnonzero(phase_class == PHASE_COMPLETE)
        if len(rows):
            self._read_slices(fields, rows, event_id, names, cats, pids, tids, ts, dur[rows])
        rows = np.flatnonzero(phase_class == PHASE_INSTANT)
        if len(rows):
            self._read_instants(fields, rows, event_id, names, cats, pids, tids, ts)
        rows = np.flatnonzero(phase_class == PHASE_FLOW)
        if len(rows):
            self._read_flows(fields, rows, cats, pids, tids, ts, phase_ids)
        for row in np.flatnonzero(phase_class == PHASE_META).tolist():
            ev = fields.events[row]
            args = ev.args  # only what model.build reads: raw fields would hold the decoder's window
            self.out.add_meta(ev.name, int(pids[row]), int(tids[row]),
                              Args(name=args.name, labels=args.labels, sort_index=args.sort_index))

    def _read_slices(self, fields: _Fields, rows: np.ndarray, event_id: np.ndarray, names: np.ndarray,
                     cats: np.ndarray, pids: np.ndarray, tids: np.ndarray, ts: np.ndarray, dur: np.ndarray) -> None:
        n = len(rows)
        external_id = fields.ints("external_id", rows)
        missing = np.flatnonzero(external_id < 0)
        if len(missing):  # the 2021 format spells it "external id" on runtime calls and kernels
            external_id[missing] = fields.ints("external_id_2021", rows[missing])
        cat = cats[rows]
        kind = self._kinds_of(cat)
        columns: dict[str, np.ndarray] = dict(
            event_id=event_id[rows], pid=pids[rows], tid=tids[rows], start=ts[rows], dur=np.maximum(dur, 0),
            name=names[rows], cat=cat, external_id=external_id, correlation=fields.ints("correlation", rows),
        )
        # Operator arguments, only for operator-like slices.
        op_rows = np.flatnonzero(kind == 1)
        at = rows[op_rows]
        self._sparse(columns, n, op_rows, {
            "input_dims": (np.int32, NO_STRING, fields.raw_ids("input_dims", at)),
            "input_type": (np.int32, NO_STRING, fields.raw_ids("input_type", at)),
            "concrete_inputs": (np.int32, NO_STRING, fields.raw_ids("concrete_inputs", at)),
            "call_stack": (np.int32, NO_STRING, fields.raw_ids("call_stack", at)),
            "sequence": (np.int64, -1, fields.ints("sequence", at)),
        })
        # Collective arguments: only operators named like a collective carry them (record_param_comms, ...).
        coll_rows = op_rows[self._collective_names(names[rows][op_rows])] if len(op_rows) else op_rows
        at = rows[coll_rows]
        self._sparse(columns, n, coll_rows, {
            "collective": (np.int32, NO_STRING, fields.text_ids("collective", at)),
            "in_msg_nelems": (np.int64, -1, fields.ints("in_msg_nelems", at)),
            "out_msg_nelems": (np.int64, -1, fields.ints("out_msg_nelems", at)),
            "dtype": (np.int32, NO_STRING, fields.text_ids("dtype", at)),
            "group_size": (np.int32, -1, fields.ints("group_size", at)),
            "process_group": (np.int32, NO_STRING, fields.text_ids("process_group", at)),
            "collective_seq": (np.int64, -1, fields.ints("collective_seq", at)),
        })
        py_rows = np.flatnonzero(kind == 2)
        at = rows[py_rows]
        self._sparse(columns, n, py_rows, {
            "python_id": (np.int64, -1, fields.optional_ints("python_id", at)),
            "python_parent_id": (np.int64, -1, fields.optional_ints("python_parent_id", at)),
        })
        dev_rows = np.flatnonzero(kind == 3)
        at = rows[dev_rows]
        self._sparse(columns, n, dev_rows, {
            "device": (np.int32, -1, fields.ints("device", at)),
            "stream": (np.int64, -1, fields.ints("stream", at)),
            "grid": (np.int32, NO_STRING, fields.raw_ids("grid", at)),
            "block": (np.int32, NO_STRING, fields.raw_ids("block", at)),
            "blocks_per_sm": (np.float32, NAN, fields.floats("blocks_per_sm", at)),
            "warps_per_sm": (np.float32, NAN, fields.floats("warps_per_sm", at)),
            "occupancy": (np.float32, NAN, fields.floats("occupancy", at)),
            "nbytes": (np.int64, -1, fields.ints("nbytes", at)),
        })
        if self.precise_start:
            columns["relative_start_us"] = fields.relative_start_us(rows)
        self.out.add("slices", **columns)

    @staticmethod
    def _sparse(columns: dict[str, np.ndarray], n: int, rows: np.ndarray,
                values: dict[str, tuple[Any, Any, np.ndarray]]) -> None:
        for key, (dtype, missing, subset) in values.items():
            if len(rows) == 0:  # no such slice in the chunk: the column's part takes no memory
                columns[key] = constant_part(missing, n, dtype)
                continue
            full = np.full(n, missing, dtype=dtype)
            full[rows] = subset
            columns[key] = full

    def _read_instants(self, fields: _Fields, rows: np.ndarray, event_id: np.ndarray, names: np.ndarray,
                       cats: np.ndarray, pids: np.ndarray, tids: np.ndarray, ts: np.ndarray) -> None:
        columns = dict(
            addr=fields.ints("addr", rows), bytes=fields.ints("mem_bytes", rows),
            total_allocated=fields.ints("total_allocated", rows),
            total_reserved=fields.ints("total_reserved", rows),
            device_type=fields.ints("device_type", rows), device_id=fields.ints("device_id", rows),
        )
        paddle_rows = np.flatnonzero(fields.ints("current_allocated", rows) >= 0)
        if len(paddle_rows):  # Paddle's [memory] events: its own argument names (ingest/paddle.py)
            from ..paddle import memory_columns

            for key, values in memory_columns(fields.args(rows[paddle_rows])).items():
                columns[key][paddle_rows] = values
        self.out.add("instants", event_id=event_id[rows], pid=pids[rows], tid=tids[rows], ts=ts[rows],
                     name=names[rows], cat=cats[rows], **columns)

    def _read_flows(self, fields: _Fields, rows: np.ndarray, cats: np.ndarray, pids: np.ndarray,
                    tids: np.ndarray, ts: np.ndarray, phase_ids: np.ndarray) -> None:
        phase_of = np.array([FLOW_PHASE.get(p, -1) for p in self.phases.strings], dtype=np.int8)
        binding = fields.binding_ids(rows)
        enclosing_id = self.bindings.get("e", -2)
        self.out.add(
            "flows", flow_id=fields.flow_ids(rows), phase=phase_of[phase_ids[rows]],
            enclosing=binding == enclosing_id, cat=cats[rows], pid=pids[rows], tid=tids[rows], ts=ts[rows],
        )

    def flow_id(self, value: Any) -> int:
        """A flow id that is no integer of Kineto's range (a string, mostly): numbered here, negative."""
        if isinstance(value, int) and -(2**62) < value < 2**62:
            return value
        return -2 - self.string_flow_ids[str(value)]


class _StructFields:
    """The fields of a chunk's event structs (decoded by msgspec), read column by column for some rows."""

    def __init__(self, events: list[Any], reader: ChunkReader) -> None:
        self.events = events
        self._reader = reader
        self._args: Optional[list[Args]] = None

    def args(self, rows: np.ndarray) -> Sequence[Args]:
        if self._args is None:
            self._args = list(map(get_args, self.events))
        return take_rows(self._args, rows)

    def ints(self, key: str, rows: np.ndarray) -> np.ndarray:
        return int_column(self.args(rows), attrgetter(key))

    def optional_ints(self, key: str, rows: np.ndarray) -> np.ndarray:
        return optional_int_column(self.args(rows), attrgetter(key))

    def floats(self, key: str, rows: np.ndarray) -> np.ndarray:
        return float_column(self.args(rows), attrgetter(key))

    def raw_ids(self, key: str, rows: np.ndarray) -> np.ndarray:
        args = self.args(rows)
        return self._reader.raw_strings.ids(map(attrgetter(key), args), len(args))

    def text_ids(self, key: str, rows: np.ndarray) -> np.ndarray:
        args = self.args(rows)
        return self._reader.opt_strings.ids(map(attrgetter(key), args), len(args))

    def relative_start_us(self, rows: np.ndarray) -> np.ndarray:
        return np.fromiter(map(_relative_us, map(attrgetter("start_time"), self.args(rows))), dtype=np.float64,
                           count=len(rows))

    def flow_ids(self, rows: np.ndarray) -> np.ndarray:
        """Flow ids are integers in Kineto; other writers use strings (``ChunkReader.flow_id``)."""
        values = list(map(attrgetter("id"), take_rows(self.events, rows)))
        try:
            return np.fromiter(values, dtype=np.int64, count=len(values))
        except (TypeError, ValueError, OverflowError):
            return np.fromiter(map(self._reader.flow_id, values), dtype=np.int64, count=len(values))

    def binding_ids(self, rows: np.ndarray) -> np.ndarray:
        events = take_rows(self.events, rows)
        return self._reader.bindings.ids(map(attrgetter("bp"), events), len(events))


class _ScannedFields:
    """The same reads from the columns of the C scanner (``columnar.py``): no per-event Python work."""

    events: Sequence[Any] = ()  # no event objects: such chunks hold no B/E or metadata events (read_scanned)

    def __init__(self, chunk: columnar.ScannedChunk, texts: columnar.Texts, reader: ChunkReader) -> None:
        self._chunk = chunk
        self._texts = texts
        self._reader = reader

    def ints(self, key: str, rows: np.ndarray) -> np.ndarray:
        column = self._chunk.columns.get(key)
        if column is None:  # an argument the scanner leaves to msgspec (Paddle's): absent in its chunks
            return np.full(len(rows), -1, dtype=np.int64)
        return column[rows]

    optional_ints = ints  # null reads as -1 in the scanner

    def floats(self, key: str, rows: np.ndarray) -> np.ndarray:
        return self._chunk[key][rows]

    def raw_ids(self, key: str, rows: np.ndarray) -> np.ndarray:
        raw_strings = self._reader.raw_strings
        return self._texts.ids(self._chunk[key][rows], "raw", raw_strings.__getitem__, NO_STRING)

    def text_ids(self, key: str, rows: np.ndarray) -> np.ndarray:
        return self._texts.ids(self._chunk[key][rows], "optional text", self._reader.opt_strings.__getitem__)

    def relative_start_us(self, rows: np.ndarray) -> np.ndarray:
        raise AssertionError("Paddle's traces are read through msgspec")  # precise_start: no scanner

    def args(self, rows: np.ndarray) -> Sequence[Args]:
        raise AssertionError("the scanner reads no Paddle memory event")

    def flow_ids(self, rows: np.ndarray) -> np.ndarray:
        # The scanner's integers have at most 18 digits: all within Kineto's range, as they are.
        return self._texts.ids(self._chunk["id"][rows], "flow id", self._reader.flow_id)

    def binding_ids(self, rows: np.ndarray) -> np.ndarray:
        return self._texts.ids(self._chunk["bp"][rows], "binding", self._reader.bindings.__getitem__)


_Fields = Union[_StructFields, _ScannedFields]


def _relative_us(text: str) -> float:
    """Paddle's ``"12577.011 us"`` → 12577.011 (NaN when absent or not a number of µs)."""
    value, _, unit = text.partition(" ")
    try:
        return float(value) if unit == "us" else NAN
    except ValueError:
        return NAN


def read_counters(raw_events: list[Raw], rows: np.ndarray, out: RawColumns, ts: np.ndarray, pids: np.ndarray,
                   names: np.ndarray, first_event_id: int) -> None:
    """Counter events (rare) are decoded one by one: their args keys are the series names."""
    ev_ids, tracks, times, counter_names, series, values = [], [], [], [], [], []
    strings = out.strings
    for row in rows.tolist():
        try:
            args = msgspec.json.decode(raw_events[row]).get("args") or {}
        except (msgspec.DecodeError, AttributeError):
            continue
        for key, value in args.items() if isinstance(args, dict) else ():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                ev_ids.append(first_event_id + row)
                tracks.append(pids[row])
                times.append(ts[row])
                counter_names.append(names[row])
                series.append(strings[str(key)])
                values.append(float(value))
    if ev_ids:
        out.add("counters", event_id=np.asarray(ev_ids, dtype=np.int64), pid=np.asarray(tracks, dtype=np.int32),
                ts=np.asarray(times, dtype=np.int64), name=np.asarray(counter_names, dtype=np.int32),
                series=np.asarray(series, dtype=np.int32), value=np.asarray(values, dtype=np.float64))
