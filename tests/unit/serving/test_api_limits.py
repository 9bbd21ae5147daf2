"""HTTP API limits and error shapes: every refusal is a specific 4xx JSON, never a traceback."""

from __future__ import annotations

import json

from serving_doubles import FakeVerifier


def test_verify_returns_both_labels_and_full_abstract(make_client) -> None:
    client = make_client()
    r = client.post("/api/verify", json={"claim": "  ALDH1 predicts prognosis. ", "include_abstract": True})
    assert r.status_code == 200
    body = r.json()
    assert body["claim"] == "ALDH1 predicts prognosis."
    assert body["verdict"] == "conflicting"
    assert [x["label"] for x in body["supporting"]] == ["SUPPORT"]
    assert [x["label"] for x in body["refuting"]] == ["CONTRADICT"]
    first = body["supporting"][0]
    assert first["doc_id"] == 11 and first["rationale"] == [
        {"index": 1, "text": "High ALDH1 predicts poor prognosis.", "score": 0.95}
    ]
    assert first["p_evidence"] == 0.9 and first["p_label_correct"] == 0.8 and first["in_prediction"] is True
    assert "confidence" not in first, "the number is named p_evidence"
    assert first["link"] == "https://api.semanticscholar.org/CorpusID:11"
    assert body["refuting"][0]["in_prediction"] is False
    assert "p_evidence" in body["numbers"] and "p_label_correct" in body["numbers"]
    assert first["sentences"][1] == first["rationale"][0]["text"]
    assert client.post("/api/verify", json={"claim": "x"}).json()["supporting"][0]["sentences"] is None


def test_claim_limits(make_client) -> None:
    client = make_client(max_claim_chars=50)
    empty = client.post("/api/verify", json={"claim": "   \n"})
    assert empty.status_code == 422 and empty.json()["error"] == "empty_claim"
    long = client.post("/api/verify", json={"claim": "a" * 51})
    assert long.status_code == 422 and long.json()["error"] == "claim_too_long"
    assert "51 characters" in long.json()["message"] and "50" in long.json()["message"]
    assert client.post("/api/verify", json={"claim": "a" * 50}).status_code == 200


def test_k_range(make_client) -> None:
    client = make_client(max_k=20)
    for bad in (0, -1, 21):
        r = client.post("/api/verify", json={"claim": "c", "k": bad})
        assert r.status_code == 422 and r.json()["error"] == "k_out_of_range", bad
    assert client.post("/api/verify", json={"claim": "c", "k": 20}).json()["k"] == 20
    assert client.post("/api/verify", json={"claim": "c"}).json()["k"] == 5  # the verifier's tuned k
    # a configured default replaces the tuned k, and is held to the same range
    assert make_client(default_k=3).post("/api/verify", json={"claim": "c"}).json()["k"] == 3


def test_malformed_bodies_are_422_without_echo(make_client) -> None:
    client = make_client()
    cases = [
        client.post("/api/verify", content=b'{"claim": ', headers={"content-type": "application/json"}),
        client.post("/api/verify", json={"claim": 12345}),
        client.post("/api/verify", json={"claim": "x", "unexpected": "SECRET-ECHO"}),
        client.post("/api/verify", json=["not", "an", "object"]),
    ]
    for r in cases:
        assert r.status_code == 422
        body = r.json()
        assert body["error"] == "invalid_request" and body["message"]
        assert "SECRET-ECHO" not in r.text and "Traceback" not in r.text


