"""A commit the Hub no longer serves (issue 32): the stand-in Hub's `move_main`, and how
our client names the failure (`lib.data.remote.hub.RevisionGone`, not a retryable hiccup)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

from lib.data.remote import hub as hubs
from tools.local_hub import DEFAULT_REPO, Hub, serving


def _get(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_move_main_deletes_the_old_commit(mirror_dir: Path) -> None:
    hub = Hub(mirror_dir)
    old = hub.sha
    name = "README.md"
    with serving(hub) as url:
        assert _get(f"{url}/datasets/{DEFAULT_REPO}/resolve/{old}/{name}")[0] == 200
        request = urllib.request.Request(f"{url}/_move_main", method="POST")
        with urllib.request.urlopen(request) as response:
            new = json.loads(response.read())["sha"]
        assert new == hub.sha != old and hubs.valid_sha(new)
        status, headers, _ = _get(f"{url}/datasets/{DEFAULT_REPO}/resolve/{old}/{name}")
        assert status == 404 and headers["X-Error-Code"] == "RevisionNotFound"
        status, headers, _ = _get(f"{url}/datasets/{DEFAULT_REPO}/resolve/{new}/{name}")
        assert status == 200 and headers["X-Repo-Commit"] == new
        status, _, body = _get(f"{url}/api/datasets/{DEFAULT_REPO}")
        assert status == 200 and json.loads(body)["sha"] == new


def test_a_vanished_commit_is_revision_gone_and_not_retried() -> None:
    files = hubs.HubFiles(DEFAULT_REPO, hubs.Revision("a" * 40))
    gone = SimpleNamespace(status_code=404, headers={"X-Error-Code": "RevisionNotFound"})
    error = files._fail(gone, "trajectories/x.parquet")
    assert isinstance(error, hubs.RevisionGone) and not error.retryable
    missing = SimpleNamespace(status_code=404, headers={"X-Error-Code": "EntryNotFound"})
    assert not isinstance(files._fail(missing, "x"), hubs.RevisionGone)
    busy = SimpleNamespace(status_code=503, headers={})
    assert files._fail(busy, "x").retryable


def test_a_shot_store_remembers_that_its_commit_is_gone(tmp_path: Path, monkeypatch) -> None:
    from lib.data.remote import LocalFolder
    from lib.data.shots import FetchJob, ShotStore

    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = ShotStore({}, LocalFolder(tmp_path), "a" * 40)

    def vanished(job, loc, fallback):
        raise hubs.RevisionGone("revision gone.", "HTTP 404 RevisionNotFound")

    monkeypatch.setattr(store, "_fetch", vanished)
    job = FetchJob("k", "row 1")
    store._run(job, "om2w", 0, SimpleNamespace())
    assert job.finished and job.gone and "revision gone." in job.error
    assert store.gone == "revision gone."
