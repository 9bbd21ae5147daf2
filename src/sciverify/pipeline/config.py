"""PipelineConfig: the stage configs of one verification run, composed, with TOML load and dump.

The tuned configuration ships in the model directory: retrieval and the models' names next to the
rationale weights (``rationale/pipeline.toml``), the decision's settings in the decision's own folder
(``decision/decision.toml``, :mod:`sciverify.decision.settings`), because they were tuned against exactly
those weights; a run directory stores the configuration it used, so a result can always be traced back
to its settings.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from sciverify.decision.settings import DECISION_DIR, DECISION_TOML, DecisionConfig, load_decision, toml_value
from sciverify.errors import ConfigError
from sciverify.models.llm_config import LlmConfig
from sciverify.retrieval.base import RetrievalConfig
from sciverify.retrieval.rerank import RerankConfig

__all__ = [
    "CLAIM_CHARS_ENV",
    "CONFIG_VERSION",
    "MAX_CLAIM_CHARS",
    "PIPELINE_TOML",
    "PipelineConfig",
    "claim_char_limit",
    "default_model_dir",
    "tuned_config",
]

CONFIG_VERSION = 1
#: The tuned configuration's file name, inside a model directory's ``rationale/``.
PIPELINE_TOML = "pipeline.toml"


def default_model_dir() -> Path:
    """The shipped weights: ``sciverify/models/weights`` with ``label/`` and ``rationale/`` inside."""
    return Path(__file__).resolve().parent.parent / "models" / "weights"


def tuned_config(model_dir: Path | None = None) -> PipelineConfig:
    """The configuration tuned with a model directory's weights (None = the shipped weights), or the
    defaults where it has none: the one place that finds it. ``rationale/pipeline.toml`` holds the
    pipeline, ``decision/decision.toml`` the decision; a directory written before the decision had its
    folder keeps it in the pipeline file's ``[decision]`` table, which is read then. Both at once is
    refused: one of them would be silently ignored."""
    root = Path(model_dir) if model_dir is not None else default_model_dir()
    toml = root / "rationale" / PIPELINE_TOML
    config = PipelineConfig.load_toml(toml) if toml.exists() else PipelineConfig()
    decision = root / DECISION_DIR / DECISION_TOML
    if not decision.exists():
        return config
    if toml.exists() and "decision" in tomllib.loads(toml.read_text(encoding="utf-8")):
        raise ConfigError(f"{toml} has a [decision] table and {decision} exists: keep the decision in one")
    return replace(config, decision=load_decision(decision))

#: The longest claim accepted, by the CLI and the server alike: a SciFact claim is one sentence (~100
#: characters) and the models read 128 tokens, so a longer text is a pasted page, not a claim.
MAX_CLAIM_CHARS = 1000
#: The environment variable that changes it for both (``sciverify serve`` reads it as a setting too).
CLAIM_CHARS_ENV = "SCIVERIFY_MAX_CLAIM_CHARS"


def claim_char_limit() -> int:
    """The claim length limit: ``$SCIVERIFY_MAX_CLAIM_CHARS`` when set, else :data:`MAX_CLAIM_CHARS`."""
    raw = os.environ.get(CLAIM_CHARS_ENV, "").strip()
    if not raw:
        return MAX_CLAIM_CHARS
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{CLAIM_CHARS_ENV} must be an integer, got {raw!r}") from None
    if value < 10:
        raise ConfigError(f"{CLAIM_CHARS_ENV} must be >= 10, got {value}")
    return value


@dataclass(frozen=True)
class PipelineConfig:
    """Retrieval -> optional reranking -> rationale selection -> label prediction -> emit decision.

    Attributes:
        retrieval: which retriever and how many candidate abstracts (``retrieval.k``) are judged.
        rerank: whether to reorder the first ``rerank.depth`` retrieved abstracts before keeping ``k``.
        selector: registered rationale selector name ("trained", "cosine", "first", "oracle").
        label: registered label predictor name ("model" = the trained LabelModel, "majority").
        decision: thresholds of the emit decision.
        max_claim_chars: longer claims are rejected with InputError; None (the default) = the limit
            shared with the server (:func:`claim_char_limit`).
        judge: "models" (selector, label model and emit decision above) or a registered judge name
            (:data:`sciverify.models.base.JUDGES`; "llm": each retrieved abstract judged by the language
            model of ``llm``: verdict and evidence sentences; the models are not loaded).
        llm: the OpenAI-compatible endpoint of the ``llm`` judge (``[llm]`` in TOML).
    """

    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
    selector: str = "trained"
    label: str = "model"
    decision: DecisionConfig = field(default_factory=DecisionConfig)
    max_claim_chars: int | None = None
    judge: str = "models"
    llm: LlmConfig = field(default_factory=LlmConfig)
    config_version: int = CONFIG_VERSION

    def __post_init__(self) -> None:
        if self.config_version != CONFIG_VERSION:
            raise ConfigError(
                f"pipeline config_version {self.config_version} is not supported "
                f"(this sciverify reads {CONFIG_VERSION})"
            )
        if self.max_claim_chars is not None and self.max_claim_chars < 10:
            raise ConfigError("max_claim_chars must be >= 10")
        from sciverify.models.catalog import judge_names

        if self.judge != "models" and self.judge not in judge_names():
            choices = " or ".join(repr(n) for n in ["models", *judge_names()])
            raise ConfigError(f"judge must be {choices}, got {self.judge!r}")

    def with_judge(self, judge: str | None = None, **llm: Any) -> PipelineConfig:
        """The same configuration with another judge and/or endpoint settings (None values are ignored)."""
        changes = {k: v for k, v in llm.items() if v is not None}
        unknown = set(changes) - {f.name for f in fields(LlmConfig)}
        if unknown:
            raise ConfigError(f"unknown llm settings: {', '.join(sorted(unknown))}")
        cfg = replace(self, llm=replace(self.llm, **changes)) if changes else self
        return replace(cfg, judge=judge) if judge is not None else cfg

    @property
    def claim_limit(self) -> int:
        """The claim length limit in force: this configuration's, else the shared one."""
        return self.max_claim_chars if self.max_claim_chars is not None else claim_char_limit()

    def with_k(self, k: int) -> PipelineConfig:
        """The same configuration judging ``k`` candidate abstracts."""
        return replace(self, retrieval=replace(self.retrieval, k=k))

    # ---- TOML ------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "config_version": self.config_version,
            "selector": self.selector,
            "label": self.label,
            "retrieval": asdict(self.retrieval),
            "rerank": asdict(self.rerank),
            "decision": self.decision.to_json(),
        }
        if self.max_claim_chars is not None:  # unset: the shared limit, not pinned in the file
            data["max_claim_chars"] = self.max_claim_chars
        if self.judge != "models":  # files of the default judge stay as they were
            data["judge"] = self.judge
            data["llm"] = asdict(self.llm)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PipelineConfig:
        data = dict(data)
        try:
            retrieval = data.pop("retrieval", {})
            rerank = data.pop("rerank", {})  # absent in files written before reranking existed: off
            decision = data.pop("decision", {})
            llm = data.pop("llm", {})
            known = {f.name for f in fields(cls)} - {"retrieval", "rerank", "decision", "llm"}
            unknown = set(data) - known
            if unknown:
                raise ConfigError(f"unknown pipeline settings: {', '.join(sorted(unknown))}")
            r_known = {f.name for f in fields(RetrievalConfig)}
            if set(retrieval) - r_known:
                raise ConfigError(
                    f"unknown retrieval settings: {', '.join(sorted(set(retrieval) - r_known))}"
                )
            rr_known = {f.name for f in fields(RerankConfig)}
            if set(rerank) - rr_known:
                raise ConfigError(f"unknown rerank settings: {', '.join(sorted(set(rerank) - rr_known))}")
            llm_known = {f.name for f in fields(LlmConfig)}
            if not isinstance(llm, dict) or set(llm) - llm_known:
                bad = (
                    ", ".join(sorted(set(llm) - llm_known))
                    if isinstance(llm, dict)
                    else "[llm] is not a table"
                )
                raise ConfigError(f"unknown llm settings: {bad}")
            return cls(
                retrieval=RetrievalConfig(**retrieval),
                rerank=RerankConfig(**rerank),
                decision=DecisionConfig.from_json(decision),
                llm=LlmConfig(**llm),
                **data,
            )
        except TypeError as exc:
            raise ConfigError(f"invalid pipeline configuration: {exc}") from None

    def dumps_toml(self, *, decision: bool = True) -> str:
        """TOML text (flat sections of scalars, so a tiny writer suffices); ``decision=False`` leaves the
        ``[decision]`` table out, for a model directory that ships it in ``decision/``."""
        data = self.to_dict()
        lines = [f"{k} = {toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
        for section in ("retrieval", "rerank", "decision", "llm"):
            if section == "decision" and not decision:
                continue
            if section not in data:
                continue
            lines.append(f"\n[{section}]")
            lines.extend(f"{k} = {toml_value(v)}" for k, v in data[section].items())
        return "\n".join(lines) + "\n"

    def dump_toml(self, path: Path, *, decision: bool = True) -> None:
        Path(path).write_text(self.dumps_toml(decision=decision), encoding="utf-8")

    @classmethod
    def loads_toml(cls, text: str) -> PipelineConfig:
        try:
            return cls.from_dict(tomllib.loads(text))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML: {exc}") from None

    @classmethod
    def load_toml(cls, path: Path) -> PipelineConfig:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read pipeline config {path}: {exc}") from None
        try:
            return cls.loads_toml(text)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None

