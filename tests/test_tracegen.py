"""bench/tracegen.py: valid output, ids renumbered per copy with links intact, steps renumbered, time shifted.

``bench/`` is a folder of scripts, not a package: it is not installed, and making it
importable would mean a ``bench/__init__.py`` plus the repository root on ``sys.path``
(which depends on how pytest is started). The generator is therefore loaded by file
path, which works from any working directory and any pytest import mode.
"""

from __future__ import annotations

import gc
import gzip
import importlib.util
import math
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator

import msgspec
import pytest

from conftest import REAL_TRACES

REPO = Path(__file__).resolve().parents[1]
TRACES = REAL_TRACES
TORCH213_SEED = TRACES / "torch213" / "mlp_train_sched" / "worker0.1795303442092317655.pt.trace.json.gz"
DDP_SEED = TRACES / "torch213" / "ddp_gloo_2ranks" / "rank0.1795303450949782497.pt.trace.json.gz"
RESNET_SEED = (
    TRACES / "kineto_resnet50" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"
)


def _load_tracegen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("profscope_bench_tracegen", REPO / "bench" / "tracegen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


tracegen = _load_tracegen()


def _require(path: Path) -> Path:
    assert path.exists(), f"{path} is missing from tests/data"
    return path


# Id keys of args, grouped by what they link: ids of one group must move together.
ID_GROUPS: dict[str, tuple[str, ...]] = {
    "external": ("External id", "external id"),
    "correlation": ("correlation",),
    "python": ("Python id", "Python parent id"),
    "record_function": ("Record function id",),
    "sequence": ("Sequence number",),
    "event_index": ("Ev Idx",),
}
SENTINEL_ZERO = {"external", "correlation", "python", "record_function"}  # 0 there means "none" and is never renumbered
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def is_metadata(event: dict) -> bool:
    return event.get("ph") == "M"


def is_envelope(event: dict) -> bool:
    return event.get("cat") == "Trace" or (event.get("ph") == "i" and event.get("s") == "g")


def replicated(events: list[dict]) -> list[dict]:
    return [e for e in events if not is_metadata(e) and not is_envelope(e)]


def ids_of(event: dict) -> Iterator[tuple[str, int]]:
    """(group, id) pairs of an event; flow ids join the correlation group when they are launch flows."""
    args = event.get("args") or {}
    for group, keys in ID_GROUPS.items():
        for key in keys:
            value = args.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                if not (group in SENTINEL_ZERO and value == 0):
                    yield group, value
    if event.get("ph") in ("s", "f", "t"):
        yield f"flow:{event.get('cat')}", event["id"]


def stripped(event: dict) -> dict:
    """The event without the fields the generator rewrites."""
    out = {key: value for key, value in event.items() if key not in ("ts", "id")}
    if STEP.match(str(out.get("name", ""))):
        out["name"] = "ProfilerStep#"
    if isinstance(out.get("args"), dict):
        rewritten = {key for keys in ID_GROUPS.values() for key in keys} | {"external ts"}
        out["args"] = {key: value for key, value in out["args"].items() if key not in rewritten}
    return out


def end_of(event: dict) -> float:
    return event["ts"] + (event.get("dur") or 0)


@pytest.fixture(scope="module", autouse=True)
def _gc_paused() -> Iterator[None]:
    """These tests build a few hundred thousand dicts; the cyclic GC would rescan them over and over."""
    gc.disable()
    yield
    gc.enable()
    gc.collect()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, int], tuple[dict, dict, Path]]:
    """(seed document, output document, output path) for a seed and a number of copies, made once."""
    made: dict[tuple[Path, int], tuple[dict, dict, Path]] = {}

    def make(seed: Path, copies: int) -> tuple[dict, dict, Path]:
        if (seed, copies) not in made:
            out = tmp_path_factory.mktemp("tracegen") / f"big.{copies}.pt.trace.json"
            result = tracegen.write_trace(_require(seed), out, copies=copies)
            document = msgspec.json.decode(out.read_bytes())  # strict JSON: fails on any malformed byte
            assert result.events == len(document["traceEvents"])
            assert result.uncompressed_bytes == out.stat().st_size
            seed_document = msgspec.json.decode(tracegen.read_trace_bytes(seed))
            made[(seed, copies)] = (seed_document, document, out)
        return made[(seed, copies)]

    return make


