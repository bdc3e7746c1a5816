"""The fit behind the official standings (``arena.rating.official``).

The model is Bradley-Terry over "who finished ahead of whom": every pair of seats at a
table is one comparison (the one placed better wins it; a tie counts half to each), the
same statistic as the head-to-head page. Its sufficient statistic is the matrix of those
counts, a sum over matches, so the fit cannot depend on the order results arrive in, and
its cost does not grow with the number of matches once the matrix is built. The fit is the
maximum likelihood (Newton steps, ``fit_strengths``; the tests check it against ``choix``'s
Luce spectral ranking) with a weak prior (``PRIOR_TIE``), so a bot that won or lost everything still
gets a finite strength.

Why not TrueSkill Through Time in one batch (``trueskillthroughtime`` 1.1.0)? Tried on
simulated seasons like the sample one: it handles multi-player tables and ties and found
about the same order, but it is pure-Python message passing over every match, swept in
input order until it converges, and within its default 30 sweeps it did not: fed the same
150 results shuffled, means moved by up to 0.30 (the strengths spanned 1.9), so it is not
order-independent in practice; one fit took 3.3 s for 150 matches and 51 s for 1,000
(10,000 would take minutes, a bootstrap of it hours); and its posterior would treat every
match as independent, which the two matches of a duplicate deal are not. This fit takes
milliseconds, is exactly order-independent, and its bootstrap resamples per-match win
matrices (a sparse sum), so its cost grows with the entrants squared, hardly with the
results. The standings of 200 bots at 50,000 results (fit and 200 resamples) took 8.5 s
with scipy's L-BFGS, 1.5-2.6 s with a Newton fit (``fit_strengths``) of each resample,
and take 0.47-0.94 s with the resamples' chord steps (``ResampleFit``), each run's mean
3 to 3.5 times less: the last two side by side, four runs of three, on seasons like
``benchmarks.scale``'s (two seats, duplicate deals, 4 matches a pair) on a shared 2-core
machine at load 2.5-3.5, hence the spread; at 10,000 results 1.3-2.2 s and 0.37-0.67 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rating.outcome import Outcome

PRIOR_TIE = 0.1
"""Virtual result added between every two rated entrants, this much of a win each way (a
weak prior towards equal strengths): strengths stay finite when a bot never lost or never
won, and entrants who never met are still compared through the others."""
DIGITS = 8
"""Strengths equal to this many decimals are equal (the fit converges far closer; exactly
tied entrants, such as two copies of one deterministic bot, must not be ordered by noise)."""
NEWTON_STEPS = 100
GRADIENT_TOLERANCE = 1e-11
"""Newton stops once no entrant's gradient exceeds this share of the most wins (far below
``DIGITS``: the strengths are then exact to about 1e-10)."""
CHORD_STEPS = 25
"""Most gradients a resample's chord iteration (``ResampleFit``) evaluates before it falls
back to ``fit_strengths`` (12 to 22, 13.5 on average, at 200 entrants and 50,000 results)."""
CHORD_SHRINK = 0.5
"""Each chord step must shrink the largest gradient to this share of the last one, or the
resample falls back (the slowest step of any resample at 200 entrants and 50,000 results:
0.41; far from the full fit the steps shrink it by 0.6 to 0.9, Newton's much faster)."""
CHORD_FALLBACKS = 10
"""After this many fallbacks the rest of a bootstrap goes straight to ``fit_strengths``: a
season with few results a bot has resamples too far apart for the chord (184 of 200 fell
back at 20 entrants and 100 results; none at 200 entrants with 1,000 or 50,000)."""
ROUNDING_REACH = 2 * 10.0**-DIGITS
"""Values further apart than this round apart at ``DIGITS`` decimals (rounding moves each by
at most half of 10^-DIGITS; twice that leaves room for the subtraction's own rounding), so
only closer ones need rounding to be compared."""


@dataclass(frozen=True)
class UnitWins:
    """Each resampling unit's win matrix, flattened (cell ``a * n + b`` counts the times
    ``entrants[a]`` finished ahead of ``entrants[b]``) and stacked as a sparse matrix of
    one row a unit, as (row, cell, count) entries ordered by row then cell. Summed with
    ``np.bincount``, as fast as the scipy.sparse product it replaced (200 resamples at
    50,000 results: 0.046 s and 0.042 s in one run, 0.079 s and 0.119 s in another;
    ``python -m benchmarks.standings --scale`` times both side by side), without importing
    ``scipy.sparse`` (0.2 s of every report's ratings)."""

    rows: NDArray[np.int64]
    cells: NDArray[np.int64]
    counts: NDArray[np.float64]
    units: int
    entrants: int

    def wins(self, weights: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """The win matrix of the season (every unit once), or of a resample that takes
        unit ``u`` ``weights[u]`` times. Exact: the counts are halves, the weights whole."""
        counts = self.counts if weights is None else self.counts * weights[self.rows]
        flat = np.bincount(self.cells, weights=counts, minlength=self.entrants ** 2)
        return np.asarray(flat, dtype=np.float64).reshape(self.entrants, self.entrants)

    def cells_of(self, row: int) -> dict[int, float]:
        """Unit ``row``'s cells and their counts."""
        held = self.rows == row
        return dict(zip(self.cells[held].tolist(), self.counts[held].tolist(), strict=True))


def comparison_units(outcomes: Sequence[Outcome], entrants: Sequence[int]
                     ) -> tuple[list[str], UnitWins]:
    """The resampling units and, per unit, its flattened win matrix: entry ``a * n + b``
    counts the times ``entrants[a]`` finished ahead of ``entrants[b]``. Units are ordered
    by what they hold, not by their labels, so the bootstrap (and so every figure of the
    standings) depends on the results alone: not on their order, ids or deal labels.

    That order is the one of ``(sorted(cells.items()), label)``, each unit's cells summed
    and ordered with numpy (the counts are sums of halves: exact in any order) rather than
    a dict and a list of pairs per unit (about 1 s at 50,000 results)."""
    index = {entrant: i for i, entrant in enumerate(entrants)}
    size = len(entrants)
    # Each seat's match, entrant and place as arrays, one list comprehension per field,
    # and every two seats of a match paired with numpy (pairing them in a loop over the
    # matches took 0.13-0.2 s at 50,000 results, this about 0.09 s).
    match_code: dict[str, int] = {}  # each match, numbered as first met
    match_of = np.array([match_code.setdefault(o.match_id, len(match_code)) for o in outcomes],
                        dtype=np.int64)
    entrant_of = np.array([index[o.entrant_id] for o in outcomes], dtype=np.int64)
    place_of = np.array([o.place for o in outcomes], dtype=np.int64)
    seating = np.argsort(match_of, kind="stable")  # a match's seats together, as recorded
    match_at = match_of[seating]
    firsts = np.flatnonzero(np.diff(match_at, prepend=-1))
    code: dict[str, int] = {}  # each unit's label (its match's first seat's), as first met
    unit_of_match = np.array([code.setdefault(outcomes[k].unit, len(code))
                              for k in seating[firsts].tolist()], dtype=np.int64)
    owner_parts: list[NDArray[np.int64]] = []
    cell_parts: list[NDArray[np.int64]] = []
    value_parts: list[NDArray[np.float64]] = []
    # Every two seats of a match: the seats `apart` places apart in the grouped order.
    widest_table = int(np.bincount(match_of).max()) if len(outcomes) else 0
    for apart in range(1, widest_table):
        first = np.flatnonzero(match_at[apart:] == match_at[:-apart])
        one, other = seating[first], seating[first + apart]
        unit = unit_of_match[match_of[one]]
        for seat, rival in ((one, other), (other, one)):
            ahead = place_of[seat] <= place_of[rival]  # a win, or a tie (half to each)
            front, back = seat[ahead], rival[ahead]
            owner_parts.append(unit[ahead])
            cell_parts.append(entrant_of[front] * size + entrant_of[back])
            value_parts.append(np.where(place_of[front] < place_of[back], 1.0, 0.5))
    owners = np.concatenate(owner_parts) if owner_parts else np.zeros(0, dtype=np.int64)
    cells = np.concatenate(cell_parts) if cell_parts else np.zeros(0, dtype=np.int64)
    values = np.concatenate(value_parts) if value_parts else np.zeros(0)
    labels = list(code)
    # One entry a (unit, cell), in that order: unit and cell packed into one key.
    keys, where = np.unique(owners * size * size + cells, return_inverse=True)
    counts = np.bincount(where, weights=values, minlength=len(keys))
    unit_of, cell_of = np.divmod(keys, size * size)
    held = np.bincount(unit_of, minlength=len(labels))
    # Each unit's cells as a row, padded with -1 (below any cell: a unit whose cells
    # begin another's sorts first, as a shorter list does).
    widest = int(held.max()) if len(labels) else 0
    place = np.arange(len(keys)) - (np.cumsum(held) - held)[unit_of]
    padded_cells = np.full((len(labels), widest), -1, dtype=np.int64)
    padded_counts = np.full((len(labels), widest), -1.0)
    padded_cells[unit_of, place] = cell_of
    padded_counts[unit_of, place] = counts
    label_rank = np.empty(len(labels), dtype=np.int64)
    label_rank[sorted(range(len(labels)), key=labels.__getitem__)] = np.arange(len(labels))
    sort_keys = [label_rank]  # np.lexsort: the last key first
    for column in reversed(range(widest)):
        sort_keys += [padded_counts[:, column], padded_cells[:, column]]
    ordered = np.lexsort(sort_keys) if len(labels) else np.arange(0)
    row_of = np.empty(len(labels), dtype=np.int64)
    row_of[ordered] = np.arange(len(labels))
    rows = row_of[unit_of]
    entries = np.argsort(rows, kind="stable")  # by row, then cell (keys are by cell)
    return [labels[u] for u in ordered.tolist()], UnitWins(
        rows[entries], cell_of[entries], np.asarray(counts[entries], dtype=np.float64),
        len(labels), size)


def fit_strengths(wins: NDArray[np.float64],
                  start: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Bradley-Terry log-strengths from a win matrix (wins[i, j]: i ahead of j), mean 0:
    the maximum of the likelihood, with ``PRIOR_TIE`` added between every two entrants.

    Solved by Newton's method on the dense matrix (the log-likelihood is concave; its
    Hessian is a weighted graph Laplacian, made definite by adding the all-ones matrix,
    which pins the mean without changing the step), damped (Levenberg-Marquardt) while it
    does not raise the likelihood; a step that meets the tolerance is taken even when
    rounding hides its gain in the likelihood (requiring a rise there costs a few damped
    steps a fit and can end 1e-8 short). Each step costs the entrants squared for the
    gradient plus one Cholesky solve (entrants cubed, about 1 ms at 200), whatever the
    number of matches;
    from a warm start (the full fit) it takes 3 or 4 steps, where scipy's L-BFGS takes
    about 100 evaluations (the bootstrap at 50,000 results, 200 entrants: 8.5 s with
    L-BFGS). The bootstrap calls it only for the resamples that ``ResampleFit``'s cheaper
    steps do not settle. (choix's ``ilsr_pairwise_dense`` finds the same maximum, to 1e-8
    here, and is what the tests check this against; each of its iterations solves for a
    stationary distribution: about 0.1 s at 200 entrants.)"""
    from scipy.linalg import cho_factor, cho_solve
    from scipy.special import expit
    size = len(wins)
    total = wins + PRIOR_TIE * (1.0 - np.eye(size))
    games = total + total.T
    won = total.sum(axis=1)

    def gradient_at(theta: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        ahead = expit(theta[:, None] - theta[None, :])
        gradient = won - np.einsum("ij,ij->i", games, ahead)
        return ahead, gradient, float(np.max(np.abs(gradient)))

    def log_likelihood(ahead: NDArray[np.float64]) -> float:
        # log(ahead) is each comparison's log-probability (a third of logaddexp's cost);
        # a probability that underflowed to 0 makes it -inf: a step never taken.
        with np.errstate(divide="ignore"):
            return float(np.sum(total * np.log(ahead)))

    theta = np.zeros(size) if start is None else start - start.mean()
    ahead, gradient, norm = gradient_at(theta)
    tolerance = GRADIENT_TOLERANCE * (1.0 + float(won.max()))
    damping = 0.0
    identity = np.eye(size)
    # The likelihood at theta: the accepted candidate's is kept, so each step evaluates
    # it once (from the comparisons' probabilities, which its gradient needs anyway).
    here: float | None = None
    for _ in range(NEWTON_STEPS):
        if norm <= tolerance:
            break
        matrix = newton_matrix(games, ahead)
        if here is None:
            here = log_likelihood(ahead)
        # Levenberg-Marquardt: a Newton step if it raises the likelihood, else the
        # diagonal is lifted until the step does (a lifted step tends to a short gradient
        # step, which always does; the likelihood is concave, so this converges from any
        # start). Lifting also restores a Cholesky factor that floating point lost: far
        # from the maximum the comparisons' weights underflow.
        scale = 1.0 + float(matrix.diagonal().max())
        while True:
            try:
                factor = cho_factor(matrix + damping * scale * identity, check_finite=False)
                candidate = theta + cho_solve(factor, gradient, check_finite=False)
                found = gradient_at(candidate)
                # A step onto the maximum (the tolerance met) is taken even when
                # rounding hides its gain in the likelihood; otherwise it must raise it.
                value = None if found[2] <= tolerance else log_likelihood(found[0])
                if value is None or value >= here:
                    break
            except np.linalg.LinAlgError:
                pass
            damping = max(damping * 10, 1e-9)
            if damping > 1e9:
                break
        if damping > 1e9:
            break  # no step raises it in floating point: this is the maximum
        damping = damping / 100 if damping > 1e-7 else 0.0  # trust Newton again
        theta, here = candidate, value
        ahead, gradient, norm = found
    strengths: NDArray[np.float64] = theta - theta.mean()
    return strengths


def newton_matrix(games: NDArray[np.float64], ahead: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """Minus the log-likelihood's Hessian plus the all-ones matrix: the comparisons'
    weights ``games * ahead * (1 - ahead)`` off the diagonal, negated, and their row sums
    on it. The all-ones matrix makes it definite and pins the mean without changing a
    step (the gradient sums to 0)."""
    weight = games * ahead * (1.0 - ahead)
    matrix: NDArray[np.float64] = 1.0 - weight
    np.fill_diagonal(matrix, weight.sum(axis=1) + 1.0)
    return matrix


class ResampleFit:
    """The bootstrap's fits. A resample's maximum is near the full fit's, so it is found
    from there by the chord method: Newton steps with the full fit's Newton matrix held
    fixed, inverted once, so a step is one product with it and one gradient (without
    ``expit``: ``_expected_wins``), where a step of ``fit_strengths`` factorises a new
    matrix and evaluates the likelihood (about 1.3 ms a step at 200 entrants, a chord step
    under 0.1 ms). The matrix's rows and columns are scaled to the resample's own diagonal at
    the full fit (a resample changes how many games each entrant has: 13.5 gradients a
    resample rather than 15.9 at 200 entrants and 50,000 results). The steps stop at
    ``fit_strengths``' own tolerance: the same maximum, as close as two of its own fits
    from different starts (within 3e-10 of a Newton fit on each of the 200 resamples at
    200 entrants and 50,000 results; a bot that won or lost everything sits on a flat
    slope, where any two fits differ by up to a few 1e-9).

    A resample too far from the full fit (a step that does not shrink the gradient by
    ``CHORD_SHRINK``, or no convergence in ``CHORD_STEPS``) falls back to
    ``fit_strengths`` from the best point the steps reached, and after
    ``CHORD_FALLBACKS`` of those the rest go straight to it (from the full fit)."""

    def __init__(self, wins: NDArray[np.float64], strengths: NDArray[np.float64]) -> None:
        """``wins`` and ``strengths``: the full season's win matrix and its fit."""
        size = len(wins)
        from scipy.special import expit
        self.prior = PRIOR_TIE * (1.0 - np.eye(size))
        total = wins + self.prior
        ahead = expit(strengths[:, None] - strengths[None, :])
        matrix = newton_matrix(total + total.T, ahead)
        self.inverse = np.linalg.inv(matrix)
        self.variance = ahead * (1.0 - ahead)  # each comparison's, at the full fit
        self.diagonal = matrix.diagonal().copy()
        self.start = strengths
        self.fallbacks = 0
        # Buffers every resample reuses.
        self.total = np.empty((size, size))
        self.games = np.empty((size, size))
        self.pairwise = np.empty((size, size))
        self.left = np.ones((size, 2))
        self.right = np.ones((2, size))
        self.ones = np.ones(size)

    def __call__(self, wins: NDArray[np.float64]) -> tuple[NDArray[np.float64], bool]:
        """The strengths ``fit_strengths(wins)`` finds, and whether the chord steps found
        them (False: they fell back to ``fit_strengths``)."""
        if self.fallbacks >= CHORD_FALLBACKS:
            return fit_strengths(wins, start=self.start), False
        np.add(wins, self.prior, out=self.total)
        np.add(self.total, self.total.T, out=self.games)
        won = self.total.sum(axis=1)
        tolerance = GRADIENT_TOLERANCE * (1.0 + float(won.max()))  # fit_strengths' own
        # The fixed matrix as if built from this resample's games (its diagonal only).
        diagonal = np.einsum("ij,ij->i", self.games, self.variance) + 1.0
        scale = np.sqrt(self.diagonal / diagonal)
        theta = best = self.start
        least = np.inf
        for _ in range(CHORD_STEPS):
            gradient = won - self._expected_wins(theta)
            norm = float(np.max(np.abs(gradient)))
            if norm <= tolerance:
                strengths: NDArray[np.float64] = theta - theta.mean()
                return strengths, True
            if not norm <= CHORD_SHRINK * least:  # too slow (or overflowed): too far off
                break
            best, least = theta, norm
            theta = theta + scale * (self.inverse @ (scale * gradient))
        self.fallbacks += 1
        return fit_strengths(wins, start=best), False

    def _expected_wins(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each entrant's expected wins at ``theta``: the sum over j of ``games[i, j]``
        times ``w[i] / (w[i] + w[j])`` with ``w = exp(theta)`` (scaled so the largest is 1:
        no overflow). A sum, a division and a product over the matrix: about 0.07 ms at
        200 entrants, where ``expit`` of the differences alone takes 0.35 ms."""
        weight = np.exp(theta - theta.max())
        # w[i] + w[j] as the product of the columns (w, 1) and the rows (1, w): BLAS
        # writes it faster than numpy's broadcast sum, and as exactly.
        self.left[:, 0] = weight
        self.right[1] = weight
        np.matmul(self.left, self.right, out=self.pairwise)
        np.divide(self.games, self.pairwise, out=self.pairwise)
        expected: NDArray[np.float64] = weight * (self.pairwise @ self.ones)
        return expected


def rank_order(strengths: NDArray[np.float64]) -> NDArray[np.intp]:
    """Indices best first; strengths equal to ``DIGITS`` decimals by index (the bootstrap
    indexes the rated entrants by the full fit's order, its exact ties by entrant id: a
    resample's ties then fall as the full fit's, and the order is total). Sorted by the
    values; only runs of neighbours within ``ROUNDING_REACH`` are sorted again by their
    rounded values (Python's round: numpy's rounds differently at the halves)."""
    order = np.argsort(-strengths, kind="stable")
    values = strengths[order]
    runs: list[list[int]] = []
    for k in np.flatnonzero(values[:-1] - values[1:] <= ROUNDING_REACH).tolist():
        if runs and runs[-1][-1] == k:
            runs[-1].append(k + 1)
        else:
            runs.append([k, k + 1])
    for run in runs:
        order[run] = sorted(order[run].tolist(),
                            key=lambda i: (-round(float(strengths[i]), DIGITS), i))
    return order


def rank_spans(strengths: NDArray[np.float64]
                ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each entrant's best and worst rank (1-based): its place, or the places of the
    entrants tied with it at ``DIGITS`` decimals (whom nothing in these results orders).
    Only neighbours within ``ROUNDING_REACH`` are rounded to be compared, as in ``rank_order``."""
    order = rank_order(strengths)
    places = np.arange(1, len(order) + 1)
    best = np.empty(len(order), dtype=np.int64)
    worst = np.empty(len(order), dtype=np.int64)
    best[order] = places
    worst[order] = places
    values = strengths[order]
    tied = [k for k in np.flatnonzero(values[:-1] - values[1:] <= ROUNDING_REACH).tolist()
            if round(float(values[k]), DIGITS) == round(float(values[k + 1]), DIGITS)]
    runs: list[list[int]] = []  # places k..k+1 tied, runs of them joined
    for k in tied:
        if runs and runs[-1][1] == k:
            runs[-1][1] = k + 1
        else:
            runs.append([k, k + 1])
    for first, last in runs:
        best[order[first:last + 1]] = first + 1
        worst[order[first:last + 1]] = last + 1
    return best, worst


def shares_ahead(gaps: NDArray[np.float64]) -> NDArray[np.float64]:
    """1 for each gap above 0 at ``DIGITS`` decimals, 0.5 for one that rounds to 0, else 0;
    only the gaps within ``ROUNDING_REACH`` of 0 are rounded (with Python's round)."""
    shares = np.where(gaps > 0, 1.0, 0.0)
    for k in np.flatnonzero(np.abs(gaps) <= ROUNDING_REACH).tolist():
        gap = round(float(gaps[k]), DIGITS)
        shares[k] = 1.0 if gap > 0 else 0.5 if gap == 0 else 0.0
    return shares
