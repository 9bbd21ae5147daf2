"""The leaderboard: score an uploaded prediction file against gold, store it atomically, rank.

Two kinds of gold. A *public* gold (a development phase) gets full diagnostics: exact metrics with
bootstrap intervals, the scorer's public report and the paired test against the top entry. A *hidden*
gold (the default) gets only what a leaderboard must show: each team's released headline F1s under the
Ladder rule of :mod:`sciverify.serving.release`; exact scores and the full report are kept for the
operator (``sciverify leaderboard inspect``). In both, uploads are validated against the public list of
claim ids (the public claims file), so a message can name only ids the submitter already has; the
gold file's name, size and per-claim content never reach a client.

Durability: scoring happens first, outside any transaction; then one transaction re-checks the rate
limit and inserts the row holding the file bytes, their sha256 and the scores. The HTTP answer is sent
only after that commit, so a crash loses nothing acknowledged and leaves no half-written row.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from sciverify.errors import ConfigError, SciverifyError
from sciverify.scoring import (
    FAMILIES,
    evaluate_files,
    load_corpus_sizes,
    load_gold,
    load_predictions,
    paired_bootstrap_counts,
    render_html,
)
from sciverify.serving.db import Database
from sciverify.serving.models import Submission, Submitter, utcnow
from sciverify.serving.release import ReleaseRule, guarded, ladder_step

__all__ = [
    "FAMILIES",
    "Leaderboard",
    "RateLimited",
    "ScoredFile",
    "clean_filename",
]

log = logging.getLogger("sciverify.serving")

FAMILY_TITLES = {
    "abstract_label_only": "Abstract: label only",
    "abstract_rationalized": "Abstract: label + rationale",
    "sentence_selection": "Sentence: selection",
    "sentence_label": "Sentence: selection + label",
}
#: Problems kept and returned per upload (a wholly wrong file would list one per line).
MAX_PROBLEMS = 500
_UNSAFE = re.compile(r"[^A-Za-z0-9._ \-]+")


def clean_filename(name: str | None) -> str:
    """A display-safe base name for an uploaded file (no directories, no control characters)."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip(" .") or "predictions.jsonl"
    return base[:120]


class RateLimited(Exception):
    """The submitter used up its submissions for the current hour or day (``window`` says which)."""

    def __init__(self, retry_after: int, window: str = "hour", limit: int = 0) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after
        self.window = window
        self.limit = limit


@dataclass(frozen=True)
class ScoredFile:
    """The outcome of scoring one upload: public metrics and report, or the file's problems."""

    valid: bool
    metrics: dict[str, dict[str, float]] | None
    counts: list[list[int]] | None
    problems: list[dict[str, Any]]
    report_html: str | None


