"""Canaries: a few fixed inputs whose right outputs are known, run wherever the models load.

The shipped models once gave one answer whatever they read on CPUs without VNNI (``models.int8`` says
why), and nothing noticed: health said ``ok``. A canary is a fixed input with the output a correct
computation gives, recorded beside the model (``canaries.json``): the stance models' expected
probabilities come from :func:`sciverify.models.int8.reference_graph`, which computes the int8 graph's
arithmetic in float with no integer kernel, and the embedder's from its own graph, which computes in
float. Running them costs a few model calls, so :meth:`sciverify.pipeline.verify.Verifier.load` runs
them every time and refuses, in one line naming the CPU, to answer wrongly; ``sciverify doctor`` prints
them, and ``/api/health`` reports them.

A limit may only refuse what it can tell apart. Correct CPUs do not agree to the last digit: the integer
products are exact everywhere, but the float layers around them round differently with each CPU's
kernels, and every layer quantises its input again, so a last-bit difference can move an activation by a
step that carries on up the layers. Measured on the label model's canaries against a reference recorded
on an AVX2 CPU: 0.000 on AVX2, 0.012 on SSE4.2 only, 0.024 on AVX-512 with VNNI; a saturating kernel
missed by 0.78 (``benchmarks/bench_cpu_spread.py``, docs/cpu-conformance.md). The stance limit, 0.10,
sits four times above the largest correct spread and eight times below the failure it exists to catch;
embeddings must keep cosine 0.99.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sciverify.data.datasets import sha256_file
from sciverify.data.io import write_text_atomic
from sciverify.errors import ArtifactError

__all__ = [
    "CANARY_FILE",
    "COSINE_LIMIT",
    "EMBEDDER_SENTENCES",
    "LABEL_CANARIES",
    "PROBABILITY_LIMIT",
    "READER_CANARIES",
    "CanaryResult",
    "ConformanceError",
    "ConformanceReport",
    "CpuInfo",
    "check_dirs",
    "check_embedder_canaries",
    "check_loaded",
    "check_stance",
    "cpu_info",
    "emulation_env",
    "read_canaries",
    "write_canaries",
]

#: Beside a model's ``model.onnx``: the canaries' inputs and expected outputs.
CANARY_FILE = "canaries.json"
#: Largest difference of a stance probability from the reference that still passes: above what correct
#: kernels on other CPUs give (up to 0.024 measured), far below what a saturating one gives (0.78).
PROBABILITY_LIMIT = 0.10
#: Smallest cosine of an embedding with the reference that still passes.
COSINE_LIMIT = 0.99

#: Claim, title, rationale sentences: a supported, a refuted and an unrelated claim on two findings, the
#: label model's three answers (``tests/models/test_conformance.py`` checks the reference gives them).
LABEL_CANARIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Smoking increases the risk of lung cancer.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        ("Smoking greatly increased the risk of lung cancer (hazard ratio 8.2).",),
    ),
    (
        "Smoking decreases the risk of lung cancer.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        ("Smoking greatly increased the risk of lung cancer (hazard ratio 8.2).",),
    ),
    (
        "Vitamin D supplementation prevents hip fractures in older women.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        ("Smoking greatly increased the risk of lung cancer (hazard ratio 8.2).",),
    ),
    (
        "Statins lower LDL cholesterol.",
        "Statin therapy and serum lipids: a randomised trial",
        ("Atorvastatin reduced LDL cholesterol by 41% compared with placebo.",),
    ),
    (
        "Statins raise LDL cholesterol.",
        "Statin therapy and serum lipids: a randomised trial",
        ("Atorvastatin reduced LDL cholesterol by 41% compared with placebo.",),
    ),
)
#: Claim, title, one sentence: the reader's per-sentence stance and P(rationale) on a rationale, the same
#: rationale against the opposite claim, and a sentence that says nothing about the claim.
READER_CANARIES: tuple[tuple[str, str, str], ...] = (
    (
        "Smoking increases the risk of lung cancer.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        "Smoking greatly increased the risk of lung cancer (hazard ratio 8.2).",
    ),
    (
        "Smoking decreases the risk of lung cancer.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        "Smoking greatly increased the risk of lung cancer (hazard ratio 8.2).",
    ),
    (
        "Smoking increases the risk of lung cancer.",
        "Tobacco smoking and lung cancer in a prospective cohort",
        "Participants were recruited from 24 general practices between 1998 and 2001.",
    ),
    (
        "Statins raise LDL cholesterol.",
        "Statin therapy and serum lipids: a randomised trial",
        "Atorvastatin reduced LDL cholesterol by 41% compared with placebo.",
    ),
)
#: Sentences for the embedder: a paraphrase pair, a related and an unrelated sentence.
EMBEDDER_SENTENCES: tuple[str, ...] = (
    "Smoking greatly increases the risk of lung cancer.",
    "Tobacco use raises the likelihood of developing lung carcinoma.",
    "Statins lower LDL cholesterol in adults with heart disease.",
    "The committee met on Tuesday to discuss the budget.",
)

#: The features that decide which integer kernel onnxruntime takes, as numpy's run-time CPU detection
#: names them (it asks the CPU itself, so an emulated CPU reports its own features) and as they are printed.
_NUMPY_FLAGS = (
    ("SSE42", "sse4_2"),
    ("AVX", "avx"),
    ("AVX2", "avx2"),
    ("FMA3", "fma"),
    ("AVX512F", "avx512f"),
    ("AVX512BW", "avx512bw"),
    ("AVX512VNNI", "avx512_vnni"),
    ("ASIMD", "asimd"),
    ("ASIMDDP", "asimddp"),
)
#: Features numpy does not detect, read from ``/proc/cpuinfo`` (the host's, under user-mode emulation).
_CPUINFO_FLAGS = ("avx_vnni", "amx_int8")


@dataclass(frozen=True)
class CpuInfo:
    """The CPU as the integer kernels see it.

    Attributes:
        machine: ``x86_64``, ``aarch64``, ...
        model: the CPU's model name (``/proc/cpuinfo``), or ``unknown``.
        flags: which of the kernel-deciding flags it has.
        onnxruntime: onnxruntime's version.
    """

    machine: str
    model: str
    flags: tuple[str, ...]
    onnxruntime: str

    def line(self) -> str:
        """One line: model, machine, flags, onnxruntime."""
        vnni = "vnni" if any("vnni" in f or f.startswith("amx") for f in self.flags) else "no vnni"
        flags = " ".join(self.flags) or "none of the kernel flags"
        return f"{self.model} ({self.machine}; {flags}; {vnni}; onnxruntime {self.onnxruntime})"


def cpu_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> CpuInfo:
    """The CPU's model name and its kernel-deciding features: numpy's run-time detection, then VNNI and
    AMX from ``/proc/cpuinfo`` (Linux) where numpy has no name for them."""
    try:
        import onnxruntime

        version = str(onnxruntime.__version__)
    except ImportError:
        version = "not installed"
    from sciverify.models.int8 import cpu_features

    detected = cpu_features()
    flags = [name for key, name in _NUMPY_FLAGS if detected.get(key)]
    model, listed = platform.processor() or "unknown", set()
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "cpu model") and model in ("unknown", "", platform.machine()):
            model = value.strip()
        elif key in ("flags", "features"):
            listed.update(value.split())
    flags += [f for f in _CPUINFO_FLAGS if f in listed]
    return CpuInfo(platform.machine(), model, tuple(flags), version)


def emulation_env(cpu: str) -> dict[str, str]:
    """This process's environment for running this Python under ``qemu-x86_64 -cpu CPU`` (tests, benchmarks,
    ``scripts/ship``).

    numpy's OpenBLAS picks its kernels at import from CPUID, and under ``-cpu Nehalem`` on an AVX-512 VNNI
    host it chose its Haswell kernels and died at import on an AVX instruction (on the AVX2 host it chose
    right). Naming the emulated CPU's kernels (OpenBLAS has them under QEMU's names ``Haswell`` and
    ``Nehalem``) keeps the emulated run about the models, not about OpenBLAS's detection. One thread: the
    canaries are small and emulated threads only cost time.
    """
    return {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_CORETYPE": cpu}


@dataclass(frozen=True)
class CanaryResult:
    """One model's canaries on this CPU.

    Attributes:
        model: ``label``, ``reader`` or ``embedder``.
        measure: ``max |dp|`` (stance models) or ``min cosine`` (embedder).
        value: the measure over every canary.
        limit: the value that still passes.
        canaries: how many inputs were run.
        float_gap: for the stance models, the largest difference from the float graph (int8 rounding
            of the activations, the same on every CPU; NaN where not recorded).
    """

    model: str
    measure: str
    value: float
    limit: float
    canaries: int
    float_gap: float = float("nan")

    @property
    def ok(self) -> bool:
        if self.measure == "min cosine":
            return bool(self.value >= self.limit)
        return bool(self.value <= self.limit)

    def line(self) -> str:
        verdict = "ok" if self.ok else "WRONG"
        gap = "" if np.isnan(self.float_gap) else f"; float graph within {self.float_gap:.3f}"
        return f"{self.model}: {verdict}, {self.measure} {self.value:.6f} (limit {self.limit}){gap}"


@dataclass(frozen=True)
class ConformanceReport:
    """Every loaded model's canaries and the CPU they ran on."""

    cpu: CpuInfo
    results: tuple[CanaryResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def summary(self) -> dict[str, Any]:
        """For ``/api/health`` and ``doctor --json``."""
        return {
            "ok": self.ok,
            "cpu": self.cpu.line(),
            "models": {r.model: {"ok": r.ok, r.measure: round(r.value, 6)} for r in self.results},
        }

    def require(self) -> None:
        """Raise :class:`ConformanceError` naming the CPU and the failing models, unless all passed."""
        if self.ok:
            return
        wrong = "; ".join(r.line() for r in self.results if not r.ok)
        raise ConformanceError(
            f"the models give wrong answers on this CPU, so they are not used: {wrong}. "
            f"CPU: {self.cpu.line()}. `sciverify doctor` shows every check"
        )


class ConformanceError(ArtifactError):
    """The models loaded but fail their canaries on this CPU."""


def write_canaries(directory: Path, kind: str) -> dict[str, Any]:
    """Compute and write ``directory/canaries.json`` for a stance model (``label`` or ``reader``): the
    expected outputs from the reference graph and, for the record, from the float graph."""
    import onnx
    import onnxruntime as ort

    from sciverify.models.int8 import float_graph, reference_graph

    if kind not in ("label", "reader"):
        raise ValueError(f"canaries are written for label and reader models, not {kind!r}")
    model = onnx.load(str(directory / "model.onnx"))
    outputs = {}
    for name, graph in (("reference", reference_graph(model)), ("float", float_graph(model))):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(graph.SerializeToString(), options, providers=["CPUExecutionProvider"])
        outputs[name] = _run_stance(kind, directory, session)
    record = {
        "model": kind,
        "model_sha256": sha256_file(directory / "model.onnx"),
        "inputs": _canary_inputs(kind),
        **{name: np.round(values, 7).tolist() for name, values in outputs.items()},
    }
    write_text_atomic(directory / CANARY_FILE, json.dumps(record, indent=1) + "\n")
    return record


def _canary_inputs(kind: str) -> list[Any]:
    if kind == "label":
        return [[c, t, list(s)] for c, t, s in LABEL_CANARIES]
    return [list(row) for row in READER_CANARIES]


def _run_stance(kind: str, directory: Path, session: Any) -> npt.NDArray[np.float32]:
    """The canaries through ``session`` one input per call, as the pipeline calls the models."""
    from tokenizers import Tokenizer

    from sciverify.models.label import LabelModelConfig, encode_pairs, format_evidence

    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    max_length = int(config.get("max_length", LabelModelConfig().max_length))
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    names = {i.name for i in session.get_inputs()}
    if kind == "label":
        pairs = [(c, format_evidence(t, list(s))) for c, t, s in LABEL_CANARIES]
    else:
        pairs = [(c, format_evidence(t, [s])) for c, t, s in READER_CANARIES]
    rows = []
    for pair in pairs:
        feeds = encode_pairs(tokenizer, [pair], max_length)
        rows.append(session.run(None, {k: v for k, v in feeds.items() if k in names})[0][0])
    return np.asarray(rows, dtype=np.float32)


def read_canaries(directory: Path) -> dict[str, Any]:
    """The canary record beside a model; an ArtifactError when it is missing or damaged."""
    path = directory / CANARY_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(
            f"{path} is missing: the model cannot be checked on this CPU; write it with "
            "`python scripts/write_canaries.py DIR`"
        ) from None
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"cannot read {path}: {exc}") from None
    if not isinstance(record, dict) or "reference" not in record:
        raise ArtifactError(f"{path}: not a canary record")
    return record


