"""The Verifier: retrieve candidate abstracts, select rationale sentences, label, decide what to emit.

One object holds everything a query needs (memory-mapped index, retriever, embedder, selector,
label model, tuned thresholds), so the web app and the CLI load it once and call :meth:`verify` or
:meth:`predict` many times. Per claim, two transformers run: the sentence scorer on the few sentences
the trees rank best in each candidate, and the label model on at most ``decision.max_labelled``
abstracts, their calls side by side on the cores (:mod:`sciverify.models.parallel`); everything else is
numpy over stored embeddings, which is what keeps a warm query near 250 ms on two CPU cores.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.records import (
    Abstract,
    AbstractPrediction,
    Claim,
    Prediction,
    VerifiedAbstract,
    doc_key,
)
from sciverify.errors import ArtifactError, InputError
from sciverify.models.decision import Verdict, decide, label_inputs
from sciverify.models.features import AbstractInput
from sciverify.pipeline.config import MAX_CLAIM_CHARS, PipelineConfig, claim_char_limit

__all__ = ["MAX_CLAIM_CHARS", "Verifier", "check_claim", "default_model_dir", "load_verifier"]

log = logging.getLogger(__name__)

PIPELINE_TOML = "pipeline.toml"


def default_model_dir() -> Path:
    """The shipped weights: ``sciverify/models/weights`` with ``label/`` and ``rationale/`` inside."""
    return Path(__file__).resolve().parent.parent / "models" / "weights"


def check_claim(claim: object, limit: int | None = None) -> str:
    """The claim text, stripped; InputError if it is not a usable claim (``limit``: None = the shared
    limit, :func:`sciverify.pipeline.config.claim_char_limit`, :data:`MAX_CLAIM_CHARS` by default)."""
    limit = claim_char_limit() if limit is None else limit
    if not isinstance(claim, str):
        raise InputError(f"a claim must be a string, got {type(claim).__name__}")
    text = " ".join(claim.split())
    if not text:
        raise InputError("claim is empty: give one sentence stating a scientific finding")
    if len(text) > limit:
        raise InputError(
            f"claim is {len(text)} characters long; the limit is {limit}. State one finding in one sentence."
        )
    return text


@dataclass(frozen=True)
class _Judged:
    """Per-claim internals kept for predictions, the evidence view and evaluation."""

    hits: list[Any]
    verdicts: list[Verdict]
    scores: Sequence[npt.NDArray[np.float32]] | None = None
    probs: dict[int, npt.NDArray[np.float32]] | None = None
    emit_probs: list[float] | None = None


class Verifier:
    """Claim verification over one corpus index with one set of models. Build it with :meth:`load`."""

    def __init__(
        self,
        index: Any,
        retriever: Any,
        embed: Callable[[Sequence[str]], npt.NDArray[np.float32]],
        selector: Any,
        labeler: Any,
        config: PipelineConfig,
        emit: Any = None,
        llm_judge: Any = None,
    ) -> None:
        if config.judge == "llm" and llm_judge is None:
            raise ArtifactError("the pipeline is configured with the llm judge, but none was given")
        if config.judge == "models" and config.decision.confidence == "learned" and emit is None:
            raise ArtifactError("the decision uses the learned emit model, but none was loaded (emit.json)")
        self.index = index
        self.retriever = retriever
        self.embed = embed
        self.selector = selector
        self.labeler = labeler
        self.config = config
        self.emit = emit
        self.llm_judge = llm_judge
        #: P(label right | evidence) for the evidence view (:mod:`sciverify.models.calibration`).
        self.label_calibrator: Any = None

    @classmethod
    def load(
        cls,
        index_dir: Path | None = None,
        model_dir: Path | None = None,
        config: PipelineConfig | None = None,
        *,
        claims: Sequence[Claim] | None = None,
        progress: bool = True,
    ) -> Verifier:
        """Open an index and the models.

        Args:
            index_dir: corpus index directory; None = the built-in SciFact index (built on first use).
            model_dir: directory with ``label/`` and ``rationale/`` (None = shipped weights).
            config: pipeline settings; None = ``rationale/pipeline.toml`` of the model dir (tuned).
            claims: gold claims, needed only by the oracle retriever.
            progress: show progress while building the default index.
        """
        from sciverify.models.base import get_label_predictor, get_selector
        from sciverify.retrieval.base import make_retriever
        from sciverify.retrieval.embedder import get_embedder
        from sciverify.retrieval.index import CorpusIndex, ensure_default_index

        if index_dir is None:
            index = ensure_default_index(progress=progress)
        else:
            index = CorpusIndex.open(index_dir)
        if not index.has_dense:
            raise ArtifactError(f"index {index.root} has no sentence embeddings; rebuild it with dense on")
        model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        if config is None:
            toml = model_dir / "rationale" / PIPELINE_TOML
            config = PipelineConfig.load_toml(toml) if toml.exists() else PipelineConfig()
        retriever = make_retriever(index, config.retrieval, claims)
        embed = get_embedder(index.config.max_length).encode
        if config.judge == "llm":
            from sciverify.models.llm import LlmJudge

            return cls(index, retriever, embed, None, None, config, llm_judge=LlmJudge(config.llm))
        selector = get_selector(config.selector, model_dir / "rationale")
        labeler = get_label_predictor(config.label, model_dir / "label")
        emit = None
        if config.decision.confidence == "learned":
            from sciverify.models.emit import EMIT_FILE, EmitModel

            emit = EmitModel.load(model_dir / "rationale" / EMIT_FILE)
        verifier = cls(index, retriever, embed, selector, labeler, config, emit)
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
        from sciverify.pipeline.evidence import evidence_view

        texts = [check_claim(c, self.config.claim_limit) for c in claims]
        k = self.default_k if k is None else k
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        return [evidence_view(self, judged) for judged in self._judge(texts, k)]

    def predict(
        self,
        claims: Sequence[Claim],
        *,
        batch_size: int = 32,
        on_progress: Callable[[int], None] | None = None,
        use_gold: bool = False,
    ) -> list[Prediction]:
        """Leaderboard predictions for claims, in input order.

        Only ``id`` and ``text`` are used, except with ``use_gold`` (the oracle rationale selector reads
        each claim's gold evidence).
        """
        from sciverify.pipeline.evidence import label_correct_probs

        preds: list[Prediction] = []
        for start in range(0, len(claims), batch_size):
            batch = claims[start : start + batch_size]
            texts = [check_claim(c.text, self.config.claim_limit) for c in batch]
            for claim, judged in zip(
                batch,
                self._judge(texts, self.config.retrieval.k, gold=batch if use_gold else None),
                strict=True,
            ):
                evidence = {}
                p_label = label_correct_probs(self, judged, [v.candidate for v in judged.verdicts])
                for v in judged.verdicts:
                    key = doc_key(judged.hits[v.candidate].doc_id)
                    evidence[key] = AbstractPrediction(
                        v.label, v.sentences, round(v.confidence, 4), p_label.get(v.candidate)
                    )
                preds.append(Prediction(claim.id, evidence))
            if on_progress is not None:
                on_progress(len(batch))
        return preds

    # ---- internals -------------------------------------------------------------------------------

    def candidates(self, texts: Sequence[str], k: int) -> tuple[list[list[Any]], npt.NDArray[np.float32]]:
        """The ``k`` candidates per claim (retrieved, then reranked if configured) and the claim
        embeddings. Shapes: embeddings (len(texts), 384)."""
        rr = self.config.rerank
        hits = self.retriever.retrieve(list(texts), max(k, rr.depth) if rr.enabled else k)
        embs = self.embed(list(texts))
        if rr.enabled:
            hits = [self.rerank(text, embs[n], hits[n])[:k] for n, text in enumerate(texts)]
        return hits, embs

    def rerank(self, text: str, claim_emb: npt.NDArray[np.float32], hits: Sequence[Any]) -> list[Any]:
        """``hits`` reordered by :func:`sciverify.retrieval.rerank.rerank` with the best sentence score of
        each under the selector's cheap head (the sentence scorer is left out: it would read every
        sentence of ``depth`` abstracts)."""
        from sciverify.retrieval.rerank import rerank

        blend = getattr(self.selector, "with_scorer", None)
        cheap = blend(None, 0.0) if blend is not None else self.selector
        scores = cheap.score(text, claim_emb, [self.abstract_input(h.row) for h in hits])
        best = [float(s.max()) if len(s) else 0.0 for s in scores]
        return rerank(hits, best, self.config.rerank.weight)

    def abstract_input(self, row: int) -> AbstractInput:
        """What the selector needs of one index row (sentences, their stored vectors, title vector)."""
        return AbstractInput(
            sentences=self.index.sentences(row),
            sentence_emb=np.asarray(self.index.sentence_embeddings(row), dtype=np.float32),
            title_emb=np.asarray(self.index.title_embeddings[row], dtype=np.float32),
            structured=bool(self.index.abstract(row).structured),
        )

    def score_candidates(
        self, text: str, claim_emb: npt.NDArray[np.float32], hits: Sequence[Any], gold: Claim | None = None
    ) -> list[npt.NDArray[np.float32]]:
        """Rationale scores of every sentence of every candidate."""
        inputs = [self.abstract_input(h.row) for h in hits]
        if gold is not None and hasattr(self.selector, "bind"):
            self.selector.bind(
                {
                    i: {j for s in gold.evidence.get(doc_key(h.doc_id), ()) for j in s.sentences}
                    for i, h in enumerate(hits)
                }
            )
        scores: list[npt.NDArray[np.float32]] = self.selector.score(text, claim_emb, inputs)
        return scores

    def label_evidences(
        self, hits: Sequence[Any], scores: Sequence[npt.NDArray[np.float32]]
    ) -> tuple[list[int], list[tuple[str, list[str]]]]:
        """The candidates the decision wants labelled and, for each, (title, selected sentences)."""
        from sciverify.models.decision import select_sentences

        chosen = label_inputs(scores, self.config.decision)
        evidences = []
        for i in chosen:
            picked = sorted(select_sentences(scores[i], self.config.decision))
            sentences = self.index.sentences(hits[i].row)
            evidences.append((self.index.title(hits[i].row), [sentences[j] for j in picked]))
        return chosen, evidences

    def label_candidates(
        self, text: str, hits: Sequence[Any], scores: Sequence[npt.NDArray[np.float32]]
    ) -> dict[int, npt.NDArray[np.float32]]:
        """Label probabilities for the candidates the decision wants labelled (one model call each)."""
        chosen, evidences = self.label_evidences(hits, scores)
        if not chosen:
            return {}
        probs = self.labeler.predict(text, evidences)
        return {i: probs[n] for n, i in enumerate(chosen)}

    def _judge(self, texts: Sequence[str], k: int, gold: Sequence[Claim] | None = None) -> list[_Judged]:
        if self.llm_judge is not None:
            return self._judge_llm(texts, k)
        all_hits, embs = self.candidates(texts, k)
        out = []
        for n, text in enumerate(texts):
            hits = all_hits[n]
            scores = self.score_candidates(text, embs[n], hits, gold[n] if gold is not None else None)
            probs = self.label_candidates(text, hits, scores)
            emit_probs = self.emit_probabilities(hits, scores, probs)
            verdicts = decide(scores, probs, self.config.decision, emit_probs)
            out.append(_Judged(hits, verdicts, scores, probs, emit_probs))
        return out

    def _judge_llm(self, texts: Sequence[str], k: int) -> list[_Judged]:
        """Every retrieved candidate judged by the language model; its SUPPORT/CONTRADICT answers are the
        verdicts, in retrieval order. It gives no probability, so confidence is 1.0 and the evidence it
        copied (mapped back to sentence indices) is listed as it gave it."""
        hits_per_claim = self.retriever.retrieve(list(texts), k)
        out = []
        for text, hits in zip(texts, hits_per_claim, strict=True):
            answers = self.llm_judge.judge(text, [self.index.sentences(h.row) for h in hits])
            verdicts = [
                Verdict(i, a.label, 1.0, a.sentences, tuple(1.0 for _ in a.sentences))
                for i, a in enumerate(answers)
                if a.label is not None
            ]
            out.append(_Judged(list(hits), verdicts))
        return out

    def emit_probabilities(
        self,
        hits: Sequence[Any],
        scores: Sequence[npt.NDArray[np.float32]],
        probs: dict[int, npt.NDArray[np.float32]],
    ) -> list[float] | None:
        """The emit model's P(evidence) per candidate (None with the heuristic confidence)."""
        if self.emit is None or self.config.decision.confidence != "learned" or not hits:
            return None
        from sciverify.models.emit import emit_features

        x = emit_features(
            [float(h.score) for h in hits], scores, probs, self.config.decision.sentence_threshold
        )
        return [float(p) for p in self.emit.predict(x)]


def load_verifier(index_dir: Path | None = None) -> Verifier:
    """A Verifier over ``index_dir`` (None = built-in SciFact index) with the shipped models."""
    return Verifier.load(index_dir)
