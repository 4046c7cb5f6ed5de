"""Page-level reads, the footer codec, the mirror layouts and the screenshot cache's
self-healing, in process (the HTTP path is in tests/unit/test_hub.py)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Dataset, Features, Image, List, Value

from lib.data.parquet import page_index as pix
from lib.data.parquet import thrift_compact as tc
from lib.data.shots import decode_entry, encode_entry
from lib.mirror.hub import LAYOUTS, split_batch_size, write_shard
from tests.helpers.shot_store import om2w_store
from tests.helpers.slack import scaled
from tools.relayout import relayout_as

OM2W = "fara7b_om2w_browserbase"
FEATURES = Features({"task_id": Value("string"), "screenshots": List(Image())})


@pytest.fixture(scope="module")
def layouts(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("layouts")
    return {
        layout: relayout_as(mirror_dir, root / layout, layout, None if layout == "v4.0" else 12)
        for layout in LAYOUTS
    }


def _shards(folder: Path) -> list[Path]:
    return sorted((folder / "trajectories").glob("*.parquet"))


# -- the footer codec against pyarrow's own metadata -------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_footer_codec_matches_pyarrow_on_every_layout(layouts, layout: str) -> None:
    for shard in _shards(layouts[layout]):
        data = shard.read_bytes()
        meta = pix.footer_meta(data)
        arrow = pq.ParquetFile(shard).metadata
        assert meta.get(3) == arrow.num_rows
        groups = meta.get(4).values
        assert len(groups) == arrow.num_row_groups
        column = pix.leaf_column(meta)
        for g, group in enumerate(groups):
            mine = group.get(1).values[column].get(3)
            theirs = arrow.row_group(g).column(column)
            assert theirs.path_in_schema == pix.BYTES_LEAF
            assert group.get(3) == arrow.row_group(g).num_rows
            assert mine.get(9) == theirs.data_page_offset
            assert mine.get(7) == theirs.total_compressed_size
            assert mine.get(5) == theirs.num_values
            if theirs.has_offset_index:
                pix.offset_index_range(meta, g, column)
            else:
                with pytest.raises(pix.PageIndexError):
                    pix.offset_index_range(meta, g, column)
        # a round trip is byte-identical (unknown fields survive)
        tail = data[-8 - int.from_bytes(data[-8:-4], "little") : -8]
        assert tc.write_struct(tc.read_struct(tail)[0]) == tail


@pytest.mark.parametrize("layout", ["current", "dict"])
def test_every_row_decodes_from_its_pages_alone(layouts, layout: str) -> None:
    for shard in _shards(layouts[layout]):
        data = shard.read_bytes()
        meta = pix.footer_meta(data)
        column = pix.leaf_column(meta)
        full = pq.read_table(shard, columns=["screenshots"]).column(0)
        row0 = 0
        for g in range(len(meta.get(4).values)):
            start, end = pix.offset_index_range(meta, g, column)
            pages = pix.read_offset_index(data[start:end])
            for r in range(pix.group_rows(meta, g)):
                where = pix.pages_for_row(meta, g, column, pages, r)
                dictionary = data[where.dict_start : where.dict_end]
                assert bool(dictionary) == (layout == "dict")
                got, count = pix.decode_row(
                    meta, column, where, data[where.start : where.end], dictionary, r
                )
                cell = full[row0 + r]
                expected = [i["bytes"].as_py() for i in cell.values] if cell.is_valid else []
                assert got == [b or None for b in expected] and count == len(expected)
            row0 += pix.group_rows(meta, g)


@pytest.mark.parametrize(
    "blob",
    [
        bytes([0x19, 0xFC]) + b"\xff\xff\xff\xff\x0f",  # a list claiming 4 billion structs
        bytes([0x1C]) * 200,  # structs nested 200 deep
        bytes([0x18]) + b"\xff\xff\xff\xff\x0f",  # a 4 GB string
        bytes([0x15]) + b"\xff" * 20,  # an endless varint
        b"",
    ],
)
def test_a_hostile_footer_is_an_error_not_an_allocation(blob: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(tc.ThriftError):
        tc.read_struct(blob)
    assert time.perf_counter() - started < 0.5


def test_a_row_with_millions_of_entries_is_bounded(tmp_path: Path) -> None:
    """3,000,000 empty screenshot entries: kept to MAX_SHOTS, the real count reported."""
    n = 3_000_000
    shots = pa.array(
        [[{"bytes": b"", "path": None}] * n],
        pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
    )
    table = pa.table({"task_id": ["t"], "screenshots": shots})
    path = tmp_path / "hostile.parquet"
    pq.write_table(table, path, write_page_index=True)
    data = path.read_bytes()
    meta = pix.footer_meta(data)
    column = pix.leaf_column(meta)
    start, end = pix.offset_index_range(meta, 0, column)
    where = pix.pages_for_row(meta, 0, column, pix.read_offset_index(data[start:end]), 0)
    started = time.perf_counter()
    pages, dictionary = data[where.start : where.end], data[where.dict_start : where.dict_end]
    got, count = pix.decode_row(meta, column, where, pages, dictionary, 0)
    assert count == n and len(got) == pix.MAX_SHOTS and got[0] is None
    assert time.perf_counter() - started < 5


# -- the mirror writes what `datasets` writes ---------------------------------------------
def _sample(rows: int, png: bytes) -> Dataset:
    data = {
        "task_id": [f"t{i}" for i in range(rows)],
        "screenshots": [[{"bytes": png * (i % 3 + 1), "path": None}] for i in range(rows)],
    }
    return Dataset.from_dict(data, features=FEATURES)


def _describe(path: Path) -> dict:
    arrow = pq.ParquetFile(path).metadata
    out = {"groups": [arrow.row_group(g).num_rows for g in range(arrow.num_row_groups)]}
    rg = arrow.row_group(0)
    for j in range(rg.num_columns):
        c = rg.column(j)
        out[c.path_in_schema] = (c.compression, c.has_dictionary_page, c.has_offset_index)
    out["cdc"] = b"content_defined_chunking" in (arrow.metadata or {})
    return out


def test_mirror_layouts_match_what_datasets_writes(tmp_path: Path) -> None:
    datasets.utils.disable_progress_bars()
    png = (Path(__file__).parent / "__init__.py").read_bytes() or b"x" * 1000
    png = png * 50
    split = _sample(40, png)
    half = split.shard(2, 0, contiguous=True)
    size = split_batch_size(split)
    reference = tmp_path / "datasets.parquet"
    half.to_parquet(str(reference), batch_size=size)  # what push_to_hub runs per shard
    expected = _describe(reference)
    for layout in LAYOUTS:
        write_shard(half, tmp_path / f"{layout}.parquet", layout, size)
    assert _describe(tmp_path / "current.parquet") == expected
    assert expected[pix.BYTES_LEAF] == ("UNCOMPRESSED", False, True) and expected["cdc"]
    assert expected["task_id"] == ("SNAPPY", True, True)
    dict_layout = _describe(tmp_path / "dict.parquet")
    assert dict_layout["groups"] == expected["groups"] and dict_layout["cdc"]
    assert dict_layout[pix.BYTES_LEAF] == ("SNAPPY", True, True)
    old = _describe(tmp_path / "v4.0.parquet")
    assert old["groups"] == [len(half)] and not old["cdc"]
    assert old[pix.BYTES_LEAF][2] is False  # no offset index


def test_row_groups_are_sized_over_the_whole_split(tmp_path: Path) -> None:
    """Screenshots only in the first half (as in the real internal split): its groups are
    sized by the WHOLE split's bytes, so they hold ~2x the bytes of a per-shard estimate."""
    datasets.utils.disable_progress_bars()
    rows = 20
    data = {
        "task_id": [f"t{i}" for i in range(rows)],
        "screenshots": [
            [{"bytes": os.urandom(200_000), "path": None}] if i < rows // 2 else []
            for i in range(rows)
        ],
    }
    split = Dataset.from_dict(data, features=FEATURES)
    from datasets.arrow_writer import get_writer_batch_size_from_data_size

    whole = split_batch_size(split)
    first = split.shard(2, 0, contiguous=True)
    alone = get_writer_batch_size_from_data_size(len(first), first._estimate_nbytes())
    assert whole == get_writer_batch_size_from_data_size(rows, split._estimate_nbytes())
    assert whole >= 2 * alone - 1


