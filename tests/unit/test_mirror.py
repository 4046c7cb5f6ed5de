"""The generated mirror (lib/mirror/) holds every fact of DATASET.md.

One default mirror is written per module and read back the way the app reads the Hub:
through `datasets.load_dataset` (image-free columns only go to pandas) and through
pyarrow for the screenshot bytes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from lib import mirror
from lib.mirror import INTERNAL, OM2W, SPLITS, hub
from lib.vocab import Bootstrap

if TYPE_CHECKING:
    from lib.analysis.agreement import AgreementRecord

CONFIGS = ("trajectories", "annotations")
SHARDS = (
    "trajectories/fara7b_om2w_browserbase-00000-of-00002.parquet",
    "trajectories/fara7b_om2w_browserbase-00001-of-00002.parquet",
    "trajectories/internal-00000-of-00002.parquet",
    "trajectories/internal-00001-of-00002.parquet",
    "annotations/fara7b_om2w_browserbase-00000-of-00001.parquet",
    "annotations/internal-00000-of-00001.parquet",
)
INT_COLUMNS = (
    "n_screenshots",
    "uv_outcome_success",
    "mm_is_success",
    "verifier_is_success",
    "final_human_outcome_label",
    "final_human_process_label",
    "majority_human_outcome_vote",
)
FLOAT_COLUMNS = ("uv_rubric_score", "median_human_rubric_score_agnostic")
FARA_ARGS = {
    "left_click": {"coordinate"},
    "mouse_move": {"coordinate"},
    "type": {"text", "coordinate", "press_enter", "delete_existing_text"},
    "key": {"keys"},
    "scroll": {"coordinate", "pixels"},
    "visit_url": {"url"},
    "web_search": {"query"},
    "history_back": set(),
    "pause_and_memorize_fact": {"fact"},
    "wait": {"time"},
    "terminate": {"status"},
}
ALIASES = {"click", "input_text", "hover", "keypress", "sleep", "stop"}
POINTING = {"left_click", "click", "type", "input_text", "mouse_move", "hover"}
LOG_KEYS = {"timestamp", "type", "source", "message", "url", "action", "arguments"}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$")


@pytest.fixture(scope="module")
def hf_home(tmp_path_factory: pytest.TempPathFactory):
    """Offline Hub and a private HF cache for this module's loads.

    `datasets` reads HF_HOME when it is first imported, so the loads below also pass the
    cache folder explicitly.
    """
    home = tmp_path_factory.mktemp("hf_home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def root(mirror_dir: Path, hf_home: Path) -> Path:
    """`write_mirror(DIR, seed=0)`: the session's mirror is exactly that (the demo's seed is
    0), so it is not built a second time."""
    from lib.data.source import DEMO_SEED

    assert DEMO_SEED == 0
    return mirror_dir


@pytest.fixture(scope="module")
def dsets(root: Path, hf_home: Path) -> dict[tuple[str, str], datasets.Dataset]:
    cache = str(hf_home / "datasets")
    return {
        (config, split): datasets.load_dataset(str(root), config, split=split, cache_dir=cache)
        for config in CONFIGS
        for split in SPLITS
    }


@pytest.fixture(scope="module")
def traj(dsets) -> dict[str, pd.DataFrame]:
    """Image-free trajectory frames per split."""
    out = {}
    for split in SPLITS:
        ds = dsets["trajectories", split]
        light = [c for c in ds.column_names if c != "screenshots"]
        out[split] = ds.select_columns(light).to_pandas()
    return out


@pytest.fixture(scope="module")
def ann(dsets) -> dict[str, pd.DataFrame]:
    return {split: dsets["annotations", split].to_pandas() for split in SPLITS}


def _actions(log: str) -> tuple[list[dict], int]:
    """Parsed JSON records of a log, and the number of lines that are not JSON."""
    records, bad = [], 0
    for line in log.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            bad += 1
    return records, bad


def _screens(root: Path, split: str, shard: int) -> pd.DataFrame:
    """Raw screenshot bytes (never decoded in bulk) with the log, via pyarrow."""
    path = root / f"trajectories/{split}-{shard:05d}-of-00002.parquet"
    table = pq.read_table(path, columns=["task_id", "web_surfer_log", "screenshots"])
    rows = table.to_pylist()
    return pd.DataFrame(
        {
            "task_id": [r["task_id"] for r in rows],
            "log": [r["web_surfer_log"] for r in rows],
            "pngs": [[s["bytes"] for s in r["screenshots"]] for r in rows],
        }
    )


# ----------------------------------------------------------------------------- layout


def test_hub_layout_and_readme_configs(root: Path) -> None:
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet"))
    assert files == sorted(SHARDS)
    text = (root / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    configs = {c["config_name"]: c["data_files"] for c in front["configs"]}
    assert set(configs) == set(CONFIGS)
    for config, files in configs.items():
        assert files == [
            {"split": OM2W, "path": f"{config}/{OM2W}-*"},
            {"split": INTERNAL, "path": f"{config}/{INTERNAL}-*"},
        ]
    assert not list(root.parent.glob("*.tmp-*")), "the temporary build folder was left behind"


def test_features_have_the_hub_types(dsets, root: Path) -> None:
    features = dsets["trajectories", INTERNAL].features
    assert features["screenshots"] == datasets.List(datasets.Image())
    assert features["is_aborted"] == datasets.Value("bool")
    for col in INT_COLUMNS:
        assert features[col] == datasets.Value("int32"), col
    for col in FLOAT_COLUMNS:
        assert features[col] == datasets.Value("float32"), col
    ann_features = dsets["annotations", OM2W].features
    assert ann_features["human_process_score"] == datasets.Value("float32")
    assert ann_features["annotator"] == datasets.Value("string")
    schema = pq.read_schema(root / SHARDS[0])
    assert str(schema.field("uv_outcome_success").type) == "int32"
    assert str(schema.field("median_human_rubric_score_agnostic").type) == "float"
    assert (
        str(schema.field("screenshots").type)
        == "list<element: struct<bytes: binary, path: string>>"
    )


def test_task_counts_and_id_formats(traj) -> None:
    assert {s: len(df) for s, df in traj.items()} == {OM2W: 106, INTERNAL: 154}
    om2w, internal = traj[OM2W].task_id, traj[INTERNAL].task_id
    assert om2w.str.fullmatch(r"[A-Za-z]+--[0-9a-f]{8}").all()
    assert om2w.str.len().between(12, 32).all()
    assert internal.str.fullmatch(r"[a-z]+(_[a-z]+)*?(_data)?(_\d+)+").all()
    assert internal.str.contains("_data_").any() and internal.str.fullmatch(r".*_\d+_\d+").any()
    for ids in (om2w, internal):
        assert ids.is_unique and list(ids) == sorted(ids)


def test_shards_are_contiguous_halves(root: Path, traj) -> None:
    for split, n in ((OM2W, 106), (INTERNAL, 154)):
        halves = [
            pq.read_table(
                root / f"trajectories/{split}-{i:05d}-of-00002.parquet", columns=["task_id"]
            )
            for i in (0, 1)
        ]
        assert [len(h) for h in halves] == [n // 2, n // 2]
        ids = halves[0]["task_id"].to_pylist() + halves[1]["task_id"].to_pylist()
        assert ids == list(traj[split].task_id)


# ----------------------------------------------------------------------------- humans


def test_reviewer_counts(ann, traj) -> None:
    om2w, internal = ann[OM2W], ann[INTERNAL]
    assert (len(om2w), len(internal)) == (215, 154)
    per_task = om2w.groupby("task_id").size()
    assert per_task.value_counts().to_dict() == {2: 103, 3: 3}
    assert internal.task_id.is_unique and set(internal.task_id) == set(traj[INTERNAL].task_id)
    judges = om2w.annotator.unique()
    assert len(judges) == 6
    assert (
        pd.Series(np.concatenate([judges, internal.annotator.unique()]))
        .str.fullmatch(r"Judge\d+")
        .all()
    )
    numbers = sorted(int(j[5:]) for j in judges)
    assert numbers != list(range(numbers[0], numbers[0] + 6)), "Judge ids should not be contiguous"
    assert set(internal.annotator) & set(judges), "some reviewers work on both splits"


def test_one_pair_of_reviewers_shares_a_single_task(ann) -> None:
    """A rare pairing, as in the real data (kappa over n = 1 is undefined on the Judges page)."""
    shared = (
        ann[OM2W]
        .merge(ann[OM2W], on="task_id")
        .query("annotator_x < annotator_y")
        .groupby(["annotator_x", "annotator_y"])
        .task_id.nunique()
    )
    assert (shared == 1).any() and (shared >= 5).any()


def test_ties_majorities_and_adjudication(ann, traj) -> None:
    t = traj[OM2W].set_index("task_id")
    votes = ann[OM2W].assign(ok=ann[OM2W].human_judgement_outcome.eq("Correct"))
    counts = votes.groupby("task_id").ok.agg(["sum", "size"])
    ties = counts["sum"] * 2 == counts["size"]
    recomputed = (counts["sum"] * 2 > counts["size"]).astype(int)
    assert ties.sum() == 21
    assert (recomputed == t.majority_human_outcome_vote.loc[counts.index]).all()
    assert (t.majority_human_outcome_vote[ties[ties].index] == 0).all()
    non_tie = t.majority_human_outcome_vote[~ties.reindex(t.index)]
    assert non_tie.value_counts().to_dict() == {0: 56, 1: 29}
    assert (t.final_human_outcome_label != t.majority_human_outcome_vote).sum() == 13
    three = counts[counts["size"] == 3]
    # one 2:1 split, the others unanimous (pooled reviewer outcome kappa about 0.55)
    assert sorted(three["sum"].isin([1, 2])) == [False, False, True]


def test_internal_single_reviewer_rules(ann, traj) -> None:
    t, a = traj[INTERNAL], ann[INTERNAL].set_index("task_id")
    label = a.human_judgement_outcome.map({"Correct": 1, "Incorrect": 0}).loc[t.task_id].to_numpy()
    assert (t.final_human_outcome_label.to_numpy() == label).all()
    assert (t.majority_human_outcome_vote.to_numpy() == label).all()
    assert t.majority_human_outcome_vote.value_counts().to_dict() == {1: 90, 0: 64}
    assert t.median_human_rubric_score_agnostic.isna().all()
    assert a.human_process_score.isna().all()
    for col in (
        "process_comment",
        "informed_outcome_agreement",
        "informed_process_agreement",
        "informed_outcome_comment",
        "informed_process_comment",
    ):
        assert (a[col] == "").all(), col
    assert (a.outcome_comment != "").all()
    assert set(a.human_judgement_process) == {"Correct", "Incorrect"}


def test_om2w_review_values(ann) -> None:
    a = ann[OM2W]
    assert set(a.human_judgement_outcome) == {"Correct", "Incorrect"}
    # One label that is neither (DATASET.md: the release's one `partial`), a process label.
    assert a.human_judgement_process.value_counts()["partial"] == 1
    assert set(a.human_judgement_process) == {"Correct", "Incorrect", "partial"}
    scores = a.human_process_score.dropna()
    assert scores.between(0, 1).all() and 0 < a.human_process_score.isna().sum() <= 6
    assert (np.abs(scores * 10 - np.round(scores * 10)) > 1e-3).any()  # fractions like 0.2667
    assert (a.outcome_comment != "").all() and (a.process_comment != "").all()
    for col in ("informed_outcome_agreement", "informed_process_agreement"):
        counts = a[col].value_counts()
        assert set(counts.index) == {"agree", "disagree", ""}
        assert counts["agree"] > 4 * counts["disagree"] > 0
        assert 0 < counts[""] < 0.1 * len(a)
        comment = a[col.replace("agreement", "comment")]
        assert ((comment != "") == (a[col] != "")).all()


def test_informed_stage_moves_reviewers_toward_the_verifier(ann, traj) -> None:
    uv = traj[OM2W].set_index("task_id").uv_outcome_success
    a = ann[OM2W].assign(uv=lambda d: d.task_id.map(uv))
    a = a[a.informed_outcome_agreement.isin(["agree", "disagree"])]
    blind = (a.human_judgement_outcome == "Correct").astype(int)
    informed = np.where(a.informed_outcome_agreement == "agree", a.uv, 1 - a.uv)
    flipped = informed != blind
    assert 0.1 <= flipped.mean() <= 0.25
    assert (flipped & (blind == 1)).sum() > 2 * (flipped & (blind == 0)).sum()
    differs = blind != a.uv
    assert (a.informed_outcome_agreement[differs] == "agree").mean() > 0.5


def test_median_is_the_median_of_blind_scores(ann, traj) -> None:
    medians = ann[OM2W].groupby("task_id").human_process_score.median()
    stored = traj[OM2W].set_index("task_id").median_human_rubric_score_agnostic
    both = pd.concat([medians.rename("computed"), stored.rename("stored")], axis=1)
    assert (both.computed.isna() == both.stored.isna()).all()
    assert 0 < both.stored.isna().sum() <= 5
    ok = both.dropna()
    assert np.allclose(ok.computed, ok.stored, atol=1e-6)


# ----------------------------------------------------------------------------- verifiers


def test_some_nulls_in_every_nullable_verdict_column(traj) -> None:
    for split, t in traj.items():
        for col in (
            "uv_rubric_score",
            "uv_outcome_success",
            "mm_is_success",
            "verifier_is_success",
            "final_human_process_label",
        ):
            assert 1 <= t[col].isna().sum() <= 5, (split, col)
        assert t.final_human_outcome_label.notna().all()


def _kappa_fpr(t: pd.DataFrame, col: str) -> tuple[float, float]:
    both = t[[col, "final_human_outcome_label"]].dropna().astype(int)
    pred, ref = both[col], both.final_human_outcome_label
    return cohen_kappa_score(ref, pred), float(pred[ref == 0].mean())


@pytest.mark.parametrize("split", SPLITS)
def test_verifiers_agree_with_humans_at_paper_levels(traj, split: str) -> None:
    t = traj[split]
    kappa, fpr = _kappa_fpr(t, "uv_outcome_success")
    assert 0.5 <= kappa <= 0.7
    assert fpr <= 0.03 if split == INTERNAL else 0.04 <= fpr <= 0.12
    mm_kappa, mm_fpr = _kappa_fpr(t, "mm_is_success")
    legacy_kappa, legacy_fpr = _kappa_fpr(t, "verifier_is_success")
    assert 0.2 <= mm_kappa <= 0.4 and 0.2 <= mm_fpr <= 0.45
    assert 0.05 <= legacy_kappa <= 0.25 and 0.2 <= legacy_fpr <= 0.45
    scored = t[["uv_rubric_score", "final_human_outcome_label"]].dropna()
    assert scored.uv_rubric_score.between(0, 1).all()
    auc = roc_auc_score(scored.final_human_outcome_label, scored.uv_rubric_score)
    assert 0.78 <= auc <= 0.92


def test_webjudge_output_in_om2w(traj) -> None:
    t = traj[OM2W]
    assert 0 < (t.gpt_eval_json == "").sum() <= 5
    parsed = [json.loads(x) for x in t.gpt_eval_json if x]
    scores = pd.Series([p["score"] for p in parsed])
    assert set(scores) == {-1, 0, 1} and 0 < (scores == -1).sum() <= 5
    for p in parsed:
        if p["score"] != -1:
            last = p["gpt_response_text"].splitlines()[-1]
            assert last == f'Status: "{"success" if p["score"] else "failure"}"'
    webjudge = t.gpt_eval_json.map(lambda x: json.loads(x)["score"] if x else -1)
    rated = webjudge >= 0
    kappa = cohen_kappa_score(t.final_human_outcome_label[rated], webjudge[rated])
    assert 0.3 <= kappa <= 0.45


def test_universal_verifier_output_in_internal(traj) -> None:
    t = traj[INTERNAL]
    ran = t.uv_rubric_score.notna()
    assert (t.gpt_eval_json[~ran].map(lambda x: x == "" or json.loads(x)["score"] == -1)).all()
    for _, row in t[ran].iterrows():
        outer = json.loads(row.gpt_eval_json)
        inner = json.loads(outer["gpt_response_text"])
        items = inner["rubric_items"]
        assert {"criterion", "description", "max_points", "earned_points", "justification"} <= set(
            items[0]
        )
        points = [i["max_points"] for i in items] + [i["earned_points"] for i in items]
        assert all((2 * p).is_integer() for p in points)
        assert all(0 <= i["earned_points"] <= i["max_points"] for i in items)
        total, earned = inner["rubric_total_max_points"], inner["rubric_total_earned_points"]
        assert 6 <= total <= 27 and total == sum(i["max_points"] for i in items)
        assert np.float32(earned / total) == np.float32(row.uv_rubric_score)
        assert np.isclose(outer["score"], row.uv_rubric_score, atol=1e-6)
        assert inner["outcome_success"] == bool(row.uv_outcome_success)
        assert inner["rubric_is_success"] == (row.uv_rubric_score >= 0.8 - 1e-7)
        check = inner["rubric_outcome_verification"]
        assert set(check) == {"primary_intent", "reasoning", "output_success"}
        assert check["output_success"] == inner["outcome_success"]
        assert inner["outcome_reasoning"] and inner["outcome_primary_intent"]


# ----------------------------------------------------------------------------- runs


@pytest.mark.parametrize("split", SPLITS)
def test_web_surfer_log_format(traj, split: str) -> None:
    t = traj[split]
    assert 1 <= (t.web_surfer_log == "").sum() <= 3
    tools, bad_lines, ends_with_terminate, logs = set(), 0, 0, 0
    for _, row in t[t.web_surfer_log != ""].iterrows():
        records, bad = _actions(row.web_surfer_log)
        bad_lines += bad
        logs += 1
        for r in records:
            assert set(r) == LOG_KEYS and r["type"] == "WebSurferEvent"
            assert ISO.match(r["timestamp"])
            tool = r["arguments"]["action"]
            tools.add(tool)
            assert r["arguments"]["thoughts"]
            if split == INTERNAL:
                assert r["action"] == "computer_use" and r["url"].startswith("https://")
            else:
                assert r["action"] == tool and r["url"] == ""
            if tool in FARA_ARGS:
                extra = set(r["arguments"]) - {"action", "thoughts", "state_description"}
                assert FARA_ARGS[tool] <= extra, tool
            if "coordinate" in r["arguments"]:
                x, y = r["arguments"]["coordinate"]
                assert 0 <= x < 1440 and 0 <= y < 900
        names = [r["arguments"]["action"] for r in records]
        if names and names[-1] in ("terminate", "stop"):
            ends_with_terminate += 1
            assert row.final_answer == records[-1]["arguments"]["thoughts"]
    assert tools <= set(FARA_ARGS) | ALIASES
    assert {"left_click", "type", "scroll", "terminate"} <= tools and tools & ALIASES
    assert bad_lines >= 1
    assert ends_with_terminate >= 0.85 * logs


def test_aborted_runs_have_no_answer(traj) -> None:
    both = pd.concat(traj.values())
    no_answer = both.final_answer == "<no_answer>"
    assert no_answer.sum() == 4
    assert (both.is_aborted == no_answer).all()
    for log in both.web_surfer_log[no_answer]:
        names = [r["arguments"]["action"] for r in _actions(log)[0]]
        assert "terminate" not in names and "stop" not in names


def test_timestamps_and_init_urls(traj) -> None:
    both = pd.concat(traj.values())
    for col in ("start_timestamp", "end_timestamp"):
        given = both[col] != ""
        assert 0 < (~given).sum() <= 6
        assert both[col][given].str.match(ISO).all()
    timed = both[(both.start_timestamp != "") & (both.end_timestamp != "")]
    assert (timed.start_timestamp < timed.end_timestamp).all()
    assert 0 < (both.init_url == "").sum() <= 6
    assert both.init_url[both.init_url != ""].str.startswith("https://").all()


def test_screenshot_counts(traj, root: Path) -> None:
    om2w, internal = traj[OM2W], traj[INTERNAL]
    assert (om2w.n_screenshots > 0).all()
    assert (internal.n_screenshots.iloc[77:] == 0).all()
    assert 1 <= (internal.n_screenshots.iloc[:77] == 0).sum() <= 8
    assert (internal.n_screenshots == 0).mean() > 0.5
    for split in SPLITS:
        table = pq.read_table(root / f"trajectories/{split}-00000-of-00002.parquet")
        lengths = [len(x) for x in table["screenshots"].to_pylist()]
        assert lengths == table["n_screenshots"].to_pylist()
    small = (root / SHARDS[3]).stat().st_size
    assert small * 20 < (root / SHARDS[2]).stat().st_size


def test_action_count_mismatches_exist(traj) -> None:
    more = fewer = 0
    for t in traj.values():
        for _, row in t[(t.n_screenshots > 0) & (t.web_surfer_log != "")].iterrows():
            n = len(_actions(row.web_surfer_log)[0])
            more += n > row.n_screenshots - 1
            fewer += n < row.n_screenshots - 1
    assert more >= 2 and fewer >= 2


def test_screenshots_decode_as_images(dsets) -> None:
    row = dsets["trajectories", OM2W][0]
    assert row["n_screenshots"] == len(row["screenshots"]) >= 2
    img = row["screenshots"][0]
    assert img.size == (1440, 900) and img.format == "PNG"


def test_actions_point_at_drawn_elements(root: Path) -> None:
    """A click/type/hover coordinate lands on a drawn element of the screenshot before it;
    a `wait` leaves the page unchanged and a `type` changes it."""
    checked = 0
    for split in SPLITS:
        shots = _screens(root, split, 0).head(25)
        for _, row in shots.iterrows():
            for k, record in enumerate(_actions(row.log)[0]):
                args = record["arguments"]
                if k + 1 >= len(row.pngs):
                    break
                if args["action"] in POINTING:
                    img = Image.open(io.BytesIO(row.pngs[k]))
                    assert img.getpixel(tuple(args["coordinate"])) != (255, 255, 255), row.task_id
                    checked += 1
                if args["action"] in ("wait", "sleep"):
                    assert row.pngs[k + 1] == row.pngs[k]
                if args["action"] in ("type", "input_text"):
                    assert row.pngs[k + 1] != row.pngs[k]
    assert checked >= 30


def test_png_is_1440x900_rgb(root: Path) -> None:
    png = _screens(root, OM2W, 1).pngs[0][0]
    img = Image.open(io.BytesIO(png))
    assert (img.format, img.size, img.mode) == ("PNG", (1440, 900), "RGB")
    img.load()


# ----------------------------------------------------------------------------- files


def test_sample_predictions(root: Path, traj) -> None:
    with (root / "sample_predictions.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["task_id", "split", "verifier", "outcome", "process", "score"]
    preds = pd.DataFrame(rows)
    assert len(preds) == 520
    assert set(preds.verifier) == {"my_verifier_v1", "my_verifier_v2"}
    for split, t in traj.items():
        truth = t.set_index("task_id").final_human_outcome_label
        for _, p in preds[preds.split == split].groupby("verifier"):
            assert set(p.task_id) == set(t.task_id)
            kappa = cohen_kappa_score(truth.loc[p.task_id], p.outcome.astype(int))
            assert 0.15 <= kappa <= 0.6
            score = p.score.astype(float)
            assert score.between(0, 1).all()
            assert ((score >= 0.8).astype(int) == p.process.astype(int)).all()


def test_deterministic_per_seed(root: Path, tmp_path: Path) -> None:
    same = mirror.write_mirror(tmp_path / "again", seed=0)
    other = mirror.write_mirror(tmp_path / "other", seed=1)
    for shard in (SHARDS[0], SHARDS[4]):
        assert (same / shard).read_bytes() == (root / shard).read_bytes(), shard
        assert (other / shard).read_bytes() != (root / shard).read_bytes(), shard
    assert (same / "sample_predictions.csv").read_bytes() == (
        root / "sample_predictions.csv"
    ).read_bytes()


def test_existing_mirror_is_reused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    assert mirror.main([str(root), "--seed", "5"]) == 0
    assert str(root) in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


def test_refuses_to_overwrite_an_unrelated_folder(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    monkeypatch.setattr(hub, "_build", lambda out, **kw: (out / "README.md").parent.mkdir())
    with pytest.raises(OSError):
        mirror.write_mirror(target)
    assert (target / "notes.txt").read_text() == "keep me"
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


def test_no_forking_from_a_thread_of_a_host_process() -> None:
    """Inside a threaded host (e.g. the Streamlit script thread) screenshots render serially."""
    found = {}
    worker = threading.Thread(target=lambda: found.update(mapper=hub._mapper()))
    worker.start()
    worker.join()
    imap, close = found["mapper"]
    assert imap is map
    close()


# ----------------------------------------------------------------------------- the story
# On the default seed (the demo) the project's own metrics must show the paper's picture.
# Measured through the real loader (`bench` fixture of conftest) and lib's public metrics,
# with an independent recomputation (scikit-learn) of the verifier figures.

STORY_RESAMPLES = 20  # only the point estimates are asserted; intervals are not needed


@pytest.fixture(scope="module")
def story_records(bench) -> list[AgreementRecord]:
    from lib.analysis.agreement import agreement_records

    return agreement_records(bench.verdicts, pooled=False, boot=Bootstrap(STORY_RESAMPLES))


def _record(
    records: list[AgreementRecord], verifier: str, reference: str, split: str
) -> AgreementRecord:
    return next(
        r
        for r in records
        if r.verifier == verifier and r.reference == reference and r.split == split
    )


@pytest.mark.parametrize("split", SPLITS)
def test_story_universal_verifier_beats_legacy_verifiers(story_records, bench, split) -> None:
    final = "final_human_outcome_label"
    uv = _record(story_records, "uv_outcome_success", final, split)
    uv_kappa, uv_fpr = uv.estimates["kappa"].value, uv.estimates["fpr"].value
    assert 0.55 <= uv_kappa <= 0.65 and uv_fpr < 0.1, (uv_kappa, uv_fpr)
    legacy = ["mm_is_success", "verifier_is_success"] + (["om2w_judge"] if split == OM2W else [])
    for name in legacy:
        record = _record(story_records, name, final, split)
        kappa, fpr = record.estimates["kappa"].value, record.estimates["fpr"].value
        assert 0.1 <= kappa <= 0.45, (name, kappa)
        assert kappa < uv_kappa - 0.1 and fpr > uv_fpr, name
    # the same kappa and FPR, recomputed from the raw columns with scikit-learn
    t = bench.tasks[bench.tasks.split == split]
    both = t[["uv_outcome_success", final]].dropna().astype(int)
    pred, ref = both.uv_outcome_success, both[final]
    assert cohen_kappa_score(ref, pred) == pytest.approx(uv_kappa, abs=1e-9)
    assert float(pred[ref == 0].mean()) == pytest.approx(uv_fpr, abs=1e-9)


def test_story_human_human_agreement(bench) -> None:
    from lib.analysis.agreement import reviewer_band

    outcome = reviewer_band(bench.verdicts, "outcome", OM2W, boot=Bootstrap(STORY_RESAMPLES))
    process = reviewer_band(bench.verdicts, "process", OM2W, boot=Bootstrap(STORY_RESAMPLES))
    # the paper's Table 14: outcome about 0.57 (0.53-0.57), process 0.45
    assert 0.53 <= outcome.estimates["kappa"].value <= 0.57, outcome.estimates["kappa"].value
    assert 0.40 <= process.estimates["kappa"].value <= 0.50, process.estimates["kappa"].value


@pytest.fixture(scope="module")
def paired(bench) -> pd.DataFrame:
    from lib.analysis.shifts import paired_reviews

    return paired_reviews(bench.verdicts, bench.annotations, [OM2W])


def test_story_informed_stage_flips_toward_the_verdict(paired) -> None:
    from lib.analysis.shifts import flip_stats

    rows = paired[paired.dimension == "outcome"]
    stats = flip_stats(rows)
    assert 0.15 <= stats.flip_rate.value <= 0.2, stats.flip_rate
    assert stats.success_to_failure > 3 * stats.failure_to_success
    # mostly toward the verdict shown; a few away from it by design: a reviewer who passed a
    # run the verifier also passed reconsiders when adjudication failed it
    # (labels.RECONSIDER_FALSE_PASS, issue 37: 4 of the demo's 33; 0.9 held before that)
    assert stats.toward_verifier >= 0.85 * stats.flips, (stats.toward_verifier, stats.flips)
    # independent: the informed label is the verdict shown (agree) or its opposite
    given = rows[rows.eligible]
    derived = np.where(given.agreement == "agree", given.shown, 1 - given.shown.astype(int))
    assert (derived != given.blind.astype(int)).sum() == stats.flips


def test_story_reviewers_converge_when_informed(paired) -> None:
    """The paper's Table 13 measures the verifier against each reviewer: 0.39 -> 0.63."""
    from lib.analysis.shifts import inter_reviewer_shift, verifier_agreement

    rows = paired[paired.dimension == "outcome"]
    uv = verifier_agreement(rows, "kappa", boot=Bootstrap(STORY_RESAMPLES))
    assert 0.55 <= uv.informed.value <= 0.70 and uv.informed.value - uv.blind.value >= 0.15, uv
    outcome = inter_reviewer_shift(paired, "outcome", boot=Bootstrap(STORY_RESAMPLES))
    assert outcome.informed.value >= outcome.blind.value, outcome
    process = inter_reviewer_shift(paired, "process", boot=Bootstrap(STORY_RESAMPLES))
    assert process.informed.value > process.blind.value, process


