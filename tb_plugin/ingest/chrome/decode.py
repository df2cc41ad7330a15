"""Kineto / Chrome-trace JSON → raw event columns.

What it reads: a JSON object with ``traceEvents`` (or a bare JSON array of events), each
event with ``ph``, ``name``, ``cat``, ``ts``, ``dur``, ``pid``, ``tid`` and ``args``.
Phases X (complete), i/I (instant), C (counter), s/t/f (flow) and M (metadata) are
kept; B/E and async b/e are paired into slices (``begin_end.py``); other phases are counted
in the stats and skipped. ``ts``/``dur`` are µs,
numbers or (MindSpore) decimal strings, which are read exactly (``_times_ns``). Of ``args``
it keeps the keys the views use (``ARG_FIELDS`` below); other keys are ignored. Top-level keys other
than ``traceEvents`` (``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds``,
...) are kept as metadata.

How, and why this way: decoding a large trace into Python dicts costs several times the
file size in memory and most of the load time. Instead the document is read as a stream and
cut into chunks of whole events on a moving window (``chunks.py``); each chunk is decoded in
place into typed ``msgspec`` structs and turned into numpy columns right away, so at most one
chunk of the document and of its Python objects is alive at a time.
"""

from __future__ import annotations

import math
import re
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, Callable, Optional, Sequence, Union

import msgspec
import numpy as np
from msgspec import Raw

from ...model.categories import ARGS_CATEGORIES, DEVICE_CATEGORIES, KNOWN_CATEGORIES
from ...model.interning import NO_STRING, OptionalStrings, RawJsonStrings, ScalarKeys, StringTable
from ...model.raw_columns import FLOW_END, FLOW_START, FLOW_STEP, RawColumns, constant_part
from . import begin_end, columnar
from .chunks import Chunk, EventChunks, TraceFormatError, open_events

_EMPTY_RAW = Raw(b"")
_NAN = math.nan


class _Args(msgspec.Struct, frozen=True, gc=False):
    """The ``args`` keys Profscope uses; absent keys take the default (-1, NaN, empty)."""

    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_2021: int = msgspec.field(default=-1, name="external id")
    correlation: int = -1
    input_dims: Raw = msgspec.field(default=_EMPTY_RAW, name="Input Dims")
    input_type: Raw = msgspec.field(default=_EMPTY_RAW, name="Input type")
    # Values of the non-tensor arguments (strides, padding, is_causal...), as text: the performance model reads them.
    concrete_inputs: Raw = msgspec.field(default=_EMPTY_RAW, name="Concrete Inputs")
    call_stack: Raw = msgspec.field(default=_EMPTY_RAW, name="Call stack")  # long: kept raw, interned once
    sequence: int = msgspec.field(default=-1, name="Sequence number")
    # Root python frames have a null parent id.
    python_id: Optional[int] = msgspec.field(default=-1, name="Python id")
    python_parent_id: Optional[int] = msgspec.field(default=-1, name="Python parent id")
    device: int = -1
    stream: int = -1
    grid: Raw = _EMPTY_RAW
    block: Raw = _EMPTY_RAW
    blocks_per_sm: float = msgspec.field(default=_NAN, name="blocks per SM")
    warps_per_sm: float = msgspec.field(default=_NAN, name="warps per SM")
    occupancy: float = msgspec.field(default=_NAN, name="est. achieved occupancy %")
    nbytes: int = msgspec.field(default=-1, name="bytes")
    addr: int = msgspec.field(default=-1, name="Addr")
    mem_bytes: int = msgspec.field(default=0, name="Bytes")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    total_reserved: int = msgspec.field(default=-1, name="Total Reserved")
    device_type: int = msgspec.field(default=-1, name="Device Type")
    device_id: int = msgspec.field(default=-1, name="Device Id")
    collective: str = msgspec.field(default="", name="Collective name")
    in_msg_nelems: int = msgspec.field(default=-1, name="In msg nelems")
    out_msg_nelems: int = msgspec.field(default=-1, name="Out msg nelems")
    dtype: str = ""
    group_size: int = msgspec.field(default=-1, name="Group size")
    # PaddlePaddle's spelling (see ingest/paddle.py): memory events and sub-µs times ("12.345 us").
    paddle_addr: Union[int, str] = msgspec.field(default=-1, name="addr")
    increase_bytes: int = 0
    current_allocated: int = -1
    current_reserved: int = -1
    place: str = ""
    start_time: str = ""
    # Metadata events (ph M): process_name / thread_name / *_sort_index / process_labels.
    name: str = ""
    labels: str = ""
    sort_index: int = -1