SEEDS = [
    pytest.param(TORCH213_SEED, 3, id="torch213-float-us"),
    pytest.param(RESNET_SEED, 2, id="kineto2021-int-us"),
]


@pytest.mark.parametrize(("seed", "copies"), SEEDS)
def test_event_counts_and_top_level(generated: Callable, seed: Path, copies: int) -> None:
    seed_doc, out_doc, out = generated(seed, copies)
    seed_events, out_events = seed_doc["traceEvents"], out_doc["traceEvents"]
    assert list(out_doc) == list(seed_doc)  # same top-level keys, same order
    for key in seed_doc:
        if key not in ("traceEvents", "traceName"):
            assert out_doc[key] == seed_doc[key], key
    if "traceName" in seed_doc:
        assert out_doc["traceName"] == out.name
    assert len(replicated(out_events)) == copies * len(replicated(seed_events))
    assert [e for e in out_events if is_metadata(e)] == [e for e in seed_events if is_metadata(e)]
    assert sum(map(is_envelope, out_events)) == sum(map(is_envelope, seed_events))


@pytest.mark.parametrize(("seed", "copies"), SEEDS)
def test_copies_differ_only_in_time_ids_and_step_numbers(generated: Callable, seed: Path, copies: int) -> None:
    seed_doc, out_doc, _ = generated(seed, copies)
    base = replicated(seed_doc["traceEvents"])
    out = replicated(out_doc["traceEvents"])
    expected = [stripped(e) for e in base]
    for k in range(copies):
        chunk = out[k * len(base) : (k + 1) * len(base)]
        assert [stripped(e) for e in chunk] == expected, f"copy {k}"


@pytest.mark.parametrize(("seed", "copies"), SEEDS)
def test_times_shift_by_one_span_per_copy(generated: Callable, seed: Path, copies: int) -> None:
    seed_doc, out_doc, _ = generated(seed, copies)
    base = replicated(seed_doc["traceEvents"])
    out = replicated(out_doc["traceEvents"])
    span = max(map(end_of, base)) - min(e["ts"] for e in base)
    shifts = []
    for k in range(copies):
        chunk = out[k * len(base) : (k + 1) * len(base)]
        deltas = [o["ts"] - s["ts"] for o, s in zip(chunk, base)]
        assert max(deltas) - min(deltas) < 1e-3, f"copy {k} is not shifted as one block"
        for o, s in zip(chunk, base):
            if "external ts" in (s.get("args") or {}):
                assert o["args"]["external ts"] - s["args"]["external ts"] == pytest.approx(deltas[0], abs=1e-3)
        shifts.append(deltas[0])
        if k:
            previous = out[(k - 1) * len(base) : k * len(base)]
            assert min(e["ts"] for e in chunk) > max(map(end_of, previous)), "copies overlap in time"
    assert shifts[0] == pytest.approx(0, abs=1e-3)
    assert all(b - a >= span for a, b in zip(shifts, shifts[1:]))

    # The profiler's window is written once and stretched over every copy.
    (window,) = [e for e in out_doc["traceEvents"] if e.get("cat") == "Trace"]
    (seed_window,) = [e for e in seed_doc["traceEvents"] if e.get("cat") == "Trace"]
    assert window["ts"] == seed_window["ts"]
    assert window["dur"] == pytest.approx(seed_window["dur"] + shifts[-1], abs=1e-3)


