"""README front matter in every form `datasets` accepts, and malformed values without a crash.

`lib.data.data_files` is checked against `datasets`' own reading of `data_files`
(`datasets.data_files.sanitize_patterns`), then end to end on a mirror whose README uses
the other forms.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from datasets.data_files import sanitize_patterns

from lib.data import data_files, load_bench
from lib.source import SourceError, resolve

NAMES = [
    "trajectories/internal-00000-of-00002.parquet",
    "trajectories/internal-00001-of-00002.parquet",
    "trajectories/om2w-00000-of-00001.parquet",
    "annotations/internal-00000-of-00001.parquet",
    "README.md",
]


def _readme(data_files_yaml: str) -> str:
    return f"---\nconfigs:\n- config_name: trajectories\n  data_files: {data_files_yaml}\n---\n"


@pytest.mark.parametrize(
    ("yaml_value", "python_value"),
    [
        ('"trajectories/*"', "trajectories/*"),
        ('["trajectories/internal-*", "trajectories/om2w-*"]',
         ["trajectories/internal-*", "trajectories/om2w-*"]),
        ('{internal: "trajectories/internal-*", om2w: ["trajectories/om2w-*"]}',
         {"internal": "trajectories/internal-*", "om2w": ["trajectories/om2w-*"]}),
        ('[{split: internal, path: "trajectories/internal-*"}]',
         [{"split": "internal", "path": "trajectories/internal-*"}]),
    ],
)  # fmt: skip
def test_every_datasets_form_gives_the_splits_datasets_gives(yaml_value, python_value) -> None:
    import fnmatch

    ours = data_files(_readme(yaml_value), NAMES)["trajectories"]
    theirs = {
        split: sorted(n for n in NAMES if any(fnmatch.fnmatchcase(n, p) for p in patterns))
        for split, patterns in sanitize_patterns(python_value).items()
    }
    assert ours == theirs and all(ours.values())


@pytest.mark.parametrize("path", ["5", "[[trajectories/internal-*, 7]]", "{a: b}", "null"])
def test_malformed_paths_never_raise(path: str) -> None:
    readme = _readme(f"[{{split: internal, path: {path}}}]")
    splits = data_files(readme, NAMES)["trajectories"]
    expected = NAMES[:2] if path.startswith("[[") else []  # nested strings still count
    assert splits == {"internal": expected}


def _with_readme(mirror_dir: Path, tmp_path: Path, front: str) -> Path:
    folder = tmp_path / "m"
    shutil.copytree(mirror_dir, folder)
    text = (folder / "README.md").read_text()
    body = text.split("\n---", 1)[1] if text.startswith("---") else text
    (folder / "README.md").write_text(front + body)
    return folder


def test_a_mirror_with_mapping_and_glob_forms_loads_the_same(
    mirror_dir: Path, tmp_path: Path, bench
) -> None:
    front = (
        "---\nconfigs:\n"
        "- config_name: trajectories\n  data_files:\n"
        "    fara7b_om2w_browserbase: trajectories/fara7b_om2w_browserbase-*\n"
        "    internal: [trajectories/internal-*]\n"
        "- config_name: annotations\n  data_files:\n"
        "    fara7b_om2w_browserbase: annotations/fara7b_om2w_browserbase-*\n"
        "    internal: annotations/internal-*\n"
    )
    loaded = load_bench(resolve(str(_with_readme(mirror_dir, tmp_path, front))))
    assert len(loaded.tasks) == len(bench.tasks)
    assert len(loaded.annotations) == len(bench.annotations)


def test_a_mirror_with_a_numeric_path_is_a_clear_error_not_a_type_error(
    mirror_dir: Path, tmp_path: Path
) -> None:
    front = (
        "---\nconfigs:\n- config_name: trajectories\n  data_files:\n"
        "  - split: internal\n    path: 5\n"
    )
    folder = _with_readme(mirror_dir, tmp_path, front)
    try:
        load_bench(resolve(str(folder)))
    except SourceError as exc:
        assert "TypeError" not in str(exc)
