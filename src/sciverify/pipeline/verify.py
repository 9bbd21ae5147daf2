"""The Verifier: retrieve candidate abstracts, select rationale sentences, label, decide what to emit.

One object holds everything a query needs (memory-mapped index, retriever, embedder, selector,
label model, reader, emit model and tuned thresholds), so the web app and the CLI load it once and call
:meth:`verify` or :meth:`predict` many times. Per claim only the transformers run on text: the label model
on the abstracts the decision rule asks it to read, and the reader on the sentences the rule asks it to
read, their calls side by side on the cores (:mod:`sciverify.models.parallel`); the selector's trees and
everything else are numpy over stored embeddings. What each model reads, and everything from the models'
outputs to the emitted and shown abstracts, is the decision's (:mod:`sciverify.decision`), which the
cross-validation calls too: the Verifier runs each model on what the decision asks of it and then calls
the decision once per claim with what they said (:meth:`Verifier._judge_claim`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import (
    Abstract,
    Claim,
    Prediction,
    VerifiedAbstract,
    doc_key,
)
from sciverify.decision.candidates import CandidateOutputs
from sciverify.decision.rule import (
    Pick,
    decide_claim,
    emit_probabilities,
    label_requests,
    listing_reads,
    stored_label_probs,
    to_prediction,
    with_reader,
)
from sciverify.decision.sentence_rule import reader_sentences
from sciverify.errors import ArtifactError, InputError
from sciverify.models.base import Judge, LabelCalibration, LabelPredictor, RationaleSelector, SentenceReader
from sciverify.models.features import AbstractInput, abstract_input
from sciverify.pipeline.config import (
    MAX_CLAIM_CHARS,
    PIPELINE_TOML,
    PipelineConfig,
    claim_char_limit,
    default_model_dir,
    tuned_config,
)
from sciverify.retrieval.base import Hit, Retriever

if TYPE_CHECKING:
    from sciverify.models.conformance import ConformanceReport
    from sciverify.models.emit import EmitModel
    from sciverify.pipeline.searched import Searched
    from sciverify.retrieval.index import CorpusIndex

__all__ = [
    "MAX_CLAIM_CHARS",
    "PIPELINE_TOML",
    "Verifier",
    "as_claim",
    "check_claim",
    "default_model_dir",
    "load_verifier",
]

log = logging.getLogger(__name__)


def check_claim(claim: object, limit: int | None = None) -> str:
    """The claim text, stripped; InputError if it is not a usable claim (``limit``: None = the shared
    limit, :func:`sciverify.pipeline.config.claim_char_limit`, :data:`MAX_CLAIM_CHARS` by default)."""
    limit = claim_char_limit() if limit is None else limit
    if not isinstance(claim, str):
        raise InputError(f"a claim must be a string, got {type(claim).__name__}")
    try:
        claim.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8 (a shell argument, a lone JSON surrogate)
        raise InputError("claim is not valid UTF-8 text; pass it as UTF-8") from None
    text = " ".join(claim.split())
    if not text:
        raise InputError("claim is empty: give one sentence stating a scientific finding")
    if len(text) > limit:
        raise InputError(
            f"claim is {len(text)} characters long; the limit is {limit}. State one finding in one sentence."
        )
    return text


def as_claim(item: object, position: int = 0) -> Claim:
    """``item`` as a :class:`Claim`: a Claim, or a record of a SciFact claims file (``id`` and ``claim``).

    Raises:
        InputError: naming the item's position and what is missing.
    """
    if isinstance(item, Claim):
        return item
    if isinstance(item, Mapping):
        cid, text = item.get("id"), item.get("claim")
        if isinstance(cid, int | str) and not isinstance(cid, bool) and cid != "" and isinstance(text, str):
            return Claim(id=cid, text=text)
        raise InputError(f"claims[{position}]: a claim record needs an 'id' (int or str) and a 'claim' "
                         f"(str), got keys {sorted(map(str, item))}")
    raise InputError(f"claims[{position}]: expected a Claim or a dict with 'id' and 'claim', "
                     f"got {type(item).__name__}")


@dataclass(frozen=True)
class _Judged:
    """Per-claim internals kept for predictions, the evidence view and evaluation: the emitted picks, the
    picks the evidence view adds (``shown``), the sentence scores the decision read (the selector's,
    blended with the reader's when it is used), the label probabilities by candidate and P(evidence) of
    every candidate (None without the emit model)."""

    hits: list[Hit]
    picks: list[Pick]
    shown: list[Pick] = field(default_factory=list)
    scores: Sequence[npt.NDArray[np.float32]] | None = None
    probs: dict[int, npt.NDArray[np.float32]] | None = None
    emit_probs: list[float] | None = None


class Verifier:
    """Claim verification over one corpus index with one set of models. Build it with :meth:`load`."""

    def __init__(
        self,
        index: CorpusIndex,
        retriever: Retriever,
        embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
        selector: RationaleSelector | None,
        labeler: LabelPredictor | None,
        config: PipelineConfig,
        emit: EmitModel | None = None,
        llm_judge: Judge | None = None,
        reader: SentenceReader | None = None,
    ) -> None:
        if config.judge != "models" and llm_judge is None:
            raise ArtifactError(
                f"the pipeline is configured with the {config.judge} judge, but none was given"
            )
        if config.judge == "models" and config.decision.confidence == "learned" and emit is None:
            raise ArtifactError("the decision uses the learned emit model, but none was loaded (emit.json)")
        if config.judge == "models" and config.decision.uses_reader and reader is None:
            raise ArtifactError("the decision reads sentences with the reader, but none was loaded (reader/)")
        emit_reads = config.decision.emission().uses_reader
        if config.judge == "models" and emit is not None and emit.hears_reader != emit_reads:
            raise ArtifactError(
                "emit.json was fitted "
                + ("with" if emit.hears_reader else "without")
                + " the reader's features but the decision's emission "
                + ("does not hear" if emit.hears_reader else "hears")
                + " the reader; use the emit.json of the same run as pipeline.toml"
            )
        self.index = index
        self.retriever = retriever
        self.embed = embed
        self.selector = selector
        self.labeler = labeler
        self.config = config
        self.emit = emit
        self.llm_judge = llm_judge
        self.reader = reader
        #: P(label right | evidence) for the evidence view (:mod:`sciverify.models.calibration`).
        self.label_calibrator: LabelCalibration | None = None
        #: The models' canaries on this CPU, run by :meth:`load` (None for a verifier built otherwise).
        self.conformance: ConformanceReport | None = None
        self._searched: Searched | None = None

    @classmethod
    def load(
        cls,
        index_dir: Path | None = None,
        model_dir: Path | None = None,
        config: PipelineConfig | None = None,
        *,
        gold: Sequence[Claim] | None = None,
        progress: bool = True,
    ) -> Verifier:
        """Open an index and the models.

        Args:
            index_dir: corpus index directory; None = the built-in SciFact index (built on first use).
            model_dir: directory with ``rationale/`` and, as the decision needs them, ``label/`` and
                ``reader/`` (None = shipped weights).
            config: pipeline settings; None = those the model dir ships (tuned: ``rationale/pipeline.toml``
                and ``decision/decision.toml``, :func:`~sciverify.pipeline.config.tuned_config`).
            gold: the gold claims, read only by the oracle retriever and the oracle selector (matched
                by claim text): the one route by which gold evidence reaches the pipeline.
            progress: show progress while building the default index.
        """
        from sciverify.models.catalog import get_judge, get_label_predictor, get_selector
        from sciverify.retrieval.embedder import get_embedder
        from sciverify.retrieval.embedder_check import require_embedder
        from sciverify.retrieval.index import CorpusIndex, ensure_default_index
        from sciverify.retrieval.methods import make_retriever

        if index_dir is None:
            index = ensure_default_index(progress=progress)
        else:
            index = CorpusIndex.open(index_dir)
        if not index.has_dense:
            raise ArtifactError(f"index {index.root} has no sentence embeddings; rebuild it with dense on")
        model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        config = config if config is not None else tuned_config(model_dir)
        retriever = make_retriever(index, config.retrieval, gold)
        embed = get_embedder(index.config.max_length).encode
        # vectors made by another embedder, or on a CPU whose embedder answered differently, are refused
        require_embedder(index, embed)
        if config.judge != "models":
            return cls(
                index, retriever, embed, None, None, config, llm_judge=get_judge(config.judge, config.llm)
            )
        selector = get_selector(config.selector, model_dir / "rationale", gold)
        decision = config.decision
        labeler = None
        if decision.uses_label_model:
            labeler = get_label_predictor(config.label, model_dir / "label")
        reader = None
        if decision.uses_reader:
            from sciverify.models.reader import ReaderModel

            reader = ReaderModel.load(model_dir / "reader")
        emit = None
        if decision.confidence == "learned":
            from sciverify.models.emit import EMIT_FILE, EmitModel

            emit = EmitModel.load(model_dir / "rationale" / EMIT_FILE)
        from sciverify.models.conformance import check_loaded

        # the canaries: a CPU whose kernels answer wrongly is refused here, in one line that names it
        conformance = check_loaded(labeler, reader, embed)
        conformance.require()
        verifier = cls(index, retriever, embed, selector, labeler, config, emit, reader=reader)
        verifier.conformance = conformance
        from sciverify.models.calibration import LABEL_CALIBRATION_FILE, LabelCalibrator

        if (model_dir / "rationale" / LABEL_CALIBRATION_FILE).exists():
            verifier.label_calibrator = LabelCalibrator.load(model_dir / "rationale" / LABEL_CALIBRATION_FILE)
        return verifier

    # ---- public API ------------------------------------------------------------------------------

    @property
    def index_info(self) -> dict[str, Any]:
        """Corpus size and index version, for health checks."""
        return {
            "documents": len(self.index),
            "sentences": self.index.n_sentences,
            "format_version": self.index.manifest.get("format_version"),
            "path": str(self.index.root),
        }

    @property
    def searched(self) -> Searched:
        """What a claim is checked against: the corpus's name, size and years (computed once)."""
        if self._searched is None:
            from sciverify.pipeline.searched import describe_corpus

            self._searched = describe_corpus(self.index)
        return self._searched

    def get_abstract(self, doc_id: str) -> Abstract | None:
        """The abstract with this doc id (string key as in JSON; integer ids also accepted)."""
        row = self.index.row_of(doc_id)
        return None if row is None else self.index.abstract(row)

    def paper_link(self, abstract: Abstract) -> str:
        """An address of the abstract's paper (:func:`sciverify.pipeline.evidence.paper_link`)."""
        from sciverify.pipeline.evidence import is_scifact_index, paper_link

        return paper_link(abstract.doc_id, abstract.meta, is_scifact_index(self.index))

    @property
    def default_k(self) -> int:
        """The number of candidates the decision was tuned for (``pipeline.toml``): the emit model's
        rank and gap features were fitted on exactly that many, so it is what a query judges by default."""
        return int(self.config.retrieval.k)

    def verify(self, claim: str, k: int | None = None) -> list[VerifiedAbstract]:
        """The evidence view of ``claim`` over the top ``k`` retrieved (default: :attr:`default_k`): every
        abstract the models find relevant, supporting first, each group by P(evidence)
        (:mod:`sciverify.pipeline.evidence`); those of the leaderboard decision are ``in_prediction``."""
        return self.verify_batch([claim], k)[0]

    def verify_batch(self, claims: Sequence[str], k: int | None = None) -> list[list[VerifiedAbstract]]:
        """:meth:`verify` for many claims (retrieval and embedding are batched)."""
        from sciverify.pipeline.evidence import SHOW_THRESHOLD, evidence_view

        texts = [check_claim(c, self.config.claim_limit) for c in claims]
        k = self.default_k if k is None else k
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        return [evidence_view(self, judged) for judged in self._judge(texts, k, shown=SHOW_THRESHOLD)]

    def predict(
        self,
        claims: Sequence[Claim | Mapping[str, Any]],
        *,
        batch_size: int = 32,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Prediction]:
        """Leaderboard predictions for claims, in input order (only ``id`` and ``text`` are read); each
        abstract also carries P(label right | evidence) when a label calibrator ships.

        A claim is a :class:`Claim` or a SciFact claims-file record, ``{"id": 1, "claim": "..."}``.

        Raises:
            InputError: a claim that is neither, or whose text is unusable (:func:`check_claim`).
        """
        from sciverify.pipeline.evidence import label_correct_probs

        items = [as_claim(c, n) for n, c in enumerate(claims)]
        preds: list[Prediction] = []
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            texts = [check_claim(c.text, self.config.claim_limit) for c in batch]
            for claim, judged in zip(batch, self._judge(texts, self.config.retrieval.k), strict=True):
                doc_ids = [doc_key(h.doc_id) for h in judged.hits]
                p_label = label_correct_probs(self, judged, [v.candidate for v in judged.picks])
                preds.append(to_prediction(claim.id, doc_ids, judged.picks, p_label))
            if on_progress is not None:
                on_progress(len(batch))
        return preds

    # ---- internals -------------------------------------------------------------------------------

    def candidates(self, texts: Sequence[str], k: int) -> tuple[list[list[Hit]], npt.NDArray[np.float32]]:
        """The ``k`` candidates per claim (retrieved, then reranked if configured) and the claim
        embeddings. Shapes: embeddings (len(texts), 384)."""
        rr = self.config.rerank
        hits = self.retriever.retrieve(list(texts), max(k, rr.depth) if rr.enabled else k)
        embs = self.embed(list(texts))
        if rr.enabled:
            hits = [self.rerank(text, embs[n], hits[n])[:k] for n, text in enumerate(texts)]
        return hits, embs

    def rerank(self, text: str, claim_emb: npt.NDArray[np.float32], hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` reordered by :func:`sciverify.retrieval.rerank.rerank` with the best sentence score of
        each under the selector."""
        from sciverify.retrieval.rerank import rerank

        scores = self._selector.score(text, claim_emb, [self.abstract_input(h.row) for h in hits])
        best = [float(s.max()) if len(s) else 0.0 for s in scores]
        return rerank(hits, best, self.config.rerank.weight)

    def abstract_input(self, row: int) -> AbstractInput:
        """What the selector needs of one index row (sentences, their stored vectors, title vector)."""
        return abstract_input(self.index, row)

    @property
    def _selector(self) -> RationaleSelector:
        if self.selector is None:
            raise ArtifactError(f"the {self.config.judge} judge has no rationale selector")
        return self.selector

    def score_candidates(
        self, text: str, claim_emb: npt.NDArray[np.float32], hits: Sequence[Hit]
    ) -> list[npt.NDArray[np.float32]]:
        """Rationale scores of every sentence of every candidate."""
        return self._selector.score(text, claim_emb, [self.abstract_input(h.row) for h in hits])

    def label_evidences(
        self, hits: Sequence[Hit], scores: Sequence[npt.NDArray[np.float32]]
    ) -> tuple[list[int], list[tuple[str, list[str]]]]:
        """The candidates the decision wants labelled and, for each, (title, the sentences it reads)."""
        chosen, evidences = [], []
        for i, picked in label_requests(scores, self.config.decision):
            sentences = self.index.sentences(hits[i].row)
            chosen.append(i)
            evidences.append((self.index.title(hits[i].row), [sentences[j] for j in picked]))
        return chosen, evidences

    def label_candidates(
        self, text: str, hits: Sequence[Hit], scores: Sequence[npt.NDArray[np.float32]]
    ) -> dict[int, npt.NDArray[np.float32]]:
        """Label probabilities for the candidates the decision wants labelled (one model call each)."""
        chosen, evidences = self.label_evidences(hits, scores)
        if not chosen:
            return {}
        if self.labeler is None:
            raise ArtifactError(f"the {self.config.judge} judge has no label model")
        probs = self.labeler.predict(text, evidences)
        return {i: probs[n] for n, i in enumerate(chosen)}

    def read_candidates(
        self,
        text: str,
        hits: Sequence[Hit],
        outputs: Sequence[CandidateOutputs],
        only: Collection[int] | None = None,
    ) -> list[CandidateOutputs]:
        """The candidates with the reader's outputs for the sentences the decision has it read (NaN for
        the others), all of a claim's reads in one batch spread over the cores. With ``only``, just those
        candidates (by position) are read; the others are returned as they were."""
        if self.reader is None:
            raise ArtifactError("the decision reads sentences with the reader, but none was loaded")
        cfg = self.config.decision
        wanted = range(len(outputs)) if only is None else set(only)
        picks = [reader_sentences(o.scores, cfg) if i in wanted else [] for i, o in enumerate(outputs)]
        pairs: list[tuple[str, str]] = []
        for hit, picked in zip(hits, picks, strict=True):
            title, sentences = self.index.title(hit.row), self.index.sentences(hit.row)
            pairs.extend((title, sentences[j]) for j in picked)
        read = self.reader.read_pairs(text, pairs) if pairs else np.zeros((0, 4), dtype=np.float32)
        out, start = [], 0
        for o, picked in zip(outputs, picks, strict=True):
            if not picked:
                out.append(o)
                continue
            stance = np.full((len(o.scores), 3), np.nan, dtype=np.float32)
            rationale = np.full(len(o.scores), np.nan, dtype=np.float32)
            rows = read[start : start + len(picked)]
            stance[picked], rationale[picked] = rows[:, :3], rows[:, 3]
            start += len(picked)
            out.append(replace(o, stance=stance, rationale=rationale))
        return out

    def _judge(self, texts: Sequence[str], k: int, shown: float | None = None) -> list[_Judged]:
        """Judge each claim's top ``k``. ``shown``: the evidence view's P(evidence) threshold, when the
        caller shows more than the emitted picks; a reader that only lists then reads those abstracts too, so
        every abstract shown lists the sentences it chose."""
        if self.llm_judge is not None:
            return self._judge_llm(texts, k)
        all_hits, embs = self.candidates(texts, k)
        return [self._judge_claim(text, embs[n], all_hits[n], shown) for n, text in enumerate(texts)]

    def _judge_claim(
        self, text: str, claim_emb: npt.NDArray[np.float32], hits: list[Hit], shown: float | None
    ) -> _Judged:
        """One claim through the models, each run on what the decision asks of it, in one direction: the
        selector scores every sentence; the reader reads (when it is heard) and the label model labels what
        :func:`~sciverify.decision.rule.label_requests` names; the emit model gives P(evidence); a reader
        that only lists reads what :func:`~sciverify.decision.rule.listing_reads` names; then the decision
        decides once (:func:`~sciverify.decision.rule.decide_claim`)."""
        cfg = self.config.decision
        scores = self.score_candidates(text, claim_emb, hits)
        outputs = [
            CandidateOutputs(doc_key(h.doc_id), float(h.score), s) for h, s in zip(hits, scores, strict=True)
        ]
        if cfg.reads_before_emission:
            outputs = self.read_candidates(text, hits, outputs)
        if cfg.label_source == "reader":
            probs = stored_label_probs(outputs, cfg)
        else:
            model = self.label_candidates(text, hits, [o.label_scores(cfg) for o in outputs])
            probs = with_reader(outputs, model, cfg)
        emit_probs = emit_probabilities(outputs, probs, cfg, self.emit)
        if self.reader is not None:
            listing = listing_reads(outputs, probs, cfg, emit_probs, shown)
            if listing:
                outputs = self.read_candidates(text, hits, outputs, only=listing)
        decided = decide_claim(outputs, probs, cfg, emit_probs, shown)
        return _Judged(hits, decided.emitted, decided.shown, decided.scores, probs, emit_probs)

    def _judge_llm(self, texts: Sequence[str], k: int) -> list[_Judged]:
        """Every retrieved candidate judged by the language model; its SUPPORT/CONTRADICT answers are the
        emitted picks, in retrieval order. It gives no probability, so confidence is 1.0 and the evidence it
        copied (mapped back to sentence indices) is listed as it gave it."""
        hits_per_claim = self.retriever.retrieve(list(texts), k)
        out = []
        assert self.llm_judge is not None
        for text, hits in zip(texts, hits_per_claim, strict=True):
            answers = self.llm_judge.judge(text, [self.index.sentences(h.row) for h in hits])
            picks = [
                Pick(i, a.label, 1.0, a.sentences, tuple(1.0 for _ in a.sentences))
                for i, a in enumerate(answers)
                if a.label is not None
            ]
            out.append(_Judged(list(hits), picks))
        return out


def load_verifier(index_dir: Path | None = None) -> Verifier:
    """A Verifier over ``index_dir`` (None = built-in SciFact index) with the shipped models."""
    return Verifier.load(index_dir)
