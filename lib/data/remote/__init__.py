"""Where a source's bytes come from: one Hub revision (`hub`: sha, whole files, byte ranges,
with retries, a 206 check and a deadline) and one protocol over it and a local folder
(`ByteSource`: `LocalFolder`, `HubSource`).

Importers use this face: the names below, or the `hub` module for its many small helpers
(`from lib.data.remote import hub as hubs`; tests patch it there)."""

from lib.data.remote import hub
from lib.data.remote.byte_source import ByteSource, HubSource, LocalFolder
from lib.data.remote.hub import (
    HubError,
    HubFiles,
    LocalDiskError,
    Revision,
    RevisionGone,
    cache_root,
    repo_cache,
    resolve_revision,
    valid_sha,
)

__all__ = [
    "ByteSource",
    "HubError",
    "HubFiles",
    "HubSource",
    "LocalDiskError",
    "LocalFolder",
    "Revision",
    "RevisionGone",
    "cache_root",
    "hub",
    "repo_cache",
    "resolve_revision",
    "valid_sha",
]