_NO_ARGS = _Args()
_Scalar = Union[int, str]


# Times in µs: numbers in Kineto, decimal strings in MindSpore ("1795303374563996.947"), see ``_times_ns``.
_Time = Union[float, str]


class _Event(msgspec.Struct, gc=False):
    """An event as most writers spell it: times are numbers (``_TextTimesEvent`` takes text too)."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    ts: float = 0.0
    dur: float = 0.0
    pid: _Scalar = 0
    tid: _Scalar = 0
    id: _Scalar = -1  # flow id
    bp: str = ""  # flow binding point: "e" = enclosing slice
    args: _Args = _NO_ARGS


class _LenientEvent(msgspec.Struct, gc=False):
    """Fallback when a chunk has values of unexpected types: every field is taken raw."""

    ph: Any = ""
    name: Any = ""
    cat: Any = ""
    ts: Any = 0.0
    dur: Any = 0.0
    pid: Any = 0
    tid: Any = 0
    id: Any = -1
    bp: Any = ""
    args: Any = None


class _TextTimesEvent(_Event, gc=False):
    """Times that may be decimal text (MindSpore), read exactly by ``_times_ns``."""

    ts: _Time = 0.0  # type: ignore[assignment]
    dur: _Time = 0.0  # type: ignore[assignment]


_INVALID_EVENT = _Event(ph="?invalid")
_STRICT_DECODER = msgspec.json.Decoder(list[_Event])
_TEXT_TIMES_DECODER = msgspec.json.Decoder(list[_TextTimesEvent])
_LENIENT_DECODER = msgspec.json.Decoder(list[_LenientEvent])
_STRICT_EVENT = msgspec.json.Decoder(_TextTimesEvent)
_LENIENT_EVENT = msgspec.json.Decoder(_LenientEvent)
# A UTF-16 surrogate escape (JSON text can spell a lone one, which no decoder accepts).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_RAW_LIST = msgspec.json.Decoder(list[Raw])

_PHASE_COMPLETE, _PHASE_INSTANT, _PHASE_COUNTER, _PHASE_FLOW, _PHASE_META = range(5)
_PHASE_CLASS = {"X": _PHASE_COMPLETE, "i": _PHASE_INSTANT, "I": _PHASE_INSTANT, "C": _PHASE_COUNTER,
                "s": _PHASE_FLOW, "t": _PHASE_FLOW, "f": _PHASE_FLOW, "M": _PHASE_META}
# Operators that carry collective arguments ("Collective name", message sizes).
_COLLECTIVE_ARGS_NAME = re.compile(r"^(record_param_comms$|nccl:|gloo:|c10d::|hccl:|xccl:)")
_FLOW_PHASE = {"s": FLOW_START, "t": FLOW_STEP, "f": FLOW_END}


def _take(items: Sequence[Any], rows: np.ndarray) -> Sequence[Any]:
    """items[rows] for a list (itemgetter returns a bare item for one index)."""
    if len(rows) == 0:
        return ()
    if len(rows) == 1:
        return (items[int(rows[0])],)
    return itemgetter(*rows.tolist())(items)


def _floats(values: Sequence[Any], getter: Callable[[Any], float]) -> np.ndarray:
    return np.fromiter(map(getter, values), dtype=np.float64, count=len(values))


def _ints(values: Sequence[Any], getter: Callable[[Any], int]) -> np.ndarray:
    try:
        return np.fromiter(map(getter, values), dtype=np.int64, count=len(values))
    except OverflowError:  # e.g. an unsigned 64-bit address: keep what fits, mark the rest absent
        return np.fromiter(
            (v if -(2**63) <= v < 2**63 else -1 for v in map(getter, values)), dtype=np.int64, count=len(values)
        )


def _optional_ints(values: Sequence[Any], getter: Callable[[Any], Optional[int]]) -> np.ndarray:
    return np.fromiter((-1 if v is None else v for v in map(getter, values)), dtype=np.int64, count=len(values))


def us_to_ns(us: np.ndarray) -> np.ndarray:
    """Microsecond floats → integer nanoseconds, exact for integral µs up to 2**53."""
    whole = np.floor(us)
    return whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000.0).astype(np.int64)


def _times_ns(values: Sequence[_Time]) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """µs times → integer ns, and the rows whose time is text that is not a number (None if there are none).

    Numbers take the usual path. Strings (MindSpore writes ``"ts": "1795303374563996.947"``) are read
    digit by digit as integers, all at once on a byte matrix (``_decimal_texts_ns``): exact to the ns,
    where float() of an epoch time in µs is only good to 0.25 µs (and would break the nesting of
    slices that start or end together). Digits past the ns are cut.
    """
    n = len(values)
    if str not in set(map(type, values)):  # the usual case, checked at C speed (numpy would parse strings as floats)
        return _numbers_ns(np.fromiter(values, dtype=np.float64, count=n))
    is_text = np.fromiter(map(isinstance, values, repeat(str)), dtype=bool, count=n)
    out = np.zeros(n, dtype=np.int64)
    number_rows = np.flatnonzero(~is_text)
    invalid = np.zeros(n, dtype=bool)
    if len(number_rows):
        ns, beyond = _numbers_ns(np.fromiter(_take(values, number_rows), dtype=np.float64, count=len(number_rows)))
        out[number_rows] = ns
        if beyond is not None:
            invalid[number_rows] = beyond
    text_rows = np.flatnonzero(is_text)
    texts = _take(values, text_rows)
    try:
        ns, readable = _decimal_texts_ns(np.asarray(texts, dtype=np.bytes_))
    except UnicodeEncodeError:  # non-ASCII text: not a plain decimal anywhere in the chunk
        ns, readable = np.zeros(len(texts), dtype=np.int64), np.zeros(len(texts), dtype=bool)
    out[text_rows] = ns
    if readable.all():
        return out, (invalid if invalid.any() else None)
    # Exponents, blanks, words...: each such text on its own (rare).
    for i in np.flatnonzero(~readable).tolist():
        row = int(text_rows[i])
        try:
            number = float(texts[i])
        except ValueError:
            number = _NAN
        if abs(number) < _MAX_TIME_US:
            out[row] = us_to_ns(np.array([number]))[0]
        else:  # not a number, or beyond int64 ns
            invalid[row] = True
    return out, (invalid if invalid.any() else None)


def _numbers_ns(us: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """µs numbers → ns, and the rows whose number is no time (NaN, infinite, beyond int64 ns; None if none)."""
    beyond = ~(np.abs(us) < _MAX_TIME_US)
    if not beyond.any():
        return us_to_ns(us), None
    return us_to_ns(np.where(beyond, 0.0, us)), beyond


_ZERO, _NINE, _DOT, _MINUS = 48, 57, 46, 45
_MAX_TIME_US = 9.2e15  # about the largest µs time whose ns fit an int64
_NS_SCALE = np.array([1000, 100, 10, 1], dtype=np.int64)  # by the number of decimals read (0..3)


def _decimal_texts_ns(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte strings ``[-]digits[.digits]`` of µs → (ns, which texts had that form); others get 0.

    Checks run on the whole byte matrix; the number is built column by column (Horner's rule over
    the text's width, vectorised over the rows), never per text in Python.
    """
    n = len(texts)
    width = texts.dtype.itemsize
    if n == 0 or width == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    chars = texts.view(np.uint8).reshape(n, width)  # NUL-padded on the right
    negative = chars[:, 0] == _MINUS
    is_digit = (chars >= _ZERO) & (chars <= _NINE)
    is_dot = chars == _DOT
    length = np.where(chars[:, -1] != 0, width, np.argmin(chars != 0, axis=1))  # NumPy strips trailing NULs
    inside = np.arange(width) < length[:, None]
    dots = is_dot.sum(axis=1)
    point = np.where(dots == 1, np.argmax(is_dot, axis=1), length)
    first = negative.astype(np.int64)  # the first column of digits
    allowed = is_digit | is_dot
    allowed[:, 0] |= negative
    readable = (dots <= 1) & (point > first) & (point - first <= 16) & (allowed | ~inside).all(axis=1)
    readable &= (chars == 0).sum(axis=1) == width - length  # no NUL inside the text
    magnitude = np.zeros(n, dtype=np.int64)
    decimals = np.zeros(n, dtype=np.int64)
    last_decimal = point + 3  # digits past the ns are cut
    for column in range(width):  # the padding (NUL) is no digit: it never counts
        fraction = is_digit[:, column] & (column > point) & (column <= last_decimal)
        use = (is_digit[:, column] & (column < point)) | fraction
        magnitude = np.where(use, magnitude * 10 + (chars[:, column].astype(np.int64) - _ZERO), magnitude)
        decimals += fraction
    magnitude *= _NS_SCALE[decimals]
    readable &= magnitude >= 0  # 16 integer digits can pass int64's 9.2e18 ns: the product then wraps negative
    magnitude *= readable
    return np.where(negative, -magnitude, magnitude), readable