class Leaderboard:
    """Scoring, storage and ranking for one gold file."""

    def __init__(
        self,
        db: Database,
        *,
        gold: Path | None,
        corpus: Path | None,
        n_boot: int,
        seed: int,
        per_hour: int,
        per_day: int = 1_000_000,
        gold_public: bool = False,
        claims: Path | None = None,
        rule: ReleaseRule | None = None,
        rank_by: str = "sentence_label",
    ) -> None:
        if rank_by not in FAMILIES:
            raise ConfigError(f"rank_by must be one of {', '.join(FAMILIES)}")
        self.db = db
        self.gold = gold
        self.corpus = corpus
        self.n_boot = n_boot
        self.seed = seed
        self.per_hour = per_hour
        self.per_day = per_day
        self.gold_public = gold_public
        self.claims = claims
        self.rule = rule or ReleaseRule(margin=0.01, grid=0.01, floor=0.05, rank_by=rank_by)
        self.rank_by = rank_by
        self.gold_sha256 = ""
        self._pairs: dict[tuple[int, int], float] = {}
        self._golds: Any = None
        self._public: Any = None
        self._gold_ids: set[str] = set()
        self._corpus_sizes: dict[str, int] | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.gold is not None

    def check(self) -> None:
        """Fail at start-up, not at the first upload, when the gold or corpus file is unusable.

        The error names the file (it goes to the operator's console), never to a client.
        """
        if self.gold is None:
            return
        from sciverify.data.datasets import sha256_file

        if not self.gold.is_file():
            raise ConfigError(f"leaderboard gold file not found: {self.gold}")
        if self.corpus is not None and not self.corpus.is_file():
            raise ConfigError(f"corpus file not found: {self.corpus}")
        if self.claims is not None and not self.claims.is_file():
            raise ConfigError(f"leaderboard claims file not found: {self.claims}")
        self.gold_sha256 = sha256_file(self.gold)
        # Parsed once: the corpus is large, and every upload is validated against the same gold.
        self._corpus_sizes = load_corpus_sizes(self.corpus) if self.corpus is not None else None
        self._golds = load_gold(self.gold, self._corpus_sizes)
        self._gold_ids = {str(g.id) for g in self._golds}
        if self.claims is None:
            self._public = self._golds
        else:
            from sciverify.data.io import read_claims

            self._public = read_claims(self.claims, require_text=False)
            missing = self._gold_ids - {str(c.id) for c in self._public}
            if missing:
                raise ConfigError(
                    f"{len(missing)} gold claim ids are not in the leaderboard claims file {self.claims}"
                )
        if not self.gold_public:
            self.rule = self._guarded(self.rule)

    def _guarded(self, rule: ReleaseRule) -> ReleaseRule:
        """The rule with margin and floor raised against one-claim probes (see ``release.guarded``)."""
        from sciverify.scoring import oracle_predictions, score

        oracle = score(self._golds, oracle_predictions(self._golds))
        out = guarded(rule, oracle.counts)
        if out != rule:
            log.info(
                "leaderboard: release margin %.3f (configured %.3f), first-release floor %.3f (configured %.3f)",  # noqa: E501
                out.margin,
                rule.margin,
                out.floor,
                rule.floor,
            )
        return out

    @property
    def public_ids(self) -> list[str]:
        """The claim ids every upload must predict (public by definition)."""
        return [str(c.id) for c in self._public] if self._public is not None else []

    # -- scoring ------------------------------------------------------------------------------------
    def score(self, content: bytes, filename: str) -> ScoredFile:
        """Validate and score one upload (CPU-bound: call from a worker thread).

        Validation runs against the public claim ids and the corpus only, so every problem is about
        the submitter's own file. A clean file is reduced to its lines for gold claims and scored by
        ``evaluate_files`` itself.
        """
        assert self.gold is not None and self._golds is not None
        with tempfile.TemporaryDirectory(prefix="sciverify-upload-") as tmp:
            path = Path(tmp) / filename
            path.write_bytes(content)
            try:
                checked = load_predictions(
                    path, self._public, self._corpus_sizes, source="the leaderboard's claims file"
                )
            except SciverifyError as exc:
                if str(path) not in str(exc):
                    raise
                line = getattr(exc, "line", None)
                message = _scrub(getattr(exc, "message", str(exc)), str(path), filename)
                return ScoredFile(
                    False, None, None, [{"file": filename, "line": line, "message": message}], None
                )
            problems = list(checked.problems)
            if problems:
                out = [
                    {"file": filename, "line": p.line, "message": _scrub(p.message, str(path), filename)}
                    for p in problems[:MAX_PROBLEMS]
                ]
                if len(problems) > MAX_PROBLEMS:
                    out.append(
                        {
                            "file": filename,
                            "line": None,
                            "message": f"... and {len(problems) - MAX_PROBLEMS} more problems",
                        }
                    )
                return ScoredFile(False, None, None, out, None)
            scored_path = Path(tmp) / "scored" / filename
            scored_path.parent.mkdir()
            scored_path.write_bytes(self._gold_lines(content, checked.lines))
            result = evaluate_files(
                self.gold,
                scored_path,
                None,
                strict=False,
                n_boot=self.n_boot,
                seed=self.seed,
                invocation="sciverify leaderboard",
            )
            if result.problems:
                # Cannot happen for a file valid against the public ids; say nothing gold-specific.
                log.error("leaderboard: a validated upload had scoring problems: %s", result.problems[:3])
                problem = {
                    "file": filename,
                    "line": None,
                    "message": "the file could not be scored; the operator has the details",
                }
                return ScoredFile(False, None, None, [problem], None)
            html = _scrub(render_html(result, public=self.gold_public), str(scored_path), filename)
        metrics: dict[str, dict[str, float]] = {}
        for family in FAMILIES:
            prf = result.report.aggregate[family]
            interval = result.bootstrap.stats[family]["f1"] if result.bootstrap is not None else None
            metrics[family] = {
                "precision": float(prf.precision),
                "recall": float(prf.recall),
                "f1": float(prf.f1),
                "f1_low": float(interval.low) if interval else float(prf.f1),
                "f1_high": float(interval.high) if interval else float(prf.f1),
            }
        counts = [[int(x) for x in row] for row in result.report.counts.tolist()]
        if self.gold_public:
            # The report names its inputs; the gold's location is not public.
            html = html.replace(str(self.gold), "(hidden)").replace(self.gold.name, "(hidden)")
        return ScoredFile(True, metrics, counts, [], html)

    def _gold_lines(self, content: bytes, lines: dict[str, int]) -> bytes:
        """The upload's lines that predict gold claims (the rest of the public claims are not scored)."""
        keep = {number for key, number in lines.items() if key in self._gold_ids}
        # Numbered as the validator numbers them: one record per b"\n"-terminated line.
        return b"".join(line for i, line in enumerate(io.BytesIO(content), start=1) if i in keep)

    # -- storage ------------------------------------------------------------------------------------
    def _recent(
        self, session: Any, submitter_id: int, now: datetime, window: timedelta = timedelta(hours=1)
    ) -> tuple[int, datetime | None]:
        since = now - window
        row = session.execute(
            select(func.count(Submission.id), func.min(Submission.created_at)).where(
                Submission.submitter_id == submitter_id, Submission.created_at > since
            )
        ).one()
        return int(row[0]), row[1]

    def _retry_after(self, oldest: datetime | None, now: datetime, window: timedelta) -> int:
        if oldest is None:
            return 60
        if oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=now.tzinfo)
        return max(1, int((oldest + window - now).total_seconds()) + 1)

    def _check_budget(self, session: Any, submitter_id: int) -> None:
        now = utcnow()
        for name, window, limit in (
            ("hour", timedelta(hours=1), self.per_hour),
            ("day", timedelta(days=1), self.per_day),
        ):
            n, oldest = self._recent(session, submitter_id, now, window)
            if n >= limit:
                raise RateLimited(self._retry_after(oldest, now, window), name, limit)

    def check_rate(self, submitter_id: int) -> None:
        """Raise :class:`RateLimited` early, before spending CPU on scoring."""
        with self.db.read() as session:
            self._check_budget(session, submitter_id)

    def store(
        self, submitter_id: int, system: str, filename: str, content: bytes, scored: ScoredFile
    ) -> Submission:
        """Insert the submission in one transaction (rate limit re-checked under the write lock)."""
        with self.db.write() as session, session.begin():
            if self.db.backend == "postgresql":
                session.execute(select(Submitter.id).where(Submitter.id == submitter_id).with_for_update())
            self._check_budget(session, submitter_id)
            released, sets_release = None, False
            if scored.valid and not self.gold_public:
                assert scored.metrics is not None
                before = self._released(session, submitter_id)
                f1 = {family: scored.metrics[family]["f1"] for family in FAMILIES}
                released = ladder_step(before, f1, self.rule)
                sets_release = released is not None and released != before
            row = Submission(
                submitter_id=submitter_id,
                created_at=utcnow(),
                system=system,
                filename=filename,
                size=len(content),
                sha256=hashlib.sha256(content).hexdigest(),
                content=content,
                status="scored" if scored.valid else "invalid",
                gold_sha256=self.gold_sha256,
                scores=scored.metrics,
                counts=scored.counts,
                problems=scored.problems or None,
                report_html=scored.report_html,
                released=released,
                sets_release=sets_release,
            )
            session.add(row)
            session.flush()
        return row

    def _released(self, session: Any, submitter_id: int) -> dict[str, float] | None:
        """The team's released figures: those stored with its latest scored upload against this gold."""
        released: dict[str, float] | None = session.scalar(
            select(Submission.released)
            .where(
                Submission.submitter_id == submitter_id,
                Submission.status == "scored",
                Submission.gold_sha256 == self.gold_sha256,
            )
            .order_by(Submission.id.desc())
            .limit(1)
        )
        return released

    def get(self, submission_id: int) -> tuple[Submission, str] | None:
        """A submission and its submitter's name."""
        with self.db.read() as session:
            row = session.execute(
                select(Submission, Submitter.name).join(Submitter).where(Submission.id == submission_id)
            ).first()
        return (row[0], row[1]) if row else None

    # -- ranking ------------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Public gold: scored submissions, best first, each with its test against the top entry.
        Hidden gold: one entry per team, its released figures (see :meth:`released_entries`)."""
        if not self.gold_public:
            return self.released_entries()
        with self.db.read() as session:
            rows = session.execute(
                select(
                    Submission.id, Submission.system, Submission.created_at, Submission.scores, Submitter.name
                )
                .join(Submitter)
                .where(Submission.status == "scored", Submission.gold_sha256 == self.gold_sha256)
            ).all()
        ranked = sorted(
            rows,
            key=lambda r: (-r.scores[self.rank_by]["f1"], -r.scores["abstract_rationalized"]["f1"], r.id),
        )
        out: list[dict[str, Any]] = []
        top = ranked[0].id if ranked else None
        for rank, r in enumerate(ranked, start=1):
            p = None if r.id == top else self._p_value(top, r.id)  # type: ignore[arg-type]
            out.append(
                {
                    "rank": rank,
                    "submission_id": r.id,
                    "submitter": r.name,
                    "system": r.system,
                    "created_at": _iso(r.created_at),
                    "metrics": r.scores,
                    "p_value_vs_top": p,
                    "differs_from_top": None if p is None else p < 0.05,
                }
            )
        return out

    def released_entries(self) -> list[dict[str, Any]]:
        """Each team's released F1s (from the upload that set them), best first; nothing exact."""
        with self.db.read() as session:
            rows = session.execute(
                select(
                    Submission.id,
                    Submission.submitter_id,
                    Submission.system,
                    Submission.created_at,
                    Submission.released,
                    Submitter.name,
                )
                .join(Submitter)
                .where(
                    Submission.status == "scored",
                    Submission.gold_sha256 == self.gold_sha256,
                    Submission.sets_release.is_(True),
                )
                .order_by(Submission.id)
            ).all()
        latest = {r.submitter_id: r for r in rows}  # the last release of each team is its current one
        ranked = sorted(
            latest.values(),
            key=lambda r: (-r.released[self.rank_by], -r.released["abstract_rationalized"], r.id),
        )
        return [
            {
                "rank": rank,
                "submission_id": r.id,
                "submitter": r.name,
                "system": r.system,
                "created_at": _iso(r.created_at),
                "metrics": {family: {"f1": r.released[family]} for family in FAMILIES},
                "p_value_vs_top": None,
                "differs_from_top": None,
            }
            for rank, r in enumerate(ranked, start=1)
        ]

    def _p_value(self, top_id: int, other_id: int) -> float:
        key = (top_id, other_id)
        with self._lock:
            if key in self._pairs:
                return self._pairs[key]
        import numpy as np

        with self.db.read() as session:
            counts: dict[int, Any] = dict(
                session.execute(select(Submission.id, Submission.counts).where(Submission.id.in_(key))).all()
            )
        paired = paired_bootstrap_counts(
            np.asarray(counts[top_id]), np.asarray(counts[other_id]), n_boot=self.n_boot, seed=self.seed
        )
        p = float(paired.stats[self.rank_by]["f1"].p_value)
        with self._lock:
            self._pairs[key] = p
        return p


def _iso(value: datetime) -> str:
    return value.replace(microsecond=0).isoformat()


def _scrub(text: str, tmp_path: str, filename: str) -> str:
    return text.replace(tmp_path, filename)
