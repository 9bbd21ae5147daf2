"""The private part of a hidden gold: many teams probing a private claim all see the same thing, nothing
public depends on private gold, and closing the phase publishes the ranking on the private part.

The attack these tests replay is the one that read 10 of 10 hidden labels out of the previous server:
fresh teams each upload the same good file with one claim changed (its label flipped, left out, or its
rationale replaced by one sentence) and compare the first releases. Every team's public view of its
upload (answer, submission page, JSON, its row on the board and in the CSV) must be the same whenever
the claim is private. The same probes on a public claim must differ, or the comparison would be blind.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sciverify.data.io import prediction_to_json, read_claims
from sciverify.data.splits import claim_groups, partition_claims
from sciverify.errors import ConfigError
from sciverify.scoring import oracle_predictions
from sciverify.serving.auth import add_submitter

FAMILIES = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")


# -- the gold, its parts and the files teams upload ------------------------------------------------
@pytest.fixture(scope="module")
def private_ids(gold_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """An operator's private-ids file: a seeded half of the gold, families together."""
    cut = partition_claims(read_claims(gold_file), 0.5, seed=7)
    out = tmp_path_factory.mktemp("private") / "private_ids.txt"
    out.write_text("# held back until the close\n" + "".join(f"{c.id}\n" for c in cut.private))
    return out, [str(c.id) for c in cut.private]


def _oracle(gold: Path) -> dict[str, dict]:
    return {str(p.id): prediction_to_json(p) for p in oracle_predictions(read_claims(gold))}


def _file(rows: dict[str, dict], changes: dict[str, dict] | None = None) -> bytes:
    rows = {**rows, **{k: {"id": rows[k]["id"], "evidence": v} for k, v in (changes or {}).items()}}
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows.values())


def _labelled(row: dict, label: str | None) -> dict:
    """The claim's evidence with every abstract given ``label`` (None: no evidence at all)."""
    if label is None:
        return {}
    return {d: {"label": label, "sentences": e["sentences"]} for d, e in row["evidence"].items()}


def _with_evidence(gold: Path, ids: set[str] | list[str], n: int) -> list[str]:
    """``n`` claims of ``ids`` with evidence, the most rationale sentences first (the strongest probes)."""
    claims = [c for c in read_claims(gold) if str(c.id) in set(ids) and c.evidence]
    claims.sort(key=lambda c: -sum(len(s.sentences) for sets in c.evidence.values() for s in sets))
    return [str(c.id) for c in claims[:n]]


def _post(client, token: str, content: bytes, key: str | None = None):
    headers = {"Authorization": f"Bearer {token}"}
    if key:
        headers["Idempotency-Key"] = key
    return client.post(
        "/api/submissions",
        headers=headers,
        files={"file": ("preds.jsonl", content)},
        data={"system": "probe"},
    )


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00)?")


def _team_view(client, response, team: str) -> list[tuple[str, int, str]]:
    """What the public can see of one team's upload, its own facts (id, hash, size, time, name) removed."""
    body = response.json()
    sid = body.get("id") or body.get("submission_id")
    own = [sid, team, body.get("sha256"), body.get("size")]

    def clean(text: str) -> str:
        for value in own:
            if value is not None:
                text = text.replace(str(value), "<own>")
        return _TIME.sub("<time>", text)

    views = [("upload", response.status_code, clean(response.text))]
    for path in (f"/api/submissions/{sid}", f"/leaderboard/submissions/{sid}"):
        r = client.get(path)
        views.append((path.replace(sid, "<id>"), r.status_code, clean(r.text)))
    board = client.get("/api/leaderboard").json()
    entry = [e for e in board["entries"] if e["submitter"] == team]
    for e in entry:
        for key in ("submission_id", "submitter", "created_at", "url"):
            e.pop(key)
    views.append(("board entry", 200, json.dumps([entry, board["release"], board["closed"]])))
    rows = [r for r in csv.DictReader(io.StringIO(client.get("/leaderboard.csv").text)) if r["team"] == team]
    views.append(
        (
            "csv row",
            200,
            json.dumps([{k: v for k, v in r.items() if k not in ("team", "submitted")} for r in rows]),
        )
    )
    return views


def _same(a: list[tuple[str, int, str]], b: list[tuple[str, int, str]]) -> bool:
    return [(s, t) for _, s, t in a] == [(s, t) for _, s, t in b]


