"""`python -m tests.regen_fixtures`: rewrites only what changed, names the keys, and
`--check` fails on a stale fixture without touching it. Fast: the fixtures are a
temporary copy and the report is the frozen text (edited), not a new report run; that
the real report equals the fixtures is `test_report_frozen.py`."""

from __future__ import annotations

import io
import json
import lzma
import shutil
from pathlib import Path

import pytest

from tests import regen_fixtures as R

TASK = "report_demo_task.json.xz"


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    for name in R.FIXTURES:
        shutil.copy(R.FIXTURE_DIR / name, tmp_path / name)
    return tmp_path


def _reports(fixture_dir: Path, edit=None) -> dict[str, str]:
    """What the 'report' prints per fixture: the frozen text, one of them edited."""
    texts = {name: R.frozen(fixture_dir / name) for name in R.FIXTURES}
    if edit:
        data = json.loads(texts[TASK])
        edit(data)
        texts[TASK] = json.dumps(data, indent=2) + "\n"
    return texts


def _run(monkeypatch, fixture_dir: Path, texts: dict[str, str], *args: str) -> tuple[int, str]:
    by_args = {tuple(R.FIXTURES[name](Path("/m"))): text for name, text in texts.items()}
    monkeypatch.setattr(R, "report_text", lambda argv: by_args[tuple(argv)])
    out = io.StringIO()
    monkeypatch.setattr(R.sys, "stdout", out)
    code = R.main(["--data", "/m", "--fixtures", str(fixture_dir), *args])
    return code, out.getvalue()


def _bytes(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in R.FIXTURES}


def test_the_frozen_text_round_trips_through_json() -> None:
    # the edited fixtures below are json.dumps(indent=2) + newline: the report's own format
    text = R.frozen(R.FIXTURE_DIR / TASK)
    assert text is not None and json.dumps(json.loads(text), indent=2) + "\n" == text


def test_unchanged_fixtures_pass_check_and_are_not_rewritten(monkeypatch, fixtures) -> None:
    before = _bytes(fixtures)
    for args in (("--check",), ()):
        code, out = _run(monkeypatch, fixtures, _reports(fixtures), *args)
        assert code == 0
        assert out.count("unchanged") == len(R.FIXTURES)
    assert _bytes(fixtures) == before


def _edit(data: dict) -> None:
    data["agreement"][0]["kappa"] = 0.123456
    data["brand_new_key"] = {"x": 1}
    del data["process_outcome"]


def test_check_names_the_changed_keys_and_touches_nothing(monkeypatch, fixtures) -> None:
    before = _bytes(fixtures)
    code, out = _run(monkeypatch, fixtures, _reports(fixtures, _edit), "--check")
    assert code == 1
    assert f"{TASK}: would change" in out
    assert "$.agreement[0].kappa" in out
    assert "$.brand_new_key (added)" in out and "$.process_outcome (removed)" in out
    assert "top-level keys: process_outcome, brand_new_key, agreement" in out
    assert "report_demo_site_predictions.json.xz: unchanged" in out
    assert _bytes(fixtures) == before


def test_regenerate_rewrites_only_the_changed_fixture(monkeypatch, fixtures) -> None:
    before = _bytes(fixtures)
    texts = _reports(fixtures, _edit)
    code, out = _run(monkeypatch, fixtures, texts)
    assert code == 0 and f"{TASK}: rewritten" in out
    after = _bytes(fixtures)
    assert lzma.decompress(after[TASK]).decode() == texts[TASK]
    site = "report_demo_site_predictions.json.xz"
    assert after[site] == before[site]
    code, out = _run(monkeypatch, fixtures, texts, "--check")
    assert code == 0 and "would change" not in out


def test_a_missing_fixture_is_written(monkeypatch, fixtures) -> None:
    texts = _reports(fixtures)
    (fixtures / TASK).unlink()
    code, out = _run(monkeypatch, fixtures, texts, "--check")
    assert code == 1 and "$ (new fixture)" in out
    assert _run(monkeypatch, fixtures, texts)[0] == 0
    assert R.frozen(fixtures / TASK) == texts[TASK]


def test_the_source_line_is_normalised() -> None:
    text = '{\n  "source": "Local mirror: /tmp/x/demo",\n  "n": 1\n}\n'
    assert R.normalised(text) == '{\n  "source": "<mirror>",\n  "n": 1\n}\n'


def test_changed_keys_walks_lists_and_lengths() -> None:
    old = {"a": [{"k": 1}, {"k": 2}], "b": [1, 2]}
    new = {"a": [{"k": 1}, {"k": 3}], "b": [1, 2, 3]}
    assert R.changed_keys(old, new) == ["$.a[1].k", "$.b (length 2 -> 3)"]
    assert R.top_keys(["$.a[1].k", "$.b (length 2 -> 3)", "$.a.x"]) == ["a", "b"]
