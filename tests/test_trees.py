"""Trees a bot's author, its build or its upload made (``arena.sandbox.trees``): folders
nested thousands deep and paths longer than the kernel takes whole are removed all the
same, and refused where they would be walked (a bot folder, a build's output, an upload:
``tests/server/test_uploads.py``, ``tests/hostile/test_build_output.py``); a name that is
not UTF-8 is hashed as its bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.sandbox import ManifestError, load_manifest
from arena.sandbox.trees import MOST_TREE_DEPTH, MOST_TREE_PATH_BYTES, path_problem, remove_tree

BOT = 'name = "b"\nversion = "1"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'


def _nest(top: Path, name: str, levels: int) -> None:
    """``levels`` folders named ``name``, one in the other, under ``top`` (made relative to
    each folder: the whole path may be longer than the kernel takes)."""
    top.mkdir()
    descriptor = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=descriptor)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = child
        os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor))
    finally:
        os.close(descriptor)


@pytest.mark.parametrize(("name", "levels"), [("a", 3000), ("b" * 250, 40)],
                         ids=["3,000 folders deep", "paths of 10,000 bytes"])
def test_remove_tree_removes_what_rmtree_cannot(tmp_path: Path, name: str, levels: int
                                                ) -> None:
    top = tmp_path / "tree"
    _nest(top, name, levels)
    (tmp_path / "outside").write_text("kept")
    os.symlink(tmp_path / "outside", top / "link")  # never followed
    remove_tree(top)
    assert not top.exists()
    assert (tmp_path / "outside").read_text() == "kept"


@pytest.mark.parametrize(("relative", "problem"), [
    ("bot.py", None),
    ("/".join(["d"] * MOST_TREE_DEPTH) + "/x.py", "nested more than 100 deep"),
    ("/".join(["d"] * (MOST_TREE_DEPTH - 1)) + "/x.py", None),
    ("x" * (MOST_TREE_PATH_BYTES + 1), "longer than 2,048 bytes"),
    ("x" * MOST_TREE_PATH_BYTES, None),
    ("é" * (MOST_TREE_PATH_BYTES // 2 + 1), "longer than 2,048 bytes"),  # bytes, not letters
])
def test_path_problem(relative: str, problem: str | None) -> None:
    found = path_problem(relative)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_a_bot_folder_nested_too_deep_is_refused_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(BOT)
    _nest(tmp_path / "src", "a", 2000)
    try:
        with pytest.raises(ManifestError, match="nested more than 100 deep") as error:
            load_manifest(tmp_path).content_digest()
        assert "\n" not in str(error.value)
    finally:
        remove_tree(tmp_path / "src")  # pytest's own clean-up of old runs would recurse


def test_a_file_name_that_is_not_utf8_is_hashed_as_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(BOT)
    first = load_manifest(tmp_path).content_digest()
    with open(os.path.join(os.fsencode(tmp_path), b"data-\xff.bin"), "wb") as raw:
        raw.write(b"x")
    manifest = load_manifest(tmp_path)
    assert manifest.content_digest() != first
    assert len(manifest.content_hash()) == 16