def _diff(a: list[tuple[str, int, str]], b: list[tuple[str, int, str]]) -> list[str]:
    return [name for (name, sa, ta), (_, sb, tb) in zip(a, b, strict=True) if (sa, ta) != (sb, tb)]


# -- the split itself ------------------------------------------------------------------------------
def test_partition_keeps_families_together_and_is_seeded(gold_file: Path) -> None:
    golds = read_claims(gold_file)
    cut = partition_claims(golds, 0.5, seed=3)
    assert len(cut.public) + len(cut.private) == len(golds)
    groups = dict(zip((str(c.id) for c in golds), claim_groups(golds), strict=True))
    private_groups = {groups[str(c.id)] for c in cut.private}
    assert not any(groups[str(c.id)] in private_groups for c in cut.public), "a family straddles the cut"
    largest = max(list(groups.values()).count(g) for g in set(groups.values()))
    assert abs(len(cut.private) - len(golds) / 2) <= largest
    again = partition_claims(list(reversed(golds)), 0.5, seed=3)
    assert {c.id for c in again.private} == {c.id for c in cut.private}  # file order does not matter
    other = partition_claims(golds, 0.5, seed=4)
    assert {c.id for c in other.private} != {c.id for c in cut.private}
    assert partition_claims(golds, 0.0, seed=3).private == []
    with pytest.raises(ValueError):
        partition_claims(golds, 1.0)


def test_the_default_split_holds_back_half(make_client, gold_file: Path, tmp_path: Path) -> None:
    client = make_client(board=True)
    lb = client.app.state.leaderboard
    n = len(read_claims(gold_file))
    assert lb.has_private and abs(len(lb.public_golds()) - n / 2) < n / 10
    # without a private part (the fraction at 0) every gold claim is public, as before
    whole = make_client(board=True, leaderboard_private_fraction=0.0, data_dir=tmp_path / "whole")
    assert not whole.app.state.leaderboard.has_private
    assert len(whole.app.state.leaderboard.public_golds()) == n