def _address(buffer: Any) -> int:
    return int(np.frombuffer(buffer, dtype=np.uint8).ctypes.data) if len(buffer) else 0


def _with_brackets(data: bytearray, a: int, b: int, decode: Callable[[memoryview], Any]) -> Any:
    """Decode data[a:b] (events separated by commas) as a JSON array, in place, without a copy.

    The byte before ``a`` (a comma, the array's bracket or white space) and the byte at ``b``
    are overwritten with ``[`` and ``]`` for the decode, then restored.
    """
    saved = (data[a - 1], data[b])
    data[a - 1] = 0x5B  # [
    data[b] = 0x5D  # ]
    try:
        return decode(memoryview(data)[a - 1 : b + 1])
    finally:
        data[a - 1], data[b] = saved


def _decode_events(view: memoryview, text_times: bool = False) -> tuple[list[Any], Any]:
    """The chunk's events, and the decoder that read them (``_STRICT_DECODER``: every time is a float).

    Decoders are tried from the fastest to the most tolerant: times as numbers, times that may be
    text (``text_times`` starts there: the trace had such times before), any value types, each event
    on its own.
    """
    # Decode errors are copied without their traceback (``_detached``): a traceback holds frames that hold
    # ``view``, an export of the streaming window, which could then not grow or shrink until the next
    # garbage collection.
    failure: Optional[Exception] = None
    for decoder in (_TEXT_TIMES_DECODER,) if text_times else (_STRICT_DECODER, _TEXT_TIMES_DECODER):
        try:
            return decoder.decode(view), decoder
        except msgspec.ValidationError:
            continue
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            failure = _detached(exc)
            break
    if failure is None:
        try:
            return _lenient_events(_LENIENT_DECODER.decode(view)), _LENIENT_DECODER
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # a ValidationError is a DecodeError
            failure = _detached(exc)
    events = _decode_one_by_one(view)
    if events is None:
        try:
            raise failure
        finally:
            del failure, view  # no cycle through this frame (failure → traceback → frame → failure)
    return events, _STRICT_EVENT