@pytest.mark.parametrize(("seed", "copies"), SEEDS)
def test_ids_are_unique_across_copies_and_links_stay_within_a_copy(
    generated: Callable, seed: Path, copies: int
) -> None:
    seed_doc, out_doc, _ = generated(seed, copies)
    base = replicated(seed_doc["traceEvents"])
    out = replicated(out_doc["traceEvents"])
    images: dict[str, list[set[int]]] = {}
    for k in range(copies):
        chunk = out[k * len(base) : (k + 1) * len(base)]
        mapping: dict[tuple[str, int], int] = {}
        for s_event, o_event in zip(base, chunk):
            s_ids, o_ids = list(ids_of(s_event)), list(ids_of(o_event))
            assert [g for g, _ in s_ids] == [g for g, _ in o_ids]
            for (group, s_id), (_, o_id) in zip(s_ids, o_ids):
                # One seed id always becomes the same new id in a copy: every link survives.
                assert mapping.setdefault((group, s_id), o_id) == o_id, (group, s_id)
        per_group: dict[str, set[int]] = {}
        for (group, _), o_id in mapping.items():
            per_group.setdefault(group, set()).add(o_id)
        for group, values in per_group.items():
            assert len(values) == sum(1 for (g, _) in mapping if g == group), f"{group} ids collide in copy {k}"
            images.setdefault(group, []).append(values)
    for group, sets in images.items():
        assert len(set().union(*sets)) == sum(map(len, sets)), f"{group} ids repeat across copies"
    groups = set(images)
    assert "external" in groups and any(g.startswith("flow:") for g in groups)
    # Every flow of every copy is there, each under its own id.
    seed_flows = {(e["cat"], e["id"]) for e in base if e.get("ph") in ("s", "f", "t")}
    out_flows = {(e["cat"], e["id"]) for e in out if e.get("ph") in ("s", "f", "t")}
    assert len(out_flows) == copies * len(seed_flows)


@pytest.mark.parametrize(("seed", "copies"), SEEDS)
def test_profiler_steps_are_renumbered(generated: Callable, seed: Path, copies: int) -> None:
    seed_doc, out_doc, _ = generated(seed, copies)
    seed_steps = {int(m[1]) for e in seed_doc["traceEvents"] if (m := STEP.match(str(e.get("name", ""))))}
    first_seen: dict[int, float] = {}
    for event in sorted(out_doc["traceEvents"], key=lambda e: e.get("ts", 0)):
        if m := STEP.match(str(event.get("name", ""))):
            first_seen.setdefault(int(m[1]), event["ts"])
    numbers = sorted(first_seen, key=first_seen.__getitem__)  # in order of time
    assert len(numbers) == copies * len(seed_steps), "step names repeat across copies"
    assert numbers == sorted(numbers), "step numbers do not grow with time"
    assert numbers[: len(seed_steps)] == sorted(seed_steps)


def test_gzip_output_is_the_same_trace(generated: Callable, tmp_path: Path) -> None:
    _, _, plain = generated(TORCH213_SEED, 3)
    zipped = tracegen.write_trace(TORCH213_SEED, tmp_path / (plain.name + ".gz"), copies=3, gzip=True)
    assert gzip.decompress(zipped.path.read_bytes()) == plain.read_bytes()


def test_size_targets(tmp_path: Path) -> None:
    seed = tracegen.load_seed(_require(TORCH213_SEED))
    copies = tracegen.copies_for_target(seed, target_events=100_000)
    assert seed.events_for(copies) >= 100_000 > seed.events_for(copies - 1)
    copies = tracegen.copies_for_target(seed, target_mb=8)
    result = tracegen.write_trace(seed, tmp_path / "sized.pt.trace.json", copies=copies)
    assert result.events == seed.events_for(copies)
    assert abs(result.mb - 8) <= result.mb / copies  # within one copy of the target


