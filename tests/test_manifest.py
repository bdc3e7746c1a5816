"""``bot.toml``: fields, misspellings, any language, declared runtimes (their form only;
whether the sandbox shows them is ``tests/test_sandbox_runtimes.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.sandbox import ManifestError, load_manifest
from arena.text import LABEL_LENGTH, file_label, lookalike_key, name_key

BASE = 'name = "b"\nversion = "1"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "bot.toml").write_text(text)
    return tmp_path


@pytest.mark.parametrize(("line", "suggestion"), [
    ('protocl = "stdio-json"', "protocol"),
    ('biuld = ["make"]', "build"),
    ('runtime = ["/opt/x"]', "runtimes"),
    ('Name = "b"', "name"),
    ('venodr = ["go", "mod", "vendor"]', "vendor"),
])
def test_a_misspelt_field_is_refused_with_did_you_mean(tmp_path: Path, line: str,
                                                       suggestion: str) -> None:
    with pytest.raises(ManifestError) as error:
        load_manifest(write(tmp_path, BASE + line + "\n"))
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'bot.toml'}: unknown field '{line.split()[0]}'")
    assert f"(did you mean '{suggestion}'?)" in message
    assert "\n" not in message


def test_an_unknown_field_with_no_near_match_lists_the_fields(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"unknown field 'colour'; the fields are name, "):
        load_manifest(write(tmp_path, BASE + 'colour = "red"\n'))


@pytest.mark.parametrize("language", ["ruby", "perl", "c++", "c#", "f#", "objective-c",
                                      "zig", "other", "go", "rust", "java"])
def test_any_language_name_is_accepted(tmp_path: Path, language: str) -> None:
    manifest = load_manifest(write(tmp_path, BASE.replace('"python"', f'"{language}"')))
    assert manifest.language == language


def test_language_is_compared_in_lower_case(tmp_path: Path) -> None:
    assert load_manifest(write(tmp_path, BASE.replace('"python"', '"Ruby"'))).language == "ruby"


@pytest.mark.parametrize("language", ["", "two words", "ruby\n", "-x", "a" * 41])
def test_a_language_that_is_not_a_name_is_refused(tmp_path: Path, language: str) -> None:
    text = BASE.replace('"python"', repr(language).replace("'", '"'))
    with pytest.raises(ManifestError, match="field 'language'"):
        load_manifest(write(tmp_path, text))


def test_vendor_and_runtimes_are_read(tmp_path: Path) -> None:
    manifest = load_manifest(write(tmp_path, BASE + 'vendor = ["npm", "ci"]\n'
                                   'runtimes = ["/usr/lib/jvm/x", "/etc/java-17-openjdk"]\n'))
    assert manifest.vendor == ("npm", "ci")
    assert manifest.runtimes == ("/usr/lib/jvm/x", "/etc/java-17-openjdk")
    plain = load_manifest(write(tmp_path, BASE))
    assert (plain.vendor, plain.runtimes) == ((), ())


@pytest.mark.parametrize("value", ['"/usr/lib/jvm"', '["usr/lib/jvm"]', '["/opt/../home/x"]',
                                   '[1]', '["./x"]', "[" + ", ".join(['"/opt/x"'] * 17) + "]",
                                   '["/opt/' + "x" * 4092 + '"]', '["/opt/x\\u0000"]'])
def test_runtimes_must_be_a_short_list_of_absolute_paths(tmp_path: Path, value: str) -> None:
    with pytest.raises(ManifestError, match="field 'runtimes'"):
        load_manifest(write(tmp_path, BASE + f"runtimes = {value}\n"))


def test_author_must_be_a_string(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="field 'author' must be a string"):
        load_manifest(write(tmp_path, BASE + "author = 3\n"))




def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (the characters TOML wants escaped, escaped)."""
    return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or c in '\x7f"\\' else c
                         for c in text) + '"'


@pytest.mark.parametrize("field", ["name", "version", "author"])
@pytest.mark.parametrize("text", [
    "evil\x1b]0;pwned\x07", "clear\x1b[2J", "two\nlines", "back\rspace", "bell\x07",
    "tab\there", "del\x7f", "csi\x9b31m", "line\u2028sep", "para\u2029sep", "gnirts\u202e",
    "isolate\u2066x\u2069", "mark\u200f",
])
def test_a_name_that_would_act_on_a_terminal_or_read_as_another_is_refused(
        tmp_path: Path, field: str, text: str) -> None:
    base = "".join(line for line in BASE.splitlines(keepends=True)
                   if not line.startswith(f"{field} ="))
    with pytest.raises(ManifestError, match=f"field '{field}' holds the character U\\+"):
        load_manifest(write(tmp_path, f"{base}{field} = {toml_string(text)}\n"))


