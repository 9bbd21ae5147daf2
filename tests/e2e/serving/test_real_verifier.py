"""The API on the real Verifier (real default index, real model inference), over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from serving_e2e import add_submitter, load_claims, run_load

from sciverify.models.conformance import PROBABILITY_LIMIT

CLAIM = "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors."


def test_verify_real_claim(real_server) -> None:
    r = httpx.post(
        real_server.url + "/api/verify", json={"claim": CLAIM, "k": 10, "include_abstract": True}, timeout=120
    )
    assert r.status_code == 200, r.text
    body = r.json()
    found = body["supporting"] + body["refuting"]
    assert body["claim"] == CLAIM and found, "the real pipeline found no evidence for a known claim"
    assert body["verdict"] in ("supported", "conflicting")
    for item in found:
        assert item["label"] in ("SUPPORT", "CONTRADICT") and 0.3 <= item["p_evidence"] <= 1.0
        assert 0.0 <= item["p_label_correct"] <= 1.0
        assert isinstance(item["doc_id"], int), "SciFact doc ids are integers in the API as in the CLI"
        assert item["link"] == f"https://api.semanticscholar.org/CorpusID:{item['doc_id']}"
        abstract = httpx.get(f"{real_server.url}/api/abstracts/{item['doc_id']}", timeout=30).json()
        assert abstract["sentences"] == item["sentences"] and abstract["doc_id"] == item["doc_id"]
        assert abstract["link"] == item["link"]
        for sentence in item["rationale"]:
            assert abstract["sentences"][sentence["index"]] == sentence["text"]
    health = httpx.get(real_server.url + "/api/health", timeout=30).json()
    assert health["verifier"] == "ready" and health["status"] == "ok"
    check = health["cpu_check"]
    assert check["ok"] is True and set(check["models"]) == {"label", "reader", "embedder"}, check
    assert check["models"]["label"]["max |dp|"] <= PROBABILITY_LIMIT and "onnxruntime" in check["cpu"]


def test_every_example_claim_on_the_page_returns_evidence(real_server) -> None:
    from sciverify.serving.routes_pages import EXAMPLE_CLAIMS

    verdicts = []
    for claim in EXAMPLE_CLAIMS:
        body = httpx.post(real_server.url + "/api/verify", json={"claim": claim}, timeout=120).json()
        assert body["supporting"] or body["refuting"], claim
        verdicts.append(body["verdict"])
    assert "conflicting" in verdicts, "one example shows a claim the literature disputes"


def test_predict_keeps_the_leaderboard_decision(real_server) -> None:
    """/api/predict emits the papers marked in_prediction in /api/verify, with their confidence."""
    r = httpx.post(real_server.url + "/api/verify", json={"claim": CLAIM}, timeout=120).json()
    picked = {str(x["doc_id"]): x for x in r["supporting"] + r["refuting"] if x["in_prediction"]}
    batch = {"claims": [{"id": 52, "claim": CLAIM}]}
    p = httpx.post(real_server.url + "/api/predict?format=jsonl", json=batch, timeout=120)
    line = json.loads(p.text.splitlines()[0])
    assert set(line["evidence"]) == set(picked)
    for key, entry in line["evidence"].items():
        assert entry["confidence"] == picked[key]["p_evidence"]
        shown = [s["index"] for s in picked[key]["rationale"]]
        assert entry["sentences"] == (picked[key].get("listed") or shown)


def test_predict_then_submit_to_leaderboard(real_server, hidden_gold: Path) -> None:
    """Real predictions for 8 gold claims, sent back as a leaderboard submission and scored."""
    golds = [json.loads(line) for line in hidden_gold.read_text().splitlines()]
    some = golds[:8]
    r = httpx.post(
        real_server.url + "/api/predict?format=jsonl",
        json={"claims": [{"id": g["id"], "claim": g["claim"]} for g in some]},
        timeout=300,
    )
    assert r.status_code == 200, r.text
    lines = r.text.splitlines()
    assert [json.loads(x)["id"] for x in lines] == [g["id"] for g in some]
    rest = [json.dumps({"id": g["id"], "evidence": {}}) for g in golds[8:]]
    content = ("\n".join(lines + rest) + "\n").encode()
    data_dir = Path(real_server.log).parent
    token = add_submitter(data_dir, "pipeline team")
    sub = httpx.post(
        real_server.url + "/api/submissions",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": ("pipeline.jsonl", content)},
        data={"system": "sciverify pipeline"},
        timeout=120,
    )
    assert sub.status_code == 201, sub.text
    metrics = sub.json()["metrics"]
    assert set(metrics) == {
        "abstract_label_only",
        "abstract_rationalized",
        "sentence_selection",
        "sentence_label",
    }
    assert all(0.0 <= m["f1_low"] <= m["f1"] <= m["f1_high"] <= 1.0 for m in metrics.values())


def test_short_load_run_has_zero_errors(real_server, scifact_root: Path) -> None:
    """20 concurrent clients for 10 s on real claims: every request is answered, or shed at once with
    503 + Retry-After (admission control); nothing else."""
    claims = load_claims(scifact_root / "claims_test.jsonl", seed=1)
    result = run_load(real_server.url, clients=20, seconds=10, claims=claims, timeout=300)
    summary = result.summary()
    assert result.errors == {}, summary
    assert result.ok >= 1 and result.ok + result.shed >= 20, summary


def test_30_clients_never_wait_past_the_deadline(real_server, scifact_root: Path) -> None:
    """30 concurrent clients on real claims and the real models: every request is answered or shed with
    503 + Retry-After, and no accepted request waited for its claim to start longer than the deadline
    (1 s, the default) plus scheduling slack, as the server itself measured it."""
    claims = load_claims(scifact_root / "claims_test.jsonl", seed=2)
    result = run_load(real_server.url, clients=30, seconds=10, claims=claims, timeout=300)
    summary = result.summary()
    assert result.errors == {}, summary
    # every client got an answer or a refusal (on a slow machine all may be refused: the queue is full)
    assert result.ok + result.shed >= 30 and result.shed >= 1, summary
    queue = httpx.get(real_server.url + "/api/health", timeout=30).json()["queue"]
    assert queue["longest_wait_ms"] <= 1000 * (1.0 + 0.5), queue