def _detached(exc: Exception) -> Exception:
    """A copy of a decode error without traceback or context."""
    if isinstance(exc, UnicodeDecodeError):
        return UnicodeDecodeError(exc.encoding, bytes(exc.object[exc.start : exc.end]), 0, exc.end - exc.start,
                                  exc.reason)
    return type(exc)(str(exc))


def _raw_events(view: memoryview) -> Optional[list[Raw]]:
    try:
        return _RAW_LIST.decode(view)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


class _EventsDecodedAlone(list):  # type: ignore[type-arg]
    """A chunk's events decoded one by one: how many had their text repaired, where the first problem was."""

    repaired_text = 0
    first_problem: Optional[int] = None  # byte offset in the decoded view


def _decode_one_by_one(view: memoryview) -> Optional[list[Any]]:
    """Last resort for a chunk holding a value no decoder takes (text that is not UTF-8, a lone surrogate
    escape, a number beyond any float): each event on its own. Text is repaired (invalid bytes become
    U+FFFD); an event still unreadable is dropped (phase ``?invalid``, counted). None when the chunk is
    not a list of JSON values at all (a wrong chunk boundary, a truncated file)."""
    raws = _raw_events(view)
    if raws is None:
        return None
    out = _EventsDecodedAlone()
    base = _address(view)
    for raw in raws:
        event, repaired = _decode_alone(bytes(raw))
        if repaired or event is _INVALID_EVENT:
            out.repaired_text += repaired
            if out.first_problem is None:
                out.first_problem = _address(raw) - base
        out.append(event)
    return out


