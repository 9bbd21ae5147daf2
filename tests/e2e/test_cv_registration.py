"""A new label model reaches `sciverify train --cv` by registration alone: a recipe, a body and an artifact
contract in one module (here, this file), and the cross-validation trains it per fold, scores it out of
fold, decides over its outputs, trains its final model and ships it beside the decision."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sciverify.data.records import Label
from sciverify.models.base import LABEL_PREDICTORS
from sciverify.training.cv import CvConfig, run_cv
from sciverify.training.cv.learners import LABEL_MODELS, Artifact, Fit, Learner

NAME = "toy-overlap"
DONE = "toy.json"


@dataclass(frozen=True)
class ToyRecipe:
    """The toy's recipe: a seed and how strongly word overlap counts."""

    seed: int
    sharpness: float = 4.0


class ToyLabel:
    """A label model in a few lines: P(evidence) grows with the words claim and evidence share; the side is
    the training claims' majority."""

    def __init__(self, support: float, sharpness: float) -> None:
        self.support, self.sharpness = support, sharpness

    @classmethod
    def load(cls, where: Path | None) -> ToyLabel:
        assert where is not None
        data = json.loads((where / DONE).read_text())
        return cls(data["support"], data["sharpness"])

    def predict(self, claim: str, evidences: Sequence[tuple[str, Sequence[str]]]) -> npt.NDArray[np.float32]:
        words = set(claim.lower().split())
        out = []
        for _title, sentences in evidences:
            seen = set(" ".join(sentences).lower().split())
            evidence = 1.0 - float(np.exp(-self.sharpness * len(words & seen) / max(1, len(words))))
            out.append([evidence * self.support, evidence * (1 - self.support), 1.0 - evidence])
        return np.asarray(out, dtype=np.float32).reshape(-1, 3)


def train_toy(recipe: ToyRecipe, fit: Fit) -> Mapping[str, float]:
    labels = [s.label for c in fit.train for sets in c.evidence.values() for s in sets[:1]]
    support = sum(label is Label.SUPPORT for label in labels) / max(1, len(labels))
    fit.where.mkdir(parents=True, exist_ok=True)
    (fit.where / DONE).write_text(json.dumps({"support": support, "sharpness": recipe.sharpness}))
    return {"claims": len(fit.train), "support": support}


# the registration: a serving loader for the final pipeline.toml, and the learner for the cross-validation
LABEL_PREDICTORS.add(NAME, ToyLabel.load)
LABEL_MODELS.add(
    NAME,
    Learner(
        recipe=lambda seed, tiny, models: ToyRecipe(seed),
        train=train_toy,
        load=ToyLabel.load,
        artifact=Artifact(DONE),
        predictor=NAME,
    ),
)


def test_a_registered_label_model_is_cross_validated_and_ships(tmp_path: Path) -> None:
    out = tmp_path / "cv"
    config = CvConfig(out_dir=out, folds=2, tiny=True, label_base=NAME, seed=5)
    summary = run_cv(config, log=lambda _m: None)
    plan = json.loads((out / "folds.json").read_text())["fold_of"]
    for fold in (0, 1):
        # trained on the other fold only, its report kept beside the fold's outputs
        report = json.loads((out / f"fold-{fold}" / f"label-{NAME}.train.json").read_text())
        assert report["claims"] == sum(1 for f in plan.values() if f != fold)
        assert (out / "models" / f"fold-{fold}" / f"label-{NAME}" / DONE).exists()
        text = (out / f"fold-{fold}" / f"labels-{NAME}.jsonl").read_text()
        rows = [json.loads(line) for line in text.splitlines()]
        assert rows and all(plan[str(r["id"])] == fold for r in rows)
        assert all(c["top1"] is not None for r in rows for c in r["candidates"])
    assert summary["claims"] == 24 and summary["label_base"] == NAME
    assert summary["label_recipe"] == {"seed": 5, "sharpness": 4.0}
    for row in summary["tuned"].values():
        assert 0.0 <= row["f1_ci95"][0] <= row["f1"] <= row["f1_ci95"][1] <= 1.0

    # its done marker is what resuming reads: nothing is trained again
    messages: list[str] = []
    run_cv(config, log=messages.append)
    assert sum("skipped" in m for m in messages) == 7

    # the final model ships beside the decision, and serving loads it by its registered name
    from sciverify.pipeline.verify import Verifier

    final = out / "models" / f"final-{NAME}"
    verifier = Verifier.load(model_dir=final)
    assert verifier.config.label == NAME and isinstance(verifier.labeler, ToyLabel)
    results = verifier.verify("ALDH1 expression is associated with poorer prognosis for breast cancer.")
    assert all(0.0 <= r.confidence <= 1.0 for r in results)