def check_stance(
    kind: str, directory: Path, outputs: Callable[[Sequence[Any]], npt.NDArray[np.float32]]
) -> CanaryResult:
    """Run a stance model's canaries through ``outputs`` (the loaded model's own entry point) and compare
    them with the reference recorded beside it."""
    record = read_canaries(directory)
    got = np.asarray(outputs(record["inputs"]), dtype=np.float32)
    expected = np.asarray(record["reference"], dtype=np.float32)
    if got.shape != expected.shape:
        raise ArtifactError(
            f"{directory / CANARY_FILE}: {expected.shape} outputs recorded, the model gave {got.shape}"
        )
    gap = float(np.abs(np.asarray(record.get("float", expected), dtype=np.float32) - expected).max())
    value = float(np.abs(got - expected).max())
    return CanaryResult(kind, "max |dp|", value, PROBABILITY_LIMIT, len(got), gap)


def check_embedder_canaries(
    encode: Callable[[Sequence[str]], npt.NDArray[np.float32]], expected: Path
) -> CanaryResult:
    """The embedder's canaries against the vectors recorded in ``expected`` (a JSON list of rows)."""
    try:
        reference = np.asarray(json.loads(expected.read_text(encoding="utf-8"))["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError) as exc:
        raise ArtifactError(f"cannot read the embedder's canaries {expected}: {exc}") from None
    got = np.asarray(encode(list(EMBEDDER_SENTENCES)), dtype=np.float32)
    cos = (got * reference).sum(axis=1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(reference, axis=1) + 1e-12
    )
    return CanaryResult("embedder", "min cosine", float(cos.min()), COSINE_LIMIT, len(got))


def check_loaded(
    label: object | None,
    reader: object | None,
    encode: Callable[[Sequence[str]], npt.NDArray[np.float32]] | None,
) -> ConformanceReport:
    """Run the canaries of whichever models are loaded, through their own entry points (the calls the
    pipeline makes). A stance model directory without ``canaries.json`` (trained before canaries
    existed) is skipped; its graph was still made exact when it loaded."""
    from sciverify.models.label import LabelModel
    from sciverify.models.reader import ReaderModel
    from sciverify.retrieval.embedder import EMBEDDER_CANARIES

    results = []
    stance: list[tuple[str, Any, Callable[[Sequence[Any]], npt.NDArray[np.float32]]]] = []
    if isinstance(label, LabelModel):
        labels = label
        stance.append(
            ("label", labels, lambda rows: np.stack([labels.predict(c, [(t, s)])[0] for c, t, s in rows]))
        )
    if isinstance(reader, ReaderModel):
        sentences = reader
        stance.append(("reader", sentences, lambda rows: np.stack([sentences.read_one(*r) for r in rows])))
    for kind, model, outputs in stance:
        if (model.directory / CANARY_FILE).exists():
            results.append(check_stance(kind, model.directory, outputs))
    if encode is not None and EMBEDDER_CANARIES.exists():
        results.append(check_embedder_canaries(encode, EMBEDDER_CANARIES))
    return ConformanceReport(cpu_info(), tuple(results))


def check_dirs(model_dir: Path, *, embedder: bool = True) -> ConformanceReport:
    """Load the stance models of a weights folder (``label/``, ``reader/`` where present) and the embedder,
    and run their canaries: the check ``sciverify doctor`` prints, without an index."""
    from sciverify.models.label import LabelModel
    from sciverify.models.reader import ReaderModel
    from sciverify.retrieval.embedder import get_embedder

    has = {name: (model_dir / name / "model.onnx").exists() for name in ("label", "reader")}
    label = LabelModel.load(model_dir / "label") if has["label"] else None
    reader = ReaderModel.load(model_dir / "reader") if has["reader"] else None
    return check_loaded(label, reader, get_embedder().encode if embedder else None)
