"""What ``sciverify doctor`` checks: the models' canaries on this CPU and the index's provenance.

Kept beside the pipeline because it opens what :meth:`sciverify.pipeline.verify.Verifier.load` opens,
without loading the rest: a failing check here is the reason ``load`` would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciverify.errors import SciverifyError
from sciverify.models.conformance import ConformanceReport, check_dirs

__all__ = ["Diagnosis", "diagnose"]


@dataclass(frozen=True)
class Diagnosis:
    """The canaries, and the index's check (None when not asked for or not built).

    Attributes:
        models: the stance models' and the embedder's canaries on this CPU.
        index: ``{"dir", "ok", "embedder", "min_cosine", "message"}`` for the index, or None.
    """

    models: ConformanceReport
    index: dict[str, Any] | None

    @property
    def ok(self) -> bool:
        return self.models.ok and (self.index is None or bool(self.index["ok"]))

    def lines(self) -> list[str]:
        """What the command prints, a check a line."""
        out = [f"CPU: {self.models.cpu.line()}"]
        out += [f"  {r.line()}" for r in self.models.results]
        if not self.models.results:
            out.append("  no canaries recorded for these models")
        if self.index is not None:
            state = "ok" if self.index["ok"] else "WRONG"
            out.append(f"index: {state}; {self.index['message']}")
        out.append("all checks passed" if self.ok else "some checks FAILED: the pipeline will refuse to load")
        return out

    def summary(self) -> dict[str, Any]:
        """The JSON ``doctor --json`` prints."""
        return {**self.models.summary(), "ok": self.ok, "index": self.index}


def diagnose(model_dir: Path | None, index_dir: Path | None, *, with_index: bool = True) -> Diagnosis:
    """Run the canaries of the models in ``model_dir`` (default: shipped) and check the index (default:
    the SciFact index, when built) against this CPU's embedder."""
    from sciverify.pipeline.verify import default_model_dir

    models = check_dirs(Path(model_dir) if model_dir is not None else default_model_dir())
    return Diagnosis(models, _index_check(index_dir) if with_index else None)


def _index_check(index_dir: Path | None) -> dict[str, Any]:
    from sciverify.retrieval.embedder import get_embedder
    from sciverify.retrieval.embedder_check import check_embedder
    from sciverify.retrieval.index import CorpusIndex, default_index_dir

    where = Path(index_dir) if index_dir is not None else default_index_dir()
    if not where.exists():
        message = (
            "not there yet: the first verify unpacks the shipped index (or `sciverify index --default`)"
            if index_dir is None
            else "not built yet (`sciverify index CORPUS -o DIR`)"
        )
        return {"dir": str(where), "ok": True, "message": message}
    try:
        index = CorpusIndex.open(where)
    except SciverifyError as exc:
        return {"dir": str(where), "ok": False, "message": str(exc)}
    check = check_embedder(index, get_embedder(index.config.max_length).encode)
    return {
        "dir": str(where),
        "ok": check.ok,
        "embedder": check.recorded,
        "min_cosine": round(check.min_cosine, 6),
        "message": check.message,
    }