def _decode_alone(data: bytes) -> tuple[Any, bool]:
    """One event's JSON → (event, whether its text had to be repaired); ``_INVALID_EVENT`` when unreadable."""
    repaired = _SURROGATE_ESCAPE.sub(rb"\\ufffd", data.decode("utf-8", "replace").encode("utf-8"))
    for attempt in (data, repaired) if repaired != data else (data,):
        try:
            return _STRICT_EVENT.decode(attempt), attempt is not data
        except msgspec.ValidationError:
            try:
                return _lenient_events([_LENIENT_EVENT.decode(attempt)])[0], attempt is not data
            except (msgspec.DecodeError, UnicodeDecodeError):
                continue
        except (msgspec.DecodeError, UnicodeDecodeError):
            continue
    return _INVALID_EVENT, False


def _lenient_events(events: list[_LenientEvent]) -> list[_Event]:
    """Coerce events with unexpected value types one by one; what cannot be read is dropped."""
    out: list[_Event] = []
    for ev in events:
        try:
            args = ev.args if isinstance(ev.args, dict) else {}
            out.append(
                _TextTimesEvent(
                    ph=str(ev.ph), name=str(ev.name), cat=str(ev.cat),
                    # Strings stay strings: ``_times_ns`` reads them exactly (float() would round epoch µs).
                    ts=ev.ts if isinstance(ev.ts, str) else float(ev.ts),
                    dur=ev.dur if isinstance(ev.dur, str) else float(ev.dur or 0.0),
                    pid=ev.pid if isinstance(ev.pid, (int, str)) else str(ev.pid),
                    tid=ev.tid if isinstance(ev.tid, (int, str)) else str(ev.tid),
                    id=ev.id if isinstance(ev.id, (int, str)) else str(ev.id),
                    bp=str(ev.bp),
                    args=_lenient_args(args) if args else _NO_ARGS,
                )
            )
        except (TypeError, ValueError, OverflowError, msgspec.ValidationError):  # e.g. float() of a 400-digit ts
            out.append(_INVALID_EVENT)
    return out


_ARG_FIELDS = [
    (info.name, info.encode_name, info.default) for info in msgspec.structs.fields(_Args)
]


def _lenient_args(args: dict[str, Any]) -> _Args:
    """Keep each known argument that can be coerced to its type; drop the others."""
    values: dict[str, Any] = {}
    for attr, key, default in _ARG_FIELDS:
        if key not in args:
            continue
        value = args[key]
        try:
            if isinstance(default, Raw):
                values[attr] = Raw(msgspec.json.encode(value))
            elif isinstance(default, float):
                values[attr] = float(value)
            elif isinstance(default, int):
                values[attr] = int(value)
            elif isinstance(default, str):
                values[attr] = str(value)
        except (TypeError, ValueError, OverflowError):
            continue
    return _Args(**values)


