"""The server-rendered answer (the page opened from a link, or without JavaScript): the same groups and count
line as the script draws (tests/e2e/serving/test_phone_browser.py drives that side in Chromium).

The shipped setting shows no paper without a side, and the fake verifier of the other page tests has no
related papers, so the template is rendered here from an answer built as the API would send it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from sciverify.serving.app import package_dir
from sciverify.serving.schemas import VerifyResponse


def _paper(doc_id: int, label: str, why: str, weight: float) -> dict[str, Any]:
    return {
        "doc_id": doc_id, "title": f"Paper {doc_id}", "label": label, "p_evidence": 0.6,
        "p_label_correct": weight / 0.6, "weight": weight, "why": why, "in_prediction": False,
        "rationale": [{"index": 0, "text": "A finding.", "score": 0.4}], "retrieval_score": 0.5,
        "link": f"https://example.org/{doc_id}", "sentences": ["A finding.", "More."], "excerpt": [0, 1],
    }


def _render(answer: dict[str, Any]) -> str:
    from fastapi.templating import Jinja2Templates

    env = Jinja2Templates(directory=str(package_dir() / "templates")).env
    request = SimpleNamespace(url=SimpleNamespace(path="/"))
    settings = SimpleNamespace(max_claim_chars=1000)
    return env.get_template("index.html").render(
        request=request, settings=settings, claim=answer["claim"], k=None, examples=["An example."],
        results=VerifyResponse.model_validate(answer), error=None, numbers="The numbers.", rule="The rule.",
        best_match_help="",
    )


def test_unclear_and_related_papers_render_after_the_sides_and_are_counted_apart() -> None:
    answer = {
        "claim": "A claim.", "k": 5, "verdict": "not enough evidence", "why": "The papers weigh too little.",
        "supporting": [_paper(1, "SUPPORT", "Supports the claim.", 0.1)], "refuting": [],
        "unclear": [_paper(2, "CONTRADICT", "Direction unclear: leans to refuting.", 0.0)],
        "related": [{"doc_id": 3, "title": "Paper 3", "p_evidence": 0.12, "retrieval_score": 0.4,
                     "link": "https://example.org/3", "link_label": "Paper page"}],
    }
    page = _render(answer)
    status = page.split('id="status"', 1)[1].split("</p>", 1)[0]
    assert status.endswith(">1 supporting abstract, 0 refuting abstracts and 1 of unclear direction found; "
                           "1 related, not evidence."), status
    unclear = page.split('id="unclear"', 1)[1].split("</section>", 1)[0]
    assert 'class="result unclear"' in unclear and 'data-doc-id="2"' in unclear
    assert "Direction unclear: leans to refuting." in unclear
    assert 'id="unclear-count">1<' in unclear
    related = page.split('id="related"', 1)[1].split("</details>", 1)[0]
    assert " hidden" not in related.split(">", 1)[0]
    assert 'data-doc-id="3"' in related and "Chance it is evidence 12%" in related
    assert 'href="https://example.org/3"' in related
    # the groups come after both sides; a card under a side never holds the unclear paper
    assert page.index('id="contradict-list"') < page.index('id="unclear"') < page.index('id="related"')
    assert page.split('id="support-list"', 1)[1].split("</section>", 1)[0].count("<article") == 1
    assert 'data-weight="0.1"' in page, "the weight the phone's opening tab is chosen by"
    # "not enough evidence" with a paper listed (too little weight): the page says nothing was found only
    # for the side that has none, and shows the verdict's own why
    assert "No supporting abstract found." not in page and "No refuting abstract found." in page
    assert ">The papers weigh too little.</p>" in page


def test_an_answer_without_the_new_lists_renders_as_before() -> None:
    """An answer from before ``unclear`` and ``related`` existed: both groups hidden, the count line plain."""
    answer = {
        "claim": "A claim.", "k": 5, "verdict": "supported", "why": "1 supporting paper.",
        "supporting": [_paper(1, "SUPPORT", "Supports the claim.", 0.5)],
        "refuting": [_paper(4, "CONTRADICT", "Refutes the claim.", 0.2)],
    }
    page = _render(answer)
    assert ">1 supporting abstract and 1 refuting abstract found.</p>" in page
    assert '<section id="unclear" class="unclear-block" aria-labelledby="unclear-heading" hidden>' in page
    assert page.split('id="related"', 1)[1].split(">", 1)[0].endswith(" hidden")
