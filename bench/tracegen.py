"""Big, realistic Kineto traces, made by replicating the steps of a real sample.

A seed trace (a real ``*.pt.trace.json[.gz]``) is read once. Its top-level keys
(``schemaVersion``, ``deviceProperties``, ``distributedInfo``,
``baseTimeNanoseconds``, ...) and its ``M`` metadata events are written once;
every other event is written ``copies`` times, each copy shifted in time by the
sample's span plus a small gap, with every id that links events renumbered per
copy so that links stay unique and correct:

* ``External id`` / ``external id`` (op <-> runtime/kernel), ``correlation`` and
  the flow ids of ``s``/``f``/``t`` events (launch -> kernel, fwd -> bwd),
* ``Python id`` / ``Python parent id``, ``Record function id``, ``Ev Idx``,
  ``Sequence number``, and the ``N`` of ``ProfilerStep#N``.

The profiler's envelope (the ``Trace`` span event and the global ``i`` marks
"Iteration Start" / "Record Window End") is written once and stretched over all
copies, so the output is one long profiling window of many distinct steps.

Speed: each event is turned once into a template -- its original bytes cut
around the numbers that change -- so a copy is rendered by formatting those
numbers and joining strings; nothing is re-encoded per copy and the output is
streamed one copy at a time (memory stays near a few copies of the seed).

Usage::

    python bench/tracegen.py --seed tests/data/kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz \\
        --target-mb 100 -o bench/out/big.pt.trace.json [--gzip]
    python bench/tracegen.py --seed SEED --events 10000000 -o bench/out/10m.pt.trace.json.gz
    python bench/tracegen.py --seed SEED --copies 2 --ranks 64 -o bench/out/run64/

Only ``msgspec`` is required; ``isal`` (if installed) makes gzip faster.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import gzip as gzip_module
import math
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator, NamedTuple, Optional, Union

import msgspec

try:  # isal's gzip is several times faster than zlib's at both ends
    from isal import igzip as _igzip
    from isal import igzip_threaded as _igzip_threaded
except ImportError:  # pragma: no cover - isal is a product dependency
    _igzip = None
    _igzip_threaded = None

# Families of numbers that change per copy; a copy's offsets vector is indexed by these.
TIME = 0  # timestamps of replicated events: + copy * period (+ rank jitter)
RANK_SHIFT = 1  # timestamps written once (metadata, window start): + rank jitter only
ENVELOPE_END = 2  # end-of-window marks: + (copies - 1) * period (+ rank jitter)
ENVELOPE_EXTENT = 3  # the window's duration: + (copies - 1) * period
STEP = 4  # N of ProfilerStep#N
EXTERNAL = 5  # External id / external id
CORRELATION = 6  # correlation, and flow ids (which equal the correlation for launch flows)
SEQUENCE = 7  # autograd Sequence number
PYTHON = 8  # Python id / Python parent id
RECORD_FUNCTION = 9  # Record function id
EVENT_INDEX = 10  # Ev Idx
_FAMILY_COUNT = 11
_ID_FAMILIES = (STEP, EXTERNAL, CORRELATION, SEQUENCE, PYTHON, RECORD_FUNCTION, EVENT_INDEX)

# args keys that hold ids: key -> (family, whether 0 is a real id). Where 0 is
# not a real id (Kineto writes 0 for "no linked op"), it is kept as is.
_ARG_ID_KEYS: dict[str, tuple[int, bool]] = {
    "External id": (EXTERNAL, False),
    "external id": (EXTERNAL, False),
    "correlation": (CORRELATION, False),
    "Sequence number": (SEQUENCE, True),
    "Python id": (PYTHON, False),
    "Python parent id": (PYTHON, False),
    "Record function id": (RECORD_FUNCTION, False),
    "Ev Idx": (EVENT_INDEX, True),
}
# args keys that hold timestamps (2021 Kineto: the launching op's start on runtime events).
_ARG_TIME_KEYS = ("external ts",)
_FLOW_PHASES = ("s", "f", "t")
_STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_EVENT_SEPARATOR = ",\n  "
MB = 1_000_000

# Kinds of seed events.
_REPLICATED = 0
_METADATA = 1
_ENVELOPE = 2

# A number to rewrite: rendered as f"{base + offsets[family]}{suffix}". Integer
# text keeps its digits in base; "1033.070" is base 1033, suffix ".070", so a
# whole-microsecond shift never disturbs the fraction's digits.
Slot = tuple[Union[int, float], int, str]


class _SlotSpec(NamedTuple):  # a tuple: made once per slot of the seed, so it must be cheap
    """Where a number to rewrite sits in a decoded event."""

    place: str  # "top" (event key), "args" (args key), "step" (ProfilerStep#N in name)
    key: str
    family: int
    value: Union[int, float]  # as decoded: the text found in the raw event must say the same


@dataclass
class _EventTemplate:
    kind: int
    literals: list[str]  # len(slots) + 1 pieces of the event's text
    slots: list[Slot]


@dataclass
class _Variant:
    """One copy's worth of events, as text pieces with slots between them."""

    parts: list[str]  # literals at even positions; odd positions are filled per render
    slots: list[Slot]
    events: int


