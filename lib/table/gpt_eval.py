"""`gpt_eval_json`: a JSON text whose meaning differs by split.

om2w: the original Online-Mind2Web judge (WebJudge style), free text ending with
`Status: "success"` / `Status: "failure"`, and a score. internal: the Universal
Verifier's own output, whose `gpt_response_text` is itself JSON with a rubric.
`score == -1` and "" mean "not evaluated". Parsing never raises: what cannot be read is
reported in `problem`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from lib.json_bounds import refusal
from lib.table import score_file as sf

JSON_MAX_CHARS = sf.MAX_CHARS
"""Characters of one cell (and of its inner rubric JSON) decoded at most."""
JSON_DEPTH_MAX = sf.MAX_DEPTH
"""Nesting depth decoded at most (the Universal Verifier's rubric is about 5 deep)."""

_STATUS_RE = re.compile(r"status\s*:\s*[\"']?\s*(success|failure)", re.IGNORECASE)


@dataclass
class GptEval:
    """One parsed `gpt_eval_json` cell."""

    score: float | None = None
    text: str = ""
    status: str | None = None  # "success" / "failure" from the om2w judge's last Status line
    rubric: dict[str, Any] = field(default_factory=dict)  # internal: the UV output object
    problem: str | None = None
    bad_criteria: list[sf.BadCriterion] = field(default_factory=list)
    """Criteria whose points were not finite or not within [0, max]: their points are
    null in `rubric` (`lib.table.score_file.check_rubric`, the uploads' reader too)."""

    @property
    def evaluated(self) -> bool:
        return self.score is not None or self.status is not None


def _as_score(value: Any) -> float | None:
    """A finite score other than -1 ("not evaluated"); text holding a number counts."""
    return sf.wrapper_score(value)


def parse_gpt_eval(raw: Any) -> GptEval:
    """Parse one cell; "" / null / score -1 give an unevaluated result, not an error."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)) or not str(raw).strip():
        return GptEval()
    refused = refusal(str(raw), JSON_MAX_CHARS, JSON_DEPTH_MAX)
    if refused:  # a RecursionError here failed the verdict table, i.e. every page
        return GptEval(problem=f"not read: {refused}")
    try:
        obj = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        return GptEval(problem=f"not JSON ({exc.msg})")
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        return GptEval(problem=f"not JSON ({str(exc)[:80]})")
    if not isinstance(obj, dict):
        return GptEval(problem="JSON is not an object")
    text = obj.get("gpt_response_text")
    text = "" if text is None else str(text)
    result = GptEval(score=_as_score(obj.get("score")), text=text)
    statuses = _STATUS_RE.findall(text)
    if statuses:
        result.status = statuses[-1].lower()
    stripped = text.strip()
    if stripped.startswith("{"):  # internal: the score file's inner object, as uploads read it
        inner, why = sf.decode(stripped)
        if why:
            result.problem = f"gpt_response_text looks like JSON but is not read: {why}"
        elif isinstance(inner, dict):
            clean, bad, why = sf.check_rubric(inner)
            if why:
                result.problem = f"rubric not read: {why}"
            else:
                result.rubric, result.bad_criteria = clean, bad
                if bad:
                    result.problem = f"points not used: {sf.ScoreFile(bad_criteria=bad).bad_text()}"
    return result


def om2w_judge_label(parsed: GptEval) -> int | None:
    """The om2w judge's binary verdict: the score when it is 0 or 1, else its Status line."""
    if parsed.score in (0.0, 1.0):
        return int(parsed.score)
    if parsed.status is not None:
        return int(parsed.status == "success")
    return None
