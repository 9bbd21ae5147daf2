"""Request and response bodies of the HTTP API (the only pydantic models in sciverify, with the
leaderboard's in :mod:`sciverify.serving.leaderboard_schemas`).

They convert to and from ``sciverify.data.records`` at the boundary and nowhere else. Limits that
depend on settings (claim length, k, batch size) are checked in the routes, so a test can change them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from sciverify.data.records import Abstract, Label, PaperMeta, StudyFacts, VerifiedAbstract, doc_key
from sciverify.decision.verdict import OUTCOMES, WEIGHING
from sciverify.pipeline.present import NUMBERS_LINE

if TYPE_CHECKING:
    from sciverify.pipeline.searched import Searched

__all__ = [
    "NUMBERS_EXPLAINED",
    "AbstractOut",
    "ErrorOut",
    "EvidenceOut",
    "HealthOut",
    "PaperOut",
    "PredictClaim",
    "PredictRequest",
    "PredictResponse",
    "PredictionOut",
    "ProblemOut",
    "RationaleOut",
    "ResponseModel",
    "SearchedOut",
    "StudyOut",
    "VerifyRequest",
    "VerifyResponse",
    "VerifyResult",
    "WeightsOut",
    "check_name",
    "check_text",
    "paper_out",
    "prediction_out",
    "related_out",
    "searched_out",
    "study_out",
    "verify_response",
    "verify_result",
]

Verdict = Literal["SUPPORT", "CONTRADICT"]


class ResponseModel(BaseModel):
    """Response bodies and their parts: a field a model does not name is an error, so a slip in a route
    fails loudly instead of reaching a client."""

    model_config = ConfigDict(extra="forbid")


class _Request(BaseModel):
    """Request bodies are strict: no true-as-1, no "3"-as-3, no "yes"-as-true."""

    model_config = ConfigDict(extra="forbid", strict=True)


def check_text(value: str) -> str:
    """Text must be encodable as UTF-8: JSON may carry lone surrogates (``"\\ud800"``), which are not text.

    Raises:
        ValueError: naming the first offending position (pydantic turns it into a 422).
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text is not valid Unicode: character {exc.start} is a lone surrogate "
            f"(U+{ord(value[exc.start]):04X}); send UTF-8 text"
        ) from None
    return value


#: Bidirectional formatting characters: they reorder what a reader sees ("txt.exe" shown as "exe.txt").
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def check_name(value: str, field: str = "name") -> str:
    """A name shown to other people (a system name, a file name): Unicode text without control
    characters or bidirectional overrides, which would hide or disguise what is shown.

    Raises:
        ValueError: naming the field and the first offending position (never echoing the input).
    """
    import unicodedata

    check_text(value)
    for i, ch in enumerate(value):
        if ch in _BIDI_CONTROLS:
            raise ValueError(
                f"{field}: character {i} is a bidirectional control (U+{ord(ch):04X}); names may not "
                "reorder text"
            )
        if unicodedata.category(ch) == "Cc":
            raise ValueError(
                f"{field}: character {i} is a control character (U+{ord(ch):04X}); names are one line "
                "of visible text"
            )
    return value


#: A string that can be encoded as UTF-8 (every text field of a request).
Text = Annotated[str, AfterValidator(check_text)]


class VerifyRequest(_Request):
    claim: Text = Field(description="The claim to verify (1 to max_claim_chars characters).")
    k: int | None = Field(default=None, description="Candidate abstracts to retrieve and judge (1..max_k).")
    include_abstract: bool = Field(
        default=False, description="Also return every sentence of each abstract (used by the web page)."
    )


class RationaleOut(ResponseModel):
    index: int = Field(description="0-based sentence index in the abstract.")
    text: str
    score: float = Field(description="Rationale selector score in [0, 1].")


class PaperOut(ResponseModel):
    """Where an abstract comes from (CORD-19, PubMed corpora); empty strings where unknown."""

    source: str = ""
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    journal: str = ""
    year: int | None = None
    link: str = Field(default="", description="An address of the paper: its URL, the DOI resolver or PubMed.")


def paper_out(meta: PaperMeta | None) -> PaperOut | None:
    if meta is None:
        return None
    return PaperOut(
        source=meta.source,
        doi=meta.doi,
        pmid=meta.pmid,
        pmcid=meta.pmcid,
        journal=meta.journal,
        year=meta.year,
        link=meta.link(),
    )


#: A doc id as the corpus gives it: an integer for SciFact (S2ORC corpus ids), a string for CORD-19.
DocIdOut = int | str

OverallVerdict = Literal["supported", "refuted", "conflicting", "not enough evidence"]

#: One explanation for people of the numbers (the page and the CLI show the same words).
NUMBERS_EXPLAINED = NUMBERS_LINE


class StudyOut(ResponseModel):
    """What the abstract says about its study (a rule-based tagger, docs/evidence.md has its accuracy)."""

    design: str = Field(
        description="guideline, meta-analysis, systematic review, review, randomized trial, case report, "
        "case-control, cohort, cross-sectional, animal study, in vitro or other (none named, or not sure)."
    )
    system: str = Field(description="human, animal, cells, computational or other.")
    sample_size: int | None = Field(default=None, description="People included, when the abstract says.")
    year: int | None = Field(default=None, description="Publication year, when the corpus gives it.")
    journal: str = Field(default="", description="Journal, when the corpus gives it.")
    badges: list[str] = Field(default_factory=list, description="The short labels the page shows.")