@dataclass
class SeedTrace:
    """A parsed seed trace, ready to be replicated."""

    path: Path
    top_level: list[tuple[str, bytes]]  # raw JSON of each top-level value, in file order
    templates: list[_EventTemplate]
    period: int  # µs between copies: the sample's span plus the gap
    strides: list[int]  # per family: how far one copy's ids move
    metadata_events: int
    envelope_events: int
    replicated_events: int
    reencoded_events: int  # events whose text could not be cut safely and were re-encoded
    _variants: dict[str, _Variant] = field(default_factory=dict, repr=False)

    def events_for(self, copies: int) -> int:
        return self.metadata_events + self.envelope_events + copies * self.replicated_events


@dataclass(frozen=True)
class GeneratedTrace:
    path: Path
    copies: int
    events: int
    uncompressed_bytes: int
    seconds: float

    @property
    def mb(self) -> float:
        return self.uncompressed_bytes / MB


# --------------------------------------------------------------------------- seed


def read_trace_bytes(path: Union[str, Path]) -> bytes:
    """The JSON bytes of a trace file, gunzipped when it is gzip."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        return _igzip.decompress(data) if _igzip is not None else gzip_module.decompress(data)
    return data


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _slot_from_text(text: str, family: int) -> Slot:
    if text.isdigit():
        return (int(text), family, "")
    whole, dot, fraction = text.partition(".")
    if dot and whole.isdigit() and fraction.isdigit():
        return (int(whole), family, "." + fraction)
    if re.fullmatch(r"-?\d+", text):
        return (int(text), family, "")
    return (float(text), family, "")  # exponent or negative fraction: plain float arithmetic


def _classify(event: dict) -> int:
    ph = event.get("ph")
    if ph == "M":
        return _METADATA
    if event.get("cat") == "Trace" or (ph == "i" and event.get("s") == "g"):
        return _ENVELOPE
    return _REPLICATED


def _slot_specs(event: dict, kind: int, span_middle: float) -> list[_SlotSpec]:
    ts = event.get("ts")
    if kind == _METADATA:
        return [_SlotSpec("top", "ts", RANK_SHIFT, ts)] if _is_number(ts) else []
    if kind == _ENVELOPE:
        specs = []
        if _is_number(ts):
            # A global mark near the window's end moves to the end of the last copy.
            at_end = event.get("ph") == "i" and ts > span_middle
            specs.append(_SlotSpec("top", "ts", ENVELOPE_END if at_end else RANK_SHIFT, ts))
        dur = event.get("dur")
        if event.get("ph") == "X" and _is_number(dur):
            specs.append(_SlotSpec("top", "dur", ENVELOPE_EXTENT, dur))
        return specs

    specs = []
    if _is_number(ts):
        specs.append(_SlotSpec("top", "ts", TIME, ts))
    flow_id = event.get("id")
    if event.get("ph") in _FLOW_PHASES and type(flow_id) is int and flow_id >= 0:
        specs.append(_SlotSpec("top", "id", CORRELATION, flow_id))
    name = event.get("name")
    if isinstance(name, str) and name.startswith("ProfilerStep#"):
        step = _STEP_NAME.match(name)
        if step:
            specs.append(_SlotSpec("step", "name", STEP, int(step.group(1))))
    args = event.get("args")
    if isinstance(args, dict):
        for key, value in args.items():
            id_key = _ARG_ID_KEYS.get(key)
            if id_key is not None:
                if type(value) is int and (value > 0 or (id_key[1] and value == 0)):
                    specs.append(_SlotSpec("args", key, id_key[0], value))
            elif key in _ARG_TIME_KEYS and _is_number(value):
                specs.append(_SlotSpec("args", key, TIME, value))
    return specs


# What follows a slot's key: a number, or a ProfilerStep#N name.
_SLOT_VALUE = re.compile(r'\s*:\s*(?:(' + _NUMBER + r')|"ProfilerStep#(\d+)")')
_QUOTED_KEYS = {
    key: msgspec.json.encode(key).decode()
    for key in ("ts", "dur", "id", "name", *_ARG_ID_KEYS, *_ARG_TIME_KEYS)
}


def _cut_raw(text: str, specs: list[_SlotSpec]) -> Optional[_EventTemplate]:
    """Cut the event's own text around its slots; None when any slot is ambiguous."""
    found: list[tuple[int, int, Slot]] = []
    for spec in specs:
        quoted = _QUOTED_KEYS[spec.key]
        if text.count(quoted) != 1:
            return None  # the key (or a string equal to it) also occurs elsewhere: don't guess
        match = _SLOT_VALUE.match(text, text.index(quoted) + len(quoted))
        group = 2 if spec.place == "step" else 1
        number = match.group(group) if match else None
        if number is None:
            return None
        value = spec.value
        exact = isinstance(value, int) and number.lstrip("-").isdigit()
        if not (int(number) == value if exact else float(number) == value):
            return None
        found.append((match.start(group), match.end(group), _slot_from_text(number, spec.family)))
    found.sort()
    literals, slots, position = [], [], 0
    for start, end, slot in found:
        literals.append(text[position:start])
        slots.append(slot)
        position = end
    literals.append(text[position:])
    return _EventTemplate(_REPLICATED, literals, slots)


