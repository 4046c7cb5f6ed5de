"""The fallback to the demo: said once in the terminal, not retried when no retry can
help, and not re-tried in a visitor's request while the Hub is still down (issue 30)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import httpx2 as httpx  # what huggingface_hub raises (its httpx fork)
import pytest

from lib.data.remote import hub

NOWHERE = "https://cuavb-no-such-host.invalid"  # RFC 2606: never resolves


def test_name_resolution_is_not_retried(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    """A real lookup of a name that cannot resolve: one request, no back-off, no
    "retry" line, and a plain line that says why."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", NOWHERE)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read at import by huggingface_hub
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv(hub.CACHE_ENV, "/nonexistent-cuavb-cache")
    calls = {"n": 0}
    real = hub.with_retries

    def counted(call, what=""):
        def once():
            calls["n"] += 1
            return call()

        return real(once, what)

    monkeypatch.setattr(hub, "with_retries", counted)
    with caplog.at_level(logging.WARNING), pytest.raises(hub.HubError) as caught:
        hub.resolve_revision("microsoft/CUAVerifierBench")
    assert calls["n"] == 1
    assert not caught.value.retryable
    assert "name resolution" in caught.value.plain
    assert not [r for r in caplog.records if "retry" in r.getMessage()]


def test_a_refused_connection_is_still_retried() -> None:
    """Only the unfixable kinds skip the retries: a refused connection may be a restart."""
    request = httpx.Request("GET", "https://huggingface.co/api/datasets/x")
    refused = hub._explain(httpx.ConnectError("[Errno 111] Connection refused", request=request),
                           "x/y", "main")  # fmt: skip
    assert refused.retryable
    cause = OSError(101, "Network is unreachable")
    wrapped = httpx.ConnectError("connect failed", request=request)
    wrapped.__cause__ = cause
    offline = hub._explain(wrapped, "x/y", "main")
    assert not offline.retryable and "offline" in offline.plain
    from huggingface_hub.errors import OfflineModeIsEnabled

    told = hub._explain(
        OfflineModeIsEnabled("Cannot reach ...: offline mode is enabled."), "x/y", "m"
    )
    assert not told.retryable and "HF_HUB_OFFLINE" in told.plain


def test_the_terminal_says_which_source_and_why(
    mirror_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog
) -> None:
    """The default Hub unreachable: one WARNING line names the Hub, the reason and the demo."""
    from huggingface_hub import constants

    from lib.data.load import load_bench
    from lib.data.source import resolve

    monkeypatch.setattr(constants, "ENDPOINT", NOWHERE)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read at import by huggingface_hub
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("CUAVB_DATA", raising=False)
    monkeypatch.setenv(hub.CACHE_ENV, str(tmp_path / "empty-cache"))
    with caplog.at_level(logging.WARNING):
        bench = load_bench(resolve())
    assert bench.source.is_demo and not bench.source.named
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    said = [line for line in lines if "Serving the built-in demo" in line]
    assert len(said) == 1, lines
    assert "microsoft/CUAVerifierBench" in said[0] and "name resolution" in said[0]
    assert not [line for line in lines if "retry" in line]


class _Fallback:
    """Stands in for a fallback Bench: `ui.state.is_fallback` reads only `.source`."""

    def __init__(self) -> None:
        from lib.data.source import demo_fallback

        self.source = demo_fallback("the Hub's name could not be resolved.")


def test_an_expired_fallback_is_probed_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    """After FALLBACK_TTL the visitor's run gets the demo at once (no new load in the
    request); a background probe asks the Hub. Still down: the same fallback stays.
    Answering: the attempt moves on, so the next run loads the Hub."""
    from ui import state

    spec = "probe-test/none"
    monkeypatch.setenv("CUAVB_DATA", spec)
    loads: list[int] = []
    fallback = _Fallback()

    def fake_bench(spec_: str, attempt: int = 0):
        loads.append(attempt)
        return fallback

    monkeypatch.setattr(state, "_bench", fake_bench)
    monkeypatch.setattr(state, "FALLBACK_TTL", 0.0)
    asked, release = [], threading.Event()

    def down(repo: str, revision: str | None = None):
        asked.append(repo)
        release.wait(30)
        raise hub.HubError("the Hub's name could not be resolved.", "ConnectError")

    monkeypatch.setattr(hub, "resolve_revision", down)
    before = state._ATTEMPT.get(spec, 0)
    assert state.get_bench() is fallback
    assert state.get_bench() is fallback  # a probe runs already: no second one
    release.set()
    state._PROBES[spec].join(30)
    assert asked == [spec]  # one probe, in the background
    assert loads == [before, before]  # every run got the cached fallback, no new load
    assert state._ATTEMPT.get(spec, 0) == before  # still down: kept

    monkeypatch.setattr(hub, "resolve_revision", lambda repo, revision=None: asked.append(repo))
    assert state.get_bench() is fallback
    state._PROBES[spec].join(30)
    assert state._ATTEMPT.get(spec, 0) == before + 1  # it answers: the next run loads it
    state.get_bench()
    assert loads[-1] == before + 1
