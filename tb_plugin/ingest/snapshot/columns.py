"""Trace entries of a memory snapshot turned into columns, one entry at a time.

The reader (``reader.py``, or its C twin ``_snapshot_reader.c``) hands every entry of ``device_traces[d]`` to
``EntryColumns.add_entry`` as soon as the entry is complete, and drops it afterwards; annotations of
``external_annotations`` go to ``add_annotation``. What stays is one row per entry in typed arrays:

* ``action`` (a code of ``ACTIONS``; an action of no known kind is ``OTHER_ACTION``, its name counted in the notes),
  ``device`` (the entry's list in ``device_traces``), ``addr`` (for ``oom`` the ``device_free`` the entry reports
  instead: an ``oom`` has no address), ``size``, ``stream``, ``time_us`` (``MISSING_TIME`` where the snapshot has
  none: before torch 2.1), and ids of ``strings`` for ``compile_context``, ``user_metadata`` and ``category``
  (``-1``: absent);
* ``stack``: the id of the entry's call stack (``-1``: no frames recorded). A stack is a sequence of frame ids,
  innermost first as torch writes them, kept once (``stack_offsets`` / ``stack_frames``); a frame is
  (``filename``, ``line``, ``name``) kept once (``frame_file``, ``frame_line``, ``frame_name``, names as string ids).

torch's pickles share frame dicts between entries (and sometimes whole frame lists): an object already seen is
recognised by identity, which is only sound while it is alive, so the reader names the containers it keeps to the end
(``kept_ids``, those memoized before the first entry list) and replaces the ones it drops by tokens
(``StackRef``/``FrameRef``) that this class reads back (``end_batch``). Once read, the stacks of the segments and
their blocks are interned the same way (``segment_stacks``). A value of an unexpected type never fails the read: the
entry is skipped or the field left absent, and counted (``notes``).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ...model.snapshot import ACTIONS, MISSING_TIME, OOM, OTHER_ACTION

ACTION_CODES = {name: code for code, name in enumerate(ACTIONS)}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class StackRef:
    """What the reader leaves in its memo for a frame list it has turned into a stack and dropped."""

    __slots__ = ("stack",)

    def __init__(self, stack: int) -> None:
        self.stack = stack


class FrameRef:
    """What the reader leaves in its memo for a frame dict it has turned into a frame and dropped."""

    __slots__ = ("frame",)

    def __init__(self, frame: int) -> None:
        self.frame = frame


def _int(value: Any) -> Optional[int]:
    """An int64 from a pickled int (bools are not numbers here), else None."""
    if type(value) is int and _INT64_MIN <= value <= _INT64_MAX:
        return value
    return None


# The arrays a read gives, by name and dtype (the C reader returns the same, as bytes).
LAYOUT = (
    ("device", "i4"), ("action", "u1"), ("addr", "i8"), ("size", "i8"), ("stream", "i8"), ("time_us", "i8"),
    ("stack", "i4"), ("compile_context", "i4"), ("user_metadata", "i4"), ("category", "i4"),
    ("annotation_device", "i4"), ("annotation_time_us", "i8"), ("annotation_stage", "i4"), ("annotation_name", "i4"),
    ("frame_file", "i4"), ("frame_line", "i8"), ("frame_name", "i4"), ("stack_offsets", "i8"), ("stack_frames", "i4"),
    ("segment_stack", "i4"), ("block_stack", "i4"),
)


@dataclass
class ReadResult:
    """What reading a snapshot gives: the plain data that is not entries (segments, allocator settings...), the
    columns of ``LAYOUT``, the interned strings and notes on what was skipped."""

    document: dict[str, Any]
    columns: dict[str, np.ndarray]
    strings: list[str]
    notes: list[str]


def notes_of(skipped: dict[str, int], bad_fields: dict[str, int], other_actions: dict[str, int]) -> list[str]:
    """What was skipped or left absent, in the user's words."""
    notes = [f"{count} trace entries were skipped ({why})" for why, count in sorted(skipped.items())]
    notes += [f"{count} trace entries have an unreadable {name!r} (left absent)"
              for name, count in sorted(bad_fields.items())]
    if other_actions:
        names = ", ".join(f"{name!r} ({count})" for name, count in sorted(other_actions.items())[:8])
        notes.append(f"trace entries of actions this version does not know: {names}")
    return notes


def block_frames(block: dict[str, Any]) -> Any:
    """A block's frames: its own, or (torch 2.0's format) those of its first history item."""
    if "frames" in block:
        return block["frames"]
    history = block.get("history")
    if type(history) is list and history and type(history[0]) is dict:
        return history[0].get("frames")
    return None