_MARKER = re.compile(r'"\\u0001(\d+)\\u0001"|\\u0002(\d+)\\u0002')


def _reencode(event: dict, specs: list[_SlotSpec]) -> _EventTemplate:
    """Template from a compact re-encoding with markers where the slots go."""
    marked = dict(event)
    if isinstance(event.get("args"), dict):
        marked["args"] = dict(event["args"])
    slot_by_marker: list[Slot] = []
    for index, spec in enumerate(specs):
        value = spec.value
        if spec.place == "step":
            marked["name"] = f"ProfilerStep#\x02{index}\x02"
            slot_by_marker.append((int(value), spec.family, ""))  # type: ignore[arg-type]
            continue
        target = marked["args"] if spec.place == "args" else marked
        target[spec.key] = f"\x01{index}\x01"
        text = msgspec.json.encode(value).decode()
        slot_by_marker.append(_slot_from_text(text, spec.family))
    text = msgspec.json.encode(marked).decode()
    literals, slots, position = [], [], 0
    for match in _MARKER.finditer(text):
        literals.append(text[position : match.start()])
        slots.append(slot_by_marker[int(match.group(1) or match.group(2))])
        position = match.end()
    literals.append(text[position:])
    if len(slots) != len(specs):
        raise ValueError(f"event text contains slot markers, cannot template it: {text[:200]}")
    return _EventTemplate(_REPLICATED, literals, slots)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC: building millions of acyclic containers otherwise triggers it over and over."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_seed(path: Union[str, Path], gap_us: int = 10) -> SeedTrace:
    """Parse a seed trace into per-event templates."""
    with _gc_paused():
        return _load_seed(Path(path), gap_us)


