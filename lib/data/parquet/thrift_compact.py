"""A small, bounded reader/writer of Thrift's compact protocol (parquet footers, page headers).

Why our own: pyarrow 26 parses the footer but exposes neither a column chunk's offset-index
location nor the offset index itself, and it cannot write a footer we edit. `thrift` and
`thriftpy2` need the parquet IDL compiled or vendored for about five fields. The protocol
is small; this module reads any struct generically into `Struct` (field id -> (type,
value)), so unknown fields survive a round trip, and writes it back.

Bounded in bytes and in work: every length and element count is checked against the
bytes left (an element costs at least one byte), nesting is capped at `MAX_DEPTH`, and
every decoded value (a struct, a field, a list element, a map entry) is counted against a
budget (`max_items`, default `MAX_ITEMS`) while decoding; a list that declares more
elements than the budget has left is refused before one is built. Why both: one byte
can be a whole empty struct, so 16 MiB of them passes any byte check yet would cost 16
million Python objects (about 30 s and 3 GB); the budget stops it after `max_items`
values, i.e. in milliseconds. A hostile footer therefore gives a `ThriftError`, never a
huge allocation, a long loop or a deep recursion.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field

MAX_DEPTH = 32
MAX_ITEMS = 500_000
"""Values decoded per `read_struct` call at most. A real footer holds about 7 bytes per
value (the 100x scale mirror's largest: 520 KB, 75,000 values); half a million values
cost about 0.3 s and +50 MB here, the most one parse may cost. Callers that know their
struct pass a tighter budget (`lib.data.parquet.page_index` for an offset index or a page
header)."""

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT, UUID = range(14)


class ThriftError(ValueError):
    """The bytes are not a valid (or not a bounded) compact-protocol struct."""


@dataclass
class Struct:
    """A decoded struct: `fields[id] = (compact type, value)`, in wire order."""

    fields: dict[int, tuple[int, object]] = field(default_factory=dict)

    def get(self, fid: int, default: object = None) -> object:
        item = self.fields.get(fid)
        return default if item is None else item[1]

    def set(self, fid: int, ttype: int, value: object) -> None:
        self.fields[fid] = (ttype, value)

    def drop(self, *fids: int) -> None:
        for fid in fids:
            self.fields.pop(fid, None)


@dataclass
class TList:
    """A decoded list or set: element type and values."""

    etype: int
    values: list


class _Reader:
    def __init__(self, data: bytes | memoryview, pos: int = 0, max_items: int = MAX_ITEMS) -> None:
        self.data = memoryview(data)
        self.pos = pos
        self.items = max_items  # values still allowed

    def spend(self, n: int = 1) -> None:
        """Count ``n`` values against the budget (before building them)."""
        self.items -= n
        if self.items < 0:
            raise ThriftError("more values than the decoding budget allows")

    def left(self) -> int:
        return len(self.data) - self.pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("unexpected end of data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        out = shift = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise ThriftError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.left():
            raise ThriftError(f"length {n} exceeds the {self.left()} bytes left")
        out = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return out

    def value(self, ttype: int, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise ThriftError("nesting too deep")
        self.spend()
        if ttype in (TRUE, FALSE):  # only inside containers: one byte
            return self.byte() == TRUE
        if ttype == BYTE:
            b = self.byte()
            return b - 256 if b > 127 else b
        if ttype in (I16, I32, I64):
            return self.zigzag()
        if ttype == DOUBLE:
            return _struct.unpack("<d", self.take(8))[0]
        if ttype == BINARY:
            return self.take(self.varint())
        if ttype == UUID:
            return self.take(16)
        if ttype in (LIST, SET):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if size > self.left():
                raise ThriftError(f"a list of {size} elements in {self.left()} bytes")
            if size > self.items:
                raise ThriftError(f"a list of {size} elements: more than the decoding budget")
            return TList(etype, [self.value(etype, depth + 1) for _ in range(size)])
        if ttype == MAP:
            size = self.varint()
            if size == 0:
                return (0, 0, [])
            if size > self.left():
                raise ThriftError(f"a map of {size} entries in {self.left()} bytes")
            if 2 * size > self.items:
                raise ThriftError(f"a map of {size} entries: more than the decoding budget")
            kv = self.byte()
            kt, vt = kv >> 4, kv & 0x0F
            pairs = [(self.value(kt, depth + 1), self.value(vt, depth + 1)) for _ in range(size)]
            return (kt, vt, pairs)
        if ttype == STRUCT:
            return self.struct(depth + 1)
        raise ThriftError(f"unknown compact type {ttype}")

    def struct(self, depth: int = 0) -> Struct:
        if depth > MAX_DEPTH:
            raise ThriftError("nesting too deep")
        out = Struct()
        last = 0
        while True:
            head = self.byte()
            ttype = head & 0x0F
            if ttype == STOP:
                return out
            delta = head >> 4
            fid = last + delta if delta else self.zigzag()
            last = fid
            if ttype in (TRUE, FALSE):
                self.spend()
                out.fields[fid] = (ttype, ttype == TRUE)
            else:
                out.fields[fid] = (ttype, self.value(ttype, depth))


def read_struct(
    data: bytes | memoryview, pos: int = 0, max_items: int = MAX_ITEMS
) -> tuple[Struct, int]:
    """Decode one struct at `pos`; returns it and the position after it. At most
    ``max_items`` values are decoded (ThriftError past that, see the module docstring)."""
    reader = _Reader(data, pos, max_items)
    try:
        return reader.struct(), reader.pos
    except RecursionError as exc:  # belt and braces: MAX_DEPTH should stop it first
        raise ThriftError("nesting too deep") from exc


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def varint(self, n: int) -> None:
        while True:
            if n < 0x80:
                self.out.append(n)
                return
            self.out.append((n & 0x7F) | 0x80)
            n >>= 7

    def zigzag(self, n: int) -> None:
        self.varint((n << 1) ^ (n >> 63))

    def value(self, ttype: int, value: object) -> None:
        if ttype in (TRUE, FALSE):
            self.out.append(TRUE if value else FALSE)
        elif ttype == BYTE:
            self.out.append(int(value) & 0xFF)  # type: ignore[call-overload]
        elif ttype in (I16, I32, I64):
            self.zigzag(int(value))  # type: ignore[call-overload]
        elif ttype == DOUBLE:
            self.out += _struct.pack("<d", value)
        elif ttype == BINARY:
            self.varint(len(value))  # type: ignore[arg-type]
            self.out += value  # type: ignore[operator]
        elif ttype == UUID:
            self.out += value  # type: ignore[operator]
        elif ttype in (LIST, SET):
            assert isinstance(value, TList)
            n = len(value.values)
            if n < 15:
                self.out.append((n << 4) | value.etype)
            else:
                self.out.append(0xF0 | value.etype)
                self.varint(n)
            for item in value.values:
                self.value(value.etype, item)
        elif ttype == MAP:
            kt, vt, pairs = value  # type: ignore[misc]
            self.varint(len(pairs))
            if pairs:
                self.out.append((kt << 4) | vt)
                for k, v in pairs:
                    self.value(kt, k)
                    self.value(vt, v)
        elif ttype == STRUCT:
            self.struct(value)  # type: ignore[arg-type]
        else:
            raise ThriftError(f"unknown compact type {ttype}")

    def struct(self, s: Struct) -> None:
        last = 0
        for fid in sorted(s.fields):
            ttype, value = s.fields[fid]
            if ttype in (TRUE, FALSE):
                ttype = TRUE if value else FALSE
            if 0 < fid - last <= 15:
                self.out.append(((fid - last) << 4) | ttype)
            else:
                self.out.append(ttype)
                self.zigzag(fid)
            last = fid
            if ttype not in (TRUE, FALSE):
                self.value(ttype, value)
        self.out.append(STOP)


def write_struct(s: Struct) -> bytes:
    """Encode a struct (fields in id order, as Thrift writers do)."""
    writer = _Writer()
    writer.struct(s)
    return bytes(writer.out)
