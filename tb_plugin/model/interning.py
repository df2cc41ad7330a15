"""String interning: every distinct string of a trace gets one small integer id.

The interners are dicts whose ``__missing__`` assigns the next id, so a whole column is
interned with ``map(interner.__getitem__, values)`` at C speed, without a Python-level
loop per event.
"""

from __future__ import annotations

from typing import Iterable, Union

import msgspec
import numpy as np

NO_STRING = -1
# The longest text a model keeps among its strings (characters): longer ones, which no real trace writes (the longest
# templated kernel names and call stacks are a few KB), are cut there, and the whole text is kept aside
# (``TraceModel.full_text``), so that no answer's size follows the size of one event's text.
MAX_TEXT_CHARS = 1 << 16


def cut_text(text: str) -> str:
    """``text`` cut to ``MAX_TEXT_CHARS`` characters, saying how much was left out."""
    return f"{text[:MAX_TEXT_CHARS]}… ({len(text) - MAX_TEXT_CHARS:,} more characters)"


def cut_long_texts(strings: list[str]) -> tuple[list[str], dict[int, str]]:
    """The strings with every text longer than ``MAX_TEXT_CHARS`` cut (``cut_text``), and those texts whole by id.
    Without a long text (every real trace), the list is returned as it is after one pass at C speed."""
    if not strings or max(map(len, strings)) <= MAX_TEXT_CHARS:
        return strings, {}
    long_ids = [i for i, text in enumerate(strings) if len(text) > MAX_TEXT_CHARS]
    whole = {i: strings[i] for i in long_ids}
    cut = list(strings)
    for i in long_ids:
        cut[i] = cut_text(cut[i])
    return cut, whole


class StringTable(dict):  # type: ignore[type-arg]
    """str (or any hashable key) → id, ids in first-seen order; ``strings`` lists them by id."""

    def __init__(self) -> None:
        super().__init__()
        self.strings: list[str] = []

    def __missing__(self, text: str) -> int:
        new_id = len(self.strings)
        self.strings.append(text)
        self[text] = new_id
        return new_id

    def ids(self, values: Iterable[str], count: int) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, values), dtype=np.int32, count=count)


class OptionalStrings(dict):  # type: ignore[type-arg]
    """Like StringTable for optional argument values: the empty string means "absent" (-1)."""

    def __init__(self, table: StringTable) -> None:
        super().__init__({"": NO_STRING})
        self._table = table

    def __missing__(self, text: str) -> int:
        new_id = self._table[text]
        self[text] = new_id
        return new_id

    def ids(self, values: Iterable[str], count: int) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, values), dtype=np.int32, count=count)


class RawJsonStrings(dict):  # type: ignore[type-arg]
    """Raw JSON fragments (e.g. ``Input Dims``) interned as compact JSON text; an empty fragment is absent.

    Each distinct fragment is re-encoded once, so ``[8, 1, 1]`` and ``[8,1,1]`` are one string;
    a JSON string fragment is interned as the string itself.
    """

    def __init__(self, table: StringTable) -> None:
        super().__init__({b"": NO_STRING})
        self._table = table

    def __missing__(self, fragment: bytes) -> int:
        try:
            value = msgspec.json.decode(fragment)
            text = value if isinstance(value, str) else msgspec.json.encode(value).decode("utf-8")
        except (msgspec.DecodeError, UnicodeDecodeError):
            text = fragment.decode("utf-8", "replace")
        new_id = self._table[text]
        self[fragment] = new_id
        return new_id

    def ids(self, values: Iterable[object], count: int) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, map(bytes, values)), dtype=np.int32, count=count)  # type: ignore[arg-type]


class ScalarKeys(dict):  # type: ignore[type-arg]
    """pid/tid/flow-id values (int or str) → string id of their text, so 7 and "7" are one key."""

    def __init__(self, table: StringTable) -> None:
        super().__init__()
        self._table = table

    def __missing__(self, value: Union[int, str, float]) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        new_id = self._table[str(value)]
        self[value] = new_id
        return new_id

    def ids(self, values: Iterable[object], count: int) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, values), dtype=np.int32, count=count)
