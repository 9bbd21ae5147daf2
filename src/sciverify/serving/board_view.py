"""How the leaderboard is shown: shared ranks for ties, figures printed on their grid, a CSV export.

Pure functions of the entries :class:`~sciverify.serving.leaderboard.Leaderboard` returns, so the page,
the JSON and the CSV cannot disagree.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["board_csv", "competition_ranks", "figure", "grid_decimals"]


def competition_ranks(values: Sequence[float]) -> list[int]:
    """Standard competition ranks ("1224") of ``values`` sorted best first: equal values share the
    rank of the first of them, and the next value's rank counts everyone above it."""
    ranks: list[int] = []
    for i, value in enumerate(values):
        ranks.append(ranks[-1] if i and value == values[i - 1] else i + 1)
    return ranks


def grid_decimals(grid: float) -> int:
    """Decimals needed to print a multiple of ``grid`` exactly: 2 for 0.01, 3 for 0.005."""
    for decimals in range(7):
        if math.isclose(round(grid, decimals), grid, rel_tol=0, abs_tol=1e-12):
            return decimals
    return 6


def figure(value: float | None, decimals: int = 3) -> str:
    """``value`` with ``decimals`` decimals (a released 0.56 on a 0.01 grid reads "0.56", not "0.560")."""
    if value is None:
        return "–"
    return f"{value:.{decimals}f}"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: a team-chosen name cannot start a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def board_csv(
    entries: Sequence[Mapping[str, Any]], families: Sequence[str], decimals: int, intervals: bool
) -> str:
    """The board as CSV: rank, team, system, date, one F1 column per family (and interval ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ["rank", "team", "system", "submitted"]
    for family in families:
        header.append(f"{family}_f1")
        if intervals:
            header += [f"{family}_f1_low", f"{family}_f1_high"]
    writer.writerow(header)
    for e in entries:
        row = [str(e["rank"]), _cell(e["submitter"]), _cell(e["system"]), e["created_at"]]
        for family in families:
            m = e["metrics"][family]
            row.append(figure(m["f1"], decimals))
            if intervals:
                row += [figure(m.get("f1_low"), decimals), figure(m.get("f1_high"), decimals)]
        writer.writerow(row)
    return out.getvalue()
