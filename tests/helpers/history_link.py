"""`?v=` payloads carrying an uploaded history, made as the app makes them on an upload
(`ui.your_verifier._load`, `ui.state.full_payload`) without a browser session: for tests
that need Your verifier's Iterations section drawn (its controls exist only then).

- `sample_history_payload`: the sample history (`lib.analysis.iterations.sample_history`:
  one verifier judging the outcome, 10 versions, 3 runs of the last);
- `two_verifier_payload`: `two_verifier_history`, two verifiers judging outcome and process
  with two versions each, so *Verifier to score* and *Dimension* both have a choice.
"""

from __future__ import annotations

import pandas as pd

from lib.analysis import iterations as it
from lib.uploads import history_section, link_codec, predictions, score_files

FLIP_EVERY = 7
"""`two_verifier_history`'s second version flips the verdicts of every 7th task."""


def upload_payload(bench, frame: pd.DataFrame, filename: str) -> str:
    """The link payload of one uploaded file (`frame` written as CSV), history included."""
    data = frame.to_csv(index=False).encode()
    upload = score_files.read_upload([(filename, data)], bench.tasks).upload
    uploads = predictions.add_upload(None, upload)
    history = predictions.add_history(None, upload)
    order = link_codec.task_order(bench.tasks)
    extra = [] if history is None else [(link_codec.HISTORY, history_section.encode(history))]
    payload = link_codec.encode(uploads, order, extra)
    assert link_codec.fits(payload)
    return payload


def sample_history_payload(bench) -> str:
    return upload_payload(bench, it.sample_history(bench.verdicts), "sample_history.csv")


def two_verifier_history(bench) -> pd.DataFrame:
    """The mirror's sample file (`my_verifier_v1`, `my_verifier_v2`, both judging outcome and
    process on every task) as a history: each verifier's rows as version `base`, then as
    version `flipped` with the outcome and process verdicts of every `FLIP_EVERY`th task
    flipped (so the two versions' kappas differ)."""
    sample = pd.read_csv(bench.folder / "sample_predictions.csv", dtype=str, keep_default_na=False)
    assert sample["verifier"].nunique() == 2 and (sample["process"] != "").all()
    parts = []
    for _, rows in sample.groupby("verifier", sort=False):
        base = rows.assign(version="base")
        flipped = rows.assign(version="flipped").reset_index(drop=True)
        every = flipped.index % FLIP_EVERY == 0
        for column in ("outcome", "process"):
            flipped.loc[every, column] = flipped.loc[every, column].map({"0": "1", "1": "0"})
        parts += [base, flipped]
    return pd.concat(parts, ignore_index=True)


def two_verifier_payload(bench) -> str:
    return upload_payload(bench, two_verifier_history(bench), "two_verifiers.csv")
