"""The learners the cross-validation trains, by role: the built-ins' contracts, and an unknown name refused
before the run writes anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciverify.errors import ConfigError
from sciverify.training.bases import BODIES
from sciverify.training.cv import CvConfig, run_cv
from sciverify.training.cv.learners import LABEL, LABEL_MODELS, READER, READERS


def test_every_label_body_is_a_learner_and_the_built_ins_keep_their_files() -> None:
    assert set(BODIES.names()) <= set(LABEL_MODELS.names())
    assert {"mpnet6", "minilm"} <= set(READERS.names())
    assert LABEL_MODELS.get("mpnet6").artifact.done == "model.onnx"
    assert READERS.get("mpnet6").artifact.done == "training.json"
    # the fold files and model folders the committed runs hold
    assert (LABEL.outputs_file("x"), LABEL.model_dir("x")) == ("labels-x.jsonl", "label-x")
    assert (READER.outputs_file("x"), READER.model_dir("x")) == ("reader-x.jsonl", "reader-x")
    recipe = LABEL_MODELS.get("mpnet6").recipe(13, False, Path("run/models"))
    assert recipe.base == "mpnet6" and recipe.aux_checkpoint == "run/models/aux-mpnet6.pt"


@pytest.mark.parametrize(
    ("field", "value", "kind"), [("label_base", "nope", "label model"), ("reader", "nope", "reader")]
)
def test_an_unknown_learner_is_refused_before_anything_is_written(
    tmp_path: Path, field: str, value: str, kind: str
) -> None:
    out = tmp_path / "run"
    config = CvConfig(out_dir=out, folds=2, tiny=True, **{field: value})
    with pytest.raises(ConfigError, match=f"unknown {kind} 'nope'; choose from .*mpnet6"):
        run_cv(config, log=lambda _m: None)
    assert not out.exists()