def _load_seed(path: Path, gap_us: int) -> SeedTrace:
    data = read_trace_bytes(path)
    top = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    if "traceEvents" not in top:
        raise ValueError(f"{path}: no traceEvents")
    raw_events = msgspec.json.decode(top["traceEvents"], type=list[msgspec.Raw])
    events = msgspec.json.decode(top["traceEvents"], type=list[dict])
    top_level = [(key, b"" if key == "traceEvents" else bytes(value)) for key, value in top.items()]
    del data, top

    kinds = [_classify(event) for event in events]
    starts, ends = [], []
    for event, kind in zip(events, kinds):
        ts = event.get("ts")
        if kind != _METADATA and _is_number(ts):
            starts.append(ts)
            dur = event.get("dur")
            ends.append(ts + (dur if _is_number(dur) and dur > 0 else 0))
    if not starts:
        raise ValueError(f"{path}: no timed events to replicate")
    span_start, span_end = min(starts), max(ends)
    period = math.ceil(span_end - span_start) + gap_us
    span_middle = (span_start + span_end) / 2

    templates: list[_EventTemplate] = []
    reencoded = 0
    family_values: list[list[int]] = [[] for _ in range(_FAMILY_COUNT)]
    for raw, event, kind in zip(raw_events, events, kinds):
        specs = _slot_specs(event, kind, span_middle)
        template = _cut_raw(bytes(raw).decode("utf-8"), specs)
        if template is None:
            template = _reencode(event, specs)
            reencoded += 1
        template.kind = kind
        templates.append(template)
        if kind == _REPLICATED:
            for base, family, _ in template.slots:
                if family in _ID_FAMILIES:
                    family_values[family].append(int(base))
    strides = [max(values) - min(values) + 1 if values else 0 for values in family_values]
    strides[TIME] = period
    return SeedTrace(
        path=path,
        top_level=top_level,
        templates=templates,
        period=period,
        strides=strides,
        metadata_events=kinds.count(_METADATA),
        envelope_events=kinds.count(_ENVELOPE),
        replicated_events=kinds.count(_REPLICATED),
        reencoded_events=reencoded,
    )


# --------------------------------------------------------------------------- rendering


def _variant(seed: SeedTrace, name: str) -> _Variant:
    """The events of a first, middle, last or only copy (metadata in the first, envelope in the last)."""
    cached = seed._variants.get(name)
    if cached is not None:
        return cached
    with_metadata = name in ("first", "only")
    with_envelope = name in ("last", "only")
    literals: list[str] = [""]
    slots: list[Slot] = []
    count = 0
    for template in seed.templates:
        if template.kind == _METADATA and not with_metadata:
            continue
        if template.kind == _ENVELOPE and not with_envelope:
            continue
        literals[-1] += (_EVENT_SEPARATOR if count else "") + template.literals[0]
        literals.extend(template.literals[1:])
        slots.extend(template.slots)
        count += 1
    parts: list[str] = [""] * (2 * len(slots) + 1)
    parts[0::2] = literals
    variant = _Variant(parts, slots, count)
    seed._variants[name] = variant
    return variant


def _offsets(seed: SeedTrace, copy: int, copies: int, jitter_us: int) -> list[int]:
    offsets = [copy * stride for stride in seed.strides]
    offsets[TIME] = copy * seed.period + jitter_us
    offsets[RANK_SHIFT] = jitter_us
    offsets[ENVELOPE_END] = (copies - 1) * seed.period + jitter_us
    offsets[ENVELOPE_EXTENT] = (copies - 1) * seed.period
    return offsets


def _render(variant: _Variant, offsets: list[int]) -> bytes:
    parts = variant.parts
    parts[1::2] = [f"{base + offsets[family]}{suffix}" for base, family, suffix in variant.slots]
    return "".join(parts).encode("utf-8")


def _variant_name(copy: int, copies: int) -> str:
    if copies == 1:
        return "only"
    return "first" if copy == 0 else "last" if copy == copies - 1 else "middle"


