"""README front matter in every form `datasets` accepts, and malformed values without a crash.

`lib.data.load.data_files` is checked against `datasets`' own reading of `data_files`
(`datasets.data_files.sanitize_patterns`), then end to end on a mirror whose README uses
the other forms.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from datasets.data_files import sanitize_patterns

from lib.data.load import data_files, load_bench
from lib.data.source import SourceError, resolve

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


# ----------------------------------------------------------------- budget (issue 26)


def _alias_bomb(levels: int = 9, width: int = 10) -> str:
    """Billion laughs: level k is `width` aliases of level k - 1, data_files the last one."""
    lines = ['a0: &a0 ["trajectories/internal-*"]']
    for k in range(1, levels + 1):
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * width) + "]")
    lines.append(f"configs:\n- config_name: trajectories\n  data_files: *a{levels}")
    return "---\n" + "\n".join(lines) + "\n---\n"


def _wide(rows: int = 2_000, columns: int = 20_000, pattern: str = "trajectories/x*") -> str:
    """`rows` splits of `columns` patterns each: a long matching job behind a valid card."""
    patterns = ", ".join([pattern] * columns)
    splits = "\n".join(f"    s{r}: [{patterns}]" for r in range(rows))
    return f"---\nconfigs:\n- config_name: trajectories\n  data_files:\n{splits}\n---\n"


@pytest.mark.parametrize(
    ("readme", "says"),
    [
        (_alias_bomb(), "more than 20,000 values"),
        (_wide(), "larger than 256 KB"),
        (_wide(20, 2_000, "x*"), "more than 20,000 values"),  # under the byte cap
        ("---\n" + "[" * 200 + "]" * 200 + "\n---\n", "deeper than 64"),
    ],
)
def test_a_bomb_front_matter_is_refused_naming_the_bound(readme: str, says: str) -> None:
    """An alias bomb, a 2,000 x 20,000 card (40 M patterns), a card under the byte cap with
    40,000 patterns and one nested 200 deep are each refused with the bound named (before:
    27 s and 35 s of CPU, then read; the time is measured by bench/dataset_bombs.py)."""
    with pytest.raises(SourceError) as caught:
        data_files(readme, NAMES)
    assert says in str(caught.value) and str(caught.value)[0].isupper()


def test_aliases_within_the_budget_still_work() -> None:
    """A card that uses aliases sensibly (one shared list) is read as before."""
    readme = (
        '---\nshared: &p ["trajectories/internal-*"]\nconfigs:\n'
        "- config_name: trajectories\n  data_files: {internal: *p}\n---\n"
    )
    assert data_files(readme, NAMES)["trajectories"] == {"internal": NAMES[:2]}


def test_the_budget_counts_what_aliases_expand_to() -> None:
    """The counter sees through aliases: 3 levels of 10 aliases are 1,111 list nodes plus
    1,000 scalars, however few bytes they take (an independent count by expansion)."""
    from lib.data import front_matter

    text = front_matter.block(_alias_bomb(levels=3))
    assert text is not None and len(text) < 300
    loaded = front_matter.parse(_alias_bomb(levels=3))

    def size(value) -> int:
        if isinstance(value, list):
            return 1 + sum(size(v) for v in value)
        if isinstance(value, dict):
            return 1 + sum(size(k) + size(v) for k, v in value.items())
        return 1

    assert front_matter.check_budget(text) == size(loaded)
    with pytest.raises(front_matter.FrontMatterError, match="more than 100 values"):
        front_matter.check_budget(text, max_nodes=100)
