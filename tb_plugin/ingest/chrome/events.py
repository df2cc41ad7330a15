"""The events of a Chrome-trace JSON document as typed ``msgspec`` structs: which fields and ``args`` keys are read
(``Args``, ``Event``), decoding one chunk's bytes into them (``decode_structs``: strict first, then with decimal-text
times, then leniently, event by event, for a damaged chunk), and their times in µs to exact integer ns
(``times_ns``). ``chunk_reader.py`` turns the structs into columns; ``decode.py`` drives both over a document.
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

from ...model.raw_columns import FLOW_END, FLOW_START, FLOW_STEP

_EMPTY_RAW = Raw(b"")
NAN = math.nan


class Args(msgspec.Struct, frozen=True, gc=False):
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
    blocks_per_sm: float = msgspec.field(default=NAN, name="blocks per SM")
    warps_per_sm: float = msgspec.field(default=NAN, name="warps per SM")
    occupancy: float = msgspec.field(default=NAN, name="est. achieved occupancy %")
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
    # The process group a collective runs in, and its number among that group's collectives (torch >= 2.4).
    process_group: str = msgspec.field(default="", name="Process Group Name")
    collective_seq: int = msgspec.field(default=-1, name="Seq")
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


_NO_ARGS = Args()
_Scalar = Union[int, str]


# Times in µs: numbers in Kineto, decimal strings in MindSpore ("1795303374563996.947"), see ``times_ns``.
_Time = Union[float, str]


class Event(msgspec.Struct, gc=False):
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
    args: Args = _NO_ARGS


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


class _TextTimesEvent(Event, gc=False):
    """Times that may be decimal text (MindSpore), read exactly by ``times_ns``."""

    ts: _Time = 0.0  # type: ignore[assignment]
    dur: _Time = 0.0  # type: ignore[assignment]


INVALID_EVENT = Event(ph="?invalid")
STRICT_DECODER = msgspec.json.Decoder(list[Event])
TEXT_TIMES_DECODER = msgspec.json.Decoder(list[_TextTimesEvent])
_LENIENT_DECODER = msgspec.json.Decoder(list[_LenientEvent])
_STRICT_EVENT = msgspec.json.Decoder(_TextTimesEvent)
_LENIENT_EVENT = msgspec.json.Decoder(_LenientEvent)
# A UTF-16 surrogate escape (JSON text can spell a lone one, which no decoder accepts).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
RAW_LIST = msgspec.json.Decoder(list[Raw])

PHASE_COMPLETE, PHASE_INSTANT, PHASE_COUNTER, PHASE_FLOW, PHASE_META = range(5)
PHASE_CLASS = {"X": PHASE_COMPLETE, "i": PHASE_INSTANT, "I": PHASE_INSTANT, "C": PHASE_COUNTER,
                "s": PHASE_FLOW, "t": PHASE_FLOW, "f": PHASE_FLOW, "M": PHASE_META}
# Operators that carry collective arguments ("Collective name", message sizes).
COLLECTIVE_ARGS_NAME = re.compile(r"^(record_param_comms$|nccl:|gloo:|c10d::|hccl:|xccl:)")
FLOW_PHASE = {"s": FLOW_START, "t": FLOW_STEP, "f": FLOW_END}


def take_rows(items: Sequence[Any], rows: np.ndarray) -> Sequence[Any]:
    """items[rows] for a list (itemgetter returns a bare item for one index)."""
    if len(rows) == 0:
        return ()
    if len(rows) == 1:
        return (items[int(rows[0])],)
    return itemgetter(*rows.tolist())(items)


def float_column(values: Sequence[Any], getter: Callable[[Any], float]) -> np.ndarray:
    return np.fromiter(map(getter, values), dtype=np.float64, count=len(values))


def int_column(values: Sequence[Any], getter: Callable[[Any], int]) -> np.ndarray:
    try:
        return np.fromiter(map(getter, values), dtype=np.int64, count=len(values))
    except OverflowError:  # e.g. an unsigned 64-bit address: keep what fits, mark the rest absent
        return np.fromiter(
            (v if -(2**63) <= v < 2**63 else -1 for v in map(getter, values)), dtype=np.int64, count=len(values)
        )


def optional_int_column(values: Sequence[Any], getter: Callable[[Any], Optional[int]]) -> np.ndarray:
    return np.fromiter((-1 if v is None else v for v in map(getter, values)), dtype=np.int64, count=len(values))


def us_to_ns(us: np.ndarray) -> np.ndarray:
    """Microsecond floats → integer nanoseconds, exact for integral µs up to 2**53."""
    whole = np.floor(us)
    return whole.astype(np.int64) * 1000 + np.rint((us - whole) * 1000.0).astype(np.int64)


def times_ns(values: Sequence[_Time]) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """µs times → integer ns, and the rows whose time is text that is not a number (None if there are none).

    Numbers take the usual path. Strings (MindSpore writes ``"ts": "1795303374563996.947"``) are read
    digit by digit as integers, all at once on a byte matrix (``_decimal_texts_ns``): exact to the ns,
    where float() of an epoch time in µs is only good to 0.25 µs (and would break the nesting of
    slices that start or end together). Digits past the ns are cut.
    """
    n = len(values)
    if str not in set(map(type, values)):  # the usual case, checked at C speed (numpy would parse strings as floats)
        return numbers_ns(np.fromiter(values, dtype=np.float64, count=n))
    is_text = np.fromiter(map(isinstance, values, repeat(str)), dtype=bool, count=n)
    out = np.zeros(n, dtype=np.int64)
    number_rows = np.flatnonzero(~is_text)
    invalid = np.zeros(n, dtype=bool)
    if len(number_rows):
        ns, beyond = numbers_ns(np.fromiter(take_rows(values, number_rows), dtype=np.float64, count=len(number_rows)))
        out[number_rows] = ns
        if beyond is not None:
            invalid[number_rows] = beyond
    text_rows = np.flatnonzero(is_text)
    texts = take_rows(values, text_rows)
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
            number = NAN
        if abs(number) < _MAX_TIME_US:
            out[row] = us_to_ns(np.array([number]))[0]
        else:  # not a number, or beyond int64 ns
            invalid[row] = True
    return out, (invalid if invalid.any() else None)


def numbers_ns(us: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
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


def with_brackets(data: bytearray, a: int, b: int, decode: Callable[[memoryview], Any]) -> Any:
    """Decode data[a:b] (events separated by commas) as a JSON array, in place, without a copy.

    The byte before ``a`` (a comma, the array's bracket or white space) and the byte at ``b``
    are overwritten with ``[`` and ``]`` for the decode, then restored.
    """
    saved = (data[a - 1], data[b])
    data[a - 1] = 0x5B  # [
    data[b] = 0x5D  # ]
    whole = memoryview(data)
    view = whole[a - 1 : b + 1]
    try:
        return decode(view)
    finally:
        data[a - 1], data[b] = saved
        # Released here, not when the last reference goes: a frame of this call can outlive it in another
        # thread's hands (a Dask worker's profiler samples the running frames), and an export of the window keeps
        # it from growing or shrinking (BufferError).
        for exported in (view, whole):
            try:
                exported.release()
            except BufferError:  # something decoded still holds it (freed with it)
                pass


def decode_structs(view: memoryview, text_times: bool = False) -> tuple[list[Any], Any]:
    """The chunk's events, and the decoder that read them (``STRICT_DECODER``: every time is a float).

    Decoders are tried from the fastest to the most tolerant: times as numbers, times that may be
    text (``text_times`` starts there: the trace had such times before), any value types, each event
    on its own.
    """
    # Decode errors are copied without their traceback (``_detached``): a traceback holds frames that hold
    # ``view``, an export of the streaming window, which could then not grow or shrink until the next
    # garbage collection.
    failure: Optional[Exception] = None
    for decoder in (TEXT_TIMES_DECODER,) if text_times else (STRICT_DECODER, TEXT_TIMES_DECODER):
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
        return RAW_LIST.decode(view)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


class EventsDecodedAlone(list):  # type: ignore[type-arg]
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
    out = EventsDecodedAlone()
    base = _address(view)
    for raw in raws:
        event, repaired = _decode_alone(bytes(raw))
        if repaired or event is INVALID_EVENT:
            out.repaired_text += repaired
            if out.first_problem is None:
                out.first_problem = _address(raw) - base
        out.append(event)
    return out


def _decode_alone(data: bytes) -> tuple[Any, bool]:
    """One event's JSON → (event, whether its text had to be repaired); ``INVALID_EVENT`` when unreadable."""
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
    return INVALID_EVENT, False


def _lenient_events(events: list[_LenientEvent]) -> list[Event]:
    """Coerce events with unexpected value types one by one; what cannot be read is dropped."""
    out: list[Event] = []
    for ev in events:
        try:
            args = ev.args if isinstance(ev.args, dict) else {}
            out.append(
                _TextTimesEvent(
                    ph=str(ev.ph), name=str(ev.name), cat=str(ev.cat),
                    # Strings stay strings: ``times_ns`` reads them exactly (float() would round epoch µs).
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
            out.append(INVALID_EVENT)
    return out


_ARG_FIELDS = [
    (info.name, info.encode_name, info.default) for info in msgspec.structs.fields(Args)
]


def _lenient_args(args: dict[str, Any]) -> Args:
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
    return Args(**values)


_get_ph = attrgetter("ph")
get_name = attrgetter("name")
_get_cat = attrgetter("cat")
get_ts = attrgetter("ts")
get_dur = attrgetter("dur")
get_pid = attrgetter("pid")
_get_tid = attrgetter("tid")
get_args = attrgetter("args")
get_identity = attrgetter("ph", "name", "cat", "pid", "tid")
