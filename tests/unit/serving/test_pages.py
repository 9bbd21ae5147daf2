"""Pages: the form, server-rendered results (no JavaScript needed), abstracts, offline assets."""

from __future__ import annotations

import re
from pathlib import Path

from sciverify.serving.app import package_dir


def test_index_form_is_labelled(make_client) -> None:
    page = make_client().get("/")
    assert page.status_code == 200
    assert '<label for="claim">' in page.text and 'id="claim"' in page.text
    assert 'type="submit"' in page.text and 'role="status"' in page.text and 'lang="en"' in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")


def test_server_rendered_results_in_two_columns(make_client) -> None:
    page = make_client().get("/", params={"claim": "ALDH1 predicts <b>prognosis</b>"})
    assert page.status_code == 200
    html = page.text
    support = html.index('id="support-list"')
    contradict = html.index('id="contradict-list"')
    first = html.index('data-doc-id="11"')
    second = html.index('data-doc-id="12"')
    assert support < first < contradict < second
    assert '<mark title="Rationale sentence 1">High ALDH1 predicts poor prognosis.</mark>' in html
    assert "<span>ALDH1 marks stem cells.</span>" in html
    assert '<meter id="pe-11" min="0" max="1" value="0.900">' in html
    assert "Chance it is evidence 90%" in html and "Chance its side is right 80%" in html
    assert "Overall verdict: <strong" in html and ">conflicting</strong>" in html
    # 0.9 x 0.8 = 0.72 against 0.7 x 0.6 = 0.42: less than twice, so conflicting, and the page says so
    assert "1 supporting paper (weight 0.72) against 1 refuting paper (weight 0.42)" in html
    assert "a side wins when its papers weigh at least 2 times" in html
    assert "Searched 5,183 abstracts of the SciFact corpus" in html
    assert "Supports the claim (80% likely the right side): “High ALDH1 predicts poor prognosis.”" in html
    assert '>Semantic Scholar page</a>' in html and "Read the paper" not in html
    assert '<span class="pick" title="The one paper that `sciverify predict` names' in html
    assert "leaderboard pick" not in html
    assert 'href="https://api.semanticscholar.org/CorpusID:11"' in html
    assert "calibrated on claims the models never saw" in html
    assert 'href="#contradict-heading"' in html and 'href="#support-heading"' in html
    assert '<details class="rest"><summary>Whole abstract (3 sentences)</summary>' in html
    badges = ("cohort", "in people", "500 people")
    assert "".join(f'<li class="badge">{b}</li>' for b in badges) in html
    assert 'href="/abstracts/11?hl=1"' in html
    assert "<b>prognosis</b>" not in html and "&lt;b&gt;prognosis&lt;/b&gt;" in html


def test_server_rendered_errors(make_client) -> None:
    client = make_client(max_claim_chars=10)
    r = client.get("/", params={"claim": "x" * 11})
    assert r.status_code == 422 and "limit is 10" in r.text
    assert client.get("/", params={"claim": "  "}).status_code == 422


def test_abstract_page_highlights(make_client) -> None:
    client = make_client()
    r = client.get("/abstracts/12", params={"hl": "1,x,99"})
    assert r.status_code == 200
    assert '<li class="hl"><mark>ALDH1 was not associated with survival.</mark></li>' in r.text
    assert client.get("/abstracts/nope").status_code == 404


def test_assets_are_local_only() -> None:
    root = package_dir()
    static = [f for f in (root / "static").glob("*") if f.is_file()]  # swagger-ui/ is npm's, checked apart
    files = list((root / "templates").glob("*.html")) + static
    assert any(f.suffix == ".js" for f in files) and any(f.suffix == ".css" for f in files)
    for f in files:
        text = Path(f).read_text(encoding="utf-8")
        assert not re.search(r"https?://", text), f
        assert "style=" not in text, f  # inline styles would be blocked by the CSP


def test_static_files_served(make_client) -> None:
    client = make_client()
    js = client.get("/static/app.js")
    assert js.status_code == 200 and "/api/verify" in js.text
    assert client.get("/static/app.css").status_code == 200


