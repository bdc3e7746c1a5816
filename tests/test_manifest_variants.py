"""``bot.toml``'s optional ``variants`` key: the house rules a bot supports (docs/rules.md
§21-§32), checked by name; a stdio-json bot's bridge declares them in its hello."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.sandbox import ManifestError, load_manifest, resolve_command


def bot(tmp_path: Path, extra: str, protocol: str = "grpc") -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "b"\nversion = "1"\nlanguage = "other"\nrun = ["true"]\n'
        f'protocol = "{protocol}"\n{extra}\n')
    return folder


def test_variants_are_read_in_rulebook_order(tmp_path: Path) -> None:
    manifest = load_manifest(bot(tmp_path, 'variants = ["seven_o", "stacking"]'))
    assert manifest.variants == ("stacking", "seven_o")


def test_no_key_means_official_matches_only(tmp_path: Path) -> None:
    assert load_manifest(bot(tmp_path, "")).variants == ()


@pytest.mark.parametrize(("extra", "message"), [
    ('variants = ["stackin"]', "unknown variant 'stackin' (did you mean 'stacking'?)"),
    ('variants = ["blue_moon"]', "unknown variant 'blue_moon'; known: stacking,"),
    ('variants = "stacking"', "field 'variants' must be a list of variant names"),
    ("variants = [1]", "field 'variants' must be a list of variant names"),
])
def test_a_bad_variants_key_names_the_file_and_the_fix(tmp_path: Path, extra: str,
                                                        message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_manifest(bot(tmp_path, extra))
    assert message in str(caught.value)
    assert "bot.toml" in str(caught.value)


def test_the_stdio_bridge_is_told_the_variants(tmp_path: Path) -> None:
    manifest = load_manifest(bot(tmp_path, 'variants = ["jump_in", "stacking"]',
                                 protocol="stdio-json"))
    argv = resolve_command(manifest)
    assert argv[argv.index("--variants") + 1] == "stacking,jump_in"
    assert argv[argv.index("--") + 1:] == ["true"]


def test_the_bridge_refuses_an_unknown_variant(capsys: pytest.CaptureFixture[str]) -> None:
    from arena.bots.stdio_bridge import main

    with pytest.raises(SystemExit) as exited:
        main(["--variants", "stacking,bogus", "--", "true"])
    assert exited.value.code == 2
    assert "unknown variant(s) bogus" in capsys.readouterr().err
