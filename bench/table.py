"""The results table and notes printed by `python -m bench.run`.

Part of `python -m bench.run` (see its docstring).
"""

from __future__ import annotations

import os
import platform
from typing import Any

from bench.common import (
    CLOUD_MB,
    TARGET_FIRST_PAGE_S,
    TARGET_PEAK_MB,
    TARGET_RATIO,
    TARGET_SESSION_MB,
    TARGET_STEP_MS,
)

# --------------------------------------------------------------------------- the table


def _get(d: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _why(*parts: Any) -> str:
    for part in parts:
        if isinstance(part, dict) and "error" in part:
            return f"n/a: {part['error']}"[:160]
    return "n/a: not measured"


def _mb(v: float | None) -> str | None:
    return None if v is None else f"{v:,.0f} MB"


def _s(v: float | None, cpu: float | None = None, what: str = "cpu") -> str | None:
    if v is None:
        return None
    return f"{v:.2f} s" + (f" ({what} {cpu:.2f} s)" if cpu is not None else "")


def _ms(stats: dict | None, cpu: dict | None = None) -> str | None:
    if not stats or not stats.get("n"):
        return None
    text = f"median {stats['median']:.1f} ms, p95 {stats['p95']:.1f} ms"
    if cpu and cpu.get("n"):
        text += f" (cpu {cpu['median']:.1f} / {cpu['p95']:.1f} ms)"
    return text


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


def table_rows(r: dict[str, Any]) -> list[list[str]]:
    """The rows of the results table: measure, ours, naive, ratio, target, met."""
    s = r.get("settings", {})
    quick = s.get("mode") == "quick"  # a few MB of PNGs: the memory ratio says nothing
    ours_load, naive_load, first = r.get("ours_load"), r.get("naive_load"), r.get("first_load")
    png, agr = r.get("png"), r.get("agreement")
    browser = r.get("browser") or {}
    ours_b, naive_b = browser.get("ours") or browser, browser.get("naive") or browser
    rows: list[list[str]] = []

    def add(
        measure: str,
        ours: Any,
        naive: Any = "–",
        ratio: str = "–",
        target: str = "–",
        met: bool | None = None,
        why: tuple = (),
    ) -> None:
        ours_text = ours if ours is not None else _why(*why)
        rows.append(
            [
                measure,
                ours_text,
                naive if naive is not None else _why(*why),
                ratio,
                target,
                _met(met),
            ]
        )

    o_peak, n_peak = _get(ours_load, "peak_mb"), _get(naive_load, "peak_mb")
    ratio = n_peak / o_peak if o_peak and n_peak else None
    add(
        "Peak RSS: load 2 configs × 2 splits (fresh process, Arrow cache on disk)",
        _mb(o_peak),
        _mb(n_peak),
        f"{ratio:.1f}× less" if ratio else "–",
        f"≥ {TARGET_RATIO:.0f}× less, ours < {TARGET_PEAK_MB:.0f} MB"
        + (" (the ratio: --full only)" if quick else ""),
        None if ratio is None else (quick or ratio >= TARGET_RATIO) and o_peak < TARGET_PEAK_MB,
        (ours_load, naive_load),
    )
    add(
        "  … of which the interpreter + imports",
        _mb(_get(ours_load, "import_rss_mb")),
        _mb(_get(naive_load, "import_rss_mb")),
        why=(ours_load, naive_load),
    )
    add(
        "Load time, same (wall; cpu)",
        _s(_get(ours_load, "load_s"), _get(ours_load, "load_cpu_s")),
        _s(_get(naive_load, "load_s"), _get(naive_load, "load_cpu_s")),
        why=(ours_load, naive_load),
    )
    add(
        "First load, building the Arrow cache (wall; peak RSS)",
        None
        if _get(first, "load_s") is None
        else f"{_s(first['load_s'], first['load_cpu_s'])}; {_mb(first['peak_mb'])}",
        why=(first,),
    )

    home_o, home_n = _get(ours_b, "home_s"), _get(naive_b, "home_s")
    add(
        "Cold process → home page rendered in chromium",
        _s(home_o, _get(ours_b, "home_server_cpu_s"), "server cpu"),
        _s(home_n, _get(naive_b, "home_server_cpu_s"), "server cpu"),
        f"{home_n / home_o:.1f}× faster" if home_o and home_n else "–",
        f"< {TARGET_FIRST_PAGE_S:.0f} s",
        None if home_o is None else home_o < TARGET_FIRST_PAGE_S,
        (ours_b, naive_b),
    )
    agr_o, agr_n = _get(ours_b, "agreement_s"), _get(naive_b, "agreement_s")
    add(
        "… then Agreement page rendered (sidebar click)",
        _s(agr_o, _get(ours_b, "agreement_server_cpu_s"), "server cpu"),
        _s(agr_n, _get(naive_b, "agreement_server_cpu_s"), "server cpu"),
        target=f"< {TARGET_FIRST_PAGE_S:.0f} s",
        met=None if agr_o is None else agr_o < TARGET_FIRST_PAGE_S,
        why=(ours_b, naive_b),
    )

    one = _get(ours_b, "one")
    server_ms = _get(one, "server_ms")
    steps_text = f"{one['steps']} steps, {one['tasks']} trajectories" if one else ""
    add(
        f"Step switch, server time per Next click ({steps_text})",
        _ms(server_ms, _get(one, "server_cpu_ms")),
        target=f"median < {TARGET_STEP_MS:.0f} ms",
        met=None
        if not server_ms or not server_ms.get("n")
        else server_ms["median"] < TARGET_STEP_MS,
        why=(ours_b,),
    )
    add(
        "  … of which the run itself, before the post-run clean-up (gc.collect)",
        _ms(_get(one, "script_ms"), _get(one, "script_cpu_ms")),
        why=(ours_b,),
    )
    appstep = r.get("appstep")
    add(
        f"  … AppTest, whole page; step_view fragment alone (bench/viewer_speed.py, "
        f"{_get(appstep, 'ms', 'n')} clicks, {_get(appstep, 'tasks')} trajectories)",
        None
        if not _get(appstep, "ms")
        else f"{_ms(_get(appstep, 'ms'))}; "
        + (_ms(_get(appstep, "fragment_ms"), _get(appstep, "fragment_cpu_ms")) or "n/a"),
        why=(appstep,),
    )
    total = _get(png, "total_ms")
    cpu_mean = _get(png, "cpu_mean_ms")
    add(
        f"Bare PNG read + decode ({_get(png, 'total_ms', 'n')} screenshots, "
        f"median {_get(png, 'png_kb') or 0:,.0f} kB)",
        None
        if not total
        else _ms(total) + ("" if cpu_mean is None else f" (cpu mean {cpu_mean:.1f} ms)"),
        why=(png,),
    )
    ratio_text = None
    if server_ms and server_ms.get("n") and total and total.get("n"):
        ratio_text = f"{server_ms['median'] / total['median']:.1f}× (medians)"
    add("Step switch ÷ bare PNG", ratio_text, why=(png, ours_b))
    add(
        "Step switch in the browser, click → image shown (client)",
        _ms(_get(one, "client_ms")),
        why=(ours_b,),
    )
    many = _get(ours_b, "many")
    if many:
        add(
            f"Step switch, server time with {many['sessions']} concurrent sessions",
            _ms(_get(many, "server_ms"), _get(many, "server_cpu_ms")),
            why=(ours_b,),
        )

    add(
        f"Agreement page recompute, {_get(agr, 'n_resamples') or 2000:,} resamples "
        "(AppTest, cache cleared)",
        _s(_get(agr, "recompute_s"), _get(agr, "recompute_cpu_s")),
        why=(agr,),
    )
    add(
        "  … computation alone (bench/agreement_speed.py page_recompute, median of 3)",
        _s(_get(agr, "lib_s"), _get(agr, "lib_cpu_s")),
        why=(_get(agr, "lib"), agr),
    )
    add("  … page rerun with its caches warm (AppTest)", _s(_get(agr, "cached_s")), why=(agr,))

    start = _get(ours_b, "mem_start", "VmRSS")
    add(
        "App RSS right after start",
        _mb(start),
        _mb(_get(naive_b, "mem_start", "VmRSS")),
        why=(ours_b, naive_b),
    )
    add(
        "App RSS after the first page (data loaded)",
        _mb(_get(ours_b, "mem_home", "VmRSS")),
        _mb(_get(naive_b, "mem_home", "VmRSS")),
        why=(ours_b, naive_b),
    )
    mem_one = _get(ours_b, "mem_one", "VmRSS")
    add(
        f"App RSS after 1 session: every page + {_get(one, 'steps') or s.get('steps')} steps",
        None if mem_one is None else f"{mem_one:,.0f} MB (+{mem_one - start:,.0f})",
        why=(ours_b,),
    )
    mem_many = _get(ours_b, "mem_many", "VmRSS")
    if many:
        steps = many["steps"]
        label = (
            f"App RSS after +{many['sessions']} concurrent sessions ({many['ok']} ok, "
            f"{min(steps)}–{max(steps)} steps each)"
        )
    else:
        label = f"App RSS after +{s.get('sessions')} concurrent sessions"
    add(
        label,
        None if mem_many is None else f"{mem_many:,.0f} MB (+{mem_many - start:,.0f})",
        why=(ours_b,),
    )
    per = per_anon = None
    if mem_many is not None and mem_one is not None and many and many.get("ok"):
        sessions = max(many["sessions"], 1)
        per = (mem_many - mem_one) / sessions
        anon = _get(ours_b, "mem_many", "RssAnon"), _get(ours_b, "mem_one", "RssAnon")
        per_anon = (anon[0] - anon[1]) / sessions
    add(
        "Memory growth per extra session (RSS; anonymous only)",
        None if per is None else f"{per:.1f} MB; {per_anon:.1f} MB",
        target=f"< {TARGET_SESSION_MB:.0f} MB",
        met=None if per is None else per < TARGET_SESSION_MB,
        why=(ours_b, {"error": "no concurrent session completed"} if many else None),
    )
    peak_o, peak_n = _get(ours_b, "mem_peak"), _get(naive_b, "mem_peak")
    add(
        "App peak RSS (VmHWM): ours over all the above, naive over its two pages",
        _mb(peak_o),
        _mb(peak_n),
        f"{peak_n / peak_o:.1f}× less" if peak_o and peak_n else "–",
        f"< {CLOUD_MB:,.0f} MB (Cloud)",
        None if peak_o is None else peak_o < CLOUD_MB,
        (ours_b, naive_b),
    )
    return rows


def render_table(r: dict[str, Any]) -> str:
    header = ["measure", "ours", "naive", "ratio", "target", "met?"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in table_rows(r)
    ]
    return "\n".join(lines)


def render_notes(r: dict[str, Any]) -> str:
    """Context that limits the figures: machine, load, anon vs file-backed memory."""
    ours_b = _get(r, "browser", "ours") or {}
    notes = [
        f"mode {r['settings']['mode']}, mirror {r['mirror']['path']} "
        f"({r['mirror']['mb']:,.0f} MB), {os.cpu_count()} cores, "
        f"python {platform.python_version()}, load average "
        f"{r['load_before'][0]:.1f} before / {r['load_after'][0]:.1f} after, "
        f"run took {r['elapsed_s']:.0f} s and {r.get('cpu_s', 0):.0f} CPU-seconds "
        "(this process, the measurements, both servers and chromium)",
    ]
    for name, key in (("ours", "ours_load"), ("naive", "naive_load")):
        load = r.get(key) or {}
        if "anon_mb" in load:
            held = load.get("png_mb_held")
            extra = f", PNG bytes held {held:,.0f} MB" if held is not None else ""
            notes.append(
                f"{name} load: RSS after load {load['rss_mb']:,.0f} MB = "
                f"{load['anon_mb']:,.0f} MB anonymous + {load['file_mb']:,.0f} MB "
                f"file-backed (memory-mapped Arrow pages){extra}"
            )
    for label, key in (("start", "mem_start"), ("1 session", "mem_one"), ("all", "mem_many")):
        mem = ours_b.get(key)
        if mem:
            notes.append(
                f"app {label}: anonymous {mem['RssAnon']:,.0f} MB, "
                f"file-backed {mem['RssFile']:,.0f} MB"
            )
    many = ours_b.get("many")
    if "uploaded" in ours_b:
        notes.append(
            f"sample predictions uploaded on Your verifier: first session "
            f"{'confirmed' if ours_b['uploaded'] else 'NOT confirmed'}"
            + (
                f", concurrent sessions {many.get('uploaded', 0)}/{many['sessions']}"
                if many
                else ""
            )
        )
    if many and many.get("errors"):
        notes.append("session errors: " + "; ".join(many["errors"]))
    if ours_b.get("pages"):
        pages = ", ".join(f"{k} {v:.1f} s" for k, v in ours_b["pages"].items())
        notes.append(f"first visit of each page (first session): {pages}")
    return "\n".join(f"- {n}" for n in notes)