def _header_footer(seed: SeedTrace, overrides: dict[str, object]) -> tuple[bytes, bytes]:
    entries: list[tuple[str, bytes]] = []
    existing = {key for key, _ in seed.top_level}
    for key, raw in seed.top_level:
        if key == "traceEvents":  # new keys go before the events, as Kineto writes them
            entries.extend((k, msgspec.json.encode(v)) for k, v in overrides.items() if k not in existing)
        elif key in overrides:
            raw = msgspec.json.encode(overrides[key])
        entries.append((key, raw))
    head_parts: list[bytes] = []
    tail_parts: list[bytes] = []
    current = head_parts
    for index, (key, raw) in enumerate(entries):
        prefix = b"{\n  " if index == 0 else b",\n  "
        if key == "traceEvents":
            current.append(prefix + b'"traceEvents": [\n  ')
            current = tail_parts
            tail_parts.append(b"\n]")
            continue
        current.append(prefix + msgspec.json.encode(key) + b": " + raw)
    tail_parts.append(b"\n}\n")
    return b"".join(head_parts), b"".join(tail_parts)


def _open_output(path: Path, gzip: bool) -> BinaryIO:
    if not gzip:
        return open(path, "wb")
    if _igzip_threaded is not None:
        # Compression runs in a background thread, beside the rendering.
        return _igzip_threaded.open(path, "wb", compresslevel=2, threads=1)  # type: ignore[return-value]
    return gzip_module.open(path, "wb", compresslevel=6)  # type: ignore[return-value]


def copies_for_target(seed: SeedTrace, target_mb: Optional[float] = None, target_events: Optional[int] = None) -> int:
    """How many copies make about target_mb uncompressed megabytes (10^6 bytes) or at least target_events events."""
    if target_events is not None:
        fixed = seed.metadata_events + seed.envelope_events
        return max(1, math.ceil((target_events - fixed) / max(1, seed.replicated_events)))
    if target_mb is None:
        raise ValueError("give target_mb or target_events")
    middle = _variant(seed, "middle")
    per_copy = len(_render(middle, _offsets(seed, 1, 3, 0))) + len(_EVENT_SEPARATOR)
    header, footer = _header_footer(seed, {})
    fixed = len(header) + len(footer)
    for template in seed.templates:  # metadata and envelope events, written once
        if template.kind != _REPLICATED:
            fixed += len(_EVENT_SEPARATOR) + sum(map(len, template.literals))
            fixed += sum(len(f"{base}{suffix}") for base, _, suffix in template.slots)
    return max(1, round((target_mb * MB - fixed) / per_copy))


