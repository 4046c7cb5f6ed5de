"""The address of the view on screen, for the "Copy link" control.

A Hugging Face Space is shown inside an iframe on `huggingface.co/spaces/<owner>/<name>`,
whose address bar never carries the app's page or query: only the direct address
`https://<SPACE_HOST>/...` opens the same view. So in a Space (`SPACE_HOST` set) the link
is built on that host; elsewhere on the address the visitor's browser uses
(`st.context.url`), and without either it is relative.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit

SPACE_HOST_ENV = "SPACE_HOST"
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?")


def share_link(
    url_path: str,
    query: dict[str, str],
    *,
    space_host: str | None = None,
    browser_url: str | None = None,
    base_path: str = "",
) -> str:
    """`https://<space_host>/<page>?<query>` in a Space, else the browser's origin, else
    a relative link. `url_path` is the page's path ("" for the default page)."""
    path = "/".join(p for p in (base_path.strip("/"), url_path.strip("/")) if p)
    tail = f"/{path}" + (f"?{urlencode(query)}" if query else "")
    host = (space_host or "").strip()
    if host and _HOST.fullmatch(host):
        return f"https://{host}{tail}"
    if browser_url:
        parts = urlsplit(browser_url)
        if parts.scheme in ("http", "https") and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}{tail}"
    return tail
