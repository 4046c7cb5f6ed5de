"""lib.charts.slices: rank order kept, small n grey, undefined never drawn at 0."""

from __future__ import annotations

from lib.charts import slices as ch


def _row(label: str, value, ci, n: int, small: bool, why: str = "") -> dict:
    reasons = {"ci:kappa": why} if why else {}
    return {"label": label, "kappa": value, "kappa_ci": ci, "n": n, "small_n": small,
            "reasons": reasons}  # fmt: skip


def test_chart_data_and_spec() -> None:
    rows = [
        _row("Website: Nike", 0.1, [0.0, 0.3], 40, False),
        _row("Website: Adidas", 0.5, None, 12, False, "one cluster"),
        _row("Website: Tiny", None, None, 1, True, "n = 1"),
    ]
    data = ch.chart_data(rows, "kappa")
    assert data["label"].tolist() == ["Website: Nike", "Website: Adidas", "Website: Tiny"]
    assert data["status"].tolist() == [ch.ENOUGH, ch.ENOUGH, ch.SMALL]
    assert data.loc[1, "why"] == "one cluster" and data["low"].isna().tolist() == [
        False,
        True,
        True,
    ]
    spec = ch.slices_chart(data, "kappa", 0.4, (0.3, 0.5), "t").to_dict()
    layers = spec["layer"]
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
             for layer in layers]  # fmt: skip
    assert marks == ["rect", "rule", "tick", "rule", "circle"]  # band, overall, rows, CI, dot
    y = layers[-1]["encoding"]["y"]
    assert y["sort"] == data["label"].tolist()  # the rank order, top to bottom
    filters = [t["filter"] for layer in layers for t in layer.get("transform", [])]
    assert "isValid(datum.value)" in filters  # an undefined value is not drawn at 0
    color = layers[-1]["encoding"]["color"]["scale"]
    assert color["range"][color["domain"].index(ch.SMALL)] == ch.COLORS[ch.SMALL]


def test_slices_left_out_of_the_ranking_are_told_apart() -> None:
    row = _row("Rubric score: [0, 0.2)", 0.0, [0.0, 0.0], 79, False, "every resample gives 0.00")
    data = ch.chart_data([row | {"not_ranked": "kappa not informative (one class)"}], "kappa")
    assert data["status"].tolist() == [ch.UNRANKED]
    assert data.loc[0, "why"].startswith("every resample")