@pytest.mark.parametrize("name", ["greedy ☃", "名前", "café", "\U0001f468\u200d\U0001f469",
                                  "snow \u2603\ufe0f", "русский", "Ελληνικά", "ṩ̈",
                                  'quote " and \\ backslash', "a b-c_d.e"])
def test_names_beyond_ascii_are_accepted(tmp_path: Path, name: str) -> None:
    text = BASE.replace('name = "b"', f"name = {toml_string(name)}")
    assert load_manifest(write(tmp_path, text)).name == name


@pytest.mark.parametrize("field", ["run", "build", "vendor"])
@pytest.mark.parametrize(("words", "refusal"), [
    # A launch plan travels in one socket message: unmeasured, 200,000 words would raise
    # "Message too long" out of `arena check` (a traceback).
    (["python3", "bot.py", *["x"] * 200_000], "bytes long; a command is at most 65,536"),
    (["python3", "b" * 65_528], "65,537 bytes long"),
    (["python3\0", "bot.py"], "holds a NUL character"),
])
def test_a_command_no_launch_can_carry_is_refused(tmp_path: Path, field: str,
                                                  words: list[str], refusal: str) -> None:
    import json

    base = BASE if field != "run" else BASE.replace('run = ["python3", "bot.py"]\n', "")
    with pytest.raises(ManifestError, match=f"field '{field}' .*{re.escape(refusal)}"):
        load_manifest(write(tmp_path, base + f"{field} = {json.dumps(words)}\n"))


def test_a_command_at_the_limit_is_read(tmp_path: Path) -> None:
    words = ["python3", "b" * (65_536 - 8 - 1)]  # with a byte after each word: 65,536
    manifest = load_manifest(write(tmp_path, BASE + f'build = ["python3", "{words[1]}"]\n'))
    assert manifest.build == tuple(words)


def test_a_bot_toml_past_a_mebibyte_is_refused_unread(tmp_path: Path) -> None:
    """A manifest is a dozen lines; 30 MB of TOML (30 KB packed in an upload) took 7.7 s
    to parse."""
    from arena.sandbox.manifest import MOST_MANIFEST_BYTES

    padding = "#" * (MOST_MANIFEST_BYTES - len(BASE) - 1) + "\n"
    assert load_manifest(write(tmp_path, BASE + padding)).name == "b"  # at the limit
    with pytest.raises(ManifestError, match=r"more than 1,048,576 bytes; a bot\.toml is a dozen"):
        load_manifest(write(tmp_path, BASE + padding + "#"))


@pytest.mark.parametrize(("name", "refusal"), [
    # Each would read as "greedy" beside the real greedy in the standings.
    ("gree\u200bdy", "U+200B"), ("gree\u2060dy", "U+2060"), ("\ufeffgreedy", "U+FEFF"),
    ("gree\u00addy", "U+00AD"), ("greedy\U000e0041", "U+E0041"), ("gree\u200ddy", "U+200D"),
    ("\u3164", "U+3164"), ("greedy\u115f", "U+115F"), ("greedy\u2800", "U+2800"),
    ("greedy ", "starts or ends with a space"), (" greedy", "starts or ends with a space"),
    ("cafe\u0301", "composed form"), ("\ue000bot", "U+E000"), ("x" * 65, "at most 64"),
    # Each would show as "alice" beside alice, or cover the rows around.
    ("alice\u034f", "U+034F"), ("alice\ufe00", "U+FE00"), ("alice\U000e0100", "U+E0100"),
    ("alice\u180b", "U+180B"), ("alice\u17b4", "U+17B4"),
    ("\u0301alice", "starts with a combining mark"),
    ("Z" + "\u0489" * 3, "more than 2 combining marks"),
    ("\u0430lice", "mixes Cyrillic and Latin letters"), ("\u03b1lice", "mixes Greek and Latin"),
])
def test_a_name_that_shows_as_another_is_refused(tmp_path: Path, name: str,
                                                 refusal: str) -> None:
    text = BASE.replace('name = "b"', f"name = {toml_string(name)}")
    with pytest.raises(ManifestError, match="field 'name' ") as error:
        load_manifest(write(tmp_path, text))
    assert refusal in str(error.value)