# -- the screenshot cache heals itself ------------------------------------------------------
def test_entries_detect_damage() -> None:
    blob = encode_entry([b"a" * 10, None, b"bc"], 5)
    assert decode_entry(blob) == ([b"a" * 10, None, b"bc"], 5)
    for bad in (blob[:-1], blob + b"x", b"", blob[:12], b"NOTMAGIC" + blob[8:]):
        with pytest.raises(ValueError):
            decode_entry(bad)


def test_a_store_key_must_be_ours(layouts, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    for key in ("../../etc", "/tmp/x", "A" * 40, "local-zz"):
        with pytest.raises(ValueError):
            om2w_store(layouts["current"], key=key)


def test_eviction_deletes_only_our_regular_files(layouts, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUAVB_SHOT_CACHE_MB", "0")
    shots = tmp_path / "shots"
    strangers = [shots / "unrelated.txt", shots / "notakey" / "x.shots", tmp_path / "keep.bin"]
    for path in strangers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 100)
        os.utime(path, (0, 0))  # a year-old file: first in line if we looked at it
    target = tmp_path / "elsewhere.shots"
    target.write_bytes(b"y")
    (shots / ("1" * 40)).mkdir()
    (shots / ("1" * 40) / "link.shots").symlink_to(target)
    store = om2w_store(layouts["current"])
    assert store.pngs(OM2W, 3)  # written, then read back (from memory or disk)
    store.disk.evict(10**9)
    assert all(p.exists() for p in strangers) and target.exists()
    assert (shots / ("1" * 40) / "link.shots").is_symlink()
    assert not list(store.dir.glob("*.shots"))  # ours were evicted


def test_temp_files_are_counted_and_dead_ones_cleaned(layouts, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "shots" / ("0" * 40)
    folder.mkdir(parents=True)
    dead = folder / ".x.shots.999999999.1.tmp"
    live = folder / f".y.shots.{os.getpid()}.1.tmp"
    dead.write_bytes(b"d" * 1000)
    live.write_bytes(b"l" * 3 * 1024 * 1024)
    store = om2w_store(layouts["current"])
    assert not dead.exists() and live.exists()  # a killed process's temp file is removed
    monkeypatch.setattr(store.disk, "cap", 3 * 1024 * 1024 + 10)
    assert store.pngs(OM2W, 3)  # shown from memory: the live temp file leaves no room
    assert not list(store.dir.glob("*.shots")) and live.exists()  # nothing past the cap
    monkeypatch.setattr(store.disk, "cap", 4 * 1024 * 1024)
    assert store.disk.write(store.dir / "a.shots", b"x" * 1000)  # room now
    entry = store.dir / "a.shots"
    store.disk.evict(1024 * 1024)  # the live temp file counts: our entry must go to make room
    assert not entry.exists() and live.exists()


def test_the_cache_never_exceeds_its_cap_on_disk_under_concurrent_writes(
    layouts, tmp_path, monkeypatch
) -> None:
    """Issue 26 (218 MB on disk under a 200 MB cap): 8 threads writing 300 KB entries into
    a 1 MB cap while a sampler sums every file of the cache folder, temp files included.
    Room made and bytes written are one claim (`_claim`): the disk never passes the cap,
    and what does not fit is not written."""
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(layouts["current"])
    store.dir.mkdir(parents=True, exist_ok=True)
    store.disk.cap = 1_000_000
    done, peak, errors = threading.Event(), [0], []

    def on_disk() -> int:
        total = 0
        for path in store.disk.root.rglob("*"):
            with contextlib.suppress(OSError):
                if path.is_file():
                    total += path.stat().st_size
        return total

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], on_disk())

    def write(seed: int) -> None:
        try:
            for i in range(30):
                store.disk.write(store.dir / f"e{seed}-{i}.shots", bytes([seed]) * 300_000)
        except BaseException as exc:
            errors.append(exc)

    sampler = threading.Thread(target=sample)
    sampler.start()
    writers = [threading.Thread(target=write, args=(s,)) for s in range(8)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    sampler.join()
    assert errors == []
    assert 0 < on_disk() <= store.disk.cap
    assert peak[0] <= store.disk.cap, f"{peak[0]:,} bytes on disk under a {store.disk.cap:,} cap"


def test_eviction_makes_room_for_what_comes_and_spares_what_is_read(
    layouts, tmp_path, monkeypatch
) -> None:
    """Room is made for a download's known size before it starts, oldest first, and an
    entry another thread is reading is skipped (the next oldest goes instead)."""
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(layouts["current"])
    store.dir.mkdir(parents=True, exist_ok=True)
    oldest, middle, newest = (store.dir / f"{name}.shots" for name in ("a", "b", "c"))
    for age, path in enumerate((oldest, middle, newest)):
        path.write_bytes(b"x" * 3000)
        os.utime(path, (1000 + age, 1000 + age))
    store.disk.cap = 10_000
    store.disk.reading.add(oldest)
    store.disk.evict(4000)  # 9,000 + 4,000 > 10,000: one entry must go, not the one being read
    assert oldest.exists() and not middle.exists() and newest.exists()
    store.disk.reading.discard(oldest)
    store.disk.evict(4000)  # 6,000 + 4,000 fits: nothing more goes
    assert oldest.exists() and newest.exists()
    store.disk.evict(7000)  # now the oldest goes first
    assert not oldest.exists() and newest.exists()


def test_concurrent_evictions_never_crash(layouts, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(layouts["current"])
    errors: list[BaseException] = []

    def churn(seed: int) -> None:
        try:
            for i in range(40):
                name = store.dir / f"f{seed}-{i}.shots"
                name.parent.mkdir(parents=True, exist_ok=True)
                name.write_bytes(b"z" * 5000)
                store.disk.cap = 20_000
                store.disk.evict(5000)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_damaged_entry_is_fetched_again(layouts, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    folder = layouts["current"]
    first = om2w_store(folder).pngs(OM2W, 3)
    entry = next(p for p in (tmp_path / "shots").rglob("*.g0.r3.shots"))
    for damage in (entry.read_bytes()[:50], b""):
        entry.write_bytes(damage)
        assert om2w_store(folder).pngs(OM2W, 3) == first  # a fresh store: no memory copy
        assert decode_entry(entry.read_bytes())[0] == first


def test_thumbnails_are_made_beside_the_pngs(layouts, tmp_path, monkeypatch) -> None:
    from PIL import Image as PILImage

    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(layouts["current"])
    job = store.wait(OM2W, 3)
    assert job is not None and not job.error and job.path.startswith("page index")
    deadline = time.monotonic() + 10
    thumbs_file = store.entry(store.locate(OM2W, 3), "thumbs")
    while not thumbs_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    thumbs = store.thumbs(OM2W, 3)
    assert thumbs and len(thumbs) == len(store.pngs(OM2W, 3))
    import io

    assert PILImage.open(io.BytesIO(thumbs[0])).width == 200


def test_thumbnails_are_made_once_and_not_for_prefetched_rows(
    layouts, tmp_path, monkeypatch
) -> None:
    """Issue 39: a prefetched neighbour gets no thumbnails until it is opened, and the fetch
    worker and a page asking at the same time make an opened row's thumbnails once."""
    from lib.data.shots import store as store_module

    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    made: list[int] = []
    plain = store_module.make_thumbs

    def counting(images):
        made.append(len(images))
        return plain(images)

    monkeypatch.setattr(store_module, "make_thumbs", counting)
    store = om2w_store(layouts["current"])
    store.prefetch(OM2W, [4])
    deadline = time.monotonic() + scaled(60)
    while not store.ready(OM2W, 4) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # the prefetch thread ends its item
    assert store.ready(OM2W, 4)
    assert not store.entry(store.locate(OM2W, 4), "thumbs").exists() and made == []
    opened = store.thumbs(OM2W, 4)  # opened: made now, from the prefetched PNGs
    assert opened is not None and len(opened) == len(store.pngs(OM2W, 4)) and len(made) == 1
    job = store.start(OM2W, 3)  # a fetch whose worker makes thumbnails, while a page asks
    while not job.finished and time.monotonic() < deadline:
        time.sleep(0.01)
    asked = [store.thumbs(OM2W, 3) for _ in range(3)]
    time.sleep(0.5)  # the worker's own thumbnails call is done
    assert asked[0] is not None and asked[0] == asked[1] == asked[2]
    assert len(made) == 2  # once for row 4, once for row 3


def test_equal_screenshots_are_decoded_once(monkeypatch) -> None:
    from lib import images
    from lib.data.shots import make_thumbs

    decoded: list[int] = []
    plain = images.thumbnail
    monkeypatch.setattr(images, "thumbnail", lambda png, w: decoded.append(1) or plain(png, w))
    png = plain(_png_bytes(), 400)  # any real PNG
    thumbs = make_thumbs([png, png, None, png])
    assert thumbs[0] == thumbs[1] == thumbs[3] and thumbs[2] is None and len(decoded) == 1


def _png_bytes() -> bytes:
    import io

    from PIL import Image as PILImage

    buffer = io.BytesIO()
    PILImage.new("RGB", (800, 500), (10, 200, 30)).save(buffer, format="PNG")
    return buffer.getvalue()
