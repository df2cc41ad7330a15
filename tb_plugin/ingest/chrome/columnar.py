"""The decoder's fast path: a chunk's events as columns read straight from the JSON.

``_columnar.c`` (built with the package when a C compiler is there) scans a chunk and writes every
field that ``chunk_reader.ChunkReader`` reads into a column: numbers as float64/int64, texts as ids of an
intern table that lives as long as the scanner. It takes only plain JSON (see the C file's header);
for any other chunk ``scan`` returns None and the decoder reads that chunk through msgspec, so both
paths give the same columns (tests/test_columnar_decoder.py compares them).

Here the scanner's text ids become the reader's ids (``Texts``): each distinct text is turned into a
Python value once, when a chunk first uses it.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

import numpy as np

from . import begin_end

try:
    from . import _columnar
except ImportError:  # built without a C compiler: every chunk goes through msgspec
    _columnar = None  # type: ignore[assignment]

AVAILABLE = _columnar is not None
# Phases whose events are read from the event objects (metadata, counters, B/E pairs, see decode.py): a chunk
# holding one takes the msgspec path. Any other phase is read from the columns (or only counted, like there).
NEEDS_EVENTS = frozenset({"M", "C"}) | begin_end.PHASES
_UNMAPPED = np.iinfo(np.int64).min


class ScannedChunk:
    """One chunk's columns: numpy views of the scanner's output, by the names of ``_columnar.LAYOUT``."""

    def __init__(self, rows: int, data: bytes) -> None:
        self.rows = rows
        self.columns: dict[str, np.ndarray] = {}
        offset = 0
        for name, dtype in _columnar.LAYOUT:
            column = np.frombuffer(data, dtype=dtype, count=rows, offset=offset)
            self.columns[name] = column
            offset += column.nbytes

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]


class Texts:
    """The scanner's interned texts: each is its tag (``s`` text, ``i`` integer, ``r`` raw JSON) and bytes."""

    def __init__(self, scanner: Any) -> None:
        self._scanner = scanner
        self.entries: list[bytes] = []
        self._maps: dict[str, np.ndarray] = {}

    def _refresh(self, needed: int) -> None:
        if needed > len(self.entries):
            self.entries.extend(self._scanner.texts(len(self.entries)))

    def value(self, text_id: int) -> Any:
        """The Python value of a text: ``str`` for text, ``int`` for an integer, ``bytes`` for raw JSON."""
        entry = self.entries[text_id]
        tag = entry[0]
        if tag == 0x69:  # i
            return int(entry[1:])
        if tag == 0x72:  # r
            return entry[1:]
        return str(memoryview(entry)[1:], "utf-8")  # no copy of the bytes first (a text may be huge)

    def ids(self, local: np.ndarray, space: str, convert: Callable[[Any], int], absent: int = -1) -> np.ndarray:
        """``convert(value)`` of each text id in ``local``, as int64 (``absent`` where the id is -1).

        ``space`` names the id space ``convert`` maps into; each text is converted once per space.
        """
        if len(local) == 0:
            return np.zeros(0, dtype=np.int64)
        # A space's table holds the answer for id -1 in slot 0 and that of id i in slot i + 1 (looked up as
        # table[local + 1]); it grows by doubling, so a trace with millions of distinct texts copies it
        # O(log n) times, not once per chunk.
        slots = local + 1
        table = self._maps.get(space)
        needed = int(slots.max()) + 1
        self._refresh(needed - 1)  # the texts up to the largest id, for ``value``
        if table is None or len(table) < needed:
            grown = np.full(max(needed, 2 * (0 if table is None else len(table)), 1024), _UNMAPPED, dtype=np.int64)
            if table is not None:
                grown[: len(table)] = table
            grown[0] = absent
            table = self._maps[space] = grown
        mapped = table[slots]
        missing = mapped == _UNMAPPED
        if missing.any():
            # In the order the chunk first uses them, as the msgspec path interns them (equal string ids).
            new = local[missing]
            unique, first = np.unique(new, return_index=True)
            for text_id in unique[np.argsort(first)].tolist():
                table[text_id + 1] = convert(self.value(text_id))
            mapped = table[slots]
        return mapped

    def values(self, local: np.ndarray) -> list[Any]:
        """The Python values of the texts in ``local`` (for the few columns read value by value)."""
        if len(local):
            self._refresh(int(local.max()) + 1)
        value = self.value
        return [value(i) for i in local.tolist()]


class Scanner:
    """A trace's scanner: chunks → ``ScannedChunk`` (or None), texts shared by all its chunks."""

    def __init__(self) -> None:
        self._scanner = _columnar.Scanner()
        self.texts = Texts(self._scanner)

    def scan(self, view: Any) -> Optional[ScannedChunk]:
        result = self._scanner.scan(view)
        if result is None:
            return None
        rows, data = result
        return ScannedChunk(rows, data)


def new_scanner() -> Optional[Scanner]:
    """A scanner for one trace; None without the C module, or when ``PROFSCOPE_COLUMNAR=0`` (to compare)."""
    if not AVAILABLE or os.environ.get("PROFSCOPE_COLUMNAR") == "0":
        return None
    return Scanner()
