"""A `?v=` payload carrying the sample history (`lib.analysis.iterations.sample_history`:
one verifier, 10 versions, 3 runs of the last), made as the app makes it on an upload
(`ui.your_verifier._load`, `ui.state.full_payload`) without a browser session: for tests
that need Your verifier's Iterations section drawn (its controls exist only then)."""

from __future__ import annotations

from lib.analysis import iterations as it
from lib.uploads import history_section, link_codec, predictions, score_files


def sample_history_payload(bench) -> str:
    data = it.sample_history(bench.verdicts).to_csv(index=False).encode()
    upload = score_files.read_upload([("sample_history.csv", data)], bench.tasks).upload
    uploads = predictions.add_upload(None, upload)
    history = predictions.add_history(None, upload)
    order = link_codec.task_order(bench.tasks)
    payload = link_codec.encode(
        uploads, order, [(link_codec.HISTORY, history_section.encode(history))]
    )
    assert link_codec.fits(payload)
    return payload