_get_ph = attrgetter("ph")
_get_name = attrgetter("name")
_get_cat = attrgetter("cat")
_get_ts = attrgetter("ts")
_get_dur = attrgetter("dur")
_get_pid = attrgetter("pid")
_get_tid = attrgetter("tid")
_get_args = attrgetter("args")
_get_identity = attrgetter("ph", "name", "cat", "pid", "tid")


class _ChunkReader:
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
                flag = bool(_COLLECTIVE_ARGS_NAME.match(self.out.strings.strings[name_id]))
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
            ts, bad_ts = _numbers_ns(np.fromiter(map(_get_ts, events), dtype=np.float64, count=n))
            dur, bad_dur = _numbers_ns(np.fromiter(map(_get_dur, events), dtype=np.float64, count=n))
        else:
            ts, bad_ts = _times_ns(list(map(_get_ts, events)))
            dur, bad_dur = _times_ns(list(map(_get_dur, events)))
        bad = bad_ts if bad_dur is None else bad_dur if bad_ts is None else bad_ts | bad_dur
        if bad is not None:  # a time that is text but not a number: the event is invalid (as in _lenient_events)
            for row in np.flatnonzero(bad).tolist():
                events[row] = _INVALID_EVENT
            ts[bad] = 0
            dur[bad] = 0
        # (ph, name, cat, pid, tid) repeat a lot: one lookup of the 5-tuple instead of five.
        identities = np.fromiter(map(self.identities.__getitem__, map(_get_identity, events)), dtype=np.int64,
                                 count=n)
        self._read_rows(_StructFields(events, self), first_event_id, ts, dur, *self._identity_parts(identities))

    def read_scanned(self, chunk: columnar.ScannedChunk, texts: columnar.Texts, first_event_id: int,
                     index: int) -> bool:
        """Columns of chunk number ``index``, read by the C scanner; False, with nothing changed, when the chunk
        needs the event objects (metadata, counters, B/E pairs) or has a time that is no time: the msgspec path
        reads it then."""
        if not columnar.NEEDS_EVENTS.isdisjoint(texts.values(np.unique(chunk["ph"]))):
            return False
        ts, bad_ts = _numbers_ns(chunk["ts"])
        dur, bad_dur = _numbers_ns(chunk["dur"])
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
        phase_class = np.array([_PHASE_CLASS.get(p, -1) for p in self.phases.strings], dtype=np.int8)[phase_ids]
        self.last_phase_class = phase_class
        event_id = np.arange(first_event_id, first_event_id + n, dtype=np.int64)
        if not begin_end.PHASES.isdisjoint(self.phases.strings):  # B/E or b/e seen: kept for pairing
            begin_end.collect(self.out, fields.events, phase_ids, self.phases.strings, event_id, names, cats, pids,
                              tids, ts)
        strings = self.out.strings
        for cat_id, count in zip(*np.unique(cats, return_counts=True)):
            text = strings.strings[int(cat_id)]
            self.category_counts[text] = self.category_counts.get(text, 0) + int(count)

        rows = np.flatnonzero(phase_class == _PHASE_COMPLETE)
        if len(rows):
            self._read_slices(fields, rows, event_id, names, cats, pids, tids, ts, dur[rows])
        rows = np.flatnonzero(phase_class == _PHASE_INSTANT)
        if len(rows):
            self._read_instants(fields, rows, event_id, names, cats, pids, tids, ts)
        rows = np.flatnonzero(phase_class == _PHASE_FLOW)
        if len(rows):
            self._read_flows(fields, rows, cats, pids, tids, ts, phase_ids)
        for row in np.flatnonzero(phase_class == _PHASE_META).tolist():
            ev = fields.events[row]
            args = ev.args  # only what model.build reads: raw fields would hold the decoder's window
            self.out.add_meta(ev.name, int(pids[row]), int(tids[row]),
                              _Args(name=args.name, labels=args.labels, sort_index=args.sort_index))

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
            "blocks_per_sm": (np.float32, _NAN, fields.floats("blocks_per_sm", at)),
            "warps_per_sm": (np.float32, _NAN, fields.floats("warps_per_sm", at)),
            "occupancy": (np.float32, _NAN, fields.floats("occupancy", at)),
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
        phase_of = np.array([_FLOW_PHASE.get(p, -1) for p in self.phases.strings], dtype=np.int8)
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

    def __init__(self, events: list[Any], reader: _ChunkReader) -> None:
        self.events = events
        self._reader = reader
        self._args: Optional[list[_Args]] = None

    def args(self, rows: np.ndarray) -> Sequence[_Args]:
        if self._args is None:
            self._args = list(map(_get_args, self.events))
        return _take(self._args, rows)

    def ints(self, key: str, rows: np.ndarray) -> np.ndarray:
        return _ints(self.args(rows), attrgetter(key))

    def optional_ints(self, key: str, rows: np.ndarray) -> np.ndarray:
        return _optional_ints(self.args(rows), attrgetter(key))

    def floats(self, key: str, rows: np.ndarray) -> np.ndarray:
        return _floats(self.args(rows), attrgetter(key))

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
        """Flow ids are integers in Kineto; other writers use strings (``_ChunkReader.flow_id``)."""
        values = list(map(attrgetter("id"), _take(self.events, rows)))
        try:
            return np.fromiter(values, dtype=np.int64, count=len(values))
        except (TypeError, ValueError, OverflowError):
            return np.fromiter(map(self._reader.flow_id, values), dtype=np.int64, count=len(values))

    def binding_ids(self, rows: np.ndarray) -> np.ndarray:
        events = _take(self.events, rows)
        return self._reader.bindings.ids(map(attrgetter("bp"), events), len(events))


