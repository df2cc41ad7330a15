"""A memory snapshot's pickle read as plain data, never as code.

``pickle.load`` runs whatever a pickle asks for: importing any module and calling any function (``GLOBAL`` and
``REDUCE``), building any object (``NEWOBJ``, ``BUILD``...). A snapshot is plain data (dicts, lists, strings,
integers), so this machine implements only the opcodes that build plain data — dict, list, tuple, str, bytes, int,
float, bool, None — with their memo, and refuses every other one with a clear error, before anything is built from
it: a hostile file fails and runs nothing. Limits: nested marks (``MAX_MARKS``), memo slots only appended or
replaced (a pickle writer numbers them in order; a sparse index would be a memory bomb), text opcodes of protocol 0
and Python 2 strings refused (no torch version writes them).

While reading, it streams: every entry of ``device_traces[d]`` (and of ``external_annotations``) is handed to
``columns.EntryColumns`` once its dict is complete and dropped, and the objects memoized for it are replaced by small
tokens (``columns.end_batch``), so memory follows the columns rather than the file. Python's pickler appends in
batches of 1000 items and TorchScript's in one batch per list; both stream the same way.

This is the reference and the fallback of ``_snapshot_reader.c`` (the same machine in C, much faster); tests hold
both to equal results on the test snapshots, the hostile ones and randomly damaged ones.
"""

from __future__ import annotations

import struct
from typing import Any, Optional

import numpy as np

from .columns import LAYOUT, EntryColumns, FrameRef, ReadResult, StackRef, notes_of

try:
    from . import _snapshot_reader
except ImportError:  # built without a C compiler: the machine below reads every snapshot (slower, same result)
    _snapshot_reader = None  # type: ignore[assignment]

AVAILABLE = _snapshot_reader is not None

# Open marks at once (a snapshot nests about 7 deep).
MAX_MARKS = 64
TRACES_KEY = "device_traces"
ANNOTATIONS_KEY = "external_annotations"

_OPCODE_NAMES = {
    ord("c"): "GLOBAL", 0x93: "STACK_GLOBAL", ord("i"): "INST", ord("o"): "OBJ", 0x81: "NEWOBJ", 0x92: "NEWOBJ_EX",
    ord("R"): "REDUCE", ord("b"): "BUILD", 0x82: "EXT1", 0x83: "EXT2", 0x84: "EXT4", ord("P"): "PERSID",
    ord("Q"): "BINPERSID", 0x8F: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET", 0x96: "BYTEARRAY8",
    0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER", ord("S"): "STRING", ord("T"): "BINSTRING", ord("U"): "SHORT_BINSTRING",
    ord("I"): "INT", ord("L"): "LONG", ord("F"): "FLOAT", ord("V"): "UNICODE", ord("p"): "PUT", ord("g"): "GET",
}
# Opcodes that make a pickle run code or build objects of classes: the reason a file is refused.
_CODE_OPCODES = frozenset(map(ord, "ciobRPQ")) | {0x93, 0x81, 0x92, 0x82, 0x83, 0x84}
_CONVERTED = object()  # an entry's place in its list once it went into the columns
# Bytes of argument of the opcodes with a fixed-width argument (checked before it is read).
_WIDTH = {0x68: 1, 0x6A: 4, 0x71: 1, 0x72: 4, 0x8C: 1, 0x58: 4, 0x8D: 8, 0x4B: 1, 0x4D: 2, 0x4A: 4, 0x8A: 1,
          0x8B: 4, 0x47: 8, 0x43: 1, 0x42: 4, 0x8E: 8, 0x80: 1}


class SnapshotReadError(ValueError):
    """The file cannot be read as a memory snapshot; the message says why, for the user."""


class SnapshotRefused(SnapshotReadError):
    """The file asks for more than plain data (code, classes, objects): refused, nothing was run."""


