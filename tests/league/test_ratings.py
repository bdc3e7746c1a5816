"""TrueSkill ratings of a season: one documented environment; each match a
free-for-all ranked by place (ties share a rank, disqualified last); results applied in
schedule order (match id) whatever order they come in."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.rating import ENVIRONMENT, Leaderboard, Outcome, Standing, rate_season
from arena.rating.trueskill_ratings import draw_margin, environment, probability_stronger, rate_two
from arena.rules.scoring import places


def seat(match_id: str, position: int, entrant: int, place: int, score: int = 0,
         disqualified: bool = False) -> Outcome:
    faults: tuple[dict[str, object], ...] = (
        ({"kind": "timeout", "reason": "no answer"},) if disqualified else ())
    return Outcome(match_id, entrant, position, place, score, rounds_won=0, strikes=0,
                        disqualified=disqualified, faults=faults)


def match(match_id: str, *entrant_places: tuple[int, int]) -> list[Outcome]:
    """One match: (entrant, place) per seat, seat 0 first."""
    return [seat(match_id, position, entrant, place)
            for position, (entrant, place) in enumerate(entrant_places)]


def by_entrant(board: Leaderboard) -> dict[int, Standing]:
    return {standing.entrant_id: standing for standing in board.standings}


def random_season(rng: random.Random, entrants: int = 5, matches: int = 40
                  ) -> list[Outcome]:
    """Random tables of 2..4 with scores (so ties happen) and an occasional disqualification."""
    results = []
    for index in range(matches):
        match_id = f"m{index + 1:05d}"
        table = rng.sample(range(entrants), rng.randint(2, min(4, entrants)))
        scores = [rng.choice([0, 0, 50, 100, 500]) for _ in table]
        out = [position for position in range(len(table)) if rng.random() < 0.1]
        final = places(scores, disqualified=out)
        results += [seat(match_id, position, entrant, final[position], scores[position],
                         position in out) for position, entrant in enumerate(table)]
    return results


def sequential(results: list[Outcome]) -> dict[int, trueskill.Rating]:
    """The reference: ENVIRONMENT.rate applied match by match in match-id order."""
    ratings: dict[int, trueskill.Rating] = {}
    for match_id in sorted({r.match_id for r in results}):
        seats = sorted((r for r in results if r.match_id == match_id), key=lambda r: r.seat)
        teams = [(ratings.get(r.entrant_id, ENVIRONMENT.create_rating()),) for r in seats]
        rated = ENVIRONMENT.rate(teams, ranks=[r.place for r in seats])
        for r, (rating,) in zip(seats, rated, strict=True):
            ratings[r.entrant_id] = rating
    return ratings


# -- the environment ----------------------------------------------------------------------


def test_environment_is_the_documented_one() -> None:
    assert ENVIRONMENT.mu == 25
    assert ENVIRONMENT.sigma == pytest.approx(25 / 3)
    assert ENVIRONMENT.beta == pytest.approx(25 / 6)
    assert ENVIRONMENT.tau == 0
    assert ENVIRONMENT.draw_probability == pytest.approx(0.01)
    assert ENVIRONMENT.backend is None, "the built-in backend, not scipy"


def test_new_entrants_start_at_the_prior() -> None:
    board = rate_season([], [3, 1, 2])
    assert [s.entrant_id for s in board.standings] == [1, 2, 3], "ties broken by entrant id"
    for standing in board.standings:
        assert (standing.mu, standing.sigma) == (25, pytest.approx(25 / 3))
        assert standing.matches == 0 and standing.history == []
        assert standing.average_place == standing.average_score == standing.win_rate == 0


# -- ranks from places --------------------------------------------------------------------


def test_places_rank_the_free_for_all() -> None:
    board = rate_season(match("m00001", (7, 2), (8, 3), (9, 1)), [7, 8, 9])
    rated = by_entrant(board)
    assert rated[9].mu > rated[7].mu > 25 > rated[8].mu
    assert [s.entrant_id for s in board.standings] == [9, 7, 8]
    assert (rated[9].wins, rated[7].wins, rated[8].wins) == (1, 0, 0)
    assert (rated[9].average_place, rated[7].average_place) == (1, 2)
    expected = ENVIRONMENT.rate([(ENVIRONMENT.create_rating(),)] * 3, ranks=[1, 2, 0])
    for entrant, (rating,) in zip((7, 8, 9), expected, strict=True):
        assert (rated[entrant].mu, rated[entrant].sigma) == (rating.mu, rating.sigma)


# TrueSkill's message passing over a chain of ranks is not exactly symmetric: two tied
# players at different ends of a draw link come out about 1e-4 apart (the library's own
# result, whatever min_delta), so "equal" means equal to well within a thousandth.
TIED = 1e-3


def test_shared_places_are_draws_and_share_the_win() -> None:
    # Places 1, 1, 3 (a tie for first); ranks only count in order, so 1, 1, 3 ~ 0, 0, 1.
    rated = by_entrant(rate_season(match("m00001", (1, 1), (2, 1), (3, 3)), [1, 2, 3]))
    assert rated[1].wins == rated[2].wins == 0.5
    assert rated[3].wins == 0
    assert rated[1].mu == pytest.approx(rated[2].mu, abs=TIED)
    assert rated[1].sigma == pytest.approx(rated[2].sigma, abs=TIED)
    assert rated[1].mu > 25 > rated[3].mu
    draw = ENVIRONMENT.rate([(ENVIRONMENT.create_rating(),)] * 3, ranks=[0, 0, 1])
    assert rated[1].mu == pytest.approx(draw[0][0].mu)
    assert rated[3].mu == pytest.approx(draw[2][0].mu)


def test_a_two_seat_tie_is_a_draw() -> None:
    rated = by_entrant(rate_season(match("m00001", (1, 1), (2, 1)), [1, 2]))
    assert rated[1].wins == rated[2].wins == 0.5
    assert rated[1].mu == pytest.approx(rated[2].mu) == pytest.approx(25)
    assert rated[1].sigma < 25 / 3, "a draw is information too"


def test_competition_places_with_gaps_rank_like_dense_ranks() -> None:
    # scoring.places gives 1, 2, 2, 4: the gap must not matter.
    rated = by_entrant(rate_season(match("m00001", (1, 1), (2, 2), (3, 2), (4, 4)),
                                   [1, 2, 3, 4]))
    dense = ENVIRONMENT.rate([(ENVIRONMENT.create_rating(),)] * 4, ranks=[0, 1, 1, 2])
    for entrant, (rating,) in zip((1, 2, 3, 4), dense, strict=True):
        assert rated[entrant].mu == pytest.approx(rating.mu)
    assert rated[2].mu == pytest.approx(rated[3].mu, abs=TIED)


def test_disqualified_seat_ranks_last_whatever_its_score() -> None:
    # Seat 0 had the best score but was disqualified (§20): scoring.places puts it last.
    scores = [600, 100, 50]
    final = places(scores, disqualified=[0])
    assert final == (3, 1, 2)
    results = [seat("m00001", position, entrant, final[position], scores[position],
                    disqualified=position == 0) for position, entrant in enumerate((1, 2, 3))]
    board = rate_season(results, [1, 2, 3])
    assert [s.entrant_id for s in board.standings] == [2, 3, 1]
    rated = by_entrant(board)
    assert rated[1].mu < rated[3].mu < rated[2].mu
    assert rated[1].disqualifications == 1 and rated[1].faults == 1
    assert rated[1].wins == 0 and rated[2].wins == 1


# -- order --------------------------------------------------------------------------------


SEASON = random_season(random.Random(2026))


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(SEASON))
def test_result_is_independent_of_the_input_order(order: list[Outcome]) -> None:
    assert rate_season(order, range(5)) == rate_season(SEASON, range(5))


@pytest.mark.parametrize("split", [0, 1, 7, 20, len({o.match_id for o in SEASON})])
def test_going_on_from_earlier_standings_equals_rating_everything(split: int) -> None:
    """``start``: the standings after the first ``split`` matches, then the rest: the same
    leaderboard to the bit, and the standings started from are left as they were."""
    ids = sorted({o.match_id for o in SEASON})
    first = [o for o in SEASON if o.match_id in ids[:split]]
    rest = [o for o in SEASON if o.match_id in ids[split:]]
    earlier = rate_season(first, range(5))
    kept = repr(earlier)
    assert rate_season(rest, range(5), start=earlier.standings) == rate_season(SEASON,
                                                                                 range(5))
    assert repr(earlier) == kept
    # An entrant unknown to the earlier standings starts at the prior.
    later = rate_season([], range(6), start=earlier.standings)
    assert by_entrant(later)[5] == Standing(5)


def test_results_apply_in_match_id_order() -> None:
    shuffled = SEASON[::-1]
    rated = by_entrant(rate_season(shuffled, range(5)))
    reference = sequential(SEASON)
    for entrant, rating in reference.items():
        assert rated[entrant].mu == pytest.approx(rating.mu, abs=1e-9)
        assert rated[entrant].sigma == pytest.approx(rating.sigma, abs=1e-9)


def test_schedule_order_changes_the_ratings() -> None:
    """TrueSkill is order-dependent: the same results under other match ids rate otherwise
    (which is why completion order must never be used)."""
    first = match("m00001", (1, 1), (2, 2)) + match("m00002", (1, 2), (2, 1))
    swapped = match("m00002", (1, 1), (2, 2)) + match("m00001", (1, 2), (2, 1))
    a, b = by_entrant(rate_season(first, [1, 2])), by_entrant(rate_season(swapped, [1, 2]))
    assert a[1].mu < a[2].mu, "the later win weighs more"
    assert b[1].mu > b[2].mu
    assert a[1].mu == pytest.approx(b[2].mu)


def test_history_has_one_entry_per_match_in_schedule_order() -> None:
    board = rate_season(SEASON[::-1], range(5))
    for standing in board.standings:
        played = sorted({r.match_id for r in SEASON if r.entrant_id == standing.entrant_id})
        assert [entry[0] for entry in standing.history] == played
        assert standing.matches == len(played)
        assert standing.history[-1][1:] == (standing.mu, standing.sigma)


def test_counters() -> None:
    board = rate_season(SEASON, range(5))
    for standing in board.standings:
        mine = [r for r in SEASON if r.entrant_id == standing.entrant_id]
        assert standing.place_total == sum(r.place for r in mine)
        assert standing.score_total == sum(r.score for r in mine)
        assert standing.disqualifications == sum(r.disqualified for r in mine)
        assert standing.faults == sum(len(r.faults) for r in mine)
    assert sum(s.wins for s in board.standings) == pytest.approx(
        len({r.match_id for r in SEASON}))


# -- the leaderboard ----------------------------------------------------------------------


def test_leaderboard_sorted_by_conservative_rating_with_adjacent_probabilities() -> None:
    board = rate_season(SEASON, range(5))
    conservative = [s.conservative for s in board.standings]
    assert conservative == sorted(conservative, reverse=True)
    for standing in board.standings:
        assert standing.conservative == standing.mu - 3 * standing.sigma
    assert board.outranks_next[-1] is None
    assert len(board.outranks_next) == len(board.standings)
    for upper, lower, probability in zip(board.standings, board.standings[1:],
                                         board.outranks_next, strict=False):
        assert probability == probability_stronger(upper, lower)


def test_probability_stronger_is_one_half_for_equal_ratings() -> None:
    assert probability_stronger(Standing(1), Standing(2)) == pytest.approx(0.5)
    assert probability_stronger(Standing(1, mu=30, sigma=2), Standing(2, mu=30, sigma=5)) \
        == pytest.approx(0.5)


@given(mu1=st.floats(-50, 80), mu2=st.floats(-50, 80), sigma1=st.floats(0.01, 10),
       sigma2=st.floats(0.01, 10))
def test_probability_stronger_is_phi_of_the_standardised_difference(
        mu1: float, mu2: float, sigma1: float, sigma2: float) -> None:
    upper, lower = Standing(1, mu=mu1, sigma=sigma1), Standing(2, mu=mu2, sigma=sigma2)
    probability = probability_stronger(upper, lower)
    expected = NormalDist().cdf((mu1 - mu2) / math.sqrt(sigma1**2 + sigma2**2))
    assert probability == pytest.approx(expected, abs=1e-12)
    assert probability + probability_stronger(lower, upper) == pytest.approx(1)
    if mu1 > mu2 + 1e-6:
        assert probability > 0.5


# -- the closed-form two-player update ------------------------------------------------------


@pytest.mark.parametrize("draw_probability", [0.001, 0.01, 0.2])
def test_two_player_closed_form_is_the_librarys_update(draw_probability: float) -> None:
    env = environment(draw_probability)
    margin = draw_margin(env)
    rng = random.Random(11)
    for _ in range(500):
        first = (rng.uniform(5, 45), rng.uniform(0.5, 25 / 3))
        second = (rng.uniform(5, 45), rng.uniform(0.5, 25 / 3))
        places_ = rng.choice([(1, 2), (2, 1), (1, 1)])
        (a,), (b,) = env.rate([(env.create_rating(*first),), (env.create_rating(*second),)],
                              ranks=[places_[0] - 1, places_[1] - 1])
        after_first, after_second = rate_two(env, margin, first, second, *places_)
        assert after_first == pytest.approx((a.mu, a.sigma), abs=1e-9)
        assert after_second == pytest.approx((b.mu, b.sigma), abs=1e-9)


def test_a_two_player_season_matches_the_library_match_by_match() -> None:
    rng = random.Random(4)
    results: list[Outcome] = []
    for index in range(300):
        a, b = rng.sample(range(6), 2)
        ahead = rng.choice([(1, 2), (2, 1), (1, 1)])
        results += match(f"m{index + 1:05d}", (a, ahead[0]), (b, ahead[1]))
    reference = sequential(results)
    rated = by_entrant(rate_season(results, range(6)))
    for entrant, rating in reference.items():
        assert rated[entrant].mu == pytest.approx(rating.mu, abs=1e-8)
        assert rated[entrant].sigma == pytest.approx(rating.sigma, abs=1e-8)
