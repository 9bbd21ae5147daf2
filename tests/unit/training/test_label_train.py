"""Label-model training: metrics, batching, config checks, and a tiny real end-to-end run (~30 s)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from sciverify.data.io import read_claims, read_corpus
from sciverify.errors import ConfigError
from sciverify.models.label import LabelModel
from sciverify.training.label_config import LabelTrainConfig
from sciverify.training.label_eval import label_metrics
from sciverify.training.label_train import train_label_model
from sciverify.training.loop import length_batches


def test_label_metrics_hand_checked() -> None:
    m = label_metrics([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0])
    assert m["accuracy"] == pytest.approx(4 / 6)
    # SUPPORT: tp 1, predicted 2, true 2 -> F1 0.5; CONTRADICT: tp 1, pred 2, true 1 -> 2/3;
    # NEI: tp 2, pred 2, true 3 -> 0.8
    assert m["f1_SUPPORT"] == pytest.approx(0.5)
    assert m["f1_CONTRADICT"] == pytest.approx(2 / 3)
    assert m["f1_NOT_ENOUGH_INFO"] == pytest.approx(0.8)
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 0.8) / 3)


def test_batches_cover_every_index_once_and_group_lengths() -> None:
    lengths = [random.Random(0).randint(5, 200) for _ in range(1000)]
    batches = length_batches(lengths, 16, random.Random(1))
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(1000))
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches])
    assert spread < 20  # length-sorted windows keep padding small


def test_training_window_is_the_one_the_shipped_models_were_trained_with() -> None:
    """Training used to inherit its truncation from the base tokenizer.json; it is now set explicitly, and
    must stay equal to it so that ``sciverify train`` still reproduces the shipped files."""
    import json

    from sciverify.models.label_torch import TRAINING_WINDOW, base_model_dir

    inherited = json.loads((base_model_dir() / "tokenizer.json").read_text(encoding="utf-8"))["truncation"]
    assert inherited == {"max_length": TRAINING_WINDOW, "strategy": "LongestFirst", "stride": 0}


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ConfigError):
        LabelTrainConfig(class_weighting="focal")
    with pytest.raises(ConfigError):
        LabelTrainConfig(max_length=8)


def test_tiny_training_run_end_to_end(scifact, tmp_path: Path) -> None:
    claims = read_claims(scifact.train)
    corpus = read_corpus(scifact.corpus)
    config = LabelTrainConfig.tiny()
    config = LabelTrainConfig(**{**config.__dict__, "aux_dir": str(scifact.root.parent / "aux")})
    out = tmp_path / "label"
    metrics = train_label_model(config, claims[:40], corpus, out, val_claims=claims[600:615], progress=False)
    assert metrics["scifact_stage"]["steps"] > 0 and metrics["aux_stage"]["steps"] > 0
    assert 0.0 <= metrics["val_onnx"]["accuracy"] <= 1.0
    model = LabelModel.load(out)
    probs = model.predict(claims[0].text, [("A title", ["A sentence.", "Another one."])])
    assert probs.shape == (1, 3) and np.allclose(probs.sum(1), 1.0, atol=1e-4)


def test_a_body_without_segment_ids_trains_its_top_layers_and_exports_a_two_input_graph(
    tmp_path: Path,
) -> None:
    """MPNet (all-mpnet-base-v2's architecture) takes no token_type_ids: the classifier must not pass them,
    the exported graph has two inputs, and the ONNX model agrees with torch. A tiny random MPNet stands in
    for the 109M-parameter body (same code path, no download)."""
    import shutil

    import torch
    from transformers import MPNetConfig, MPNetModel

    from sciverify.models.label import LabelModelConfig
    from sciverify.models.label_torch import (
        base_model_dir,
        build_classifier,
        export_onnx,
        freeze_lower_layers,
    )

    body_dir = tmp_path / "mpnet-tiny"
    config = MPNetConfig(
        vocab_size=30527, hidden_size=32, num_hidden_layers=4, num_attention_heads=2, intermediate_size=64
    )
    MPNetModel(config).save_pretrained(body_dir)
    model = build_classifier(body_dir, seed=0)
    assert model.takes_segment_ids is False
    assert freeze_lower_layers(model, 1) == 1
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(n.startswith(("head.", "body.encoder.layer.3.")) for n in trainable)

    out = tmp_path / "label"
    export_onnx(model, out / "model.onnx", quantize=False)
    shutil.copyfile(base_model_dir() / "tokenizer.json", out / "tokenizer.json")
    (out / "config.json").write_text(__import__("json").dumps(LabelModelConfig(max_length=64).to_json()))
    onnx_model = LabelModel.load(out)
    assert onnx_model._inputs == {"input_ids", "attention_mask"}
    evidence = ("A title", ["First sentence about ALDH1.", "Second sentence."])
    got = onnx_model.predict("ALDH1 predicts poor prognosis.", [evidence])[0]
    feeds = onnx_model.encode("ALDH1 predicts poor prognosis.", [evidence])
    assert not model.training  # the export leaves the model in eval mode (no dropout below)
    with torch.no_grad():
        want = model(
            torch.from_numpy(feeds["input_ids"]), torch.from_numpy(feeds["attention_mask"]), probs=True
        )[0].numpy()
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_a_body_cut_to_its_lowest_layers_keeps_their_weights_and_exports_them(tmp_path: Path) -> None:
    """``keep_layers`` (the ``mpnet6`` base) drops the top layers before training: the kept layers are the
    pretrained lowest ones, unchanged, and the exported graph is the cut model (ONNX agrees with torch)."""
    import json
    import shutil

    import torch

    from sciverify.models.label import LabelModelConfig
    from sciverify.models.label_torch import base_model_dir, build_classifier, export_onnx
    from sciverify.training.bases import kept_layers

    assert kept_layers("mpnet6") == 6 and kept_layers("mpnet") == 0 and kept_layers("minilm") == 0
    full = build_classifier(base_model_dir(), seed=0)
    cut = build_classifier(base_model_dir(), seed=0, keep_layers=2)
    assert len(full.body.encoder.layer) == 6 and len(cut.body.encoder.layer) == 2
    assert cut.body.config.num_hidden_layers == 2
    for a, b in zip(
        full.body.encoder.layer[:2].parameters(), cut.body.encoder.layer.parameters(), strict=True
    ):
        assert torch.equal(a, b)

    out = tmp_path / "label"
    export_onnx(cut, out / "model.onnx", quantize=False)
    shutil.copyfile(base_model_dir() / "tokenizer.json", out / "tokenizer.json")
    (out / "config.json").write_text(json.dumps(LabelModelConfig(max_length=64).to_json()))
    onnx_model = LabelModel.load(out)
    evidence = ("A title", ["ALDH1 expression was higher in tumours with poor outcome."])
    feeds = onnx_model.encode("ALDH1 predicts poor prognosis.", [evidence])
    with torch.no_grad():
        want = cut(**{k: torch.from_numpy(v) for k, v in feeds.items()}, probs=True)[0].numpy()
    np.testing.assert_allclose(
        onnx_model.predict("ALDH1 predicts poor prognosis.", [evidence])[0], want, atol=1e-5
    )


def test_a_run_stopped_inside_each_stage_and_resumed_ends_with_the_uninterrupted_weights(
    scifact, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny recipe trained straight, and the same recipe stopped inside the aux stage and inside the
    SciFact stage (each time a new call, as after a killed process) and resumed: the weights handed to the
    export, and the int8 model's probabilities, are bitwise equal. The stage checkpoints are gone from the
    exported directory; the aux one lived beside the named aux checkpoint; one made with other aux pairs
    is refused."""
    from dataclasses import replace

    import torch

    import sciverify.models.label_torch as label_torch
    from sciverify.training.label_train import AUX_STAGE, SCIFACT_STAGE

    exported: dict[str, dict[str, torch.Tensor]] = {}
    export = label_torch.export_onnx

    def keep_weights(model: torch.nn.Module, path: Path, **kwargs: object) -> None:
        exported[path.parent.name] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        export(model, path, **kwargs)

    monkeypatch.setattr(label_torch, "export_onnx", keep_weights)
    claims = read_claims(scifact.train)[:40]
    corpus = read_corpus(scifact.corpus)
    config = replace(LabelTrainConfig.tiny(), aux_dir=str(scifact.root.parent / "aux"))

    straight = train_label_model(config, claims, corpus, tmp_path / "straight", progress=False)
    assert straight is not None
    assert straight["aux_stage"]["steps"] == 4 and straight["scifact_stage"]["steps"] == 4
    assert not (tmp_path / "straight" / AUX_STAGE).exists()

    aux = tmp_path / "aux.pt"
    stopped = replace(config, aux_checkpoint=str(aux))
    out = tmp_path / "resumed"
    # 1: aux steps 1-3, then stop; the resumable state sits beside the aux checkpoint's path
    assert train_label_model(stopped, claims, corpus, out, progress=False, stop_after=3) is None
    assert (tmp_path / "aux.pt.stage").exists() and not aux.exists()
    other = replace(stopped, aux_sets=(("fever_symmetric", 16), ("evidence_inference", 32)))
    with pytest.raises(ConfigError, match="other settings"):
        train_label_model(other, claims, corpus, out, progress=False, stop_after=3)
    # 2: aux step 4 (the finished aux checkpoint replaces its stage file), SciFact steps 1-3, stop
    assert train_label_model(stopped, claims, corpus, out, progress=False, stop_after=3) is None
    assert aux.exists() and not (tmp_path / "aux.pt.stage").exists() and (out / SCIFACT_STAGE).exists()
    # 3: SciFact step 4 and the export
    resumed = train_label_model(stopped, claims, corpus, out, progress=False)
    assert resumed is not None and resumed["scifact_stage"]["steps"] == 4
    assert set(resumed["scifact_stage"]) == {"pairs", "steps", "seconds", "final_loss"}
    assert not (out / SCIFACT_STAGE).exists()

    assert exported.keys() == {"straight", "resumed"}
    for name, weight in exported["straight"].items():
        assert torch.equal(weight, exported["resumed"][name]), name
    a, b = LabelModel.load(tmp_path / "straight"), LabelModel.load(out)
    evidence = [("A title", ["ALDH1 expression was higher in tumours with poor outcome.", "n = 120."])]
    for claim in claims[:5]:
        assert np.array_equal(a.predict(claim.text, evidence), b.predict(claim.text, evidence))


def test_cuda_without_a_gpu_is_refused_before_any_pair_is_built(tmp_path: Path) -> None:
    """``device="cuda"`` where torch sees no GPU: a ConfigError before data, models or the aux lock."""
    from dataclasses import replace

    import torch

    from sciverify.training.label_train import ensure_aux_checkpoint

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    config = replace(LabelTrainConfig.tiny(), aux_checkpoint=str(tmp_path / "aux.pt"))
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        train_label_model(config, [], [], tmp_path / "label", progress=False, device="cuda")
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        ensure_aux_checkpoint(config, [], progress=False, device="cuda")
    assert list(tmp_path.iterdir()) == []


FINISHED_AUX = Path(__file__).parents[3] / "results" / "cv5" / "models" / "aux-mpnet6-all.pt"


@pytest.mark.skipif(not FINISHED_AUX.exists(), reason="the finished entailment stage is not on this machine")
def test_the_finished_entailment_stage_is_still_accepted() -> None:
    """The many-hour ``mpnet6-all`` entailment checkpoint of the committed run (kept beside it, not in
    git): its stamp is the one the recipe gives now, whichever device the run is on."""
    import torch

    from sciverify.training.cv.plan import all_label_recipe
    from sciverify.training.label_train import aux_stamp

    saved = torch.load(FINISHED_AUX, weights_only=True, mmap=True, map_location="cpu")
    assert saved["stamp"] == aux_stamp(all_label_recipe(13, False, FINISHED_AUX))
