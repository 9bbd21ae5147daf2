"""Hidden gold: the probing attacks learn nothing, messages name only public ids, the Ladder rule holds.

The attack is the one that read labels out of the previous server: upload two complete files that
differ only in one claim's label (and, from fresh teams, files that predict only that claim), then
compare everything public about them. Every view must be the same once the submitter's own facts
(id, sha256, size, time, team name) are set aside.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.io import prediction_to_json, read_claims
from sciverify.scoring import oracle_predictions
from sciverify.serving.auth import add_submitter
from sciverify.serving.release import ReleaseRule, guarded, ladder_step, round_to_grid

FAMILIES = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")


def _post(client, token: str, content: bytes, name: str = "preds.jsonl"):
    return client.post(
        "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": (name, content)},
        data={"system": "probe"},
    )


def _file(gold: Path, probe: str | None = None, label: str = "SUPPORT", only: bool = False) -> bytes:
    """Oracle predictions (or nothing, with ``only``) for every gold claim; ``probe`` gets ``label``
    on its gold abstracts and gold sentences (``probe=None``: that claim is left empty)."""
    rows = []
    for pred in oracle_predictions(read_claims(gold)):
        row = prediction_to_json(pred)
        if str(pred.id) == probe and label:
            row["evidence"] = {
                d: {"label": label, "sentences": e["sentences"]} for d, e in row["evidence"].items()
            }
        elif str(pred.id) == probe or only:
            row["evidence"] = {}
        rows.append(row)
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _probe_claim(gold: Path, board=None) -> str:
    """The gold claim with the most rationale sentences: the one a probe moves the score most with.
    With ``board``, among the claims of its public part (the only ones public figures depend on)."""
    public = {str(c.id) for c in board.public_golds()} if board is not None else None
    best = max(
        (c for c in read_claims(gold) if c.evidence and (public is None or str(c.id) in public)),
        key=lambda c: sum(len(s.sentences) for sets in c.evidence.values() for s in sets),
    )
    return str(best.id)


def _normalise(text: str, sub: dict, team: str) -> str:
    for value in (sub["sha256"], f"{sub['size']} bytes", team):
        text = text.replace(str(value), "<own>")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00)?", "<time>", text)
    text = re.sub(rf'"size":\s*{sub["size"]}\b', '"size": 0', text)
    sid = sub["id"]
    text = text.replace(str(sid), "<id>")  # an opaque id: wherever a view names it
    # the upload's own id, wherever a view names it
    for pattern in (rf"submissions/{sid}\b", rf'"(submission_)?id":\s*{sid}\b', rf"[Ss]ubmission {sid}\b"):
        text = re.sub(pattern, "<id>", text)
    return text


def _public_views(client, response, team: str) -> list[tuple[str, int, str]]:
    """Every public view of one upload, with the submitter's own facts normalised away."""
    body = response.json()
    sub = body if "sha256" in body else client.get(f"/api/submissions/{body['submission_id']}").json()
    sid = sub["id"]
    views = [("upload", response.status_code, response.text)]
    for path in (
        f"/api/submissions/{sid}",
        f"/leaderboard/submissions/{sid}",
        f"/leaderboard/submissions/{sid}/report",
        "/api/leaderboard",
        "/leaderboard",
    ):
        r = client.get(path)
        views.append((path.replace(str(sid), "<id>"), r.status_code, r.text))
    return [(name, status, _normalise(text, sub, team)) for name, status, text in views]


def _assert_same(a: list[tuple[str, int, str]], b: list[tuple[str, int, str]]) -> None:
    """Equal views, or a failure showing the lines that differ."""
    import difflib

    for (name, status_a, text_a), (_, status_b, text_b) in zip(a, b, strict=True):
        diff = list(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), lineterm="", n=0))
        assert (status_a, diff) == (status_b, []), (name, diff[:12])


def test_two_complete_uploads_differing_in_one_label_look_the_same(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "prober")
    probe = _probe_claim(gold_file, client.app.state.leaderboard)
    base = _post(client, token, _file(gold_file, probe=probe, label=""))
    assert base.status_code == 201, base.text
    released = base.json()["released"]
    assert base.json()["metrics"] is None and released is not None  # the honest system is released
    support = _post(client, token, _file(gold_file, probe=probe, label="SUPPORT"))
    support_views = _public_views(client, support, "prober")
    contradict = _post(client, token, _file(gold_file, probe=probe, label="CONTRADICT"))
    contradict_views = _public_views(client, contradict, "prober")
    assert support.status_code == contradict.status_code == 201
    _assert_same(support_views, contradict_views)
    # and nothing moved: the team still shows what its honest upload released
    assert support.json()["released"] == contradict.json()["released"] == released
    # one of the two is right: the operator sees it, exactly
    exact = [client.app.state.leaderboard.get(r.json()["id"])[0].scores for r in (support, contradict)]
    assert exact[0]["sentence_label"]["f1"] != exact[1]["sentence_label"]["f1"]
    # a later one-claim probe from the same team changes nothing either
    only = _post(client, token, _file(gold_file, probe=probe, label="SUPPORT", only=True))
    assert only.json()["released"] == released