class SearchedOut(ResponseModel):
    """The corpus searched: a verdict is about these abstracts, not the whole literature."""

    name: str
    documents: int
    first_year: int | None = None
    last_year: int | None = None
    line: str = Field(description="The same in one sentence.")


class WeightsOut(ResponseModel):
    supporting: float = Field(
        description="Sum of P(evidence) x P(right side | evidence) over the supporting papers."
    )
    refuting: float = Field(description="The same over refuting papers.")


class VerifyResult(ResponseModel):
    doc_id: DocIdOut = Field(description="The corpus's doc id (an integer for SciFact).")
    title: str
    label: Verdict = Field(description="SUPPORT (supporting) or CONTRADICT (refuting).")
    p_evidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="P(this paper is evidence for the claim): the emit model's calibrated probability "
        "(null with the LLM judge, which gives none).",
    )
    p_label_correct: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="P(the label is right | this paper is evidence): the label calibrator's probability.",
    )
    in_prediction: bool = Field(
        description="The best match: the one paper of the leaderboard decision (what /api/predict and "
        "`sciverify predict` emit)."
    )
    weight: float = Field(default=0.0, description="p_evidence x p_label_correct: what it adds to its side.")
    why: str = Field(default="", description="Why it sits on its side: its side and its best sentence.")
    study: StudyOut | None = Field(default=None, description="Design, system, sample size, year, journal.")
    rationale: list[RationaleOut] = Field(
        description="The sentences its label was read from, best first: the reason shown is the reason used."
    )
    listed: list[int] | None = Field(
        default=None,
        description="The sentence indices the leaderboard prediction lists, when they are not the "
        "rationale's (a reader lists them for the benchmark's sentence metrics).",
    )
    retrieval_score: float
    link: str = Field(default="", description="An address of the paper: DOI, PubMed, URL, or for the "
                      "SciFact corpus its Semantic Scholar page ('' when unknown).")
    sentences: list[str] | None = Field(default=None, description="The full abstract, when requested.")
    excerpt: list[int] | None = Field(
        default=None, description="With the full abstract: the sentences the page shows unfolded (each "
        "rationale sentence and its neighbours), by index."
    )
    link_label: str = Field(default="", description="What the link says: doi:..., PMID ... or where it goes.")
    paper: PaperOut | None = Field(default=None, description="Bibliographic data, when the corpus has it.")


class RelatedOut(ResponseModel):
    doc_id: DocIdOut = Field(description="The corpus's doc id (an integer for SciFact).")
    title: str
    p_evidence: float | None = Field(
        default=None, description="P(this paper is evidence), below the view's threshold."
    )
    retrieval_score: float
    link: str = ""
    link_label: str = ""
    why: str = Field(default="", description="Why it is listed apart and not under a side.")


class VerifyResponse(ResponseModel):
    claim: str
    k: int
    verdict: OverallVerdict = Field(
        description=f"{OUTCOMES[:-1]} (see rule)."
    )
    why: str = Field(default="", description="Why the verdict is what it is, in one sentence.")
    rule: str = Field(default=WEIGHING, description="The weighing that turns the papers into the verdict.")
    weights: WeightsOut | None = None
    searched: SearchedOut | None = Field(
        default=None, description="The corpus the claim was checked against."
    )
    supporting: list[VerifyResult] = Field(description="Supporting papers, most likely evidence first.")
    refuting: list[VerifyResult] = Field(description="Refuting papers, most likely evidence first.")
    unclear: list[VerifyResult] = Field(
        default_factory=list,
        description="Papers shown as evidence without a side (direction unclear): P(right side | evidence) "
        "below the threshold the cross-validation chose; label is the side the models lean to. They weigh "
        "nothing in the verdict.",
    )
    related: list[RelatedOut] = Field(
        default_factory=list,
        description="Related, not evidence: the best few candidates below the evidence threshold, never "
        "under a side.",
    )
    numbers: str = Field(default=NUMBERS_EXPLAINED, description="What p_evidence and p_label_correct mean.")


#: A claim id: an integer or a non-empty string.
def _non_empty(value: str) -> str:
    if not value:
        raise ValueError("a claim id must be an integer or a non-empty string")
    return value


ClaimIdIn = int | Annotated[str, AfterValidator(check_text), AfterValidator(_non_empty)]


class PredictClaim(_Request):
    id: ClaimIdIn
    claim: Text


class PredictRequest(_Request):
    claims: list[PredictClaim] = Field(description="Claims to predict (1..max_batch).")
    k: int | None = None


class EvidenceOut(ResponseModel):
    label: Verdict
    sentences: list[int]
    confidence: float | None = Field(
        default=None, description="P(this abstract is evidence) (the leaderboard format's confidence)."
    )
    p_label_correct: float | None = Field(default=None, description="P(the label is right | evidence).")


