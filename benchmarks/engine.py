"""Rules-engine throughput: decisions per second with an observation built for every decision.

What is measured (``python -m benchmarks.engine``), all in one process pinned to one CPU core
when the OS allows it (``os.sched_setaffinity``):

* **ours** -- complete 2- and 4-player matches to 500 points (official rules) between
  uniform-random policies, one ``random.Random(seed).choice`` per seat::

      while not m.is_over:
          seat = m.current_seat
          m.observation(seat)                          # the §19 view a bot would get
          m.apply(choose[seat](m.legal_actions()))

  Every pass of that loop is one decision, whatever its kind (play-or-draw, play the drawn
  card or keep it, name a colour, challenge or accept a Wild Draw Four).

* **RLCard env** -- RLCard's UNO environment driven by hand with the same kind of policy:
  ``state, seat = env.reset()`` then ``env.step(choose[seat](list(state['legal_actions'])))``
  until ``env.is_over()``. One ``env.step`` is one decision; the environment extracts an
  observation (the 4x4x15 planes plus the legal-action ids) for each, and one more after the
  last step that counts as no decision (about 2% of its work). This is the fair comparison
  and the one the targets are checked against.

* **RLCard env.run** -- the same environment through ``env.run(is_training=False)`` with
  ``RandomAgent`` in every seat (the agent's own bookkeeping included); decisions are the
  actions in the returned trajectories (each seat's list is state, action, ..., state).

* **RLCard raw game** -- ``rlcard.games.uno.game.UnoGame`` driven directly through
  ``init_game`` / ``step`` with a random choice from ``state['legal_actions']``: the game's
  own state dict, no environment observation extraction. A reference line only.

RLCard plays single rounds (no match to 500); its draw action plays a playable drawn card
automatically and its wild plays carry the colour, so it has no separate keep / colour /
challenge decisions -- the output shows our decision mix so the units can be compared.
RLCard 1.2's ``rlcard.make`` ignores ``game_num_players`` for UNO (``Env.__init__`` only
configures the blackjack and hold'em games), so for four players the script passes it as
asked and then applies it with ``env.game.configure`` and checks the deal.

Each configuration runs whole matches (games) until a time budget is spent, repeated several
times with fresh seeds, configurations interleaved; the median rate is reported with the
range. ``--profile`` instead runs our 2-player loop under cProfile and prints the top 25
functions by own time.

* **house rules** -- the same loop of ours under the variants of docs/rules.md §21-§32: each one
  alone, and all of them together (with ``lazy_scoring``'s 7 rounds a match), at 2 and 4
  players, next to the official rate measured in the same run (``--variant-seconds``,
  ``--no-variants``).

* **training environments** -- our PettingZoo environment (``arena.env.UnoEnv``, the ``env``
  extra) driven by ``last()`` / ``step()`` with a random index of each action mask, matches
  to 500, next to RLCard's env driven by ``reset`` / ``step`` as above: steps per second, each
  step with its observation (our encoded vector and mask; RLCard's planes and legal ids).
  The finished agents' ``step(None)`` calls count as no step (``--env-seconds``, ``--no-env``).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import os
import platform
import pstats
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import numpy as np
import rlcard
from rlcard.agents import RandomAgent
from rlcard.games.uno.game import UnoGame

from arena.rules import DecisionKind, Match
from arena.rules.options import OFFICIAL, VARIANTS, RuleOptions

TARGET_RATE = 150_000
"""Decisions per second with observations, one core (the issue's first target)."""
TARGET_RATIO = 14.0
"""Ours over RLCard's environment (the issue's second target)."""
PLAYER_COUNTS = (2, 4)
CONTENDED_SHARE = 0.95
"""Below this share of process CPU time to wall-clock time a repetition counts as disturbed."""
QUIET_LOAD = 0.5
"""Above this 1-minute load average (besides this run) the machine counts as busy."""

Chooser = Callable[[Sequence[Any]], Any]


@dataclass(frozen=True)
class Sample:
    """One timed repetition of one configuration."""

    decisions: int
    games: int
    seconds: float
    cpu_seconds: float
    """Process CPU time over the same span: well under ``seconds`` means we were preempted."""

    @property
    def rate(self) -> float:
        return self.decisions / self.seconds


@dataclass(frozen=True)
class Config:
    key: str
    label: str
    players: int
    run: Callable[[int, int, float], Sample]
    """(players, seed, seconds) -> one sample of whole games lasting at least ``seconds``."""


def choosers(seed: int, players: int) -> list[Chooser]:
    """One independent uniform-random policy per seat."""
    return [random.Random(seed * 16 + seat + 1).choice for seat in range(players)]


# -- the loops being timed ------------------------------------------------------------------


def run_ours(players: int, seed: int, seconds: float, options: RuleOptions = OFFICIAL
             ) -> Sample:
    decisions = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        m = Match(players, random.Random(seed + games), options)
        choose = choosers(seed + games, players)
        while not m.is_over:
            seat = m.current_seat
            m.observation(seat)
            m.apply(choose[seat](m.legal_actions()))
            decisions += 1
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Sample(decisions, games, elapsed, time.process_time() - cpu)


def make_env(players: int, seed: int) -> Any:
    """RLCard's UNO env for ``players`` seats (``game_num_players`` applied by hand, see top)."""
    env = rlcard.make("uno", config={"game_num_players": players, "seed": seed})
    if env.num_players != players:
        env.game.configure({"game_num_players": players})
        env.num_players = players
    state, _ = env.reset()
    dealt = len(state["raw_obs"]["num_cards"])
    if dealt != players:
        raise RuntimeError(f"RLCard dealt {dealt} hands, wanted {players}")
    return env


def run_env_step(players: int, seed: int, seconds: float) -> Sample:
    env = make_env(players, seed)
    decisions = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        choose = choosers(seed + games, players)
        state, seat = env.reset()
        while not env.is_over():
            state, seat = env.step(choose[seat](list(state["legal_actions"])))
            decisions += 1
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Sample(decisions, games, elapsed, time.process_time() - cpu)


def run_env_run(players: int, seed: int, seconds: float) -> Sample:
    env = make_env(players, seed)
    env.set_agents([RandomAgent(num_actions=env.num_actions)] * players)
    np.random.seed(seed % 2**32)  # RandomAgent draws from numpy's global generator
    decisions = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        trajectories, _ = env.run(is_training=False)
        decisions += sum([(len(t) - 1) // 2 for t in trajectories])
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Sample(decisions, games, elapsed, time.process_time() - cpu)


def run_raw_game(players: int, seed: int, seconds: float) -> Sample:
    game = UnoGame(num_players=players)
    game.np_random = np.random.RandomState(seed % 2**32)
    decisions = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        choose = choosers(seed + games, players)
        state, seat = game.init_game()
        while not game.is_over():
            state, seat = game.step(choose[seat](state["legal_actions"]))
            decisions += 1
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Sample(decisions, games, elapsed, time.process_time() - cpu)


CONFIGS = [
    config
    for players in PLAYER_COUNTS
    for config in (
        Config("ours", "ours: Match to 500 + observation", players, run_ours),
        Config("env", "RLCard env: reset/step", players, run_env_step),
        Config("run", "RLCard env.run + RandomAgent", players, run_env_run),
        Config("raw", "RLCard raw UnoGame (no env obs)", players, run_raw_game),
    )
]


# -- checks and context (untimed) -----------------------------------------------------------


def check_env_run_counting(players: int) -> None:
    """The trajectory count of ``env.run`` equals the number of ``env.step`` calls."""
    env = make_env(players, 1)
    env.set_agents([RandomAgent(num_actions=env.num_actions)] * players)
    for _ in range(20):
        before = env.timestep
        trajectories, _ = env.run(is_training=False)
        counted = sum([(len(t) - 1) // 2 for t in trajectories])
        if counted != env.timestep - before:
            raise RuntimeError(f"env.run: counted {counted}, stepped {env.timestep - before}")


def decision_mix(players: int, matches: int = 20) -> Counter[DecisionKind]:
    """How our decisions split by kind under random play."""
    mix: Counter[DecisionKind] = Counter()
    for seed in range(matches):
        m = Match(players, random.Random(10_000 + seed))
        choose = random.Random(seed).choice
        while not m.is_over:
            decision = m.decision
            assert decision is not None
            mix[decision] += 1
            m.apply(choose(m.legal_actions()))
    return mix


def pin_to_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (os.sched_setaffinity is not available here)"
    try:
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
    except OSError as error:
        return f"not pinned ({error})"
    return f"pinned to CPU core {core} with os.sched_setaffinity"


def load_average() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except OSError:
        return None


def show_load(load: tuple[float, float, float] | None) -> str:
    return "unknown" if load is None else ", ".join(f"{x:.2f}" for x in load)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


# -- the report -----------------------------------------------------------------------------


def verdict(met: bool) -> str:
    return "MET" if met else "NOT MET"


def benchmark(repeats: int, seconds: float, seed: int) -> None:
    pinning = pin_to_one_core()
    print("UNO rules-engine benchmark: decisions/s, uniform-random policies, "
          "an observation for every decision")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"{platform.system()} {platform.machine()}, {cpu_model()}")
    print(f"rlcard {version('rlcard')}, numpy {np.__version__}; {pinning}")
    load_before = load_average()
    print(f"load average before (1, 5, 15 min): {show_load(load_before)}")
    print(f"{repeats} repetitions x >= {seconds:g} s of whole matches/games per configuration, "
          "configurations interleaved, fresh seeds each repetition; median (min-max) shown")
    print()

    for players in PLAYER_COUNTS:
        check_env_run_counting(players)
    for config in CONFIGS:  # warm-up, untimed
        config.run(config.players, seed - 1, 0.0)

    samples: dict[tuple[str, int], list[Sample]] = {(c.key, c.players): [] for c in CONFIGS}
    for rep in range(repeats):
        if sys.stderr.isatty():
            print(f"  repetition {rep + 1}/{repeats}...", file=sys.stderr, flush=True)
        for config in CONFIGS:
            gc.collect()
            sample = config.run(config.players, seed + rep * 1_000_003, seconds)
            samples[config.key, config.players].append(sample)

    def median(key: str, players: int) -> float:
        return statistics.median([s.rate for s in samples[key, players]])

    header = (f"{'engine':<36} {'players':>7} {'decisions/s':>12} {'(min - max)':>21} "
              f"{'games':>7} {'decisions/game':>15} {'CPU share':>10}")
    print(header)
    print("-" * len(header))
    lowest_share = 1.0
    for players in PLAYER_COUNTS:
        for config in [c for c in CONFIGS if c.players == players]:
            runs = samples[config.key, players]
            rates = [s.rate for s in runs]
            games = sum([s.games for s in runs])
            per_game = sum([s.decisions for s in runs]) / games
            spread = f"({min(rates):,.0f} - {max(rates):,.0f})"
            share = min([s.cpu_seconds / s.seconds for s in runs])
            lowest_share = min(lowest_share, share)
            print(f"{config.label:<36} {players:>7} {median(config.key, players):>12,.0f} "
                  f"{spread:>21} {games:>7,} {per_game:>15,.1f} {share:>10.0%}")
    print("(ours: games are matches to 500; RLCard: games are single rounds; CPU share: the")
    print(" lowest process-CPU / wall-clock time of the repetitions, 100% = never preempted)")
    load_after = load_average()
    print(f"load average after (1, 5, 15 min): {show_load(load_after)} (this run adds about 1)")
    disturbances = []
    if lowest_share < CONTENDED_SHARE:
        disturbances.append(f"a repetition got only {lowest_share:.0%} of its core")
    if (load_before and load_before[0] > QUIET_LOAD) or (
        load_after and load_after[0] > QUIET_LOAD + 1
    ):
        disturbances.append("other processes were running (load average)")
    if disturbances:
        print(f"WARNING: {'; '.join(disturbances)}: figures from a busy machine (other work can "
              "slow a pinned core through a shared physical core or caches) are not reliable; "
              "run again on a quiet machine.")
    print()

    print("Ours / RLCard (medians)")
    for players in PLAYER_COUNTS:
        ours = median("ours", players)
        print(f"  {players} players: {ours / median('env', players):5.2f}x the env (reset/step), "
              f"{ours / median('run', players):5.2f}x env.run + RandomAgent, "
              f"{ours / median('raw', players):5.2f}x the raw game")
    print()

    print("Our decision mix under random play (RLCard has only play-or-draw decisions)")
    for players in PLAYER_COUNTS:
        mix = decision_mix(players)
        total = sum(mix.values())
        shares = ", ".join(
            f"{kind.name.lower().replace('_', '-')} {mix[kind] / total:.1%}"
            for kind in DecisionKind if kind in mix  # official play: the official kinds
        )
        play_or_draw = mix[DecisionKind.PLAY_OR_DRAW] / total
        adjusted = median("ours", players) * play_or_draw / median("env", players)
        print(f"  {players} players: {shares}")
        print(f"             counting only our play-or-draw decisions: {adjusted:.2f}x the env")
    print()

    print(f"Targets (from the issue): >= {TARGET_RATE:,} decisions/s with observations on one "
          f"core; >= {TARGET_RATIO:g}x RLCard's environment")
    for players in PLAYER_COUNTS:
        ours = median("ours", players)
        ratio = ours / median("env", players)
        print(f"  {players} players: {ours:>9,.0f} decisions/s  {verdict(ours >= TARGET_RATE):<8}"
              f"  {ratio:5.2f}x RLCard env  {verdict(ratio >= TARGET_RATIO)}")


def variant_options() -> list[tuple[str, RuleOptions]]:
    """Each variant alone (stack_two_on_four with stacking, which it needs), then all."""
    chosen = []
    for name in VARIANTS:
        settings = {name: True, **({"stacking": True} if name == "stack_two_on_four" else {})}
        chosen.append((name, RuleOptions(**settings)))
    chosen.append(("all of them", RuleOptions(**dict.fromkeys(VARIANTS, True))))
    return chosen


def house_rules(repeats: int, seconds: float, seed: int) -> None:
    """Our rate under each variant, next to the official rate of the same run."""
    print(f"House rules (docs/rules.md §21-§32): ours, decisions/s with observations; {repeats} "
          f"repetitions x >= {seconds:g} s, configurations interleaved; median (min-max)")
    rows = [("official (no variant)", OFFICIAL), *variant_options()]
    runs: dict[tuple[str, int], list[Sample]] = {(n, p): [] for n, _ in rows
                                                 for p in PLAYER_COUNTS}
    for _, options in rows:  # warm-up
        run_ours(2, seed - 1, 0.0, options)
    for rep in range(repeats):
        for players in PLAYER_COUNTS:
            for name, options in rows:
                gc.collect()
                runner = functools.partial(run_ours, options=options)
                runs[name, players].append(runner(players, seed + rep * 7919, seconds))
    header = f"{'rules':<24} " + " ".join(
        f"{f'{p} players':>22} {'vs official':>11}" for p in PLAYER_COUNTS)
    print(header)
    print("-" * len(header))
    official = {p: statistics.median([s.rate for s in runs[rows[0][0], p]])
                for p in PLAYER_COUNTS}
    for name, _ in rows:
        cells = []
        for players in PLAYER_COUNTS:
            rates = [s.rate for s in runs[name, players]]
            rate = statistics.median(rates)
            cells.append(f"{rate:>9,.0f} ({min(rates):,.0f}-{max(rates):,.0f})"
                         f" {rate / official[players]:>10.2f}x")
        print(f"{name:<24} " + " ".join(f"{c:>34}" for c in cells))
    print()


def run_aec(players: int, seed: int, seconds: float) -> Sample:
    from arena.env import UnoEnv  # here: the env extra is optional

    env = UnoEnv(players)
    decisions = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        env.reset(seed=seed + games)
        choose = random.Random(seed * 16 + games).choice
        for _ in env.agent_iter():
            observed, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(choose(np.flatnonzero(observed["action_mask"]).tolist()))
            decisions += 1
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Sample(decisions, games, elapsed, time.process_time() - cpu)


def training_envs(repeats: int, seconds: float, seed: int) -> None:
    """Our AEC environment's steps per second next to RLCard's env, in the same run."""
    print(f"Training environments: steps/s, a random legal action and an observation each step; "
          f"{repeats} repetitions x >= {seconds:g} s, interleaved; median (min-max)")
    rows: list[tuple[str, Callable[[int, int, float], Sample]]] = [
        ("arena.env UnoEnv: last/step", run_aec), ("RLCard env: reset/step", run_env_step)]
    for label, runner in list(rows):  # warm-up, untimed; a runner that cannot run says why
        try:
            runner(2, seed - 1, 0.0)
        except Exception as error:  # an optional extra missing, or RLCard failing here
            print(f"  {label}: cannot run here ({type(error).__name__}: {error})")
            rows.remove((label, runner))
    runs: dict[tuple[str, int], list[Sample]] = {(n, p): [] for n, _ in rows
                                                 for p in PLAYER_COUNTS}
    for rep in range(repeats):
        for players in PLAYER_COUNTS:
            for label, runner in rows:
                gc.collect()
                runs[label, players].append(runner(players, seed + rep * 7919, seconds))
    header = (f"{'environment':<30} {'players':>7} {'steps/s':>10} {'(min - max)':>21} "
              f"{'games':>7} {'CPU share':>10}")
    print(header)
    print("-" * len(header))
    medians: dict[tuple[str, int], float] = {}
    for players in PLAYER_COUNTS:
        for label, _ in rows:
            rates = [s.rate for s in runs[label, players]]
            medians[label, players] = statistics.median(rates)
            spread = f"({min(rates):,.0f} - {max(rates):,.0f})"
            games = sum([s.games for s in runs[label, players]])
            share = min([s.cpu_seconds / s.seconds for s in runs[label, players]])
            print(f"{label:<30} {players:>7} {medians[label, players]:>10,.0f} {spread:>21} "
                  f"{games:>7,} {share:>10.0%}")
    if len(rows) == 2:
        ratios = ", ".join(f"{p} players {medians[rows[0][0], p] / medians[rows[1][0], p]:.2f}x"
                           for p in PLAYER_COUNTS)
        print(f"(ours: matches to 500; RLCard: single rounds)  ours / RLCard env: {ratios}")
    print()


def profile(matches: int, seed: int) -> None:
    print(f"cProfile of our 2-player loop: {matches} matches to 500, observation every decision; "
          f"{pin_to_one_core()}")
    decisions = 0
    profiler = cProfile.Profile()
    profiler.enable()
    for index in range(matches):
        m = Match(2, random.Random(seed + index))
        choose = choosers(seed + index, 2)
        while not m.is_over:
            seat = m.current_seat
            m.observation(seat)
            m.apply(choose[seat](m.legal_actions()))
            decisions += 1
    profiler.disable()
    print(f"{decisions:,} decisions; pstats merges functions with the same file:line(name), so "
          "NamedTuple constructors (<string>:1(<lambda>)) show one class's calls only")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed repetitions per configuration (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="minimum seconds per repetition (default 1.0)")
    parser.add_argument("--seed", type=int, default=2024, help="base seed (default 2024)")
    parser.add_argument("--profile", action="store_true",
                        help="run our 2-player loop under cProfile instead and print the top 25 "
                             "functions by tottime")
    parser.add_argument("--profile-matches", type=int, default=30,
                        help="matches to profile (default 30)")
    parser.add_argument("--variant-seconds", type=float, default=0.5,
                        help="minimum seconds per repetition of each house-rules "
                             "configuration (default 0.5; 3 repetitions)")
    parser.add_argument("--no-variants", action="store_true",
                        help="skip the house-rules section")
    parser.add_argument("--env-seconds", type=float, default=0.5,
                        help="minimum seconds per repetition of each training-environment "
                             "configuration (default 0.5; 3 repetitions)")
    parser.add_argument("--no-env", action="store_true",
                        help="skip the training-environments section")
    args = parser.parse_args(argv)
    if args.repeats < 1 or min(args.seconds, args.variant_seconds, args.env_seconds) <= 0:
        parser.error("--repeats must be at least 1, --seconds, --variant-seconds and "
                     "--env-seconds positive")
    if args.profile:
        profile(args.profile_matches, args.seed)
    else:
        benchmark(args.repeats, args.seconds, args.seed)
        if not args.no_variants:
            print()
            house_rules(3, args.variant_seconds, args.seed)
        if not args.no_env:
            if args.no_variants:  # the house rules' table ends with a blank line
                print()
            training_envs(3, args.env_seconds, args.seed)


if __name__ == "__main__":
    main()