def test_multi_rank_run(tmp_path: Path) -> None:
    results = tracegen.write_multi_rank(_require(DDP_SEED), tmp_path, ranks=3, copies=2, max_jitter_us=500)
    assert len(results) == 3
    starts = []
    for rank, result in enumerate(results):
        assert re.fullmatch(rf"rank{rank}\.\d+\.pt\.trace\.json\.gz", result.path.name)
        document = msgspec.json.decode(gzip.decompress(result.path.read_bytes()))
        info = document["distributedInfo"]
        assert (info["rank"], info["world_size"]) == (rank, 3)
        assert info["pg_config"][0]["ranks"] == [0, 1, 2]
        assert len(document["traceEvents"]) == result.events
        starts.append(min(e["ts"] for e in replicated(document["traceEvents"])))
    assert max(starts) - min(starts) <= 500


# A hand-made seed (no real trace needed): args that hide a second "ts" and "External id",
# a timestamp written with a trailing zero, an "external id" of 0 (no op), a launch flow.
HANDMADE_SEED = """{"schemaVersion": 1, "traceEvents": [
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "ts": 0, "args": {"name": "main"}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 12.500, "dur": 80.25,
   "args": {"External id": 7, "Ev Idx": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "odd", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
   "args": {"External id": 8, "nested": {"ts": 20, "External id": 8}}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 2,
   "args": {"correlation": 5, "external id": 0}},
  {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 1, "tid": 1, "ts": 30},
  {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 5, "pid": 0, "tid": 7, "ts": 40, "bp": "e"}
]}"""


@pytest.fixture
def handmade_seed(tmp_path: Path) -> Path:
    path = tmp_path / "seed.123.pt.trace.json"
    path.write_text(HANDMADE_SEED)
    return path


def test_ambiguous_event_is_reencoded_and_sentinels_kept(handmade_seed: Path, tmp_path: Path) -> None:
    seed = tracegen.load_seed(handmade_seed, gap_us=10)
    assert seed.reencoded_events == 1  # "odd": its keys occur twice, so its text is not cut
    out = tracegen.write_trace(seed, tmp_path / "out.pt.trace.json", copies=2)
    text = out.path.read_text()
    events = msgspec.json.decode(text)["traceEvents"]
    assert len(events) == 1 + 2 * 5 == out.events
    period = seed.period
    assert period == math.ceil(92.75 - 12.5) + 10  # the span, rounded up to whole µs, plus the gap
    assert f'"ts": {12 + period}.500' in text  # the fraction's digits are kept as written
    odd = [e for e in events if e["name"] == "odd"]
    assert [e["ts"] for e in odd] == [20, 20 + period]
    assert [e["args"]["nested"] for e in odd] == [{"ts": 20, "External id": 8}] * 2  # nested values untouched
    assert odd[0]["args"]["External id"] != odd[1]["args"]["External id"]
    runtime = [e for e in events if e["name"] == "cudaLaunchKernel"]
    assert [e["args"]["external id"] for e in runtime] == [0, 0]  # 0 means "no op": never renumbered
    flows = [(e["ph"], e["id"]) for e in events if e.get("cat") == "ac2g"]
    correlations = [e["args"]["correlation"] for e in runtime]
    assert flows == [("s", correlations[0]), ("f", correlations[0]), ("s", correlations[1]), ("f", correlations[1])]
    assert [e["name"] for e in events if e["name"].startswith("ProfilerStep")] == ["ProfilerStep#3", "ProfilerStep#4"]


def test_multi_rank_adds_distributed_info_when_the_seed_has_none(handmade_seed: Path, tmp_path: Path) -> None:
    results = tracegen.write_multi_rank(handmade_seed, tmp_path / "run", ranks=2, copies=1, gzip=False)
    assert [r.path.name for r in results] == ["rank0.123.pt.trace.json", "rank1.124.pt.trace.json"]
    for rank, result in enumerate(results):
        document = msgspec.json.decode(result.path.read_bytes())
        assert list(document) == ["schemaVersion", "distributedInfo", "traceEvents"]
        assert document["distributedInfo"] == {"backend": "nccl", "rank": rank, "world_size": 2}