@dataclass
class Tables:
    """The interned strings, frames and stacks of one snapshot (also those of the segments' blocks)."""

    strings: list[str] = field(default_factory=list)
    string_ids: dict[str, int] = field(default_factory=dict)
    frame_file: array = field(default_factory=lambda: array("i"))
    frame_line: array = field(default_factory=lambda: array("q"))
    frame_name: array = field(default_factory=lambda: array("i"))
    frame_ids: dict[tuple[int, int, int], int] = field(default_factory=dict)
    stack_offsets: array = field(default_factory=lambda: array("q", [0]))
    stack_frames: array = field(default_factory=lambda: array("i"))
    stack_ids: dict[tuple[int, ...], int] = field(default_factory=dict)

    def string(self, text: str) -> int:
        found = self.string_ids.get(text)
        if found is None:
            found = self.string_ids[text] = len(self.strings)
            self.strings.append(text)
        return found

    def frame(self, filename: int, line: int, name: int) -> int:
        key = (filename, line, name)
        found = self.frame_ids.get(key)
        if found is None:
            found = self.frame_ids[key] = len(self.frame_file)
            self.frame_file.append(filename)
            self.frame_line.append(line)
            self.frame_name.append(name)
        return found

    def stack(self, frames: tuple[int, ...]) -> int:
        found = self.stack_ids.get(frames)
        if found is None:
            found = self.stack_ids[frames] = len(self.stack_offsets) - 1
            self.stack_frames.extend(frames)
            self.stack_offsets.append(len(self.stack_frames))
        return found


