"""The entailment stage alone against the label model trained from it, on every train claim's gold evidence.

Run:  python benchmarks/bench_stage_alone.py [--checkpoint results/cv5/models/aux-mpnet6-all.pt]
      [--base mpnet6] [--labels mpnet6-all] [--out results/cv5] [--data ../shared/data/scifact]

The stage's checkpoint never saw a SciFact claim, so on all 809 train claims it is a held-out reading;
the label model's figures are its out-of-fold reads of the same gold evidence (the ``gold`` part of
``fold-N/labels-<labels>.jsonl``), each abstract read with its gold rationale in the same format
(``models.label.format_evidence``, the exported model's window). Printed per reader: the side right (SUPPORT
against CONTRADICT, as ``decision.sentence_rule.label_of`` reads it), by gold label, and the three-way
label right. Chooses nothing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt


def _stage_probs(
    checkpoint: Path, base: str, items: Sequence[tuple[str, str]], max_length: int
) -> npt.NDArray[np.float32]:
    import torch

    from sciverify.models.label import encode_pairs
    from sciverify.models.label_torch import build_classifier, training_tokenizer
    from sciverify.training.bases import base_dir, kept_layers

    torch.set_num_threads(2)
    weights = base_dir(base)
    tokenizer = training_tokenizer(weights)
    model = build_classifier(weights, keep_layers=kept_layers(base))
    model.load_state_dict(torch.load(checkpoint, weights_only=True, map_location="cpu")["state"])
    model.eval()
    out = np.zeros((len(items), 3), dtype=np.float32)
    with torch.inference_mode():
        for s in range(0, len(items), 16):
            feeds = encode_pairs(tokenizer, list(items[s : s + 16]), max_length)
            out[s : s + 16] = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}, probs=True).numpy()
    return out


def _row(name: str, labels: Sequence[str], probs: npt.NDArray[np.floating]) -> str:
    from sciverify.decision.sentence_rule import label_of
    from sciverify.models.label import LABEL_ORDER

    side = [label_of(p).value for p in probs]
    three = [LABEL_ORDER[int(np.argmax(p))].value for p in probs]
    cells = []
    for want in ("SUPPORT", "CONTRADICT"):
        idx = [i for i, g in enumerate(labels) if g == want]
        cells.append(f"{sum(side[i] == want for i in idx) / len(idx):.3f} ({len(idx)})")
    right = np.mean([s == g for s, g in zip(side, labels, strict=True)])
    three_right = np.mean([t == g for t, g in zip(three, labels, strict=True)])
    return f"| {name} | {right:.3f} | {cells[0]} | {cells[1]} | {three_right:.3f} |"


def main() -> None:
    from sciverify.data.io import read_claims, read_corpus
    from sciverify.models.label import LabelModelConfig, format_evidence
    from sciverify.training.cv.outputs import fold_rows, labels_file

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, default=Path("results/cv5/models/aux-mpnet6-all.pt"))
    ap.add_argument("--base", default="mpnet6", help="the body the stage was trained on")
    ap.add_argument("--labels", default="mpnet6-all", help="the label model's name in the run's fold files")
    ap.add_argument("--out", type=Path, default=Path("results/cv5"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    args = ap.parse_args()

    claims = read_claims(args.data / "claims_train.jsonl")
    docs = {str(a.doc_id): a for a in read_corpus(args.data / "corpus.jsonl")}
    oof: Mapping[tuple[str, str], list[float]] = {
        (str(r["id"]), d): g["probs"] for r in fold_rows(args.out, labels_file(args.labels), range(5))
        for d, g in r["gold"].items()
    }
    keys, labels, items = [], [], []
    for c in claims:
        for key, sets in c.evidence.items():
            doc = docs.get(str(key))
            if doc is None or (str(c.id), str(key)) not in oof:
                continue
            rationale = sorted({j for s in sets for j in s.sentences if j < len(doc.sentences)})
            keys.append((str(c.id), str(key)))
            labels.append(sets[0].label.value)
            items.append((c.text, format_evidence(doc.title, [doc.sentences[j] for j in rationale])))
    stage = _stage_probs(args.checkpoint, args.base, items, LabelModelConfig().max_length)
    trained = np.asarray([oof[k] for k in keys], dtype=np.float32)
    print(f"{len(items)} gold evidence abstracts of {len(claims)} claims, each read with its gold rationale")
    print("| reader | side right | SUPPORT | CONTRADICT | 3-way right |")
    print("|---|---:|---:|---:|---:|")
    print(_row(f"the stage alone ({args.checkpoint.name})", labels, stage))
    print(_row(f"label model `{args.labels}`, out of fold", labels, trained))
    nei = {name: int(np.sum(np.argmax(p, axis=1) == 2)) for name, p in (("stage", stage), ("oof", trained))}
    print("read as NOT ENOUGH INFO:", json.dumps(nei))


if __name__ == "__main__":
    main()