def write_trace(
    seed: Union[SeedTrace, str, Path],
    out_path: Union[str, Path],
    *,
    copies: int,
    gzip: bool = False,
    jitter_us: int = 0,
    top_level_overrides: Optional[dict[str, object]] = None,
) -> GeneratedTrace:
    """Write seed's events copies times into out_path, streaming one copy at a time."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    if not isinstance(seed, SeedTrace):
        seed = load_seed(seed)
    out_path = Path(out_path)
    started = time.perf_counter()
    overrides = dict(top_level_overrides or {})
    if any(key == "traceName" for key, _ in seed.top_level):
        overrides.setdefault("traceName", out_path.name.removesuffix(".gz"))
    header, footer = _header_footer(seed, overrides)
    written = 0
    events = 0
    with _open_output(out_path, gzip) as out:
        out.write(header)
        written += len(header)
        for copy in range(copies):
            variant = _variant(seed, _variant_name(copy, copies))
            if variant.events == 0:
                continue
            chunk = _render(variant, _offsets(seed, copy, copies, jitter_us))
            if events:
                out.write(_EVENT_SEPARATOR.encode())
                written += len(_EVENT_SEPARATOR)
            out.write(chunk)
            written += len(chunk)
            events += variant.events
        out.write(footer)
        written += len(footer)
    return GeneratedTrace(out_path, copies, events, written, time.perf_counter() - started)


# --------------------------------------------------------------------------- multi-rank


def _seed_distributed_info(seed: SeedTrace) -> Optional[dict]:
    for key, raw in seed.top_level:
        if key == "distributedInfo":
            info = msgspec.json.decode(raw)
            return info if isinstance(info, dict) else None
    return None


def _rank_distributed_info(template: Optional[dict], rank: int, world_size: int) -> dict:
    if template is None:
        return {"backend": "nccl", "rank": rank, "world_size": world_size}
    info = dict(template)
    old_world = info.get("world_size")
    info["rank"] = rank
    info["world_size"] = world_size
    groups = info.get("pg_config")
    if isinstance(groups, list):  # the default group spans every rank: widen it to the new world
        info["pg_config"] = [
            {**group, "pg_size": world_size, "ranks": list(range(world_size))}
            if isinstance(group, dict) and group.get("pg_size") == old_world
            else group
            for group in groups
        ]
    return info


def write_multi_rank(
    seed: Union[SeedTrace, str, Path],
    out_dir: Union[str, Path],
    *,
    ranks: int,
    copies: int,
    gzip: bool = True,
    max_jitter_us: int = 200,
    random_seed: int = 0,
    timestamp: Optional[int] = None,
) -> list[GeneratedTrace]:
    """One file per rank, ``rank{r}.<ts>.pt.trace.json[.gz]``, each with its rank and a small time jitter."""
    if not isinstance(seed, SeedTrace):
        seed = load_seed(seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if timestamp is None:
        found = re.search(r"\.(\d+)\.pt\.trace\.json", seed.path.name)
        timestamp = int(found.group(1)) if found else time.time_ns()
    template = _seed_distributed_info(seed)
    rng = random.Random(random_seed)
    suffix = ".pt.trace.json.gz" if gzip else ".pt.trace.json"
    results = []
    for rank in range(ranks):
        out_path = out_dir / f"rank{rank}.{timestamp + rank}{suffix}"
        overrides = {"distributedInfo": _rank_distributed_info(template, rank, ranks)}
        results.append(
            write_trace(
                seed,
                out_path,
                copies=copies,
                gzip=gzip,
                jitter_us=rng.randint(0, max_jitter_us),
                top_level_overrides=overrides,
            )
        )
    return results


# --------------------------------------------------------------------------- CLI


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", required=True, help="a real Kineto trace (.pt.trace.json or .json.gz)")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--target-mb", type=float, help="about this many uncompressed MB (10^6 bytes)")
    size.add_argument("--copies", type=int, help="this many copies of the seed's steps")
    size.add_argument("--events", type=int, help="at least this many events")
    parser.add_argument("-o", "--output", required=True, help="output file (a folder with --ranks)")
    parser.add_argument("--gzip", action="store_true", help="gzip the output (implied by a .gz name)")
    parser.add_argument("--gap-us", type=int, default=10, help="gap between copies in µs (default 10)")
    parser.add_argument("--ranks", type=int, help="write this many rank files into the output folder")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    seed = load_seed(args.seed, gap_us=args.gap_us)
    parse_seconds = time.perf_counter() - started
    print(
        f"seed: {seed.replicated_events:,} events per copy, {seed.metadata_events} metadata, "
        f"period {seed.period:,} µs, {seed.reencoded_events} re-encoded, parsed in {parse_seconds:.1f} s",
        file=sys.stderr,
    )
    copies = args.copies or copies_for_target(seed, target_mb=args.target_mb, target_events=args.events)
    gzip = args.gzip or args.output.endswith(".gz")
    if args.ranks:
        results = write_multi_rank(seed, args.output, ranks=args.ranks, copies=copies, gzip=gzip)
    else:
        results = [write_trace(seed, args.output, copies=copies, gzip=gzip)]
    for result in results:
        print(
            f"{result.path}: {result.mb:,.1f} MB uncompressed, {result.events:,} events, {result.copies} copies, "
            f"{result.seconds:.1f} s ({result.mb / result.seconds:,.0f} MB/s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