# ----------------------------------------------------------------------------- coherent runs

FAMILY_SUFFIX = r"(_data)?(_\d+)+$"


def test_tasks_cluster_by_site(traj) -> None:
    sites = traj[OM2W].task_id.str.split("--").str[0]
    families = traj[INTERNAL].task_id.str.replace(FAMILY_SUFFIX, "", regex=True)
    assert (sites.nunique(), families.nunique()) == (63, 70)
    assert sites.value_counts().max() >= 3 and families.value_counts().max() >= 3


def test_the_id_names_the_site_of_every_text(traj) -> None:
    t = traj[OM2W]
    for _, row in t.iterrows():
        site = row.task_id.split("--")[0]
        assert site in row.instruction, row.task_id
        if row.init_url:
            assert site.lower() in row.init_url, (row.task_id, row.init_url)
        if row.final_answer != "<no_answer>":
            assert f"on {site}" in row.final_answer, (row.task_id, row.final_answer)
    internal = traj[INTERNAL]
    for _, row in internal[(internal.init_url != "") & (internal.web_surfer_log != "")].iterrows():
        domain = row.init_url.split("/")[2]
        urls = {r["url"].split("/")[2] for r in _actions(row.web_surfer_log)[0]}
        assert urls <= {domain, "www.bing.com"}, (row.task_id, urls)


