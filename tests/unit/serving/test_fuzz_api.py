"""Fuzzing the API from its own OpenAPI schema: no input may get a 500.

Requests are generated from ``/openapi.json``: bodies that follow each request schema, bodies of any
JSON shape (strings with lone surrogates, bools for ints, huge numbers, deep nesting), raw bytes that
are not JSON or not UTF-8, hostile path and query values and tokens. Inputs sent: ``EXAMPLES`` per
API operation (9 operations) plus 5 page requests for each of ``PAGES`` examples, 1,300 in all,
and both upload forms byte by byte (``FORMS`` examples: fields and file names that are not UTF-8)
(counts and statuses printed with ``-s``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = 100

# Any character, lone surrogates included (JSON can carry them as \ud800 escapes).
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _from_schema(schema: dict[str, Any], spec: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped like ``schema``, mixed with values of any JSON shape at every level."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _from_schema(spec["components"]["schemas"][name], spec, depth)
    if depth > 4:
        return JSON_VALUES
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        shaped = st.one_of(*(_from_schema(s, spec, depth + 1) for s in options))
    elif schema.get("type") == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        shaped = st.fixed_dictionaries(
            {k: _from_schema(v, spec, depth + 1) for k, v in props.items() if k in required},
            optional={k: _from_schema(v, spec, depth + 1) for k, v in props.items() if k not in required},
        )
    elif schema.get("type") == "array":
        shaped = st.lists(_from_schema(schema.get("items", {}), spec, depth + 1), max_size=5)
    elif schema.get("type") == "integer":
        shaped = st.integers(min_value=-5, max_value=200)
    elif schema.get("type") == "boolean":
        shaped = st.booleans()
    elif schema.get("type") == "string":
        shaped = ANY_TEXT
    else:
        shaped = JSON_VALUES
    return st.one_of(shaped, shaped, JSON_VALUES)


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if path.startswith("/api/")
    ]


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory, scifact_dir, gold_file):
    from fastapi.testclient import TestClient
    from serving_doubles import FakeVerifier

    from sciverify.serving.app import create_app
    from sciverify.serving.settings import Settings

    settings_ = Settings(
        data_dir=tmp_path_factory.mktemp("fuzz"),
        leaderboard_gold=gold_file,
        corpus=scifact_dir / "corpus.jsonl",
        n_boot=100,
        max_claim_chars=200,
        submissions_per_hour=10_000,
        submissions_per_day=10_000,
    )
    with TestClient(create_app(settings_, verifier=FakeVerifier()), raise_server_exceptions=False) as client:
        from sciverify.serving.auth import add_submitter

        client.token = add_submitter(client.app.state.db, "fuzzer")  # type: ignore[attr-defined]
        yield client


def test_every_operation_is_fuzzed(fuzz_client) -> None:
    spec = fuzz_client.get("/openapi.json").json()
    found = {(p, m) for p, m, _ in _operations(spec)}
    assert found == {tuple(reversed(c.split(" ", 1))) for c in _case_ids()}
    assert {("/api/verify", "post"), ("/api/predict", "post"), ("/api/submissions", "post")} <= found


def _case_ids() -> list[str]:
    return [
        "post /api/verify",
        "post /api/predict",
        "get /api/abstracts/{doc_id}",
        "get /api/health",
        "post /api/submissions",
        "get /api/submissions/{submission_id}",
        "post /api/submissions/{submission_id}/choose",
        "get /api/leaderboard",
        "get /api/leaderboard/final",
        "get /api/leaderboard/final/gold",
    ]


@pytest.mark.parametrize("case", _case_ids())
def test_no_input_gets_a_500(fuzz_client, case: str) -> None:
    method, path = case.split(" ", 1)
    spec = fuzz_client.get("/openapi.json").json()
    op = spec["paths"][path][method]
    body_schema = (
        op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if "requestBody" in op
        else None
    )
    params = [p for p in op.get("parameters", []) if p["in"] in ("path", "query")]
    statuses: list[int] = []

    body = (
        st.one_of(
            _from_schema(body_schema, spec).map(lambda v: json.dumps(v).encode()),
            st.binary(max_size=200),
        )
        if body_schema
        else st.none()
    )
    values = st.fixed_dictionaries({p["name"]: ANY_TEXT | st.integers().map(str) for p in params})
    # upload bytes: random, or lines of JSON values of any shape (as a prediction file would be)
    upload = st.tuples(
        st.binary(max_size=300)
        | st.lists(JSON_VALUES, max_size=5).map(
            lambda v: b"".join(json.dumps(x).encode() + b"\n" for x in v)
        ),
        ANY_TEXT,
        ANY_TEXT | st.just(fuzz_client.token),
    )

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(body=body, values=values, upload=upload)
    def run(body: bytes | None, values: dict[str, str], upload: tuple[bytes, str, str]) -> None:
        url = path
        query = {}
        for p in params:
            value = values[p["name"]].encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", _quote(value) or "x")
            else:
                query[p["name"]] = value
        if path == "/api/submissions":
            content, system, token = upload
            safe = "".join(c for c in token if " " <= c <= "~")  # what an HTTP header can carry
            r = fuzz_client.post(
                url,
                files={"file": (_name(system), content)},
                data={"system": system.encode("utf-8", "surrogatepass").decode("utf-8", "replace")},
                headers={"Authorization": "Bearer " + safe},
            )
        elif method == "post":
            r = fuzz_client.post(
                url, params=query, content=body, headers={"content-type": "application/json"}
            )
        else:
            r = fuzz_client.get(url, params=query)
        statuses.append(r.status_code)
        assert r.status_code != 500, (case, body, values, r.text)
        assert r.status_code < 500 or r.status_code == 503, (case, r.status_code, r.text)

    run()
    print(f"{case}: {len(statuses)} inputs, statuses {sorted(set(statuses))}")
    assert len(statuses) >= EXAMPLES // 2


PAGES = 80


def test_pages_never_500(fuzz_client) -> None:
    """The HTML routes (not in the schema): the claim page, abstract pages and the upload form."""
    statuses: list[int] = []

    @settings(max_examples=PAGES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(text=ANY_TEXT, number=st.integers().map(str), blob=st.binary(max_size=200))
    def run(text: str, number: str, blob: bytes) -> None:
        printable = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        responses = [
            fuzz_client.get("/", params={"claim": printable, "k": number}),
            fuzz_client.get("/", params={"claim": printable[:5] or "x", "k": printable}),
            fuzz_client.get(f"/abstracts/{_quote(printable) or 'x'}", params={"hl": printable}),
            fuzz_client.get(f"/leaderboard/submissions/{_quote(number)}"),
            fuzz_client.post(
                "/leaderboard/submit",
                data={"token": printable, "system": printable},
                files={"file": (_name(text), blob)},
            ),
        ]
        for r in responses:
            statuses.append(r.status_code)
            assert r.status_code < 500 or r.status_code == 503, (text, number, r.status_code, r.text[:300])

    run()
    print(f"pages: {len(statuses)} inputs, statuses {sorted(set(statuses))}")


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def _name(system: str) -> str:
    return system.encode("utf-8", "surrogatepass").decode("utf-8", "replace").replace("\x00", "") or "p.jsonl"


FORMS = 60
#: Bytes for a text field: any bytes (mostly not UTF-8), or any text encoded with lone surrogates kept.
FIELD_BYTES = st.binary(max_size=40) | ANY_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass"))
#: A file name as a quoted header parameter can carry it (no quote, backslash, CR or LF).
NAME_BYTES = FIELD_BYTES.map(lambda b: bytes(c for c in b if c not in b'"\\\r\n'))


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_upload_forms_never_500_and_refuse_what_is_not_utf8(fuzz_client, gold_file) -> None:
    """Multipart form fields and file names of both upload routes, byte by byte: never a 500, always a
    422 when a field or the file name is not UTF-8, and no stored name with a control character."""
    from serving_doubles import oracle_lines
    from sqlalchemy import select
    from test_uploads import multipart

    from sciverify.serving.schemas import check_name
    from sciverify.serving.tables import Submission

    good = oracle_lines(gold_file)
    token = fuzz_client.token.encode()
    statuses: list[int] = []

    @settings(max_examples=FORMS, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(system=FIELD_BYTES, name=NAME_BYTES, key=FIELD_BYTES, content=st.sampled_from([good, b"{}\n"]))
    def run(system: bytes, name: bytes, key: bytes, content: bytes) -> None:
        parts = [(b"system", system, None), (b"idempotency_key", key, None), (b"file", content, name)]
        not_text = not all(_utf8(x) for x in (system, name, key))
        body, ctype = multipart(parts)
        api = fuzz_client.post(
            "/api/submissions",
            content=body,
            headers={"content-type": ctype, "Authorization": "Bearer " + fuzz_client.token},
        )
        body, ctype = multipart([(b"token", token, None), *parts])
        page = fuzz_client.post("/leaderboard/submit", content=body, headers={"content-type": ctype})
        for r in (api, page):
            statuses.append(r.status_code)
            assert r.status_code < 500, (system, name, key, r.status_code, r.text[:300])
            if not_text:
                assert r.status_code == 422 and "not valid UTF-8" in r.text, (system, name, key, r.text[:300])

    run()
    with fuzz_client.app.state.db.read() as session:
        stored = session.execute(select(Submission.system, Submission.filename)).all()
    for system, filename in stored:
        check_name(system, "system")
        check_name(filename, "file name")
    print(f"upload forms: {len(statuses)} inputs, statuses {sorted(set(statuses))}, {len(stored)} stored")
    assert len(statuses) >= FORMS
