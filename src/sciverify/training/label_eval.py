"""Scoring the label model while it trains: metrics over the three labels, the float model's
probabilities before export, and the one-line summary the training log prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sciverify.models.label import LABEL_ORDER, encode_pairs, format_evidence
from sciverify.training.label_data import LabelPair

__all__ = ["brief", "evaluate_pairs", "label_metrics", "pairs_text", "predict_torch"]


def label_metrics(y_true: Sequence[int], y_pred: Sequence[int]) -> dict[str, float]:
    """Accuracy, macro F1 and per-class F1 over the three labels (a class never seen nor predicted: F1 0)."""
    t, p = np.asarray(y_true), np.asarray(y_pred)
    out: dict[str, float] = {"accuracy": float((t == p).mean()) if len(t) else 0.0, "n": float(len(t))}
    f1s = []
    for k, label in enumerate(LABEL_ORDER):
        tp = float(((t == k) & (p == k)).sum())
        prec = tp / max(1.0, float((p == k).sum()))
        rec = tp / max(1.0, float((t == k).sum()))
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out[f"f1_{label.value}"] = f1
        f1s.append(f1)
    out["macro_f1"] = float(np.mean(f1s))
    return out


def pairs_text(pairs: Sequence[LabelPair]) -> list[tuple[str, str]]:
    """The (claim, evidence text) pairs as the label model reads them."""
    return [(p.claim, format_evidence(p.title, p.sentences)) for p in pairs]


def predict_torch(
    model: Any, tokenizer: Any, pairs: Sequence[LabelPair], max_length: int, batch_size: int = 32
) -> np.ndarray:
    """Probabilities from the torch model (float32), for evaluation before export."""
    import torch

    model.eval()
    texts = pairs_text(pairs)
    out = np.zeros((len(pairs), len(LABEL_ORDER)), dtype=np.float32)
    order = np.argsort([len(t[0]) + len(t[1]) for t in texts], kind="stable")
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            feeds = encode_pairs(tokenizer, [texts[i] for i in idx], max_length)
            probs = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}, probs=True)
            out[idx] = probs.numpy()
    model.train()
    return out


def evaluate_pairs(probs: np.ndarray, pairs: Sequence[LabelPair]) -> dict[str, Any]:
    """Metrics on the main protocol (gold + cited NEI) and NEI accuracy on retrieved abstracts apart."""
    pred = probs.argmax(1)
    main = [i for i, p in enumerate(pairs) if p.source != "scifact_retrieved_nei"]
    retr = [i for i, p in enumerate(pairs) if p.source == "scifact_retrieved_nei"]
    out: dict[str, Any] = label_metrics([pairs[i].label for i in main], [int(pred[i]) for i in main])
    if retr:
        out["retrieved_nei_accuracy"] = float(np.mean([pred[i] == 2 for i in retr]))
    out["confusion"] = [
        [int(sum(1 for i in main if pairs[i].label == t and pred[i] == q)) for q in range(3)]
        for t in range(3)
    ]
    return out


def brief(m: Mapping[str, Any]) -> str:
    """The headline metrics of :func:`evaluate_pairs` on one line."""
    keys = (
        "accuracy",
        "macro_f1",
        "f1_SUPPORT",
        "f1_CONTRADICT",
        "f1_NOT_ENOUGH_INFO",
        "retrieved_nei_accuracy",
    )
    return " ".join(f"{k}={m[k]:.3f}" for k in keys if k in m)