def _refusal(opcode: int, offset: int, data: Any) -> SnapshotReadError:
    name = _OPCODE_NAMES.get(opcode, f"0x{opcode:02x}")
    if opcode == ord("c"):
        end = bytes(data[offset + 1:offset + 257]).split(b"\n", 2)
        if len(end) > 2:
            target = ".".join(part.decode("utf-8", "replace") for part in end[:2])
            return SnapshotRefused(f"the file is a pickle that imports {target!r} (byte {offset}); a memory snapshot "
                                   "holds plain data only, so it was refused and nothing in it was run")
    if opcode in _CODE_OPCODES:
        return SnapshotRefused(f"the file is a pickle that asks to import or build objects ({name} at byte {offset}); "
                               "a memory snapshot holds plain data only, so it was refused and nothing in it was run")
    return SnapshotReadError(f"the file holds a pickle instruction a memory snapshot never has ({name} at byte "
                             f"{offset}); it was not read")


def read(data: Any, fast: Optional[bool] = None) -> ReadResult:
    """Read a snapshot pickle (bytes, a memoryview or an mmap) as plain data and columns (``columns.ReadResult``),
    with the C machine when it is built (``fast=False`` forces this module's). Raises SnapshotReadError (or
    SnapshotRefused) with a message for the user."""
    if fast is None:
        fast = AVAILABLE
    if not fast:
        columns = EntryColumns()
        document = read_snapshot(data, columns)
        return columns.finish(document)
    if _snapshot_reader is None:
        raise RuntimeError("the C snapshot reader is not built")
    document, raw, strings, skipped, bad_fields, other_actions = _snapshot_reader.read(
        data, StackRef, FrameRef, SnapshotReadError, SnapshotRefused)
    arrays = {name: np.frombuffer(raw[name], dtype=dtype) for name, dtype in LAYOUT}
    return ReadResult(document, arrays, strings, notes_of(skipped, bad_fields, other_actions))


def read_snapshot(data: Any, columns: EntryColumns) -> dict[str, Any]:
    """Read a snapshot pickle (bytes, a memoryview or an mmap); its trace entries and annotations go into
    ``columns``, the rest (segments, allocator settings...) is returned as plain data, with the entry lists empty.

    Raises SnapshotReadError (or SnapshotRefused) with a message for the user."""
    try:
        return _Machine(data, columns).run()
    except (IndexError, struct.error):
        raise SnapshotReadError("the file ends in the middle of its pickle, or refers to a value it never defined "
                                "(truncated or damaged?)") from None
    except TypeError:  # a tuple holding a list used as a dict key
        raise SnapshotReadError("the file uses a value that cannot be a dict key as one") from None
    except UnicodeDecodeError as exc:
        raise SnapshotReadError(f"the file holds a text that is not UTF-8 ({exc.reason})") from None
    except RecursionError:  # pragma: no cover - nothing here recurses; kept for safety
        raise SnapshotReadError("the file nests too deeply") from None


