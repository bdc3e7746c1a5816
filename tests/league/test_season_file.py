"""Season files: a minimal file gets the official defaults; every kind of mistake
is reported up front, naming the file and the field, with exit code 2 and nothing written.

Bot folders here hold only a bot.toml: validation happens before any match is played.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.league.season import SandboxSettings, SeasonError, TiebreakSettings, load_season
from arena.referee.limits import Limits
from arena.rules.options import OFFICIAL, RuleOptions

MISSING = object()
"""A [season] field left out of the file."""


def manifest(name: str, language: str = "python") -> str:
    return (f'name = "{name}"\nversion = "1.0"\nlanguage = "{language}"\n'
            'run = ["python3", "bot.py"]\n')


BOTS = {"bots/a": manifest("alpha"), "bots/b": manifest("beta"), "bots/c": manifest("gamma")}


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | list):
        return json.dumps(value)  # JSON strings and lists of strings are valid TOML
    return str(value)


def season(**changes: object) -> str:
    """A [season] table: the minimal valid one, with fields changed, added or MISSING."""
    fields: dict[str, object] = {"name": "mini", "entrants": ["bots/*"]}
    fields.update(changes)
    lines = [f"{key} = {toml_value(value)}" for key, value in fields.items()
             if value is not MISSING]
    return "[season]\n" + "\n".join(lines) + "\n"


OUTPUT = '\n[output]\nfolder = "out"\nreport = "report"\n'


def build(root: Path, text: str, bots: dict[str, str | None]) -> Path:
    """Bot folders (None: a folder without bot.toml) and a season file under root."""
    for folder, bot_toml in bots.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        if bot_toml is not None:
            (root / folder / "bot.toml").write_text(bot_toml)
    path = root / "season.toml"
    path.write_text(text if "[output]" in text else text + OUTPUT)
    return path


# -- a valid file -------------------------------------------------------------------------


def test_minimal_file_loads_with_official_defaults(tmp_path: Path) -> None:
    path = build(tmp_path, season(), BOTS)
    loaded = load_season(path)
    assert loaded.name == "mini"
    assert loaded.path == path.resolve()
    assert [bot.name for bot in loaded.entrants] == ["alpha", "beta", "gamma"]
    assert loaded.entrants[0].folder == (tmp_path / "bots/a").resolve()
    assert loaded.table_size == 2
    assert loaded.matches_per_group == 2
    assert loaded.duplicate_deals is True, "two-player seasons play duplicate deals"
    assert loaded.tiebreak == TiebreakSettings() and not loaded.tiebreak.enabled
    assert loaded.parallelism == len(os.sched_getaffinity(0)), "the cores it may use"
    assert loaded.pin_cores is True
    assert loaded.executor == "local"
    assert loaded.cluster is None
    assert loaded.rules == OFFICIAL == RuleOptions()
    assert loaded.limits == Limits()
    assert loaded.sandbox == SandboxSettings()
    # Output paths are relative to the season file, wherever it is run from.
    assert loaded.folder == (tmp_path / "out").resolve()
    assert loaded.report == (tmp_path / "report").resolve()
    assert loaded.store_path == loaded.folder / "season.sqlite"
    assert not loaded.folder.exists(), "loading a season writes nothing"


def test_output_defaults_to_runs_and_reports_named_after_the_season(tmp_path: Path) -> None:
    for folder, bot_toml in BOTS.items():
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "bot.toml").write_text(bot_toml)
    path = tmp_path / "season.toml"
    path.write_text(season())
    loaded = load_season(path)
    assert loaded.folder == (tmp_path / "runs/mini").resolve()
    assert loaded.report == (tmp_path / "reports/mini").resolve()


def test_every_setting_is_read(tmp_path: Path) -> None:
    text = season(table_size=3, matches_per_pairing=6, duplicate_deals=True,
                  parallelism=3, pin_cores=False, entrants=["bots/c", "bots/a", "bots/b"]) + (
        "\n[rules]\ntarget_score = 200\nhand_size = 5\n"
        "\n[limits]\ndecision_deadline = 0.5\ntime_bank = 3\nstrike_limit = 2\n"
        '\n[sandbox]\nbackend = "plain"\nmemory_mb = 256\n'
        "\n[tiebreak]\nenabled = true\nmax_matches = 30\nbatch = 3\n")
    loaded = load_season(build(tmp_path, text, BOTS))
    assert (loaded.table_size, loaded.matches_per_group) == (3, 6)
    assert loaded.tiebreak == TiebreakSettings(enabled=True, max_matches=30, batch=3)
    assert loaded.duplicate_deals is True and loaded.parallelism == 3
    assert loaded.pin_cores is False
    assert [bot.name for bot in loaded.entrants] == ["gamma", "alpha", "beta"], "file order"
    assert loaded.rules == RuleOptions(target_score=200, hand_size=5)
    assert loaded.limits == Limits(decision_deadline=0.5, time_bank=3.0, strike_limit=2)
    assert loaded.sandbox == SandboxSettings(backend="plain", memory_mb=256)


# -- mistakes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    name: str
    text: str
    expected: tuple[str, ...]
    """Substrings of the message besides the file path: the field and what is wrong."""
    bots: dict[str, str | None] = field(default_factory=lambda: dict(BOTS))


MISTAKES = [
    Mistake("TOML syntax error", season() + 'table_size = "unterminated\n',
            ("not valid TOML", "line 4")),
    Mistake("missing [season]", "[rules]\ntarget_score = 500\n", ("[season]",)),
    Mistake("missing name", season(name=MISSING), ("[season] name", "required")),
    Mistake("bad name characters", season(name="my season!"), ("[season] name", "my season!")),
    Mistake("unknown table", season() + "\n[colours]\nred = 1\n", ("unknown table", "colours")),
    Mistake("unknown field in [season]", season(teams=3), ("[season]", "unknown", "teams")),
    Mistake("table_size 1", season(table_size=1), ("[season] table_size", "2 to 10", "1")),
    Mistake("table_size 11", season(table_size=11), ("[season] table_size", "2 to 10", "11")),
    Mistake('table_size "two"', season(table_size="two"), ("[season] table_size", "'two'")),
    Mistake("table_size above the entrants", season(table_size=4),
            ("[season] table_size", "4", "3 entrant")),
    Mistake("matches_per_group 0", season(matches_per_group=0),
            ("[season] matches_per_group", "integer")),
    Mistake("a seed (deals come from the secret season key)", season(seed=7),
            ("[season] seed", "no longer used", "secret", "remove")),
    Mistake("parallelism 0", season(parallelism=0), ("[season] parallelism",)),
    Mistake('duplicate_deals "yes"', season(duplicate_deals="yes"),
            ("[season] duplicate_deals", "true or false")),
    Mistake("odd matches_per_group with default duplicate deals", season(matches_per_group=3),
            ("[season] matches_per_group is 3", "two-player seasons play by default",
             "use 4", "duplicate_deals = false")),
    Mistake("matches_per_group not a whole rotation",
            season(table_size=3, matches_per_group=4, duplicate_deals=True),
            ("[season] matches_per_group is 4", "multiple of table_size (3)", "use 6")),
    Mistake("tiebreak max_matches 0", season() + "[tiebreak]\nmax_matches = 0\n",
            ("[tiebreak] max_matches", "integer")),
    Mistake("tiebreak batch odd with duplicate deals",
            season() + "[tiebreak]\nenabled = true\nbatch = 3\n",
            ("[tiebreak] batch is 3", "multiple of table_size (2)")),
    Mistake("tiebreak unknown field", season() + "[tiebreak]\nrounds = 3\n",
            ("[tiebreak] has unknown field(s) rounds",)),
    Mistake("pin_cores 1", season(pin_cores=1), ("[season] pin_cores", "true or false")),
    Mistake("entrants missing", season(entrants=MISSING), ("[season] entrants", "a list")),
    Mistake("entrants empty", season(entrants=[]), ("[season] entrants", "a list")),
    Mistake("entrants not a list", season(entrants="bots/*"), ("[season] entrants", "a list")),
    Mistake("missing bot folder", season(entrants=["bots/a", "bots/b", "bots/nobody"]),
            ("[season] entrants", "bots/nobody", "does not exist")),
    Mistake("glob matching nothing", season(entrants=["bots/*", "elsewhere/*"]),
            ("[season] entrants", "elsewhere/*", "matches no bot folder")),
    Mistake("bot folder without bot.toml", season(entrants=["bots/a", "bots/b", "bots/empty"]),
            ("[season] entrants", "empty/bot.toml", "missing"),
            bots={**BOTS, "bots/empty": None}),
    Mistake("bot.toml with a bad field", season(),
            ("[season] entrants", "c/bot.toml", "'language'", "visual basic"),
            bots={**BOTS, "bots/c": manifest("gamma", language="visual basic")}),
    Mistake("bot.toml with a misspelt field", season(),
            ("[season] entrants", "c/bot.toml", "unknown field 'biuld'", "did you mean 'build'"),
            bots={**BOTS, "bots/c": manifest("gamma") + 'biuld = ["make"]\n'}),
    Mistake("two folders with the same bot name", season(),
            ("[season] entrants", "alpha", "unique"),
            bots={**BOTS, "bots/c": manifest("alpha")}),
    Mistake("a folder listed twice", season(entrants=["bots/a", "bots/b", "bots/a"]),
            ("[season] entrants", "listed twice")),
    # Each would read as its namesake in the standings.
    Mistake("two bot names that differ only by case", season(),
            ("[season] entrants", "Alpha", "reading alike"),
            bots={**BOTS, "bots/c": manifest("Alpha")}),
    Mistake("a bot name with a zero-width space", season(),
            ("[season] entrants", "c/bot.toml", "field 'name' holds U+200B"),
            bots={**BOTS, "bots/c": manifest("al\u200bpha")}),
    # `arena serve` would then serve the store, the season key in it.
    Mistake("the report folder inside the output folder",
            season() + '\n[output]\nfolder = "out"\nreport = "out/site"\n',
            ("[output] folder", "overlap", "its key")),
    Mistake("the output folder inside the report folder",
            season() + '\n[output]\nfolder = "site/data"\nreport = "site"\n',
            ("[output] folder", "overlap")),
    Mistake("one folder for both", season() + '\n[output]\nfolder = "x"\nreport = "x"\n',
            ("[output] folder", "overlap")),
    Mistake("the output folder inside a bot folder",
            season() + '\n[output]\nfolder = "bots/b/out"\nreport = "report"\n',
            ("[output] folder", "bot folder of beta", "overlap")),
    Mistake("the report folder holding the bot folders",
            season() + '\n[output]\nfolder = "out"\nreport = "bots"\n',
            ("[output] report", "bot folder of", "overlap")),
    Mistake("a bot name with an escape sequence", season(),
            ("[season] entrants", "c/bot.toml", "field 'name' holds the character U+001B"),
            bots={**BOTS, "bots/c": manifest("gamma\\u001b[2J")}),
    Mistake("more matches than a two-player season schedules",
            season(matches_per_group=2_000_000),
            ("[season] 3 entrants make 3 pairs", "6,000,000 matches",
             "more than the 2,000,000", "lower matches_per_group")),
    Mistake("more matches than a season at tables of 3+ schedules",
            season(table_size=3, matches_per_group=100_002),
            ("[season] 3 entrants make 1 group of 3", "100,002 matches",
             "more than the 100,000", "smaller tables")),
    Mistake("unknown rule option", season() + "\n[rules]\ncolours = 5\n",
            ("[rules]", "unknown", "colours")),
    Mistake("target_score 0", season() + "\n[rules]\ntarget_score = 0\n",
            ("[rules]", "target_score", "at least 1")),
    Mistake('target_score "500"', season() + '\n[rules]\ntarget_score = "500"\n',
            ("[rules]", "target_score")),
    Mistake('alternative_scoring "yes"', season() + '\n[rules]\nalternative_scoring = "yes"\n',
            ("[rules]", "alternative_scoring")),
    Mistake("hand_size 7.5", season() + "\n[rules]\nhand_size = 7.5\n",
            ("[rules]", "hand_size")),
    Mistake("[rules] not a table", "rules = 5\n" + season(), ("[rules]", "a table")),
    Mistake("negative decision_deadline", season() + "\n[limits]\ndecision_deadline = -1.0\n",
            ("[limits] decision_deadline", "a number", "-1.0")),
    Mistake("strike_limit 0", season() + "\n[limits]\nstrike_limit = 0\n",
            ("[limits] strike_limit", "integer")),
    Mistake("decision_deadline inf (TOML has inf)",
            season() + "\n[limits]\ndecision_deadline = inf\n",
            ("[limits] decision_deadline", "from 0.01 to 3600", "inf")),
    Mistake("time_bank nan", season() + "\n[limits]\ntime_bank = nan\n",
            ("[limits] time_bank", "from 0 to 86400", "nan")),
    Mistake("hello_timeout past what a request carries",
            season() + "\n[limits]\nhello_timeout = 1e300\n",
            ("[limits] hello_timeout", "from 0.1 to 3600")),
    Mistake("unknown field in [limits]", season() + "\n[limits]\ndeadline = 1.0\n",
            ("[limits]", "unknown", "deadline")),
    Mistake("unknown executor", season(executor="slurm"),
            ("[season] executor", '"local"', "slurm")),
    Mistake("unknown sandbox backend", season() + '\n[sandbox]\nbackend = "dockr"\n',
            ("[sandbox] backend", "dockr")),
    Mistake("sandbox memory_mb too small", season() + "\n[sandbox]\nmemory_mb = 10\n",
            ("[sandbox] memory_mb",)),
    Mistake("sandbox processes past what the kernel's limits hold",
            season() + "\n[sandbox]\nprocesses = 99999999999999999999\n",
            ("[sandbox] processes", "from 1 to 65536")),
    Mistake("sandbox build_seconds past a year",
            season() + "\n[sandbox]\nbuild_seconds = 1000000000\n",
            ("[sandbox] build_seconds", "from 1 to 31536000")),
    Mistake("target_score past what the wire carries",
            season() + "\n[rules]\ntarget_score = 99999999999999999999\n",
            ("[rules]", "target_score must be at most 4,294,967,295")),
    Mistake("strike_limit 10^20", season() + "\n[limits]\nstrike_limit = 99999999999999999999\n",
            ("[limits] strike_limit", "from 1 to 1000")),
    # A NUL would reach open() as "embedded null byte", a traceback.
    Mistake("a NUL in a folder's name", season() + '\n[output]\nfolder = "out\\u0000x"\n',
            ("[output] folder", "no NUL")),
    Mistake("a NUL in an entrant", season(entrants=["bots/a", "bots/b\0"]),
            ("[season] entrants", "a list of bot folders")),
]


def mistake_file(root: Path, mistake: Mistake) -> Path:
    """The malformed season under root. Where the mistake leaves [limits] alone, a short
    hello timeout keeps a season that is wrongly accepted from waiting on bots that do not
    exist (its test fails either way)."""
    guard = "" if "[limits]" in mistake.text else "\n[limits]\nhello_timeout = 0.5\n"
    return build(root, mistake.text + guard, mistake.bots)


@dataclass(frozen=True)
class CliRun:
    path: Path
    returncode: int
    stdout: str
    stderr: str
    files_before: set[Path]
    files_after: set[Path]


def every_file(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CliRun]:
    """`arena season run` on every malformed file, started side by side (each one is a
    fresh interpreter: running them one after another would take most of a minute)."""
    cases = {}
    for mistake in MISTAKES:
        root = tmp_path_factory.mktemp("cli")
        cases[mistake.name] = (mistake_file(root, mistake), root)

    def run(name: str) -> CliRun:
        path, root = cases[name]
        before = every_file(root)
        done = subprocess.run([sys.executable, "-m", "arena.cli", "season", "run", str(path)],
                              capture_output=True, text=True, timeout=120, cwd=root)
        return CliRun(path, done.returncode, done.stdout, done.stderr, before,
                      every_file(root))

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(cases, pool.map(run, cases), strict=True))


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda mistake: mistake.name)
def test_mistake_raises_season_error_naming_file_and_field(tmp_path: Path,
                                                           mistake: Mistake) -> None:
    path = mistake_file(tmp_path, mistake)
    with pytest.raises(SeasonError) as raised:
        load_season(path)
    message = str(raised.value)
    assert str(path) in message
    for part in mistake.expected:
        assert part in message, f"{part!r} not in {message!r}"


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda mistake: mistake.name)
def test_mistake_exits_2_on_stderr_and_writes_nothing(cli_runs: dict[str, CliRun],
                                                      mistake: Mistake) -> None:
    run = cli_runs[mistake.name]
    assert run.returncode == 2, run.stdout + run.stderr
    assert str(run.path) in run.stderr
    for part in mistake.expected:
        assert part in run.stderr, f"{part!r} not in {run.stderr!r}"
    assert "Traceback" not in run.stderr
    assert run.stdout == ""
    assert not (run.path.parent / "out").exists()
    assert run.files_after == run.files_before


def test_missing_season_file(tmp_path: Path) -> None:
    with pytest.raises(SeasonError, match="no such season file"):
        load_season(tmp_path / "nowhere.toml")