def test_body_size_limit_by_content_length(make_client) -> None:
    client = make_client(max_body_bytes=4096)
    payload = json.dumps({"claim": "x" * 5000}).encode()
    r = client.post("/api/verify", content=payload, headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert r.json()["error"] == "payload_too_large" and "4096" in r.json()["message"]


def test_body_size_limit_when_streamed_without_length(make_client) -> None:
    client = make_client(max_body_bytes=4096)

    def chunks():
        yield b'{"claim": "'
        for _ in range(20):
            yield b"y" * 1000
        yield b'"}'

    r = client.post("/api/verify", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == "payload_too_large"


def test_batch_limits_and_jsonl(make_client) -> None:
    client = make_client(max_batch=3)
    ok = client.post("/api/predict", json={"claims": [{"id": 1, "claim": "a"}, {"id": "x2", "claim": "b"}]})
    assert ok.status_code == 200
    preds = ok.json()["predictions"]
    # only the leaderboard decision (in_prediction), with its confidence = P(evidence)
    assert preds[0] == {
        "id": 1,
        "evidence": {"11": {"label": "SUPPORT", "sentences": [1], "confidence": 0.9, "p_label_correct": 0.8}},
    }
    assert preds[1]["id"] == "x2"
    many = client.post("/api/predict", json={"claims": [{"id": i, "claim": "a"} for i in range(4)]})
    assert many.status_code == 422 and many.json()["error"] == "batch_too_large"
    empty = client.post("/api/predict", json={"claims": []})
    assert empty.status_code == 422 and empty.json()["error"] == "empty_batch"
    dup = client.post("/api/predict", json={"claims": [{"id": 1, "claim": "a"}, {"id": "1", "claim": "b"}]})
    assert dup.status_code == 422 and dup.json()["error"] == "duplicate_id"
    blank = client.post("/api/predict", json={"claims": [{"id": 1, "claim": "a"}, {"id": 2, "claim": " "}]})
    assert blank.status_code == 422 and "claims[1].claim" in blank.json()["message"]
    lines = client.post("/api/predict?format=jsonl", json={"claims": [{"id": 7, "claim": "a"}]})
    assert lines.headers["content-type"].startswith("application/x-ndjson")
    line = json.loads(lines.text.splitlines()[0])
    assert line["id"] == 7 and line["evidence"]["11"]["confidence"] == 0.9, "jsonl keeps the confidence"
    assert json.loads(lines.text.splitlines()[0]) == preds[0] | {"id": 7}


def test_predict_refuses_an_empty_string_id(make_client) -> None:
    client = make_client()
    for fmt in ("json", "jsonl"):
        r = client.post(f"/api/predict?format={fmt}", json={"claims": [{"id": "", "claim": "a"}]})
        assert r.status_code == 422, fmt
        message = r.json()["message"]
        assert message == "claims.0.id: Value error, a claim id must be an integer or a non-empty string"


def test_unexpected_error_is_generic_500(make_client, caplog) -> None:
    client = make_client(verifier=FakeVerifier(fail_on="boom"))
    r = client.post("/api/verify", json={"claim": "boom now"})
    assert r.status_code == 500
    assert r.json() == {
        "error": "internal_error",
        "message": "internal server error; the details are in the server log",
    }
    assert "secret" not in r.text and "Traceback" not in r.text
    assert any("model exploded" in str(rec.exc_info[1]) for rec in caplog.records if rec.exc_info)
    assert client.post("/api/verify", json={"claim": "fine"}).status_code == 200


def test_abstracts_and_health(make_client) -> None:
    client = make_client()
    a = client.get("/api/abstracts/12")
    assert a.status_code == 200 and a.json()["sentences"][1] == "ALDH1 was not associated with survival."
    missing = client.get("/api/abstracts/999")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and health["verifier"] == "ready" and health["database"] == "ok"
    assert health["leaderboard"] is False


def test_unknown_route_and_method_are_json(make_client) -> None:
    client = make_client()
    r = client.get("/api/nothing-here")
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    m = client.get("/api/verify")
    assert m.status_code == 405 and m.json()["error"] == "method_not_allowed"


def test_openapi_documents_the_endpoints(make_client) -> None:
    client = make_client()
    spec = client.get("/openapi.json").json()
    for path in (
        "/api/verify",
        "/api/predict",
        "/api/abstracts/{doc_id}",
        "/api/health",
        "/api/submissions",
        "/api/leaderboard",
    ):
        assert path in spec["paths"], path
    docs = client.get("/docs")
    assert docs.status_code == 200 and "cdn" not in docs.text.lower()
    from sciverify.serving.app import SWAGGER_UI_DIR

    if not (SWAGGER_UI_DIR / "swagger-ui-bundle.js").is_file():
        assert "./scripts/setup-swagger-ui" in docs.text and "/openapi.json" in docs.text
        return
    assert "/docs-static/swagger-ui-bundle.js" in docs.text
    assert client.get("/docs-static/swagger-ui-bundle.js").status_code == 200
    # Swagger UI 5 reads the OpenAPI 3.1 that FastAPI writes (4.x cannot: tests/e2e checks the rendering)
    assert spec["openapi"].startswith("3.1")
    assert client.get("/docs-static/VERSION").text.strip().split(".")[0] == "5"