@pytest.mark.parametrize(("first", "second"), [
    ("greedy", "Greedy"), ("greedy", "\uff47\uff52\uff45\uff45\uff44\uff59"),
    ("the bot", "the  bot"),
    ("名前", "名\u200d前"), ("Straße", "STRASSE"),
])
def test_names_that_read_alike_have_one_key(first: str, second: str) -> None:
    assert name_key(first) == name_key(second)
    assert name_key(first) != name_key(first + "2")


@pytest.mark.parametrize(("first", "second"), [
    ("alice-bot", "aIice_bot"), ("alice", "a1ice"), ("BOT", "b0t"), ("max", "rnax"),
    ("alice", "\u0430lice"), ("greedy", "gr.ee-dy"), ("greedy", "GREEDY"), ("wave", "vvave"),
    ("paypal", "\u0440\u0430\u0443\u0440\u0430l"),  # whole-script Cyrillic
])
def test_names_that_look_alike_have_one_lookalike_key(first: str, second: str) -> None:
    assert lookalike_key(first) == lookalike_key(second)
    assert lookalike_key(first) != lookalike_key(first + "2")
    assert lookalike_key(first) != lookalike_key("x" + first)


@pytest.mark.parametrize(("field", "text", "refusal"), [
    ("version", "\u2800\u2800", "U+2800"), ("version", "1" + "\u0489" * 3, "combining marks"),
    ("author", "Alice\u034f", "U+034F"), ("author", "\u0410lice Smith", "mixes Cyrillic"),
])
def test_a_version_or_author_that_shows_as_another_is_refused(
        tmp_path: Path, field: str, text: str, refusal: str) -> None:
    base = "".join(line for line in BASE.splitlines(keepends=True)
                   if not line.startswith(f"{field} ="))
    with pytest.raises(ManifestError, match=f"field '{field}' .*{re.escape(refusal)}"):
        load_manifest(write(tmp_path, f"{base}{field} = {toml_string(text)}\n"))


@pytest.mark.parametrize("label", ["seat0-AC/DC", "seat1-../../etc", "probe-" + "L" * 300,
                                   "seat0-名前", ".hidden", "-flag", "seat0-a b"])
def test_a_label_names_one_file_in_its_folder(tmp_path: Path, label: str) -> None:
    safe = file_label(label)
    assert len(safe) <= LABEL_LENGTH and "/" not in safe and not safe.startswith((".", "-"))
    assert safe.isascii() and (tmp_path / f"{safe}.stderr.log").parent == tmp_path
    (tmp_path / f"{safe}.stderr.log").write_text("x")  # a name the file system takes
    assert file_label(label + "x") != safe
    assert file_label("seat0-greedy") == "seat0-greedy"  # plain labels as they are
    # A name chosen to read as another's label lands on a file of its own.
    assert file_label(safe) != safe and file_label(safe) != file_label(label)


@pytest.mark.parametrize(("field", "most"), [("version", 64), ("author", 200)])
def test_a_version_or_author_longer_than_a_table_holds_is_refused(
        tmp_path: Path, field: str, most: int) -> None:
    """They name pages and fill table cells: 500 KB of each, or a 300-character version,
    would stop a season's site."""
    base = BASE.replace('version = "1"\n', "") if field == "version" else BASE
    at_most = f'{field} = "{"v" * most}"\n'
    assert getattr(load_manifest(write(tmp_path, base + at_most)), field) == "v" * most
    with pytest.raises(ManifestError, match=f"field '{field}' is {most + 1} characters long"):
        load_manifest(write(tmp_path, base + f'{field} = "{"v" * (most + 1)}"\n'))


def test_a_gitignore_past_its_limit_is_refused_and_any_bytes_are_read(tmp_path: Path
                                                                      ) -> None:
    """Every pattern is matched against every path: 40,000 of them take an upload 470 s.
    A .gitignore that is not UTF-8 is read, not a traceback."""
    folder = write(tmp_path, BASE)
    (folder / ".gitignore").write_bytes(b"build/\n\xff\xfe odd\n")
    assert load_manifest(folder).content_hash()
    (folder / ".gitignore").write_text("".join(f"cache{n}/\n" for n in range(1000)))
    assert load_manifest(folder).content_hash()
    (folder / ".gitignore").write_text("".join(f"cache{n}/\n" for n in range(1001)))
    with pytest.raises(ManifestError, match=r"\.gitignore is longer than 1,000 lines"):
        load_manifest(folder)