def test_home_page_hides_the_results_until_a_claim_is_checked(make_client) -> None:
    html = make_client().get("/").text
    assert '<section id="results" class="results-block" aria-label="Results" hidden>' in html
    css = make_client().get("/static/app.css").text
    assert "[hidden] { display: none !important; }" in css, "no display rule may show a hidden element"


def test_exports_json_and_a_citation_list(make_client) -> None:
    import csv
    import io

    client = make_client()
    page = client.get("/", params={"claim": "ALDH1 predicts prognosis"}).text
    assert 'href="/export?format=csv&amp;claim=ALDH1%20predicts%20prognosis"' in page
    as_json = client.get("/export", params={"claim": "ALDH1 predicts prognosis", "format": "json"})
    assert as_json.status_code == 200 and "attachment" in as_json.headers["content-disposition"]
    body = as_json.json()
    assert body["verdict"] == "conflicting" and body["supporting"][0]["doc_id"] == 11
    assert body["searched"]["documents"] == 5183 and body["why"].startswith("1 supporting paper")
    assert re.fullmatch(
        r'attachment; filename="sciverify-aldh1-predicts-prognosis-\d{8}-\d{6}Z\.json"',
        as_json.headers["content-disposition"],
    )
    as_csv = client.get("/export", params={"claim": "ALDH1 predicts prognosis", "format": "csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [(r["side"], r["rank"], r["doc_id"], r["p_evidence"], r["in_prediction"]) for r in rows] == [
        ("supporting", "1", "11", "0.9", "true"),
        ("refuting", "1", "12", "0.7", "false"),
    ]
    assert {(r["claim"], r["verdict"]) for r in rows} == {("ALDH1 predicts prognosis", "conflicting")}
    assert rows[0]["weight"] == "0.72" and rows[0]["why"].startswith("Supports the claim")
    assert (rows[0]["design"], rows[0]["system"], rows[0]["sample_size"]) == ("cohort", "human", "500")
    assert rows[1]["design"] == "" and rows[1]["sample_size"] == ""
    assert re.search(r'filename="sciverify-aldh1-predicts-prognosis-\d{8}-\d{6}Z\.csv"',
                     as_csv.headers["content-disposition"])
    assert rows[0]["link"] == "https://api.semanticscholar.org/CorpusID:11"
    assert rows[0]["rationale"] == "[1] High ALDH1 predicts poor prognosis."
    bad = client.get("/export", params={"claim": "x", "format": "bibtex"})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_format"
    assert client.get("/export", params={"claim": "  "}).status_code == 422


def test_export_names_carry_the_claim_and_the_time() -> None:
    from datetime import UTC, datetime

    from sciverify.serving.routes_pages import export_name

    t = datetime(2026, 3, 1, 9, 5, 7, tzinfo=UTC)
    assert export_name("Vitamin D prevents COVID-19!", "csv", t) == (
        "sciverify-vitamin-d-prevents-covid-19-20260301-090507Z.csv"
    )
    assert export_name("Über-große Dosen", "json", t) == "sciverify-uber-groe-dosen-20260301-090507Z.json"
    assert export_name("???", "csv", t) == "sciverify-claim-20260301-090507Z.csv"
    assert len(export_name("word " * 100, "csv", t)) < 100


def test_nothing_found_says_where_it_looked(make_client) -> None:
    import csv
    import io

    client = make_client()
    page = client.get("/", params={"claim": "Vaccines cause autism.", "k": 0})
    assert page.status_code == 422  # k is checked first
    from serving_doubles import FakeVerifier

    class Empty(FakeVerifier):
        def verify_batch(self, claims, k=None):  # type: ignore[no-untyped-def]
            return [[] for _ in claims]

    client = make_client(verifier=Empty())
    html = client.get("/", params={"claim": "Vaccines cause autism."}).text
    assert ">not enough evidence</strong>" in html
    assert "No paper in these 5,183 abstracts (SciFact) is likely enough" in html
    rows = list(csv.DictReader(io.StringIO(
        client.get("/export", params={"claim": "Vaccines cause autism.", "format": "csv"}).text
    )))
    assert [(r["claim"], r["verdict"], r["side"]) for r in rows] == [
        ("Vaccines cause autism.", "not enough evidence", "")
    ]