class _ScannedFields:
    """The same reads from the columns of the C scanner (``columnar.py``): no per-event Python work."""

    events: Sequence[Any] = ()  # no event objects: such chunks hold no B/E or metadata events (read_scanned)

    def __init__(self, chunk: columnar.ScannedChunk, texts: columnar.Texts, reader: _ChunkReader) -> None:
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

    def args(self, rows: np.ndarray) -> Sequence[_Args]:
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
        return float(value) if unit == "us" else _NAN
    except ValueError:
        return _NAN


def _read_counters(raw_events: list[Raw], rows: np.ndarray, out: RawColumns, ts: np.ndarray, pids: np.ndarray,
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


def _decode_problem(exc: Exception) -> str:
    """A decoder's complaint in the user's words."""
    if isinstance(exc, UnicodeDecodeError):
        return "text that is not UTF-8"
    return str(exc)


def read_kineto(data: Union[bytes, bytearray, memoryview], progress: Optional[Callable[[float], None]] = None,
                precise_start: bool = False) -> RawColumns:
    """Decode a Chrome-trace JSON document held in memory (already decompressed) into raw columns.

    ``precise_start`` also keeps Paddle's ``args.start_time`` of each slice (column ``relative_start_us``).
    """
    raw = decode_events(open_events(iter([data])), precise_start=precise_start)
    if progress:
        progress(1.0)
    return raw


def decode_events(chunks: EventChunks, precise_start: bool = False) -> RawColumns:
    """Every chunk of a document's events decoded in this process, B/E pairs made (see ``begin_end``).

    A chunk whose guessed cut does not decode is cut again exactly (``EventChunks.exact_chunk``);
    one that still does not decode is invalid JSON.
    """
    out = new_columns()
    reader = _ChunkReader(out, precise_start)
    first = 0
    while (chunk := chunks.next_chunk()) is not None:
        error = _decode_in_window(reader, chunks, chunk, first)
        if isinstance(error, (msgspec.DecodeError, UnicodeDecodeError)) and chunk.guessed:
            # (Only once the failed decode's frames are gone: they hold the window, which must be able to grow.)
            chunk = chunks.exact_chunk()
            error = _decode_in_window(reader, chunks, chunk, first)
        if isinstance(error, Exception):
            raise format_error(error, chunk.position) from error
        first += error
    finish_columns(out, reader, chunks, "exact" if chunks.exact_cuts else "guessed")
    begin_end.pair(out)  # B/E pairs may straddle chunks: paired once the whole document is read
    return out


def new_columns() -> RawColumns:
    return RawColumns(strings=StringTable(), metadata={}, stats={})


def format_error(error: Exception, position: int) -> TraceFormatError:
    """The user's message for a chunk, starting at byte ``position`` of the JSON, that does not decode."""
    if isinstance(error, msgspec.ValidationError):
        return TraceFormatError(f"invalid event near byte {position} of the JSON: {error}")
    return TraceFormatError(f"invalid JSON near byte {position}: {_decode_problem(error)}")


def _decode_in_window(reader: _ChunkReader, chunks: EventChunks, chunk: Chunk, first: int) -> Union[int, Exception]:
    """``decode_chunk`` of ``chunk`` in the window, in place; the decode error is returned, not raised, so that
    no frame of it outlives this call (they reference the window)."""
    try:
        return _with_brackets(chunks.buffer, chunk.start, chunk.end,
                              lambda view: decode_chunk(reader, view, first, chunk.index, chunk.position))
    except UnicodeDecodeError as exc:
        return UnicodeDecodeError(exc.encoding, b"", 0, 0, exc.reason)
    except msgspec.DecodeError as exc:
        return type(exc)(str(exc))


def decode_chunk(reader: _ChunkReader, view: memoryview, first: int, index: int, position: int = 0) -> int:
    """Decode ``view`` (a JSON array of events: one chunk, numbered ``index``, whose first event is number
    ``first``, the chunk starting at byte ``position`` of the JSON) into the reader's columns; returns its
    number of events.

    Raises ``msgspec.DecodeError`` (or ``UnicodeDecodeError``) before changing anything when the bytes are
    not a JSON array.
    """
    scanner = reader.scanner
    if scanner is not None and not reader.text_times:  # the fast path first (columnar.py)
        scanned = scanner.scan(view)
        if scanned is not None and reader.read_scanned(scanned, scanner.texts, first, index):
            return scanned.rows
    events, decoder = _decode_events(view, reader.text_times)
    if decoder is _TEXT_TIMES_DECODER:
        reader.text_times = True  # the next chunks are likely alike: they start with this decoder
    if isinstance(events, _EventsDecodedAlone):
        reader.repaired_text += events.repaired_text
        if events.first_problem is not None and reader.first_problem is None:
            reader.first_problem = position - 1 + events.first_problem  # the view starts with its '['
    out = reader.out
    out.begin_chunk(index, first, len(events))
    reader.read(events, first, numeric_times=decoder is _STRICT_DECODER)
    rows = np.flatnonzero(reader.last_phase_class == _PHASE_COUNTER)
    if len(rows):
        raw_events = _RAW_LIST.decode(view)
        pids = reader.scalars.ids(map(_get_pid, events), len(events))
        names = out.strings.ids(map(_get_name, events), len(events))
        _read_counters(raw_events, rows, out, reader.last_ts, pids, names, first)
    return len(events)


def finish_columns(out: RawColumns, reader: _ChunkReader, chunks: Optional[EventChunks], chunking: str) -> None:
    """Totals and parse statistics once every chunk of ``reader`` was decoded."""
    out.num_events = sum(count for _first, count in out.chunk_events.values())
    if chunks is not None:
        out.metadata = chunks.metadata
    unknown_categories = {c: n for c, n in reader.category_counts.items() if c and c not in KNOWN_CATEGORIES}
    out.stats = {
        "events": out.num_events,
        "phases": reader.phase_counts,
        "categories": reader.category_counts,
        "unknown_categories": unknown_categories,
        "skipped_phases": {p: n for p, n in reader.phase_counts.items() if p not in _PHASE_CLASS},
        "chunking": chunking,
    }
    if reader.repaired_text:
        out.stats["repaired_text"] = reader.repaired_text
    if reader.first_problem is not None:
        out.stats["first_problem_byte"] = reader.first_problem
    out.flow_id_strings = list(reader.string_flow_ids.strings)
