"""`python -m lib.report [--data SOURCE] [--format json|markdown]`: the pages' numbers, headless.

Each analysis module contributes one key through a `report_records(bench) -> list[dict]`
function, the same code path its page uses. Modules of pages that are not built yet are
skipped. Undefined values are `null` in JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from lib.data import Bench, load_bench
from lib.source import ENV_VAR, SourceError, resolve

SECTIONS: dict[str, str] = {
    "agreement": "lib.agreement",
    "judge_pairs": "lib.judges",
    "shifts": "lib.shifts",
}


def _section(module_name: str) -> Callable[[Bench], list[dict]] | None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    return getattr(module, "report_records", None)


def jsonable(value: Any) -> Any:
    """Plain JSON types; nan and inf become None so the output is strict JSON."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def build_report(bench: Bench) -> dict[str, Any]:
    """Every available section's records, plus where they were computed."""
    report: dict[str, Any] = {
        "source": bench.source.describe(),
        "synthetic_demo": bench.source.is_demo,
        "n_tasks": {s: int(n) for s, n in bench.tasks.groupby("split").size().items()},
    }
    for key, module_name in SECTIONS.items():
        records = _section(module_name)
        if records is not None:
            report[key] = records(bench)
    return jsonable(report)


def to_markdown(report: dict[str, Any]) -> str:
    """One Markdown table per section."""
    lines = [f"Source: {report['source']}", ""]
    for key in SECTIONS:
        records = report.get(key)
        if not records:
            continue
        columns = [c for c in records[0] if not isinstance(records[0][c], list | dict)]
        lines += [f"## {key}", "", "| " + " | ".join(columns) + " |"]
        lines.append("|" + "---|" * len(columns))
        for record in records:
            cells = [_cell(record.get(c)) for c in columns]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lib.report", description=__doc__)
    parser.add_argument("--data", help=f"source as in {ENV_VAR}: Hub id, folder or 'demo'")
    parser.add_argument("--format", choices=("json", "markdown"), default="json")
    args = parser.parse_args(argv)
    spec = args.data if args.data is not None else os.environ.get(ENV_VAR, "")
    try:
        bench = load_bench(resolve(spec))
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = build_report(bench)
    if args.format == "json":
        print(json.dumps(report, indent=2, allow_nan=False))
    else:
        print(to_markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
