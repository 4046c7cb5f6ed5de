"""Where the data comes from: the Hub id, a local mirror folder, or the built-in demo.

`CUAVB_DATA` names the source (a Hub id or a folder). Without it the app tries the Hub
and, when the Hub cannot be reached or `HF_HUB_OFFLINE` is set, falls back to a
synthetic demo mirror that `lib.mirror` generates on first use. The demo is generated
rather than shipped so that the repository holds no binary data and the demo always
matches the mirror code (it takes a few seconds, once per machine).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

HUB_ID = "microsoft/CUAVerifierBench"
DEMO = "demo"
ENV_VAR = "CUAVB_DATA"
DEMO_DIR_ENV = "CUAVB_DEMO_DIR"
DEMO_SEED = 0
DEMO_VERSION = 3  # bump when lib.mirror changes what it writes

_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")

Kind = Literal["hub", "local", "demo"]
Progress = Callable[[float, str], None]


class SourceError(Exception):
    """A data source that cannot be used; the message is shown to the user as is."""


@dataclass(frozen=True)
class Source:
    """A resolved data source. `named` is True when the user chose it explicitly."""

    kind: Kind
    location: str
    named: bool
    note: str = ""

    @property
    def is_demo(self) -> bool:
        return self.kind == "demo"

    def describe(self) -> str:
        if self.kind == "hub":
            return f"Hugging Face Hub: {self.location}"
        if self.kind == "local":
            return f"Local mirror: {self.location}"
        return "Built-in synthetic demo data"


def hub_offline() -> bool:
    """True when huggingface_hub is told not to use the network."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def resolve(spec: str | None = None) -> Source:
    """Classify a source spec without touching the network or the disk contents.

    None means `CUAVB_DATA`, and an empty variable means the default Hub id. An existing
    folder is a local mirror; `owner/name` that is not a folder is a Hub id; anything
    else is a local path (which may not exist: loading then says so).
    """
    if spec is None:
        spec = os.environ.get(ENV_VAR, "")
    spec = spec.strip()
    if not spec:
        return Source("hub", HUB_ID, named=False)
    if spec.lower() == DEMO:
        return Source("demo", str(demo_dir()), named=True)
    path = Path(spec).expanduser()
    if path.exists() or not _HUB_ID_RE.match(spec):
        return Source("local", str(path.resolve()), named=True)
    return Source("hub", spec, named=True)


def demo_dir() -> Path:
    """The folder of the generated demo mirror (versioned, so code changes regenerate it)."""
    base = os.environ.get(DEMO_DIR_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "cuavb-dashboard"
    return root / f"demo-v{DEMO_VERSION}-seed{DEMO_SEED}"


def ensure_demo(progress: Progress | None = None) -> Path:
    """Generate the demo mirror if it is not on disk yet; return its folder."""
    from lib import mirror  # imported late: only the demo needs it

    folder = demo_dir()
    if not (folder / "README.md").exists():
        if progress:
            progress(0.0, "Generating the synthetic demo data (once per machine)…")
        folder.parent.mkdir(parents=True, exist_ok=True)
        mirror.write_mirror(folder, full=False, seed=DEMO_SEED)
    return folder


def download_hub(repo_id: str, progress: Progress | None = None) -> Path:
    """Download (or find in the Hub cache) a dataset snapshot; return its local folder.

    Offline, only the cache is consulted. The progress callback gets a fraction of files
    done, so the first download shows progress instead of a frozen page.
    """
    from huggingface_hub import snapshot_download
    from tqdm.auto import tqdm

    class _Reporter(tqdm):  # type: ignore[misc]
        def update(self, n: float | None = 1) -> bool | None:
            out = super().update(n)
            if progress and self.total:
                progress(min(self.n / self.total, 1.0), f"Downloading {repo_id}…")
            return out

    try:
        folder = snapshot_download(
            repo_id,
            repo_type="dataset",
            local_files_only=hub_offline(),
            tqdm_class=_Reporter,
        )
    except Exception as exc:  # huggingface_hub raises many types; all mean "cannot use it"
        raise SourceError(f"Could not get `{repo_id}` from the Hugging Face Hub: {exc}") from exc
    return Path(folder)


def materialize(source: Source, progress: Progress | None = None) -> tuple[Source, Path]:
    """Return a local folder with the Hub layout for a source.

    An unnamed Hub source that fails falls back to the demo, with a note saying why;
    a named one that fails raises SourceError.
    """
    if source.kind == "demo":
        return source, ensure_demo(progress)
    if source.kind == "local":
        folder = Path(source.location)
        if not folder.is_dir():
            raise SourceError(f"Data folder not found: `{folder}` (from {ENV_VAR}).")
        return source, folder
    try:
        return source, download_hub(source.location, progress)
    except SourceError as exc:
        if source.named:
            raise
        reason = "HF_HUB_OFFLINE is set" if hub_offline() else str(exc)
        demo = replace(Source("demo", str(demo_dir()), named=False), note=reason)
        return demo, ensure_demo(progress)
