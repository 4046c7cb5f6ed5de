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


def viewer_href(
    task_id: str, split: str | None = None, step: int | None = None, mine: str | None = None
) -> str:
    """A relative URL for a link column or a copied link; it carries the split too, and
    ``mine`` (a shared upload's hash): a link column opens a new tab, a new session, which
    has the session's uploaded verifiers only through the shared upload."""
    query: dict[str, str] = {}
    if split:
        query["split"] = split
    query.update(viewer_query(task_id, step))
    if mine:
        query["mine"] = mine
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
