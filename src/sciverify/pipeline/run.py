"""Batch prediction over a claims file: the engine behind ``sciverify predict``.

Only ``id`` and ``claim`` of each input line are read, so a gold file, a test file or a file with
extra fields all work. The oracle switches reproduce the paper's ablation rows (Wadden et al.
2020, Table 4): ``retrieval="oracle"`` hands the gold evidence and cited abstracts to the later
stages, ``rationale="oracle"`` replaces the selector by the gold rationale sentences; both need
the gold claims, which reach the Verifier by one route (``Verifier.load(gold=...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sciverify.data.io import iter_jsonl, write_predictions
from sciverify.data.records import Claim, Prediction
from sciverify.decision.settings import VERISCI_RULE
from sciverify.errors import ConfigError, DataFormatError
from sciverify.pipeline.config import PipelineConfig, tuned_config
from sciverify.retrieval.stages import BlockEngine, run_in_process

__all__ = [
    "PREDICT_BLOCK",
    "PredictStage",
    "oracle_config",
    "predict_claims",
    "predicted_line",
    "read_claim_texts",
]

#: Claims per block sent to an engine worker; a multiple of the verifier's batch (32), so every
#: claim is embedded in the same batch as a single-process run would embed it.
PREDICT_BLOCK = 64


def read_claim_texts(path: str | Path, max_chars: int | None = None) -> list[Claim]:
    """Claims (id and text only) from a JSONL file; anything else on a line is ignored.

    Every claim is checked here, before any model is loaded: a claim longer than ``max_chars`` (None:
    the limit shared with the server, :func:`sciverify.pipeline.config.claim_char_limit`) fails the
    file with its line and id, instead of failing the run after the models have loaded.
    """
    from sciverify.pipeline.config import claim_char_limit

    limit = claim_char_limit() if max_chars is None else max_chars
    claims: list[Claim] = []
    seen: dict[str, int] = {}
    for number, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            raise DataFormatError("expected a JSON object with 'id' and 'claim'", path, number)
        cid = obj.get("id")
        if isinstance(cid, bool) or not isinstance(cid, int | str) or cid == "":
            raise DataFormatError(f"missing or invalid 'id' ({cid!r:.40})", path, number)
        if "claim" not in obj:
            raise DataFormatError(f"claim {cid!r} has no 'claim' field", path, number)
        text = obj["claim"]
        if not isinstance(text, str):
            raise DataFormatError(
                f"claim {cid!r}: 'claim' must be a string, got {type(text).__name__} ({text!r:.40})",
                path,
                number,
            )
        if not text.strip():
            raise DataFormatError(f"claim {cid!r} has an empty 'claim' text", path, number)
        length = len(" ".join(text.split()))
        if length > limit:
            raise DataFormatError(
                f"claim {cid!r} is {length} characters long; the limit is {limit} "
                "(SCIVERIFY_MAX_CLAIM_CHARS): state one finding in one sentence",
                path,
                number,
            )
        if str(cid) in seen:
            raise DataFormatError(
                f"duplicate claim id {cid!r} (first on line {seen[str(cid)]})", path, number
            )
        seen[str(cid)] = number
        claims.append(Claim(id=cid, text=text))
    if not claims:
        raise DataFormatError("no claims in file (is it empty?)", path)
    return claims


def oracle_config(base: PipelineConfig, retrieval: str | None, rationale: str | None) -> PipelineConfig:
    """The configuration for an oracle run (``None`` keeps that stage as configured)."""
    cfg = base
    if retrieval == "oracle":
        cfg = replace(cfg, retrieval=replace(cfg.retrieval, method="oracle"))
        if cfg.decision.confidence == "learned":
            # the emit model reads retrieval scores, which the oracle makes up (1.0 evidence, 0.5 cited):
            # decide by VeriSci's rule over the tuned rationale settings instead
            t = cfg.decision.sentence_threshold
            cfg = replace(
                cfg,
                decision=replace(
                    VERISCI_RULE,
                    sentence_threshold=t,
                    min_rationale_score=t,
                    max_sentences=cfg.decision.max_sentences,
                    max_listed=cfg.decision.max_listed,
                ),
            )
    elif retrieval not in (None, "default"):
        cfg = replace(cfg, retrieval=replace(cfg.retrieval, method=retrieval))
    if rationale == "oracle":
        # gold rationales: every gold sentence listed; the label model alone decides (VeriSci's rule)
        cfg = replace(
            cfg,
            selector="oracle",
            decision=VERISCI_RULE,
        )
    elif rationale not in (None, "default"):
        cfg = replace(cfg, selector=rationale)
    return cfg


@dataclass(frozen=True)
class PredictStage:
    """Verification of a block of claims: each worker loads the index and the models once."""

    index_dir: Path | None
    model_dir: Path | None
    config: PipelineConfig
    gold: tuple[Claim, ...] | None = None

    def __call__(self) -> Callable[[list[Claim]], list[Prediction]]:
        from sciverify.pipeline.verify import Verifier

        return Verifier.load(self.index_dir, self.model_dir, self.config, gold=self.gold).predict


def _blocks(claims: Sequence[Claim], size: int) -> Iterator[list[Claim]]:
    for start in range(0, len(claims), size):
        yield list(claims[start : start + size])


def predict_claims(
    claims: Sequence[Claim],
    out_path: str | Path,
    *,
    index_dir: Path | None = None,
    model_dir: Path | None = None,
    config: PipelineConfig | None = None,
    retrieval: str | None = None,
    rationale: str | None = None,
    gold: Sequence[Claim] | None = None,
    k: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    engine: BlockEngine | None = None,
    block_size: int = PREDICT_BLOCK,
) -> list[Prediction]:
    """Predict every claim and write leaderboard JSONL (with per-abstract confidence) to ``out_path``.

    ``engine`` (:mod:`sciverify.pipeline.engines`) runs blocks of claims on its workers; None runs
    them here. The output is in input order and the same whichever engine ran it (both embed claims
    in the same batches: blocks of ``block_size``).
    """
    if block_size < 1:
        raise ConfigError(f"block_size must be at least 1, got {block_size}")
    oracle = "oracle" in (retrieval, rationale)
    if oracle and gold is None:
        raise ConfigError(
            "--retrieval oracle and --rationale oracle need the gold claims: pass --gold GOLD.jsonl"
        )
    if config is None:
        config = tuned_config(model_dir)
    if k is not None:
        config = config.with_k(k)
    config = oracle_config(config, retrieval, rationale)
    run_claims: Sequence[Claim] = claims
    if gold is not None:
        by_id = {str(g.id): g for g in gold}
        missing = [c.id for c in claims if str(c.id) not in by_id]
        if oracle and missing:
            are = "claim is" if len(missing) == 1 else "claims are"
            raise ConfigError(f"{len(missing)} {are} not in the gold file (first: {missing[0]!r})")
        if oracle:  # the oracles find a claim's gold by its text: the gold file's
            run_claims = [Claim(c.id, by_id[str(c.id)].text) for c in claims]
    stage = PredictStage(
        Path(index_dir) if index_dir is not None else None,
        Path(model_dir) if model_dir is not None else None,
        config,
        tuple(gold) if gold is not None else None,
    )
    results: Iterable[list[Prediction]] = (engine.map if engine is not None else run_in_process)(
        stage, _blocks(run_claims, block_size)
    )
    preds: list[Prediction] = []
    for block in results:
        preds.extend(block)
        if on_progress is not None:
            on_progress(len(block))
    write_predictions(out_path, preds)
    return preds


def predicted_line(preds: Sequence[Prediction], out_path: str | Path) -> str:
    """One line on a finished run: how many predictions, how many with evidence, and where."""
    found = sum(1 for p in preds if p.evidence)
    return f"wrote {len(preds)} predictions ({found} with evidence) to {out_path}"