class _Machine:
    """The plain-data pickle machine (see the module docstring). One instance per read."""

    def __init__(self, data: Any, columns: EntryColumns) -> None:
        self.data = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
        self.columns = columns
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: list[Any] = []
        # Entry lists: id of the list -> ("entries", device) or ("annotations", 0); the device_traces list's id.
        self.sinks: dict[int, tuple[str, int]] = {}
        self.traces_list: Optional[int] = None
        # Memo slots from here on belong to entries not yet converted (see _converted).
        self.batch_start: Optional[int] = None

    # --- streaming ------------------------------------------------------------------------------

    def _top_key(self) -> Optional[str]:
        """The key just pushed when the stack is building the top-level dict's next value, else None."""
        stack, marks = self.stack, self.marks
        if len(stack) < 2 or type(stack[0]) is not dict:
            return None
        if marks == [1] and (len(stack) - 1) % 2 == 1 or not marks and len(stack) == 2:
            key = stack[-1]
            return key if type(key) is str else None
        return None

    def _sink_region(self) -> Optional[tuple[int, tuple[str, int]]]:
        """(position of the top mark, sink) when the stack's pending items belong to an entry list."""
        marks = self.marks
        if marks:
            mark = marks[-1]
            if mark > 0:
                sink = self.sinks.get(id(self.stack[mark - 1]))
                if sink is not None:
                    return mark, sink
        return None

    def _new_list(self, new: list[Any]) -> None:
        """Tell whether a new list is an entry list (``device_traces[d]``, ``external_annotations``) or the
        ``device_traces`` list itself, before it goes on the stack."""
        key = self._top_key()
        if key == TRACES_KEY:
            self.traces_list = id(new)
        elif key == ANNOTATIONS_KEY:
            self._open_sink(new, ("annotations", 0))
        elif self.traces_list is not None:
            # Appended on its own (APPEND: the list is on top, no mark above it), or one of a batch (APPENDS: the
            # items pending above the list's mark come before it).
            stack, marks = self.stack, self.marks
            top_mark = marks[-1] if marks else 0
            if stack and id(stack[-1]) == self.traces_list and top_mark <= len(stack) - 1:
                self._open_sink(new, ("entries", len(stack[-1])))
            elif top_mark > 0 and id(stack[top_mark - 1]) == self.traces_list:
                self._open_sink(new, ("entries", len(stack[top_mark - 1]) + len(stack) - top_mark))

    def _open_sink(self, new: list[Any], sink: tuple[str, int]) -> None:
        self.sinks[id(new)] = sink
        if self.batch_start is None:
            self.batch_start = len(self.memo)

    def _convert(self, sink: tuple[str, int], item: Any) -> None:
        if sink[0] == "entries":
            self.columns.add_entry(sink[1], item)
        else:
            self.columns.add_annotation(item)
        start = self.batch_start if self.batch_start is not None else len(self.memo)
        self.columns.end_batch(self.memo, start)
        self.batch_start = len(self.memo)

    def _dict_done(self, position: int) -> None:
        """A dict at ``position`` got its items: when it is the next entry of an entry list (the first item of the
        list's pending items that is not converted yet, on top of the stack), it goes into the columns."""
        region = self._sink_region()
        if (region is not None and position == len(self.stack) - 1
                and (position == region[0] or position > region[0] and self.stack[position - 1] is _CONVERTED)):
            item = self.stack[position]
            self.stack[position] = _CONVERTED
            self._convert(region[1], item)

    def _append(self, target: Any, items: list[Any]) -> None:
        if type(target) is not list:
            raise SnapshotReadError("the file appends to something that is not a list")
        sink = self.sinks.get(id(target))
        if sink is None:
            target.extend(items)
            return
        for item in items:
            if item is not _CONVERTED:
                self._convert(sink, item)

    def _memoize(self, index: int, value: Any) -> None:
        memo = self.memo
        if index == len(memo):
            memo.append(value)
        elif index < len(memo):
            memo[index] = value
        else:
            raise SnapshotReadError("the file numbers its pickle memo out of order; it was not read")
        if self.batch_start is None and type(value) in (dict, list) and id(value) not in self.columns.kept_ids:
            self.columns.kept_ids.add(id(value))
            self.columns.kept_objects.append(value)

    # --- the machine ------------------------------------------------------------------------------

    def _pop_mark(self) -> int:
        mark = self.marks.pop()
        if mark > len(self.stack):
            raise IndexError  # items below the mark were taken: a damaged file
        return mark

    def run(self) -> dict[str, Any]:  # noqa: C901 - one opcode per branch, most frequent first
        data, stack, marks, memo = self.data, self.stack, self.marks, self.memo
        size = len(data)
        frombytes = int.from_bytes
        i = 0
        if size < 2 or data[0] != 0x80:
            raise SnapshotReadError("the file is not a pickle of protocol 2 or later (as torch writes snapshots)")
        while True:
            if i >= size:
                raise SnapshotReadError("the file ends in the middle of its pickle (truncated?)")
            op = data[i]
            offset = i
            i += 1
            width = _WIDTH.get(op)
            if width is not None and i + width > size:
                raise IndexError
            if op == 0x68:  # BINGET
                stack.append(memo[data[i]])
                i += 1
            elif op == 0x6A:  # LONG_BINGET
                stack.append(memo[frombytes(data[i:i + 4], "little")])
                i += 4
            elif op == 0x94:  # MEMOIZE
                self._memoize(len(memo), stack[-1])
            elif op == 0x71:  # BINPUT
                self._memoize(data[i], stack[-1])
                i += 1
            elif op == 0x72:  # LONG_BINPUT
                self._memoize(frombytes(data[i:i + 4], "little"), stack[-1])
                i += 4
            elif op == 0x28:  # MARK
                if len(marks) >= MAX_MARKS:
                    raise SnapshotReadError(f"the file nests more than {MAX_MARKS} levels deep; it was not read")
                marks.append(len(stack))
            elif op == 0x75:  # SETITEMS
                mark = self._pop_mark()
                if mark < 1:
                    raise SnapshotReadError("the file sets items with no dict to set them in")
                target = stack[mark - 1]
                items = stack[mark:]
                del stack[mark:]
                if target is _CONVERTED:
                    continue  # an entry with more than one batch of fields: the first batch was taken
                if type(target) is not dict or len(items) % 2:
                    raise SnapshotReadError("the file sets dict items on something that is not a dict")
                for k in range(0, len(items), 2):
                    target[_key(items[k])] = items[k + 1]
                self._dict_done(mark - 1)
            elif op == 0x65:  # APPENDS
                mark = self._pop_mark()
                if mark < 1:
                    raise SnapshotReadError("the file appends with no list to append to")
                items = stack[mark:]
                del stack[mark:]
                self._append(stack[mark - 1], items)
            elif op == 0x61:  # APPEND
                item = stack.pop()
                self._append(stack[-1], [item])
            elif op == 0x73:  # SETITEM
                value = stack.pop()
                key = stack.pop()
                target = stack[-1]
                if target is _CONVERTED:
                    continue
                if type(target) is not dict:
                    raise SnapshotReadError("the file sets a dict item on something that is not a dict")
                target[_key(key)] = value
                self._dict_done(len(stack) - 1)
            elif op == 0x7D:  # EMPTY_DICT
                stack.append({})
            elif op == 0x5D:  # EMPTY_LIST
                new: list[Any] = []
                self._new_list(new)
                stack.append(new)
            elif op == 0x8C:  # SHORT_BINUNICODE
                n = data[i]
                _check_length(n, i + 1, size)
                stack.append(str(data[i + 1:i + 1 + n], "utf-8"))
                i += 1 + n
            elif op == 0x58:  # BINUNICODE
                n = frombytes(data[i:i + 4], "little")
                _check_length(n, i + 4, size)
                stack.append(str(data[i + 4:i + 4 + n], "utf-8"))
                i += 4 + n
            elif op == 0x8D:  # BINUNICODE8
                n = frombytes(data[i:i + 8], "little")
                _check_length(n, i + 8, size)
                stack.append(str(data[i + 8:i + 8 + n], "utf-8"))
                i += 8 + n
            elif op == 0x4B:  # BININT1
                stack.append(data[i])
                i += 1
            elif op == 0x4D:  # BININT2
                stack.append(data[i] | data[i + 1] << 8)
                i += 2
            elif op == 0x4A:  # BININT
                stack.append(frombytes(data[i:i + 4], "little", signed=True))
                i += 4
            elif op == 0x8A:  # LONG1
                n = data[i]
                _check_length(n, i + 1, size)
                stack.append(frombytes(data[i + 1:i + 1 + n], "little", signed=True))
                i += 1 + n
            elif op == 0x8B:  # LONG4
                n = frombytes(data[i:i + 4], "little", signed=True)
                if n < 0 or n > 64:
                    raise SnapshotReadError("the file holds an integer of more than 512 bits; it was not read")
                _check_length(n, i + 4, size)
                stack.append(frombytes(data[i + 4:i + 4 + n], "little", signed=True))
                i += 4 + n
            elif op == 0x95:  # FRAME
                i += 8
            elif op == 0x88:  # NEWTRUE
                stack.append(True)
            elif op == 0x89:  # NEWFALSE
                stack.append(False)
            elif op == 0x4E:  # NONE
                stack.append(None)
            elif op == 0x47:  # BINFLOAT
                stack.append(struct.unpack(">d", data[i:i + 8])[0])
                i += 8
            elif op == 0x86:  # TUPLE2
                b = stack.pop()
                stack[-1] = (stack[-1], b)
            elif op == 0x85:  # TUPLE1
                stack[-1] = (stack[-1],)
            elif op == 0x87:  # TUPLE3
                c = stack.pop()
                b = stack.pop()
                stack[-1] = (stack[-1], b, c)
            elif op == 0x29:  # EMPTY_TUPLE
                stack.append(())
            elif op == 0x74:  # TUPLE
                mark = self._pop_mark()
                items = tuple(stack[mark:])
                del stack[mark:]
                stack.append(items)
            elif op == 0x6C:  # LIST
                mark = self._pop_mark()
                items_list = stack[mark:]
                del stack[mark:]
                stack.append(items_list)
            elif op == 0x64:  # DICT
                mark = self._pop_mark()
                items = stack[mark:]
                del stack[mark:]
                if len(items) % 2:
                    raise SnapshotReadError("the file builds a dict from an odd number of items")
                stack.append({_key(items[k]): items[k + 1] for k in range(0, len(items), 2)})
            elif op == 0x43:  # SHORT_BINBYTES
                n = data[i]
                _check_length(n, i + 1, size)
                stack.append(bytes(data[i + 1:i + 1 + n]))
                i += 1 + n
            elif op == 0x42:  # BINBYTES
                n = frombytes(data[i:i + 4], "little")
                _check_length(n, i + 4, size)
                stack.append(bytes(data[i + 4:i + 4 + n]))
                i += 4 + n
            elif op == 0x8E:  # BINBYTES8
                n = frombytes(data[i:i + 8], "little")
                _check_length(n, i + 8, size)
                stack.append(bytes(data[i + 8:i + 8 + n]))
                i += 8 + n
            elif op == 0x30:  # POP
                if marks and marks[-1] == len(stack):
                    marks.pop()  # as pickle does: POP of a mark with nothing above it drops the mark
                else:
                    stack.pop()
            elif op == 0x31:  # POP_MARK
                mark = self._pop_mark()
                del stack[mark:]
            elif op == 0x32:  # DUP
                stack.append(stack[-1])
            elif op == 0x80:  # PROTO
                if data[i] < 2 or data[i] > 5:
                    raise SnapshotReadError(f"the file is a pickle of protocol {data[i]}, not one torch writes")
                i += 1
            elif op == 0x2E:  # STOP
                break
            else:
                raise _refusal(op, offset, data)
        if len(stack) != 1 or marks:
            raise SnapshotReadError("the file's pickle does not end with one value")
        document = stack[0]
        if type(document) is not dict:
            raise SnapshotReadError("the file is a pickle, but not of a dict as a memory snapshot is")
        return document


def _key(key: Any) -> Any:
    """A dict key: every plain value but a list or dict (not hashable) is one."""
    if type(key) in (list, dict) or key is _CONVERTED:
        raise SnapshotReadError("the file uses a list or a dict as a dict key")
    if type(key) is tuple:
        hash(key)  # a tuple holding a list is not a key either (TypeError, reported below)
    return key


def _check_length(length: int, start: int, size: int) -> None:
    if length < 0 or start + length > size:
        raise IndexError  # reported as a truncated file
