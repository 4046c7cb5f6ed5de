"""Where the data comes from: the Hub id, a local mirror folder, or the built-in demo.

`CUAVB_DATA` names the source (a Hub id or a folder). Without it the app tries the Hub
(`lib.data.remote.hub`, read lazily by `lib.data.load`) and, when the Hub cannot be reached, or
`HF_HUB_OFFLINE` is set and nothing is cached, falls back to a synthetic demo mirror
that `lib.mirror` generates on first use. The demo is generated rather than shipped so
that the repository holds no binary data and the demo always matches the mirror code
(about 15 s of CPU once per machine, in a niced background process: `lib.data.demo.builder`;
meanwhile the app serves it from tables generated in the server, `lib.data.demo.light`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lib.data.demo import DEMO_DIR_ENV as DEMO_DIR_ENV  # re-exported: the demo's name
from lib.data.demo import DEMO_SEED as DEMO_SEED
from lib.data.demo import DEMO_VERSION as DEMO_VERSION
from lib.data.demo import builder as demo_build
from lib.data.demo import demo_dir as demo_dir

HUB_ID = "microsoft/CUAVerifierBench"
DEMO = "demo"
ENV_VAR = "CUAVB_DATA"

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
    detail: str = ""
    synthetic: bool = False  # a local folder whose README says `synthetic: true`

    @property
    def is_demo(self) -> bool:
        return self.kind == "demo"

    @property
    def is_synthetic(self) -> bool:
        """Made-up values: the built-in demo, or a folder written by `lib.mirror`."""
        return self.is_demo or self.synthetic

    def label(self) -> str:
        """What the screen says: a local folder by its name only (never the server's
        absolute path, which `describe` keeps for the report and the terminal)."""
        if self.kind == "local":
            return f"Local mirror: {Path(self.location).name}"
        return self.describe()

    def describe(self) -> str:
        if self.kind == "hub":
            return f"Hugging Face Hub: {self.location}"
        if self.kind == "local":
            return f"Local mirror: {self.location}"
        return "Built-in synthetic demo data"


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
    try:
        exists = path.exists()
    except OSError:  # e.g. permission denied on a parent: treat as a folder, loading says why
        exists = True
    if exists or not _HUB_ID_RE.match(spec):
        return Source("local", str(path.resolve()), named=True)
    return Source("hub", spec, named=True)


def ensure_demo(progress: Progress | None = None) -> Path:
    """Generate the demo mirror if it is not on disk yet; return its folder.

    Built by a separate process (`lib.data.demo.builder`: every core draws screenshots, and the
    progress bar follows the trajectories drawn); raises SourceError when that fails."""

    folder = demo_dir()
    if (folder / "README.md").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        return demo_build.build(folder, progress)
    except RuntimeError as exc:
        raise SourceError(f"The built-in demo could not be generated: {exc}.") from exc


MARKER_KEY = "synthetic"
"""README front matter key `lib.mirror` writes (`synthetic: true`) so the app can say so."""


def marked_synthetic(folder: Path) -> bool:
    """True when the folder's README front matter says `synthetic: true`. Reads at most
    64 KiB; anything unreadable or malformed is simply "not marked"."""
    import yaml

    try:
        with (folder / "README.md").open("rb") as fh:
            head = fh.read(64 << 10).decode("utf-8", "replace")
    except OSError:
        return False
    if not head.startswith("---"):
        return False
    end = head.find("\n---", 3)
    try:
        meta = yaml.safe_load(head[3:end]) if end > 0 else None
    except yaml.YAMLError:
        return False
    return isinstance(meta, dict) and meta.get(MARKER_KEY) is True


def demo_fallback(plain: str, detail: str = "") -> Source:
    """The demo standing in for an unusable default Hub: `note` is the plain reason
    (shown in the banner), `detail` the technical one (behind an expander)."""
    return Source("demo", str(demo_dir()), named=False, note=plain, detail=detail)
