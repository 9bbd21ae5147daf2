"""The shared vocabulary: every stage hands these small frozen records to the next.

Identifiers (claim ids, doc ids) stay as the input gave them: SciFact uses integers, CORD-19 uses
strings such as ``ug7v899j``. JSON object keys are always strings, so the evidence maps are keyed by
:func:`doc_key` of the doc id; that one function is the join key everywhere.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

__all__ = [
    "Abstract",
    "AbstractPrediction",
    "Claim",
    "ClaimId",
    "DocId",
    "EvidenceSet",
    "Label",
    "PaperMeta",
    "Prediction",
    "RationaleSentence",
    "StudyFacts",
    "VerifiedAbstract",
    "doc_key",
]

DocId = int | str
ClaimId = int | str


def doc_key(doc_id: DocId) -> str:
    """The string form under which a doc id appears as a JSON object key."""
    return str(doc_id)


class Label(StrEnum):
    """Verdict labels; the values are the SciFact strings so JSON round-trips without lookups."""

    SUPPORT = "SUPPORT"
    CONTRADICT = "CONTRADICT"
    NOT_ENOUGH_INFO = "NOT_ENOUGH_INFO"


class PaperMeta(msgspec.Struct, frozen=True, omit_defaults=True):
    """Where an abstract comes from, so a reader can open the paper: what CORD-19 and PubMed give.

    Every field is optional; SciFact's own corpus carries none of them.
    """

    source: str = ""
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    journal: str = ""
    year: int | None = None
    url: str = ""

    def link(self) -> str:
        """The best address of the paper: its own URL, else the DOI resolver, else PubMed, else ''."""
        if self.url:
            return self.url
        if self.doi:
            return f"https://doi.org/{self.doi}"
        if self.pmid:
            return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"
        if self.pmcid:
            return f"https://www.ncbi.nlm.nih.gov/pmc/articles/{self.pmcid}/"
        return ""

    def to_json(self) -> dict[str, str | int]:
        """The non-empty fields, as stored in a corpus record's ``metadata`` object."""
        return {k: v for k, v in msgspec.structs.asdict(self).items() if v not in ("", None)}


class Abstract(msgspec.Struct, frozen=True):
    """One corpus document: sentences are kept exactly as given, since rationale indices point into them."""

    doc_id: DocId
    title: str
    sentences: tuple[str, ...]
    structured: bool = False
    meta: PaperMeta | None = None


class EvidenceSet(msgspec.Struct, frozen=True):
    """A minimal set of sentences that together justify ``label`` (one gold rationale)."""

    sentences: tuple[int, ...]
    label: Label


class Claim(msgspec.Struct, frozen=True):
    """A claim, with its gold evidence when known (``evidence`` keyed by :func:`doc_key`)."""

    id: ClaimId
    text: str
    evidence: dict[str, tuple[EvidenceSet, ...]] = msgspec.field(default_factory=dict)
    cited_doc_ids: tuple[DocId, ...] = ()

    def gold_label(self, key: str) -> Label | None:
        """The abstract-level label of one evidence doc (SciFact never mixes labels in one abstract)."""
        sets = self.evidence.get(key)
        return sets[0].label if sets else None


class AbstractPrediction(msgspec.Struct, frozen=True):
    """A predicted verdict for one abstract. ``sentences`` are listed most confident first.

    ``confidence`` is P(this abstract is evidence for the claim) (the leaderboard format's optional
    field); ``p_label_correct`` is P(the label is right | it is evidence). Both are optional.
    """

    label: Label
    sentences: tuple[int, ...]
    confidence: float | None = None
    p_label_correct: float | None = None


class Prediction(msgspec.Struct, frozen=True):
    """A leaderboard-format prediction for one claim; an empty ``evidence`` means nothing found."""

    id: ClaimId
    evidence: dict[str, AbstractPrediction] = msgspec.field(default_factory=dict)


class RationaleSentence(msgspec.Struct, frozen=True):
    """One rationale sentence shown to a person: its index in the abstract, its text and its score."""

    index: int
    text: str
    score: float


class StudyFacts(msgspec.Struct, frozen=True):
    """What an abstract says about its study (:mod:`sciverify.pipeline.study`): the design (randomized
    trial, cohort, animal study, ...), the system studied (human, animal, cells, computational, other),
    the sample size when stated, and the year and journal when the corpus gives them."""

    design: str = "other"
    system: str = "other"
    sample_size: int | None = None
    year: int | None = None
    journal: str = ""


class VerifiedAbstract(msgspec.Struct, frozen=True):
    """One abstract judged against a claim: the verdict, how sure we are, and why (rationale).

    Attributes:
        confidence: the decision's confidence: with the shipped models, ``p_evidence``; with the LLM
            judge 1.0; with the heuristic decision its product score.
        p_evidence: P(this abstract is evidence for the claim), the emit model's calibrated
            probability (None when the pipeline has no emit model).
        p_label_correct: P(the SUPPORT/CONTRADICT label is right | the abstract is evidence), the
            label calibrator's probability (None without one).
        in_prediction: the abstract is part of the leaderboard decision (what ``predict`` writes);
            the others are shown as evidence by the display rule (:mod:`sciverify.pipeline.evidence`).
        link: an address of the paper ('' when unknown).
        study: what the abstract says about the study (None where the view did not read it).
        listed: the sentence indices the leaderboard prediction lists for it, best first, when they are
            not the ``rationale`` shown (the view shows the sentences the label was read from; a reader
            that lists may list others for the benchmark's sentence metrics). Empty: the rationale's.
    """

    doc_id: DocId
    title: str
    label: Label
    confidence: float
    rationale: tuple[RationaleSentence, ...]
    retrieval_score: float = 0.0
    meta: PaperMeta | None = None
    p_evidence: float | None = None
    p_label_correct: float | None = None
    in_prediction: bool = True
    link: str = ""
    study: StudyFacts | None = None
    listed: tuple[int, ...] = ()
