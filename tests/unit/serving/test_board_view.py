"""The board as shown: shared ranks for ties, figures on their grid, the CSV export."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from serving_doubles import empty_lines, oracle_lines

from sciverify.serving.auth import add_submitter
from sciverify.serving.board_view import board_csv, competition_ranks, figure, grid_decimals


def test_competition_ranks() -> None:
    assert competition_ranks([0.9, 0.8, 0.8, 0.7]) == [1, 2, 2, 4]
    assert competition_ranks([0.5, 0.5, 0.5]) == [1, 1, 1]
    assert competition_ranks([0.9, 0.8, 0.7, 0.7]) == [1, 2, 3, 3]
    assert competition_ranks([]) == []


def test_figures_are_printed_on_their_grid() -> None:
    assert grid_decimals(0.01) == 2 and grid_decimals(0.005) == 3 and grid_decimals(0.1) == 1
    assert grid_decimals(0.02) == 2 and grid_decimals(1.0) == 0
    assert figure(0.56, grid_decimals(0.01)) == "0.56"
    assert figure(0.5, 2) == "0.50" and figure(0.12345, 3) == "0.123" and figure(None) == "–"


def test_csv_cells_cannot_start_a_formula() -> None:
    entries = [
        {
            "rank": 1,
            "submitter": "=HYPERLINK(1)",
            "system": "+cmd",
            "created_at": "2026-11-24T10:00:00+00:00",
            "metrics": {"sentence_label": {"f1": 0.5}},
        }
    ]
    rows = list(csv.reader(io.StringIO(board_csv(entries, ["sentence_label"], 2, intervals=False))))
    assert rows == [
        ["rank", "team", "system", "submitted", "sentence_label_f1"],
        ["1", "'=HYPERLINK(1)", "'+cmd", "2026-11-24T10:00:00+00:00", "0.50"],
    ]


def _post(client, token: str, content: bytes, system: str):
    return client.post(
        "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("p.jsonl", content)},
        data={"system": system},
    )


def test_hidden_board_ties_share_a_rank_and_figures_read_0_56(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    db = client.app.state.db
    for team in ("team-a", "team-b", "team-c"):
        assert (
            _post(client, add_submitter(db, team), oracle_lines(gold_file), f"{team} sys").status_code == 201
        )
    assert _post(client, add_submitter(db, "team-d"), empty_lines(gold_file), "nothing").status_code == 201
    board = client.get("/api/leaderboard").json()
    assert [e["rank"] for e in board["entries"]] == [1, 1, 1]  # team-d released nothing
    page = client.get("/leaderboard").text
    assert '<td class="num">1.00</td>' in page and "1.000" not in page
    assert 'class="date"' in page and 'id="board-filter"' in page and "/static/leaderboard.js" in page
    sub = client.get(board["entries"][0]["url"]).text
    assert ">1.00<" in sub and "1.000" not in sub
    exported = client.get("/leaderboard.csv")
    assert exported.headers["content-type"].startswith("text/csv")
    assert "attachment" in exported.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(r["rank"], r["team"], r["sentence_label_f1"]) for r in rows] == [
        ("1", "team-a", "1.00"),
        ("1", "team-b", "1.00"),
        ("1", "team-c", "1.00"),
    ]


def test_public_board_keeps_three_decimals_and_intervals_in_the_csv(make_client, gold_file: Path) -> None:
    client = make_client(board=True, gold_public=True)
    token = add_submitter(client.app.state.db, "t")
    _post(client, token, oracle_lines(gold_file), "a")
    _post(client, token, oracle_lines(gold_file), "b")
    _post(client, token, empty_lines(gold_file), "c")
    assert [e["rank"] for e in client.get("/api/leaderboard").json()["entries"]] == [1, 1, 3]
    rows = list(csv.DictReader(io.StringIO(client.get("/leaderboard.csv").text)))
    assert rows[0]["sentence_label_f1"] == "1.000" and rows[2]["sentence_label_f1_high"] == "0.000"
