"""The Universal Verifier's evidence on one task: which screenshots it read for which criterion.

Part of `lib.viewer` (see its docstring); no Streamlit. Read from the score file's
`rubric_intermediate_mm_rubric_steps` (internal split's `gpt_eval_json`):

- `step2_relevance_scores`: `screenshot_<k>` -> `{"0": r, "1": r, ..., "screenshot_idx": k}`,
  the relevance 0-10 of screenshot k to criterion i (the paper's relevance matrix);
- `step3_grouped_screenshots`: criterion -> the screenshots chosen for it, most relevant first;
- `step4_evidence_by_criterion`: criterion -> `[{screenshot_idx, screenshot_evidence,
  criterion_analysis, discrepancies, environment_issues_confirmed}, ...]`;
- `step5_reality_check`: criterion -> text;
- `step7_penalty_criteria` (a list), `step7_requires_penalty`, `step7_reasoning`.

The steps are not known to be on every real row, and any of them may be malformed: each
one is read on its own, what is missing is named in `absent`, what cannot be read in
`problems` (words for the page, never an exception). Every count is bounded
(`SHOTS_MAX`, `CRITERIA_MAX`, ...) and every text cut (`TEXT_MAX`), whatever the file says
about itself. Criterion keys arrive as strings (`"0"`, `"1"`, ...); screenshot k of the
verifier is taken to be screenshot k of the dataset's list (shown at step k).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lib.data.parquet import MAX_SHOTS
from lib.table.gpt_eval import GptEval
from lib.viewer.text import as_text

STEPS_KEY = "rubric_intermediate_mm_rubric_steps"
SHOTS_MAX = MAX_SHOTS
"""Screenshots of the relevance matrix read at most (the viewer shows at most as many)."""
CRITERIA_MAX = 50
"""Criteria read at most (a real rubric has 2-10)."""
CHOSEN_MAX = 20
"""Screenshots chosen for one criterion kept at most."""
ENTRIES_MAX = 30
"""Evidence entries of one criterion kept at most."""
PENALTIES_MAX = 30
"""Penalty criteria kept at most."""
FIELDS_MAX = 12
"""Fields of one penalty criterion kept at most."""
TEXT_MAX = 20_000
"""Characters of one evidence text kept at most (then how many more)."""

_INDEX = re.compile(r"\d{1,6}")
_SHOT_KEY = re.compile(r"screenshot_(\d{1,6})")
_STEP_NAMES = {
    "step2_relevance_scores": "the relevance matrix",
    "step3_grouped_screenshots": "the screenshots chosen per criterion",
    "step4_evidence_by_criterion": "the evidence per criterion",
    "step7_penalty_criteria": "the penalty criteria",
}


@dataclass(frozen=True)
class EvidenceEntry:
    """What the verifier read in one screenshot for one criterion."""

    screenshot: int | None
    evidence: str
    analysis: str
    discrepancies: str
    environment_issues: str


@dataclass(frozen=True)
class CriterionEvidence:
    """One criterion: the screenshots chosen for it, its most relevant one, the evidence."""

    index: int
    name: str
    chosen: tuple[int, ...]
    best: int | None
    entries: tuple[EvidenceEntry, ...]
    reality_check: str

    @property
    def label(self) -> str:
        """`1 · name` (1-based, as people count; the data's index is `index`)."""
        return f"{self.index + 1} · {self.name}" if self.name else f"criterion {self.index + 1}"


@dataclass(frozen=True)
class Penalty:
    """One penalty criterion (an unsolicited side effect that cost points)."""

    title: str
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class VerifierEvidence:
    """The verifier's intermediate steps on one task, as far as they could be read."""

    present: bool
    relevance: pd.DataFrame  # criterion, screenshot, relevance (one row per known cell)
    criteria: tuple[CriterionEvidence, ...]
    penalties: tuple[Penalty, ...]
    requires_penalty: bool | None
    penalty_reasoning: str
    n_screenshots_declared: int | None
    absent: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def has_relevance(self) -> bool:
        return not self.relevance.empty

    def relevance_matrix(self) -> list[list[float | None]]:
        """Rows = screenshots 0..max, columns = criteria 0..max (None where not given)."""
        if self.relevance.empty:
            return []
        n_shots = int(self.relevance["screenshot"].max()) + 1
        n_crit = int(self.relevance["criterion"].max()) + 1
        rows: list[list[float | None]] = [[None] * n_crit for _ in range(n_shots)]
        for c, k, r in self.relevance[["criterion", "screenshot", "relevance"]].itertuples(
            index=False
        ):
            rows[int(k)][int(c)] = float(r)
        return rows


RELEVANCE_COLUMNS = ["criterion", "screenshot", "relevance"]


def _empty_relevance() -> pd.DataFrame:
    return pd.DataFrame(
        {"criterion": pd.Series(dtype="int64"), "screenshot": pd.Series(dtype="int64"),
         "relevance": pd.Series(dtype="float64")}
    )  # fmt: skip


def absent_evidence(why: str = "") -> VerifierEvidence:
    """No intermediate steps on this row (`absent` names them all, `problems` says why)."""
    return VerifierEvidence(
        present=False,
        relevance=_empty_relevance(),
        criteria=(),
        penalties=(),
        requires_penalty=None,
        penalty_reasoning="",
        n_screenshots_declared=None,
        absent=tuple(_STEP_NAMES.values()),
        problems=(why,) if why else (),
    )


def _index(value: Any, bound: int) -> int | None:
    """A criterion or screenshot index (`3`, `"3"`) below `bound`, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < bound else None
    if isinstance(value, float) and value.is_integer():
        return _index(int(value), bound)
    if isinstance(value, str) and _INDEX.fullmatch(value.strip()):
        number = int(value.strip())
        return number if number < bound else None
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def cut(text: str, limit: int = TEXT_MAX) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more)"


def _text(value: Any) -> str:
    """A field as text: strings as is, lists one entry per line, booleans as yes/no."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [_text(v) for v in value[:ENTRIES_MAX]]
        if len(value) > ENTRIES_MAX:
            parts.append(f"… ({len(value) - ENTRIES_MAX:,} more)")
        return cut("\n".join(p for p in parts if p))
    if isinstance(value, dict):
        return cut("; ".join(f"{k}: {_text(v)}" for k, v in list(value.items())[:FIELDS_MAX]))
    return cut(as_text(value))


def _by_criterion(value: Any, name: str, problems: list[str]) -> dict[int, Any]:
    """`{"0": x, "1": y}` (or a list) as {criterion index: value}; bad keys are counted."""
    if isinstance(value, list):
        value = dict(enumerate(value))
    if not isinstance(value, dict):
        problems.append(f"{name}: not read (expected an object keyed by criterion)")
        return {}
    out: dict[int, Any] = {}
    skipped = 0
    for key, item in list(value.items())[: CRITERIA_MAX * 4]:
        index = _index(key, CRITERIA_MAX)
        if index is None:
            skipped += 1
        else:
            out[index] = item
    if skipped:
        problems.append(f"{name}: {skipped} key(s) are not criterion numbers and were skipped")
    return out


def _relevance(value: Any, problems: list[str]) -> pd.DataFrame:
    """`step2_relevance_scores` as one row per (criterion, screenshot) with a number."""
    if not isinstance(value, dict):
        problems.append("the relevance matrix: not read (expected an object per screenshot)")
        return _empty_relevance()
    rows = []
    skipped = 0
    for key, scores in list(value.items())[: SHOTS_MAX * 2]:
        if not isinstance(scores, dict):
            skipped += 1
            continue
        shot = _index(scores.get("screenshot_idx"), SHOTS_MAX)
        if shot is None:
            found = _SHOT_KEY.fullmatch(str(key))
            shot = _index(found.group(1), SHOTS_MAX) if found else None
        if shot is None:
            skipped += 1
            continue
        for criterion, score in list(scores.items())[: CRITERIA_MAX + 2]:
            if criterion == "screenshot_idx":
                continue
            c, r = _index(criterion, CRITERIA_MAX), _number(score)
            if c is None or r is None:
                skipped += 1
                continue
            rows.append((c, shot, r))
    if skipped:
        problems.append(f"the relevance matrix: {skipped} entry(ies) not readable, skipped")
    if not rows:
        return _empty_relevance()
    frame = pd.DataFrame(rows, columns=RELEVANCE_COLUMNS)
    frame = frame.drop_duplicates(["criterion", "screenshot"], keep="last")
    return frame.sort_values(["criterion", "screenshot"]).reset_index(drop=True)


def _chosen(value: Any) -> tuple[int, ...]:
    """One criterion's chosen screenshots, in the verifier's order, without repeats."""
    items = value if isinstance(value, list) else [value]
    out: list[int] = []
    for item in items[: CHOSEN_MAX * 4]:
        if isinstance(item, dict):
            item = item.get("screenshot_idx")
        shot = _index(item, SHOTS_MAX)
        if shot is not None and shot not in out:
            out.append(shot)
        if len(out) == CHOSEN_MAX:
            break
    return tuple(out)


def _entries(value: Any) -> tuple[EvidenceEntry, ...]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items[:ENTRIES_MAX]:
        if not isinstance(item, dict):
            text = _text(item)
            if text:
                out.append(EvidenceEntry(None, text, "", "", ""))
            continue
        out.append(
            EvidenceEntry(
                screenshot=_index(item.get("screenshot_idx"), SHOTS_MAX),
                evidence=_text(item.get("screenshot_evidence")),
                analysis=_text(item.get("criterion_analysis")),
                discrepancies=_text(item.get("discrepancies")),
                environment_issues=_text(item.get("environment_issues_confirmed")),
            )
        )
    return tuple(out)


def most_relevant(chosen: tuple[int, ...], relevance: dict[int, float]) -> int | None:
    """The screenshot the stepper jumps to for a criterion.

    The rule: the first screenshot of the verifier's own grouping
    (`step3_grouped_screenshots`, most relevant first); without a grouping, the highest
    relevance in `step2_relevance_scores`, ties going to the **later** screenshot. Why
    later: in the verifier's public example (4 screenshots x 2 criteria, relevance rows
    `[0,0]`, `[9,7]`, `[9,8]`, `[9,8]`) criterion 0 ties at 9 on screenshots 1, 2 and 3,
    and its grouping starts with 3: the verifier prefers the latest view of the page (the
    state the agent left it in). Both halves of the rule give screenshot 3 for both
    criteria of the example. None when neither step names a screenshot.
    """
    if chosen:
        return chosen[0]
    if not relevance:
        return None
    return max(relevance, key=lambda shot: (relevance[shot], shot))


def _penalties(value: Any, problems: list[str]) -> tuple[Penalty, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        value = [value]
    out = []
    for item in value[:PENALTIES_MAX]:
        if isinstance(item, dict):
            title_key = next(
                (k for k in ("criterion", "name", "title", "description") if item.get(k)), None
            )
            title = _text(item.get(title_key)) if title_key else "penalty"
            rest = [
                (cut(str(k), 200), _text(v))
                for k, v in list(item.items())[:FIELDS_MAX]
                if k != title_key
            ]
            out.append(Penalty(cut(title, 500), tuple(rest)))
        else:
            text = _text(item)
            if text:
                out.append(Penalty(cut(text, 500), ()))
    if len(value) > PENALTIES_MAX:
        problems.append(f"the penalty criteria: {len(value):,} listed, the first "
                        f"{PENALTIES_MAX} shown")  # fmt: skip
    return tuple(out)


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    return None


def parse_evidence(gpt: GptEval, criterion_names: list[str] | None = None) -> VerifierEvidence:
    """The verifier's intermediate steps of one `gpt_eval_json` (never raises).

    `criterion_names`: the rubric's criteria in order (`rubric_items`), to name the
    criteria the steps refer to by index.
    """
    steps = gpt.rubric.get(STEPS_KEY) if gpt.rubric else None
    if steps is None:
        return absent_evidence()
    if not isinstance(steps, dict):
        return absent_evidence(f"{STEPS_KEY}: not read (expected an object)")
    problems: list[str] = []
    absent = [words for key, words in _STEP_NAMES.items() if steps.get(key) is None]
    relevance = (
        _relevance(steps["step2_relevance_scores"], problems)
        if steps.get("step2_relevance_scores") is not None
        else _empty_relevance()
    )
    grouped = (
        _by_criterion(steps["step3_grouped_screenshots"], _STEP_NAMES["step3_grouped_screenshots"],
                      problems)
        if steps.get("step3_grouped_screenshots") is not None
        else {}
    )  # fmt: skip
    evidence = (
        _by_criterion(steps["step4_evidence_by_criterion"],
                      _STEP_NAMES["step4_evidence_by_criterion"], problems)
        if steps.get("step4_evidence_by_criterion") is not None
        else {}
    )  # fmt: skip
    reality = (
        _by_criterion(steps["step5_reality_check"], "the reality check", problems)
        if steps.get("step5_reality_check") is not None
        else {}
    )
    names = list(criterion_names or [])[:CRITERIA_MAX]
    indices = set(range(len(names))) | set(grouped) | set(evidence) | set(reality)
    indices |= set(relevance["criterion"].astype(int).tolist())
    by_criterion = {
        int(c): dict(zip(g["screenshot"].astype(int), g["relevance"], strict=True))
        for c, g in relevance.groupby("criterion")
    }
    criteria = []
    for c in sorted(indices)[:CRITERIA_MAX]:
        chosen = _chosen(grouped.get(c)) if c in grouped else ()
        criteria.append(
            CriterionEvidence(
                index=c,
                name=cut(names[c], 500) if c < len(names) else "",
                chosen=chosen,
                best=most_relevant(chosen, by_criterion.get(c, {})),
                entries=_entries(evidence[c]) if c in evidence else (),
                reality_check=_text(reality.get(c)),
            )
        )
    declared = _index(steps.get("step1_num_screenshots"), 10**6)
    return VerifierEvidence(
        present=True,
        relevance=relevance,
        criteria=tuple(criteria),
        penalties=_penalties(steps.get("step7_penalty_criteria"), problems),
        requires_penalty=_flag(steps.get("step7_requires_penalty")),
        penalty_reasoning=_text(steps.get("step7_reasoning")),
        n_screenshots_declared=declared,
        absent=tuple(absent),
        problems=tuple(problems),
    )


NAME_MAX = 120
"""Characters of a criterion's name handed to the stepper."""


def stepper_evidence(ev: VerifierEvidence, n_positions: int, n_screenshots: int) -> dict | None:
    """What the stepper needs to mark the filmstrip and jump: per criterion its label, its
    chosen screenshots and the step of its most relevant one (None when that screenshot is
    past the trajectory's steps), plus the relevance of each screenshot. None without
    criteria that name a screenshot."""
    criteria = []
    for c in ev.criteria:
        if c.best is None and not c.chosen:
            continue
        criteria.append(
            {
                "i": c.index,
                "label": cut(c.label, NAME_MAX),
                "chosen": list(c.chosen),
                "best": c.best,
                "step": c.best if c.best is not None and c.best < n_positions else None,
                "stored": c.best is not None and c.best < n_screenshots,
            }
        )
    if not criteria:
        return None
    relevance: dict[str, dict[str, float]] = {}
    for c, k, r in ev.relevance[RELEVANCE_COLUMNS].itertuples(index=False):
        relevance.setdefault(str(int(k)), {})[str(int(c))] = float(r)
    return {"criteria": criteria, "relevance": relevance}