def test_comments_cite_the_run(ann, traj) -> None:
    """Failure comments name a step of that run (within its length) or the answer's gap;
    tasks (almost) never share a comment, as they would with generic filler."""
    for split in SPLITS:
        t = traj[split].set_index("task_id")
        a = ann[split].join(t[["web_surfer_log", "final_answer"]], on="task_id")
        failed = a[a.human_judgement_outcome == "Incorrect"]
        for _, row in failed.iterrows():
            steps = [int(s) for s in re.findall(r"step (\d+)", row.outcome_comment.lower())]
            n_actions = len(_actions(row.web_surfer_log)[0]) + 3  # logs may lose a few lines
            assert steps or "omits" in row.outcome_comment, row.outcome_comment
            assert all(0 <= s <= n_actions for s in steps), (row.task_id, row.outcome_comment)
        per_comment = a.groupby("outcome_comment").task_id.nunique()
        assert (per_comment > 1).mean() < 0.05, per_comment.idxmax()


def test_judge_texts_cite_the_task(traj) -> None:
    for _, row in traj[INTERNAL][traj[INTERNAL].uv_rubric_score.notna()].iterrows():
        inner = json.loads(json.loads(row.gpt_eval_json)["gpt_response_text"])
        assert inner["outcome_primary_intent"] == row.instruction
        missed = [i for i in inner["rubric_items"] if i["earned_points"] < i["max_points"]]
        for item in missed:
            assert "Fully met" not in item["justification"]
    for _, row in traj[OM2W][traj[OM2W].gpt_eval_json != ""].iterrows():
        text = json.loads(row.gpt_eval_json)["gpt_response_text"]
        if text:
            assert row.instruction in text and row.task_id.split("--")[0] in text
