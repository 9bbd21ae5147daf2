"""Train the rationale selector head on SciFact claims, from the embeddings stored in a corpus index.

Examples are (claim, sentence) pairs. Positives: sentences of any gold rationale. Negatives: the
other sentences of evidence abstracts, every sentence of cited abstracts without evidence (NEI), and
sentences of the top dense-retrieved abstracts that are not gold, because those are exactly the
near misses the selector meets at query time. The ``stack`` head needs the MLP's score as a tree
input; on training rows that score is produced out-of-fold (grouped by claim), otherwise the trees
would learn to trust an overfit column.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Claim
from sciverify.errors import ConfigError
from sciverify.models.features import (
    IndexedAbstracts,
    TermStats,
    abstract_input,
    compact_features,
    embedding_features,
)
from sciverify.models.rationale import MlpHead, RationaleConfig, TrainedSelector, TreeEnsemble

__all__ = [
    "CorpusView",
    "Examples",
    "RationaleTrainConfig",
    "abstract_input",
    "build_examples",
    "gold_and_cited_rows",
    "term_stats_of",
    "train_rationale_selector",
]


class CorpusView(IndexedAbstracts, Protocol):
    """The part of :class:`sciverify.retrieval.index.CorpusIndex` training needs."""

    def __len__(self) -> int: ...
    def row_of(self, doc_id: Any) -> int | None: ...
    def title(self, row: int) -> str: ...
    @property
    def doc_embeddings(self) -> npt.NDArray[np.float16]: ...


@dataclass(frozen=True)
class RationaleTrainConfig:
    """Recipe for the selector head; the defaults are the shipped recipe."""

    head: str = "gbt"
    hard_negative_docs: int = 0
    gbt_max_iter: int = 300
    gbt_learning_rate: float = 0.05
    gbt_max_leaf_nodes: int = 15
    gbt_min_samples_leaf: int = 40
    gbt_l2: float = 1.0
    mlp_hidden: tuple[int, ...] = (64,)
    mlp_alpha: float = 1e-2
    mlp_max_iter: int = 40
    stack_folds: int = 3
    max_claims: int | None = None
    seed: int = 13

    def __post_init__(self) -> None:
        RationaleConfig(self.head)
        if self.hard_negative_docs < 0 or self.stack_folds < 2:
            raise ConfigError("hard_negative_docs must be >= 0 and stack_folds >= 2")

    @classmethod
    def tiny(cls) -> RationaleTrainConfig:
        """A CI-sized recipe: 80 claims, few trees, short MLP training."""
        return cls(gbt_max_iter=40, mlp_max_iter=10, max_claims=80)


@dataclass
class Examples:
    """Training rows. Shapes: compact (n, F), emb (n, 768), y (n,), group (n,) claim index."""

    compact: npt.NDArray[np.float32]
    emb: npt.NDArray[np.float32]
    y: npt.NDArray[np.int8]
    group: npt.NDArray[np.int32]


def term_stats_of(corpus: CorpusView) -> TermStats:
    """Document frequencies over title + abstract of every row."""
    return TermStats.from_texts(
        corpus.title(r) + " " + " ".join(corpus.sentences(r)) for r in range(len(corpus))
    )


def gold_and_cited_rows(claim: Claim, corpus: CorpusView) -> dict[int, set[int]]:
    """Corpus row -> rationale sentence indices, for the claim's evidence abstracts and (with an empty
    set) its cited abstracts without evidence: the abstracts whose sentences become training rows."""
    rows: dict[int, set[int]] = {}
    for key, sets in claim.evidence.items():
        row = corpus.row_of(key)
        if row is not None:
            rows[row] = {i for s in sets for i in s.sentences}
    for doc in claim.cited_doc_ids:
        row = corpus.row_of(doc)
        if row is not None and row not in rows:
            rows[row] = set()
    return rows


def _candidate_rows(
    claim: Claim, claim_emb: npt.NDArray[np.float32], corpus: CorpusView, n_hard: int
) -> list[tuple[int, set[int]]]:
    rows = gold_and_cited_rows(claim, corpus)
    if n_hard:
        sims = np.asarray(corpus.doc_embeddings, dtype=np.float32) @ claim_emb
        top = np.argpartition(-sims, min(n_hard + len(rows), len(sims) - 1))[: n_hard + len(rows)]
        added = 0
        for row in top[np.argsort(-sims[top])]:
            if added >= n_hard:
                break
            if int(row) not in rows:
                rows[int(row)] = set()
                added += 1
    return list(rows.items())


def build_examples(
    claims: Sequence[Claim],
    claim_embs: npt.NDArray[np.float32],
    corpus: CorpusView,
    stats: TermStats,
    n_hard: int,
) -> Examples:
    """Turn claims into sentence rows (see the module docstring for what counts as a negative)."""
    compact, emb, ys, groups = [], [], [], []
    for ci, claim in enumerate(claims):
        for row, positives in _candidate_rows(claim, claim_embs[ci], corpus, n_hard):
            abstract = abstract_input(corpus, row)
            n = len(abstract.sentences)
            if n == 0:
                continue
            compact.append(compact_features(claim.text, claim_embs[ci], abstract, stats))
            emb.append(embedding_features(claim_embs[ci], abstract.sentence_emb))
            ys.append(np.array([1 if i in positives else 0 for i in range(n)], dtype=np.int8))
            groups.append(np.full(n, ci, dtype=np.int32))
    return Examples(np.concatenate(compact), np.concatenate(emb), np.concatenate(ys), np.concatenate(groups))


def _fit_mlp(x: npt.NDArray[np.float32], y: npt.NDArray[np.int8], cfg: RationaleTrainConfig) -> MlpHead:
    from sklearn.neural_network import MLPClassifier

    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    model = MLPClassifier(
        hidden_layer_sizes=cfg.mlp_hidden,
        alpha=cfg.mlp_alpha,
        max_iter=cfg.mlp_max_iter,
        early_stopping=False,
        random_state=cfg.seed,
        batch_size=256,
        learning_rate_init=1e-3,
    )
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit((x - mean) / scale, y)
    return MlpHead.from_sklearn(model, mean, scale)


def _fit_trees(
    x: npt.NDArray[np.float32], y: npt.NDArray[np.int8], cfg: RationaleTrainConfig
) -> TreeEnsemble:
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=cfg.gbt_max_iter,
        learning_rate=cfg.gbt_learning_rate,
        max_leaf_nodes=cfg.gbt_max_leaf_nodes,
        min_samples_leaf=cfg.gbt_min_samples_leaf,
        l2_regularization=cfg.gbt_l2,
        early_stopping=False,
        random_state=cfg.seed,
    )
    model.fit(x, y)
    return TreeEnsemble.from_sklearn(model)


def train_rationale_selector(
    cfg: RationaleTrainConfig,
    train_claims: Sequence[Claim],
    corpus: CorpusView,
    *,
    embed: Callable[[Sequence[str]], npt.NDArray[np.float32]] | None = None,
    stats: TermStats | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[TrainedSelector, dict[str, Any]]:
    """Fit the configured head; returns the selector and training metrics (counts, wall time)."""
    say = log or (lambda _m: None)
    start = time.perf_counter()
    claims = [c for c in train_claims if c.evidence or c.cited_doc_ids]
    if cfg.max_claims is not None:
        claims = claims[: cfg.max_claims]
    if embed is None:
        from sciverify.retrieval.embedder import get_embedder

        embed = get_embedder().encode
    stats = stats or term_stats_of(corpus)
    claim_embs = embed([c.text for c in claims])
    ex = build_examples(claims, claim_embs, corpus, stats, cfg.hard_negative_docs)
    say(f"rationale examples: {len(ex.y)} sentences, {int(ex.y.sum())} positive, {len(claims)} claims")
    trees = mlp = None
    full = np.concatenate([ex.compact, ex.emb], axis=1)
    if cfg.head in ("mlp", "stack"):
        mlp = _fit_mlp(full, ex.y, cfg)
    if cfg.head == "gbt":
        trees = _fit_trees(ex.compact, ex.y, cfg)
    elif cfg.head == "stack":
        oof = np.zeros(len(ex.y), dtype=np.float32)
        fold_of = np.random.default_rng(cfg.seed).integers(0, cfg.stack_folds, size=len(claims))[ex.group]
        for fold in range(cfg.stack_folds):
            held = fold_of == fold
            head = _fit_mlp(full[~held], ex.y[~held], cfg)
            oof[held] = head.raw(full[held]).astype(np.float32)
        trees = _fit_trees(np.concatenate([ex.compact, oof[:, None]], axis=1), ex.y, cfg)
    selector = TrainedSelector(RationaleConfig(cfg.head), stats, trees, mlp)
    metrics = {
        "train_claims": len(claims),
        "train_sentences": int(len(ex.y)),
        "train_positives": int(ex.y.sum()),
        "wall_seconds": round(time.perf_counter() - start, 1),
        "recipe": asdict(cfg),
    }
    return selector, metrics
