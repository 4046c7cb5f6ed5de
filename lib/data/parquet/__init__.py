"""Parquet by byte ranges, without a PNG byte more than asked: a shard's footer and light
columns (`read_light`), and one row's screenshots by the offset index or a row group
(`PageReader.read_row`, `rows_of_group`, `row_from_group`).

Underneath: `lazy_parquet` (footer, light columns, screenshot counts), `page_index` (the
offset index: one row's pages), `thrift_compact` (a bounded Thrift compact reader/writer),
`shot_pages` (a row's pages read and decoded). Importers use this face; the two low-level
readers are exported as modules (`from lib.data.parquet import thrift_compact as tc`)."""

from lib.data.parquet import page_index, thrift_compact
from lib.data.parquet.lazy_parquet import (
    COUNT_COLUMN,
    FOOTER_GUESS,
    Group,
    LocalRanges,
    Ranges,
    Shard,
    ShardError,
    declared_features,
    read_light,
)
from lib.data.parquet.page_index import MAX_SHOTS, PageIndexError
from lib.data.parquet.shot_pages import PageReader, row_from_group, rows_of_group

__all__ = [
    "COUNT_COLUMN",
    "FOOTER_GUESS",
    "MAX_SHOTS",
    "Group",
    "LocalRanges",
    "PageIndexError",
    "PageReader",
    "Ranges",
    "Shard",
    "ShardError",
    "declared_features",
    "page_index",
    "read_light",
    "row_from_group",
    "rows_of_group",
    "thrift_compact",
]
