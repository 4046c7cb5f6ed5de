"""The README front matter (the YAML block between `---` lines), parsed within a budget.

The README is the dataset's, and a dataset is one environment variable away from anyone's
Hub repo: its YAML must not cost the server more than a real card does. PyYAML's safe
loader runs no code, but it still (1) reads any size, (2) builds a node per element,
and (3) resolves aliases: `*a` is a reference, so 9 levels of 10 aliases are a billion
elements for whoever walks the result (`lib.data.load.data_files` flattens every list: 27 s for
one alias bomb; 35 s for 2,000 x 20,000 patterns). So, before anything is built:

- the front matter is at most `MAX_BYTES` (the real card's is a few KB);
- its events are scanned first (the C parser when available, no objects built) and the
  *expanded* size is counted: every scalar, list and mapping is one node, and an alias
  counts as the whole subtree it names. Past `MAX_NODES` (or `MAX_DEPTH` levels) it is
  refused, so aliases can never expand past the bound, however they nest;
- only then is it loaded with the safe loader.

A refusal is a `FrontMatterError` whose message says which bound, for the loader's banner.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_BYTES = 256 << 10
"""Bytes of YAML between the `---` lines (the real card's front matter is ~2 KB)."""
MAX_NODES = 20_000
"""Scalars + lists + mappings, with every alias expanded (the real card: a few hundred)."""
MAX_DEPTH = 64
"""Nesting levels of lists and mappings."""

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class FrontMatterError(ValueError):
    """The front matter is refused (too large, too deep, too many nodes, or not YAML)."""


def block(readme: str) -> str | None:
    """The YAML text of the front matter, or None when the README has none. The closing
    `---` is looked for within MAX_BYTES only (a README of 64 MB is not scanned whole)."""
    if not readme.startswith("---"):
        return None
    end = readme.find("\n---", 3, MAX_BYTES + 8)
    if end < 0:
        if len(readme) > MAX_BYTES:
            raise FrontMatterError(
                f"the README front matter is larger than {MAX_BYTES // 1024} KB "
                "(or never closed with `---`)."
            )
        return None
    text = readme[3:end]
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise FrontMatterError(f"the README front matter is larger than {MAX_BYTES // 1024} KB.")
    return text


def check_budget(text: str, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> int:
    """The expanded node count of `text` (aliases counted as what they name); raises
    FrontMatterError past `max_nodes` nodes or `max_depth` levels, as soon as it is passed.
    """
    total = 0
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node
    open_: list[tuple[str | None, int]] = []  # (anchor, total at its start) per open collection
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent):
                total += sizes.get(event.anchor or "", 1)
            elif isinstance(event, yaml.ScalarEvent):
                total += 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                open_.append((event.anchor, total))
                total += 1
                if len(open_) > max_depth:
                    raise FrontMatterError(
                        f"the README front matter nests deeper than {max_depth} levels."
                    )
            elif isinstance(event, yaml.CollectionEndEvent) and open_:
                anchor, start = open_.pop()
                if anchor:
                    sizes[anchor] = total - start
            if total > max_nodes:
                raise FrontMatterError(
                    f"the README front matter has more than {max_nodes:,} values "
                    "(aliases expanded)."
                )
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the README front matter is not valid YAML: {exc}") from exc
    return total


def parse(readme: str | None) -> Any:
    """The front matter as Python values (None when there is none), within the budget."""
    text = block(readme or "")
    if text is None:
        return None
    check_budget(text)
    try:
        return yaml.load(text, Loader=_LOADER)  # a safe loader (CSafeLoader or SafeLoader)
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the README front matter is not valid YAML: {exc}") from exc