def test_one_claim_probes_from_fresh_teams_look_the_same(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    probe = _probe_claim(gold_file, client.app.state.leaderboard)
    views = []
    for i, label in enumerate(("SUPPORT", "CONTRADICT")):
        team = f"fresh-{i}"
        token = add_submitter(client.app.state.db, team)
        r = _post(client, token, _file(gold_file, probe=probe, label=label, only=True))
        assert r.status_code == 201 and r.json()["released"] is None
        views.append(_public_views(client, r, team))
    _assert_same(views[0], views[1])
    assert client.get("/api/leaderboard").json()["entries"] == []
    assert client.get("/leaderboard/submissions/1/report").status_code == 404


def test_incomplete_probes_get_the_same_messages(make_client, gold_file: Path) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    probe = _probe_claim(gold_file)
    answers = []
    for label in ("SUPPORT", "CONTRADICT"):
        line = [
            x
            for x in _file(gold_file, probe=probe, label=label).splitlines()
            if f'"id": {probe},' in x.decode()
        ]
        r = _post(client, token, line[0] + b"\n")
        assert r.status_code == 422
        body = r.json()
        answers.append((body["message"], body["problems"]))
    assert answers[0] == answers[1]


@pytest.fixture()
def public_claims(gold_file: Path, scifact_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """A public claims file: the gold's claims plus 40 other training claims, ids and texts only."""
    gold_ids = {str(c.id) for c in read_claims(gold_file)}
    extra = [c for c in read_claims(scifact_dir / "claims_train.jsonl") if str(c.id) not in gold_ids][:40]
    claims = [*read_claims(gold_file), *extra]
    claims.sort(key=lambda c: int(c.id))
    out = tmp_path / "public_claims.jsonl"
    out.write_text(
        "".join(json.dumps({"id": c.id, "claim": c.text}) + "\n" for c in claims), encoding="utf-8"
    )
    return out, [str(c.id) for c in extra]


def _public_lines(path: Path, gold: Path, drop: str | None = None) -> bytes:
    oracle = {str(p.id): prediction_to_json(p) for p in oracle_predictions(read_claims(gold))}
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cid = json.loads(line)["id"]
        if str(cid) != drop:
            rows.append(oracle.get(str(cid), {"id": cid, "evidence": {}}))
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def test_messages_name_only_public_ids(make_client, gold_file: Path, public_claims) -> None:
    claims_file, extra_ids = public_claims
    client = make_client(board=True, leaderboard_claims=claims_file)
    token = add_submitter(client.app.state.db, "t")
    gold_ids = [str(c.id) for c in read_claims(gold_file)]
    n_gold, n_public = len(gold_ids), len(gold_ids) + len(extra_ids)

    def problems_without(claim_id: str) -> list[str]:
        r = _post(client, token, _public_lines(claims_file, gold_file, drop=claim_id))
        assert r.status_code == 422
        return [p["message"].replace(claim_id, "<id>") for p in r.json()["problems"]]

    # leaving out a gold claim and leaving out a public non-gold claim read the same
    assert problems_without(gold_ids[0]) == problems_without(extra_ids[0])
    unknown = _post(client, token, b'{"id": 999999999, "evidence": {}}\n')
    texts = [p["message"] for p in unknown.json()["problems"]]
    assert any("999999999 is not in the leaderboard's claims file" in t for t in texts)
    everything = json.dumps(texts)
    assert "gold" not in everything and f" {n_gold} " not in everything
    empty = _post(client, token, b"")
    assert f"all {n_public} claims" in empty.text and f" {n_gold} " not in empty.text
    # a complete file over the public list is scored on the gold claims only: perfect, exactly
    ok = _post(client, token, _public_lines(claims_file, gold_file))
    assert ok.status_code == 201, ok.text
    exact = client.app.state.leaderboard.get(ok.json()["id"])[0].scores
    assert all(exact[f]["f1"] == 1.0 for f in FAMILIES)
    assert ok.json()["released"] == {f: 1.0 for f in FAMILIES}


def test_daily_budget(make_client, gold_file: Path) -> None:
    client = make_client(board=True, submissions_per_hour=10, submissions_per_day=2)
    token = add_submitter(client.app.state.db, "t")
    assert _post(client, token, b"x\n").status_code == 422
    assert _post(client, token, b"x\n").status_code == 422
    third = _post(client, token, b"x\n")
    assert third.status_code == 429 and "per day" in third.json()["message"]
    assert int(third.headers["Retry-After"]) > 3600


def test_operator_inspect_shows_exact_scores(make_client, gold_file: Path, tmp_path: Path) -> None:
    client = make_client(board=True)
    token = add_submitter(client.app.state.db, "t")
    sid = _post(client, token, _file(gold_file)).json()["id"]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciverify",
            "leaderboard",
            "inspect",
            str(sid),
            "--data-dir",
            str(tmp_path / "serve"),
            "--out",
            str(tmp_path / "op"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    view = json.loads(out.stdout)
    assert view["scores"]["sentence_label"]["f1"] == 1.0 and view["sets_release"] is True
    report = (tmp_path / "op" / f"submission-{sid}-report.html").read_text()
    assert "SciFact evaluation" in report
    missing = subprocess.run(
        [
            sys.executable,
            "-m",
            "sciverify",
            "leaderboard",
            "inspect",
            "999",
            "--data-dir",
            str(tmp_path / "serve"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        missing.returncode == 2
        and "no submission 999" in missing.stderr
        and "Traceback" not in missing.stderr
    )


# -- the release rule itself ----------------------------------------------------------------------
RULE = ReleaseRule(margin=0.02, grid=0.01, floor=0.1)


def _f1(x: float) -> dict[str, float]:
    return {f: x for f in FAMILIES}


def test_ladder_releases_only_past_floor_and_margin() -> None:
    assert ladder_step(None, _f1(0.099), RULE) is None
    first = ladder_step(None, _f1(0.4567), RULE)
    assert first == _f1(0.45)  # rounded down to the grid
    assert ladder_step(first, _f1(0.4699), RULE) == first  # 0.0199 above: below the margin
    assert ladder_step(first, _f1(0.30), RULE) == first  # worse: unchanged
    assert ladder_step(first, _f1(0.4712), RULE) == _f1(0.47)
    assert round_to_grid(0.2999, 0.01) == 0.29 and round_to_grid(0.3, 0.01) == 0.3  # 0.3/0.01 is 29.999...


def test_guard_raises_margin_and_floor_above_one_claim() -> None:
    # three claims; claim 0 alone holds 4 of the 8 relevant sentences (columns as COUNT_COLUMNS)
    from sciverify.scoring import COUNT_COLUMNS
    from sciverify.scoring.metrics import family_columns

    counts = np.zeros((3, len(COUNT_COLUMNS)), dtype=np.int64)
    c, ret, rel = family_columns("sentence_label")
    counts[:, c] = counts[:, ret] = counts[:, rel] = [4, 2, 2]
    rule = guarded(ReleaseRule(margin=0.01, grid=0.01, floor=0.05), counts)
    assert rule.margin == pytest.approx(0.01 + 1.0 + 0.01)  # swing 2*4/8 = 1.0: a tiny gold is unusable
    assert rule.floor == pytest.approx(0.67)  # ceiling 2*4/(8+4) = 0.667, next grid step above


def test_migration_0002_keeps_older_rows(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from sciverify.serving.db import Database, migrations_dir

    db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    with db.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO submitters (id, name, token_hash, created_at) VALUES (1, 'old', 'h', '2025-01-01')"
        )
        conn.exec_driver_sql(
            "INSERT INTO submissions (submitter_id, created_at, system, filename, size, sha256, content,"
            " status, gold_sha256, scores, counts)"
            " VALUES (1, '2025-01-01', 's', 'f', 1, 'x', x'00', 'scored', 'g', '{}', '[]')"
        )
    db.migrate()
    with db.engine.connect() as conn:
        row = conn.execute(text("SELECT released, sets_release FROM submissions")).one()
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    db.dispose()
    assert tuple(row) == (None, 0) and version == _head()


def _head() -> str:
    from alembic.script import ScriptDirectory

    from sciverify.serving.db import migrations_dir

    return ScriptDirectory(str(migrations_dir())).get_current_head()