def test_private_ids_file_problems_name_file_and_line(make_client, gold_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "ids.txt"
    bad.write_text("# ok\n\n999999999\n")
    with pytest.raises(ConfigError, match=r"ids.txt:3: claim id '999999999' is not in the leaderboard gold"):
        make_client(board=True, leaderboard_private_ids=bad)
    every = tmp_path / "all.txt"
    every.write_text("".join(f"{c.id}\n" for c in read_claims(gold_file)))
    with pytest.raises(ConfigError, match="every gold claim is private"):
        make_client(board=True, leaderboard_private_ids=every)
    with pytest.raises(ConfigError, match="a public gold has no private part"):
        make_client(board=True, gold_public=True, leaderboard_private_ids=every)


# -- the multi-team attack -------------------------------------------------------------------------
def test_fresh_teams_flipping_one_label_see_the_same_when_the_claim_is_private(
    make_client, gold_file: Path, private_ids
) -> None:
    ids_file, private = private_ids
    client = make_client(board=True, leaderboard_private_ids=ids_file)
    lb = client.app.state.leaderboard
    public = [str(c.id) for c in lb.public_golds()]
    oracle = _oracle(gold_file)
    targets = _with_evidence(gold_file, private, 3) + _with_evidence(gold_file, public, 1)
    views: dict[str, list] = {}
    n = 0
    for claim in targets:
        views[claim] = []
        for label in ("SUPPORT", "CONTRADICT", None):  # the attack's three variants of one claim
            n += 1
            team = f"sybil-{n:02d}"
            token = add_submitter(lb.db, team)
            r = _post(client, token, _file(oracle, {claim: _labelled(oracle[claim], label)}))
            assert r.status_code == 201, r.text
            views[claim].append(_team_view(client, r, team))
    baseline = views[targets[0]][0]
    for claim in targets[:3]:  # private: every variant of every claim reads the same
        for view in views[claim]:
            assert _same(view, baseline), (claim, _diff(view, baseline))
    public_claim = targets[3]  # public: the variants differ (the comparison is not blind)
    assert not all(_same(v, views[public_claim][0]) for v in views[public_claim][1:])
    # the N teams' released figures sit on the board with a shared rank
    entries = client.get("/api/leaderboard").json()["entries"]
    assert len(entries) == n and sum(e["rank"] == 1 for e in entries) >= 9


def test_fresh_teams_probing_one_claims_sentences_see_the_same_when_private(
    make_client, gold_file: Path, private_ids, scifact_dir: Path
) -> None:
    from sciverify.scoring import load_corpus_sizes

    ids_file, private = private_ids
    client = make_client(board=True, leaderboard_private_ids=ids_file)
    lb = client.app.state.leaderboard
    sizes = load_corpus_sizes(scifact_dir / "corpus.jsonl")
    oracle = _oracle(gold_file)
    public = [str(c.id) for c in lb.public_golds()]
    results = {}
    for kind, claim in (("private", _with_evidence(gold_file, private, 1)[0]),
                        ("public", _with_evidence(gold_file, public, 1)[0])):  # fmt: skip
        doc, evidence = next(iter(oracle[claim]["evidence"].items()))
        gold_sentences = set(evidence["sentences"])
        probes = sorted(gold_sentences)[:2] + [j for j in range(sizes[doc]) if j not in gold_sentences][:3]
        views = []
        for j in probes:  # one team per sentence: "is sentence j a rationale of this claim?"
            team = f"{kind}-s{j}"
            token = add_submitter(lb.db, team)
            change = {claim: {doc: {"label": evidence["label"], "sentences": [j]}}}
            r = _post(client, token, _file(oracle, change))
            assert r.status_code == 201, r.text
            views.append(_team_view(client, r, team))
        results[kind] = views
    assert all(_same(v, results["private"][0]) for v in results["private"]), [
        _diff(v, results["private"][0]) for v in results["private"]
    ]
    # on a public claim a gold sentence and a wrong one read differently
    assert not _same(results["public"][0], results["public"][-1])


def _flip_private(gold: Path, private: list[str], out: Path) -> Path:
    """The same gold with every private claim's labels flipped and rationales shortened."""
    swap = {"SUPPORT": "CONTRADICT", "CONTRADICT": "SUPPORT"}
    lines = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        if str(raw["id"]) in private:
            raw = copy.deepcopy(raw)
            for sets in raw["evidence"].values():
                for s in sets:
                    s["label"] = swap[s["label"]]
                    s["sentences"] = s["sentences"][:1]
        lines.append(json.dumps(raw) + "\n")
    out.write_text("".join(lines), encoding="utf-8")
    return out


def test_nothing_public_depends_on_private_gold(
    make_client, gold_file: Path, private_ids, tmp_path: Path
) -> None:
    """Two servers whose golds differ in every private claim answer the same uploads identically."""
    ids_file, private = private_ids
    other_gold = _flip_private(gold_file, private, tmp_path / "other_gold.jsonl")
    oracle = _oracle(gold_file)
    target = _with_evidence(gold_file, private, 1)[0]
    uploads = [
        ("alpha", _file(oracle)),
        ("beta", _file(oracle, {target: _labelled(oracle[target], "CONTRADICT")})),
        ("gamma", _file(oracle, {c: {} for c in private})),
        ("delta", _file({k: {"id": v["id"], "evidence": {}} for k, v in oracle.items()})),
        ("alpha", _file(oracle, {target: {}})),
        ("beta", b'{"id": 999999999, "evidence": {}}\n'),
        ("gamma", _file(oracle)[: len(_file(oracle)) // 2]),
    ]
    seen = []
    for name, gold in (("a", gold_file), ("b", other_gold)):
        client = make_client(
            board=True, leaderboard_gold=gold, leaderboard_private_ids=ids_file, data_dir=tmp_path / name
        )
        tokens = {
            team: add_submitter(client.app.state.db, team) for team in ("alpha", "beta", "gamma", "delta")
        }
        texts, ids = [], []
        for team, content in uploads:
            r = _post(client, tokens[team], content)
            body = r.json()
            ids.append(body.get("id") or body.get("submission_id"))
            texts.append((r.status_code, r.text))
            for path in (f"/api/submissions/{ids[-1]}", f"/leaderboard/submissions/{ids[-1]}"):
                got = client.get(path)
                texts.append((got.status_code, got.text))
        for path in ("/api/leaderboard", "/leaderboard", "/leaderboard.csv", "/api/leaderboard/final"):
            got = client.get(path)
            texts.append((got.status_code, got.text))
        normalised = []
        for status, text in texts:
            for i, sid in enumerate(ids):
                text = text.replace(sid, f"<upload {i}>")
            normalised.append((status, _TIME.sub("<time>", text)))
        seen.append(normalised)
        assert client.app.state.leaderboard.phase_key  # the two phases differ only in what nobody sees
    assert seen[0] == seen[1]


# -- closing the phase -----------------------------------------------------------------------------
def test_close_publishes_the_ranking_on_the_private_part(
    make_client, gold_file: Path, private_ids, tmp_path: Path
) -> None:
    ids_file, private = private_ids
    client = make_client(board=True, leaderboard_private_ids=ids_file, data_dir=tmp_path / "serve")
    db = client.app.state.db
    oracle = _oracle(gold_file)
    empty = {k: {"id": v["id"], "evidence": {}} for k, v in oracle.items()}
    a, b, c = (add_submitter(db, t) for t in ("team-a", "team-b", "team-c"))
    assert _post(client, a, _file(oracle)).status_code == 201  # perfect: released, private 1.0
    assert _post(client, a, _file(empty)).status_code == 201  # worse, not released
    b_first = _post(client, b, _file(oracle, {k: {} for k in private})).json()  # public perfect, private 0
    b_second = _post(client, b, _file(oracle)).json()  # private 1.0, but no new release
    assert b_first["released"] == b_second["released"] == {f: 1.0 for f in FAMILIES}
    assert _post(client, c, _file(empty)).status_code == 201  # never released
    # before the close: no final ranking, the public board has the tie and no private figure
    assert client.get("/api/leaderboard/final").status_code == 404
    assert client.get("/leaderboard/final").status_code == 404
    board = client.get("/api/leaderboard").json()
    assert [(e["rank"], e["submitter"]) for e in board["entries"]] == [(1, "team-a"), (1, "team-b")]
    assert board["closed"] is False
    # a team chooses its upload for the final ranking (only its own)
    assert client.post(f"/api/submissions/{b_second['id']}/choose", headers=_auth(a)).status_code == 404
    chose = client.post(f"/api/submissions/{b_second['id']}/choose", headers=_auth(b))
    assert chose.status_code == 200 and chose.json()["chosen"] is True
    assert client.post(f"/api/submissions/{b_second['id']}/choose").status_code == 401

    closed = subprocess.run(
        [sys.executable, "-m", "sciverify", "leaderboard", "close", "--data-dir", str(tmp_path / "serve")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert closed.returncode == 0, closed.stderr
    assert json.loads(closed.stdout)["teams"] == 3

    final = client.get("/api/leaderboard/final").json()
    assert final["part"] == "private"
    got = [
        (e["rank"], e["group"], e["submitter"], e["picked"], e["figures"]["sentence_label"])
        for e in final["entries"]
    ]
    assert got == [
        (1, 1, "team-a", "released", 1.0),
        (1, 1, "team-b", "chosen", 1.0),
        (3, 2, "team-c", "best public", 0.0),
    ]
    assert final["grid"] == 0.05 and "metrics" not in final["entries"][0]
    page = client.get("/leaderboard/final")
    assert page.status_code == 200 and "team-b" in page.text and "chosen" in page.text
    assert client.get("/api/leaderboard").json()["closed"] is True
    assert "/leaderboard/final" in client.get("/leaderboard").text
    late = _post(client, c, _file(oracle))
    assert late.status_code == 409 and late.json()["error"] == "phase_closed"
    assert client.post(f"/api/submissions/{b_first['id']}/choose", headers=_auth(b)).status_code == 409
    again = subprocess.run(
        [sys.executable, "-m", "sciverify", "leaderboard", "close", "--data-dir", str(tmp_path / "serve")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 2 and "no open leaderboard phase" in again.stderr
    assert "Traceback" not in again.stderr
    assert json.loads(closed.stdout)["private_claims_spent"] == len(private)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_close_takes_the_phase_a_server_started_on_last(tmp_path: Path) -> None:
    from sciverify.serving.db import Database
    from sciverify.serving.phase import close_phase, open_phase, phase_closed_at

    db = Database(f"sqlite:///{tmp_path / 'p.db'}")
    db.migrate()
    try:
        for key in ("a" * 64, "b" * 64, "a" * 64):  # gold a, then gold b, then a server on gold a again
            open_phase(db, key)
        assert close_phase(db)["phase"] == "a" * 12
        assert phase_closed_at(db, "a" * 64) is not None and phase_closed_at(db, "b" * 64) is None
        open_phase(db, "a" * 64)  # a restart does not reopen a closed phase
        assert phase_closed_at(db, "a" * 64) is not None
        assert close_phase(db)["phase"] == "b" * 12
    finally:
        db.dispose()


# -- what a crowd reads after the close, and a spent private part -----------------------------------------
def test_the_crowd_after_the_close_reads_only_what_the_close_publishes_and_it_is_spent(
    make_client, gold_file: Path, private_ids, tmp_path: Path
) -> None:
    """The attack that read 15 of 15 private labels from the rank groups: 31 tokens, one the base file,
    thirty the base file with one of 15 private claims labelled SUPPORT or CONTRADICT and certainly-wrong
    evidence (an unrelated abstract) on 3 other private claims, so a probe differs from the base by 3
    claims when its label is right and by 4 when it is wrong, across the paired test's threshold.

    Rank groups are a threshold and any threshold can be straddled, so the close publishes the ranked
    claims' gold instead of hiding it: the test counts the labels the crowd reads from the ranking, checks
    that each is in the published gold (probing gains nothing that is not published), and then that
    nothing can reuse those claims: no upload, no later phase ranking on any of them, whatever its cut."""
    from sqlalchemy import select

    from sciverify.serving.phase import close_phase
    from sciverify.serving.tables import Phase

    ids_file, private = private_ids
    data = tmp_path / "serve"
    client = make_client(board=True, leaderboard_private_ids=ids_file, data_dir=data)
    db = client.app.state.db
    oracle = _oracle(gold_file)
    golds = {str(c.id): c for c in read_claims(gold_file)}
    label_of = {
        cid: next(s.label for sets in golds[cid].evidence.values() for s in sets)
        for cid in _with_evidence(gold_file, private, len(private))
        if len({s.label for sets in golds[cid].evidence.values() for s in sets}) == 1
    }
    probed = list(label_of)[:15]
    spoiled = list(label_of)[15:18]
    assert len(probed) == 15 and len(spoiled) == 3
    cited = {d for row in oracle.values() for d in row["evidence"]}
    wrong = {}
    for cid in spoiled:  # an abstract cited for another claim, never for this one: certainly wrong
        doc = next(d for d in sorted(cited) if d not in oracle[cid]["evidence"])
        wrong[cid] = {doc: {"label": "SUPPORT", "sentences": [0]}}
    assert _post(client, add_submitter(db, "base"), _file(oracle)).status_code == 201
    for claim in probed:
        for label in ("SUPPORT", "CONTRADICT"):
            token = add_submitter(db, f"probe-{claim}-{label}")
            changed = _file(oracle, {claim: _labelled(oracle[claim], label), **wrong})
            assert _post(client, token, changed).status_code == 201
    assert len(client.get("/api/leaderboard").json()["entries"]) == 31
    # before the close nothing of the private part is out
    assert client.get("/api/leaderboard/final/gold").json()["error"] == "phase_open"
    close_phase(db)

    # what the crowd reads from the ranking: a probe in the base file's group had the right label
    final = client.get("/api/leaderboard/final").json()
    group = {e["submitter"]: e["group"] for e in final["entries"]}
    read = {}
    for claim in probed:
        with_base = [
            lab for lab in ("SUPPORT", "CONTRADICT") if group[f"probe-{claim}-{lab}"] == group["base"]
        ]
        if len(with_base) == 1:
            read[claim] = with_base[0]
    right = sum(read[c] == label_of[c].value for c in read)
    print(f"from the rank groups the crowd reads {right} of {len(probed)} probed private labels")

    # ... and every one of them is in what the close publishes
    assert final["gold"] == "/api/leaderboard/final/gold"
    published = client.get(final["gold"])
    assert published.status_code == 200 and published.headers["content-type"] == "application/x-ndjson"
    rows = {str(r["id"]): r for r in map(json.loads, published.text.splitlines())}
    assert set(rows) == set(private)
    labels = {cid: {s["label"] for sets in rows[cid]["evidence"].values() for s in sets} for cid in probed}
    assert all(labels[c] == {label_of[c].value} for c in probed)
    assert all(labels[c] == {lab} for c, lab in read.items())
    assert "spent" in client.get("/leaderboard/final").text

    # nothing can reuse them: the spent set is exactly what was published
    with db.read() as session:
        spent = session.execute(select(Phase.private_ids, Phase.private_spent_at)).one()
    assert set(spent[0]) == set(rows) and spent[1] is not None
    late = _post(client, add_submitter(db, "late"), _file(oracle))
    assert late.status_code == 409 and late.json()["error"] == "phase_closed"
    # the same gold ranked whole, a cut sharing one claim, or a seeded cut: all refused at start
    one = tmp_path / "one.txt"
    one.write_text(f"{probed[0]}\n")
    for settings in (
        {"leaderboard_private_fraction": 0.0},
        {"leaderboard_private_ids": one},
        {"leaderboard_private_fraction": 0.5},
    ):
        with pytest.raises(ConfigError, match="they are spent"):
            make_client(board=True, data_dir=data, **settings)
    # the closed phase restarts closed, and serves the same publication
    again = make_client(board=True, leaderboard_private_ids=ids_file, data_dir=data)
    assert again.get(final["gold"]).text == published.text
    assert _post(again, add_submitter(again.app.state.db, "later"), _file(oracle)).status_code == 409


def test_a_spent_private_part_is_refused_for_a_later_phase(
    make_client, gold_file: Path, private_ids, tmp_path: Path
) -> None:
    """Spent means spent: after a close, the same gold is refused on this database whatever its cut, as a
    hidden gold and as a public one, and on a fresh database too (the record beside the gold); a gold of
    the claims that were never published is accepted; --reuse-spent-gold starts knowingly."""
    from sciverify.serving.phase import close_phase
    from sciverify.serving.spent import spent_path

    ids_file, private = private_ids
    data = tmp_path / "serve"
    client = make_client(board=True, leaderboard_private_ids=ids_file, data_dir=data)
    closed_phase = close_phase(client.app.state.db)
    assert closed_phase["spent_record"] == str(spent_path(gold_file).resolve())
    record = json.loads(spent_path(gold_file).read_text())
    assert set(record["phases"][0]["claims"]) == set(private)
    # the same phase restarts (its final ranking is served again) ...
    again = make_client(board=True, leaderboard_private_ids=ids_file, data_dir=data)
    assert again.get("/api/leaderboard/final").status_code == 200
    # ... but any other phase scoring a published claim is refused, with one clear line: another cut,
    # a cut of the claims that were public (the published ones would be its public part), a public gold
    overlap = tmp_path / "overlap.txt"
    overlap.write_text("".join(f"{c}\n" for c in private[: len(private) // 2]))
    public = [str(c.id) for c in read_claims(gold_file) if str(c.id) not in set(private)]
    fresh = tmp_path / "fresh.txt"
    fresh.write_text("".join(f"{c}\n" for c in public[: len(public) // 2]))
    for settings in (
        {"leaderboard_private_ids": overlap},
        {"leaderboard_private_ids": fresh},
        {"gold_public": True},
    ):
        with pytest.raises(ConfigError, match=r"claims were published when phase .* they are spent"):
            make_client(board=True, data_dir=data, **settings)
    # a fresh data directory (a new database) reads the record beside the gold: the same phase, too
    for settings in ({"leaderboard_private_ids": ids_file}, {"gold_public": True}):
        with pytest.raises(ConfigError, match=r"they are spent.*--reuse-spent-gold"):
            make_client(board=True, data_dir=tmp_path / "new", **settings)
    # a renamed copy on the database that saw the close is refused by the claims' content
    copy = tmp_path / "renamed.jsonl"
    copy.write_bytes(gold_file.read_bytes())
    with pytest.raises(ConfigError, match="in this database"):
        make_client(board=True, leaderboard_gold=copy, leaderboard_private_ids=fresh, data_dir=data)
    # a gold of the claims never published starts a new phase on either database
    unspent = tmp_path / "unspent.jsonl"
    unspent.write_text(
        "".join(
            line + "\n"
            for line in gold_file.read_text().splitlines()
            if str(json.loads(line)["id"]) in public
        )
    )
    for where in (data, tmp_path / "new"):
        later = make_client(board=True, leaderboard_gold=unspent, data_dir=where)
        assert later.get("/api/health").status_code == 200
    # the operator's deliberate reuse of a practice gold
    practice = make_client(
        board=True, gold_public=True, reuse_spent_gold=True, data_dir=tmp_path / "practice"
    )
    assert practice.get("/api/leaderboard").status_code == 200
    # the command line says the same in one line, without a traceback, as a hidden and as a public gold
    for flags in (["--leaderboard-private-ids", str(overlap)], ["--gold-public"]):
        refused = subprocess.run(
            [sys.executable, "-m", "sciverify", "serve", "--data-dir", str(tmp_path / "cli"), "--port", "0",
             "--leaderboard-gold", str(gold_file), *flags],
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
        assert refused.returncode == 2 and "they are spent" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