class PredictionOut(ResponseModel):
    """One line of a SciFact leaderboard submission."""

    id: int | str
    evidence: dict[str, EvidenceOut]


class PredictResponse(ResponseModel):
    predictions: list[PredictionOut]


class AbstractOut(ResponseModel):
    doc_id: DocIdOut
    title: str
    sentences: list[str]
    structured: bool
    paper: PaperOut | None = None
    link: str = ""


class HealthOut(ResponseModel):
    status: Literal["ok", "degraded"]
    version: str
    verifier: str
    cpu_check: dict[str, object] = Field(
        default_factory=dict,
        description="The models' canaries on this CPU: ok, the CPU's features, each model's result "
        "(empty until the verifier has loaded or been refused).",
    )
    database: str
    leaderboard: bool
    index: dict[str, object] = Field(default_factory=dict)
    queue: dict[str, int] = Field(default_factory=dict, description="Verification counters since start.")


class ProblemOut(ResponseModel):
    file: str
    line: int | None
    message: str


class ErrorOut(ResponseModel):
    error: str
    message: str
    problems: list[ProblemOut] | None = None


def _unit(value: float | None) -> float | None:
    return None if value is None else min(1.0, max(0.0, float(value)))


def study_out(study: StudyFacts | None) -> StudyOut | None:
    from sciverify.pipeline.present import study_json

    body = study_json(study)
    return None if body is None else StudyOut(**body)


def searched_out(searched: Searched | None) -> SearchedOut | None:
    from sciverify.pipeline.searched import searched_line

    if searched is None:
        return None
    return SearchedOut(**searched.to_json(), line=searched_line(searched))


def verify_result(item: VerifiedAbstract, abstract: Abstract | None = None) -> VerifyResult:
    """Convert one pipeline record; ``abstract`` adds the full text for highlighting."""
    from sciverify.decision.verdict import paper_weight
    from sciverify.pipeline.present import excerpt_indices, link_label, paper_why

    link = item.link or (item.meta.link() if item.meta is not None else "")
    return VerifyResult(
        weight=round(paper_weight(item.p_evidence, item.p_label_correct), 4),
        why=paper_why(item),
        study=study_out(item.study),
        doc_id=item.doc_id,
        title=item.title,
        label=Label(item.label).value,  # type: ignore[arg-type]
        p_evidence=_unit(item.p_evidence),
        p_label_correct=_unit(item.p_label_correct),
        in_prediction=item.in_prediction,
        rationale=[RationaleOut(index=r.index, text=r.text, score=float(r.score)) for r in item.rationale],
        listed=list(item.listed) or None,
        retrieval_score=float(item.retrieval_score),
        link=link,
        sentences=list(abstract.sentences) if abstract is not None else None,
        excerpt=(
            excerpt_indices(len(abstract.sentences), [r.index for r in item.rationale])
            if abstract is not None else None
        ),
        link_label=link_label(link, *((item.meta.doi, item.meta.pmid) if item.meta is not None else ())),
        paper=paper_out(item.meta),
    )


def related_out(item: VerifiedAbstract) -> RelatedOut:
    """A paper listed apart, "related, not evidence" (:func:`sciverify.pipeline.present.related_json`)."""
    from sciverify.pipeline.present import related_json

    return RelatedOut(**related_json(item))


def verify_response(
    claim: str,
    k: int,
    results: list[VerifyResult],
    searched: Searched | None = None,
    related: list[RelatedOut] | None = None,
) -> VerifyResponse:
    """The grouped answer with its overall verdict and why (:func:`sciverify.decision.verdict.weigh`;
    the headings: :func:`sciverify.decision.verdict.sides`)."""
    from sciverify.decision.verdict import sides, weigh
    from sciverify.pipeline.present import verdict_why

    supporting, refuting, unclear = sides(results)
    weighed = weigh(results)
    why = verdict_why(weighed, searched)
    return VerifyResponse(
        claim=claim,
        k=k,
        verdict=weighed.verdict.value,
        why=why,
        weights=WeightsOut(supporting=weighed.support_weight, refuting=weighed.refute_weight),
        searched=searched_out(searched),
        supporting=supporting,
        refuting=refuting,
        unclear=unclear,
        related=related or [],
    )


def prediction_out(claim_id: int | str, items: list[VerifiedAbstract]) -> PredictionOut:
    """Leaderboard line for one claim: the abstracts of the leaderboard decision (``in_prediction``),
    each with its label, rationale indices (most confident first) and confidence.

    The order matters: abstract-level scoring only counts the first few sentences of each abstract.
    """
    evidence = {
        doc_key(v.doc_id): EvidenceOut(
            label=Label(v.label).value,  # type: ignore[arg-type]
            sentences=list(v.listed) or [r.index for r in v.rationale],
            confidence=round(float(v.confidence), 6),
            p_label_correct=v.p_label_correct,
        )
        for v in sorted((v for v in items if v.in_prediction), key=lambda v: -v.confidence)
        if Label(v.label) is not Label.NOT_ENOUGH_INFO
    }
    return PredictionOut(id=claim_id, evidence=evidence)
