"""Deep links shared by pages: the trajectory viewer's URL contract.

`Trajectory?split=<split>&task=<task_id>&step=<k>` opens a trajectory at a step. The
split is the sidebar's URL-bound widget; a task id is unique across splits, so the
viewer can also find the split from the task alone.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

VIEWER_FILE = "pages/4_Trajectory.py"
VIEWER_PATH = "Trajectory"


def viewer_query(task_id: str, step: int | None = None) -> dict[str, str]:
    """Query params for `st.page_link` / `st.switch_page` (never the bound `split`)."""
    query = {"task": str(task_id)}
    if step is not None:
        query["step"] = str(int(step))
    return query


WHY_KINDS = {"fp": "False positive", "fn": "False negative"}
"""`?why=<kind>:<rater>`: why a trajectory was opened from a verifier's error list."""


def why_value(kind: str, rater: str) -> str:
    """The `why=` value of a verifier's false positive (``fp``) or false negative (``fn``)."""
    if kind not in WHY_KINDS:
        raise ValueError(kind)
    return f"{kind}:{rater}"


def parse_why(text: str | None) -> tuple[str, str] | None:
    """(kind, rater) of a `why=` value, or None when it is not one (the page ignores it)."""
    if not text or len(text) > 200 or ":" not in text:
        return None
    kind, rater = text.split(":", 1)
    return (kind, rater) if kind in WHY_KINDS and rater else None


def why_words(kind: str, title: str, says: str, reference_says: str) -> str:
    """The one line of a trajectory opened from an error list, e.g. "False positive of
    my_verifier (yours): it says success; the humans' final label says failure"."""
    return (
        f"{WHY_KINDS[kind]} of {title}: it says {says}; "
        f"the humans' final label says {reference_says}"
    )


def viewer_href(
    task_id: str,
    split: str | None = None,
    step: int | None = None,
    v: str | None = None,
    why: str | None = None,
) -> str:
    """A relative URL for a link column or a copied link; it carries the split too, ``v``
    (the session's uploads, `lib.uploads.link_codec`: a link column opens a new tab, a new
    session, which has the uploaded verifiers only through the link) and ``why`` (the
    reason it was opened, `why_value`)."""
    query: dict[str, str] = {}
    if split:
        query["split"] = split
    query.update(viewer_query(task_id, step))
    if why:
        query["why"] = why
    if v:
        query["v"] = v
    return f"{VIEWER_PATH}?{urlencode(query)}"


HUB_DATASETS = "https://huggingface.co/datasets"


def hub_viewer_href(repo_id: str, split: str, row: int, config: str = "trajectories") -> str:
    """The Hub dataset viewer's page of one row (`.../viewer/<config>/<split>?row=<row>`).

    Only meaningful when the data comes from that Hub repository: a local mirror's row
    numbers need not match the Hub's.
    """
    repo = "/".join(quote(part, safe="") for part in repo_id.split("/", 1))
    return (
        f"{HUB_DATASETS}/{repo}/viewer/{quote(config, safe='')}/{quote(split, safe='')}"
        f"?{urlencode({'row': int(row)})}"
    )