class EntryColumns:
    """Trace entries and annotations as columns (see the module docstring)."""

    def __init__(self) -> None:
        self.tables = Tables()
        self.device = array("i")
        self.action = array("B")
        self.addr = array("q")
        self.size = array("q")
        self.stream = array("q")
        self.time_us = array("q")
        self.stack = array("i")
        self.compile_context = array("i")
        self.user_metadata = array("i")
        self.category = array("i")
        self.annotation_device = array("i")
        self.annotation_time_us = array("q")
        self.annotation_stage = array("i")
        self.annotation_name = array("i")
        # ids of the containers the reader keeps alive to the end (memoized outside the entry lists): their frame
        # or stack id is remembered by identity for the whole read.
        self.kept_ids: set[int] = set()
        self.kept_objects: list[Any] = []  # keeps them alive (an id is only an identity while its object lives)
        self._frame_by_id: dict[int, int] = {}
        self._stack_by_id: dict[int, int] = {}
        # The same for objects of the batch being read: forgotten when the reader drops them.
        self._batch_frames: dict[int, int] = {}
        self._batch_stacks: dict[int, int] = {}
        self.skipped: dict[str, int] = {}
        self.other_actions: dict[str, int] = {}
        self.bad_fields: dict[str, int] = {}

    # --- identity, as the reader manages it --------------------------------------------------------

    def end_batch(self, memo: list[Any], start: int) -> None:
        """Forget the objects of the batch just read and put tokens in their memo slots (``memo[start:]``): frame
        lists and frame dicts become ``StackRef``/``FrameRef``, other containers None, the rest stays."""
        batch_frames, batch_stacks = self._batch_frames, self._batch_stacks
        for index in range(start, len(memo)):
            value = memo[index]
            kind = type(value)
            if kind is list:
                stack = batch_stacks.get(id(value))
                memo[index] = StackRef(stack) if stack is not None else None
            elif kind is dict:
                frame = batch_frames.get(id(value))
                memo[index] = FrameRef(frame) if frame is not None else None
        batch_frames.clear()
        batch_stacks.clear()

    # --- entries -------------------------------------------------------------------------------------

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def _bad(self, name: str) -> None:
        self.bad_fields[name] = self.bad_fields.get(name, 0) + 1

    def _text(self, entry: dict[str, Any], key: str) -> int:
        value = entry.get(key)
        if value is None:
            return -1
        if type(value) is str:
            return self.tables.string(value)
        self._bad(key)
        return -1

    def frame_of(self, value: Any) -> int:
        """The frame id of a frame dict (or of its token); -1 when it is none."""
        kind = type(value)
        if kind is FrameRef:
            return value.frame
        if kind is not dict:
            return -1
        key = id(value)
        found = self._frame_by_id.get(key)
        if found is None:
            found = self._batch_frames.get(key)
        if found is not None:
            return found
        filename, line, name = value.get("filename"), value.get("line"), value.get("name")
        tables = self.tables
        found = tables.frame(tables.string(filename) if type(filename) is str else -1,
                             line if type(line) is int and 0 <= line < (1 << 31) else -1,
                             tables.string(name) if type(name) is str else -1)
        (self._frame_by_id if key in self.kept_ids else self._batch_frames)[key] = found
        return found

    def stack_of(self, frames: Any) -> int:
        """The stack id of a frame list (or of its token); -1 for none."""
        kind = type(frames)
        if kind is StackRef:
            return frames.stack
        if kind is not list or not frames:
            return -1
        key = id(frames)
        found = self._stack_by_id.get(key)
        if found is None:
            found = self._batch_stacks.get(key)
        if found is not None:
            return found
        found = self.tables.stack(tuple(map(self.frame_of, frames)))
        (self._stack_by_id if key in self.kept_ids else self._batch_stacks)[key] = found
        return found

    def add_entry(self, device: int, entry: Any) -> None:
        if type(entry) is not dict:
            self._skip("not a dict")
            return
        name = entry.get("action")
        if type(name) is not str:
            self._skip("no action")
            return
        code = ACTION_CODES.get(name)
        if code is None:
            code = OTHER_ACTION
            if len(self.other_actions) < 64 or name in self.other_actions:
                self.other_actions[name] = self.other_actions.get(name, 0) + 1
        addr = _int(entry.get("device_free" if code == OOM else "addr", 0))
        size = _int(entry.get("size", 0))
        if addr is None or size is None:
            self._skip("address or size not an integer")
            return
        stream = _int(entry.get("stream", 0))
        if stream is None:
            self._bad("stream")
            stream = 0
        time_us = entry.get("time_us")
        if time_us is None:
            time_us = MISSING_TIME
        elif (time_us := _int(time_us)) is None:
            self._bad("time_us")
            time_us = MISSING_TIME
        self.device.append(device)
        self.action.append(code)
        self.addr.append(addr)
        self.size.append(size)
        self.stream.append(stream)
        self.time_us.append(time_us)
        self.stack.append(self.stack_of(entry.get("frames")))
        self.compile_context.append(self._text(entry, "compile_context"))
        self.user_metadata.append(self._text(entry, "user_metadata"))
        self.category.append(self._text(entry, "category"))

    def add_annotation(self, annotation: Any) -> None:
        """One ``external_annotations`` item: ``device``, ``time_us``, and its metadata (``name``, ``stage``)."""
        if type(annotation) is not dict:
            self._skip("annotation not a dict")
            return
        device, time_us = _int(annotation.get("device", 0)), _int(annotation.get("time_us"))
        if device is None or time_us is None or not -(1 << 31) <= device < (1 << 31):
            self._skip("annotation without device or time")
            return
        self.annotation_device.append(device)
        self.annotation_time_us.append(time_us)
        self.annotation_stage.append(self._text(annotation, "stage"))
        self.annotation_name.append(self._text(annotation, "name"))

    def segment_stacks(self, document: dict[str, Any]) -> tuple[array, array]:
        """The stack ids of the segments and of their blocks, in file order (an item that is no dict is passed over;
        ``model/snapshot_build.py`` walks them the same way)."""
        segment_stack, block_stack = array("i"), array("i")
        segments = document.get("segments")
        if type(segments) is not list:
            return segment_stack, block_stack
        for segment in segments:
            if type(segment) is not dict:
                continue
            segment_stack.append(self.stack_of(segment.get("frames")))
            blocks = segment.get("blocks")
            if type(blocks) is not list:
                continue
            for block in blocks:
                if type(block) is dict:
                    block_stack.append(self.stack_of(block_frames(block)))
        return segment_stack, block_stack

    def finish(self, document: dict[str, Any]) -> ReadResult:
        segment_stack, block_stack = self.segment_stacks(document)
        tables = self.tables
        arrays = {
            "device": self.device, "action": self.action, "addr": self.addr, "size": self.size, "stream": self.stream,
            "time_us": self.time_us, "stack": self.stack, "compile_context": self.compile_context,
            "user_metadata": self.user_metadata, "category": self.category,
            "annotation_device": self.annotation_device, "annotation_time_us": self.annotation_time_us,
            "annotation_stage": self.annotation_stage, "annotation_name": self.annotation_name,
            "frame_file": tables.frame_file, "frame_line": tables.frame_line, "frame_name": tables.frame_name,
            "stack_offsets": tables.stack_offsets, "stack_frames": tables.stack_frames,
            "segment_stack": segment_stack, "block_stack": block_stack,
        }
        columns = {name: np.frombuffer(arrays[name], dtype=dtype) if len(arrays[name]) else np.zeros(0, dtype)
                   for name, dtype in LAYOUT}
        return ReadResult(document, columns, tables.strings,
                          notes_of(self.skipped, self.bad_fields, self.other_actions))
