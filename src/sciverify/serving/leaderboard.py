"""The leaderboard: score an uploaded prediction file against gold, store it atomically, rank.

Two kinds of gold. A *public* gold (a development phase) gets full diagnostics: exact metrics with
bootstrap intervals, the scorer's public report and the paired test against the top entry. A *hidden*
gold (the default) gets only what a leaderboard must show: each team's released headline F1s under the
Ladder rule of :mod:`sciverify.serving.release`; exact scores and the full report are kept for the
operator (``sciverify leaderboard inspect``). In both, uploads are validated against the public list of
claim ids (the public claims file), so a message can name only ids the submitter already has; the
gold file's name, size and per-claim content never reach a client.

A hidden gold is cut into a *public part* and a *private part* (seeded, claim families kept together,
or the claims the operator names). Everything public during a phase (released figures, the release
rule's margin and floor, messages) is computed from the public part alone; the private part is scored
for every valid upload, so the work per upload does not depend on it, and its figures are stored and
shown only once the operator closes the phase (:mod:`sciverify.serving.phase`). Probes, from however
many teams, can at worst learn public-part gold.

Storing an upload (rate limits, idempotency keys, the one transaction) is
:mod:`sciverify.serving.upload_store`'s part.
"""

from __future__ import annotations

import logging
import re
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

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
from sciverify.scoring.validate import OverBudget
from sciverify.serving.db import Database
from sciverify.serving.file_text import not_utf8
from sciverify.serving.gold_parts import choose_private, figures, lines_for, phase_key, write_parts
from sciverify.serving.ranking import exact_entries, released_entries
from sciverify.serving.release import ReleaseRule, guarded
from sciverify.serving.tables import Submission
from sciverify.serving.upload_store import ScoredFile, UploadStore

__all__ = [
    "FAMILIES",
    "Leaderboard",
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
#: The names the server writes an upload under: never the client's file name.
_UPLOAD_NAME = "upload.jsonl"


def clean_filename(name: str | None) -> str:
    """A display-safe base name for an uploaded file (no directories, no control characters).

    Only shown in messages and to the file's owner: the server never writes a file under it.
    """
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip(" .") or "predictions.jsonl"
    return base[:120]


class Leaderboard(UploadStore):
    """Scoring, storage and ranking for one gold file (and its private part)."""

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
        budget: float | None = None,
        gold_public: bool = False,
        claims: Path | None = None,
        rule: ReleaseRule | None = None,
        rank_by: str = "sentence_label",
        private_ids: Path | None = None,
        private_fraction: float = 0.5,
        private_seed: int | None = None,
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
        #: Seconds one upload's validation and scoring may take (None: no limit).
        self.budget = budget
        self.gold_public = gold_public
        self.claims = claims
        self.rule = rule or ReleaseRule(margin=0.01, grid=0.01, floor=0.05, rank_by=rank_by)
        self.rank_by = rank_by
        self.private_ids_file = private_ids
        self.private_fraction = private_fraction
        self.private_seed = private_seed
        self.gold_sha256 = ""
        #: The phase rows are stored under (``Submission.gold_sha256``): the gold, and its private part.
        self.phase_key = ""
        self._pairs: dict[tuple[int, int], float] = {}
        self._groups: dict[Any, list[int]] = {}
        self._golds: Any = None
        self._public: Any = None
        self._gold_ids: set[str] = set()
        self._private_ids: frozenset[str] = frozenset()
        self._parts: dict[str, Path] = {}
        self._parts_dir: tempfile.TemporaryDirectory[str] | None = None
        self._corpus_sizes: dict[str, int] | None = None
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.gold is not None

    @property
    def has_private(self) -> bool:
        """The gold has a private part (a hidden gold with a private fraction or named private ids)."""
        return bool(self._private_ids)

    def check(self) -> None:
        """Fail at start-up, not at the first upload, when the gold, corpus or private-ids file is
        unusable; cut the gold into its public and private parts.

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
        self._private_ids = choose_private(
            self._golds,
            self.gold_sha256,
            gold_public=self.gold_public,
            ids_file=self.private_ids_file,
            fraction=self.private_fraction,
            seed=self.private_seed,
        )
        self.phase_key = phase_key(self.gold_sha256, self._private_ids)
        self._parts_dir = tempfile.TemporaryDirectory(prefix="sciverify-gold-")
        self._parts = write_parts(self.gold, self._private_ids, Path(self._parts_dir.name))
        if not self.gold_public:
            self.rule = self._guarded(self.rule)

    @property
    def final_ids(self) -> frozenset[str]:
        """The claims a hidden gold's final ranking is computed on (the private part, or the whole gold
        without one): spent once the phase closes. Empty for a public gold."""
        if self.gold_public:
            return frozenset()
        return self._private_ids or frozenset(self._gold_ids)

    def cached_groups(self, key: Any, compute: Callable[[], list[int]]) -> list[int]:
        """The final ranking's rank groups, computed once per set of picked uploads (the paired tests
        are the costly part, and after the close nothing they depend on changes)."""
        with self._lock:
            if key in self._groups:
                return self._groups[key]
        groups: list[int] = compute()
        with self._lock:
            self._groups[key] = groups
        return groups

    def public_golds(self) -> list[Any]:
        """The gold claims of the public part."""
        return [g for g in self._golds if str(g.id) not in self._private_ids]

    def _guarded(self, rule: ReleaseRule) -> ReleaseRule:
        """The rule with margin and floor raised against one-claim probes (see ``release.guarded``),
        from the public part only: no rounding boundary may depend on a private claim."""
        from sciverify.scoring import oracle_predictions, score

        golds = self.public_golds()
        oracle = score(golds, oracle_predictions(golds))
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

    def close(self) -> None:
        """Remove the gold part files (at shutdown)."""
        if self._parts_dir is not None:
            self._parts_dir.cleanup()
            self._parts_dir = None

    @property
    def public_ids(self) -> list[str]:
        """The claim ids every upload must predict (public by definition)."""
        return [str(c.id) for c in self._public] if self._public is not None else []

    # -- scoring ------------------------------------------------------------------------------------
    def score(self, content: bytes, filename: str) -> ScoredFile:
        """Validate and score one upload (CPU-bound: call from a worker thread).

        Validation runs against the public claim ids and the corpus only, so every problem is about
        the submitter's own file. A clean file is cut into its lines for each part of the gold, and
        each part is scored by ``evaluate_files`` itself; the private part is scored whatever the
        upload, so the work done does not depend on which claims are private. ``filename`` is for
        messages only: the bytes are written under names the server chooses.

        With a time ``budget``, a file still being read when it runs out, or not yet scored on both
        parts, is answered as invalid with one problem saying so: reading is checked line by line, and
        what follows validation is linear in a validated file (each predicted abstract bounded by its
        sentences), so the overrun is at most one line's or one part's work.
        """
        assert self.gold is not None and self._golds is not None
        if (wrong := not_utf8(content)) is not None:
            problem = {"file": filename, "line": wrong.line, "message": wrong.message}
            return ScoredFile(False, None, None, [problem], None)
        deadline = None if self.budget is None else time.monotonic() + self.budget
        with tempfile.TemporaryDirectory(prefix="sciverify-upload-") as tmp:
            path = Path(tmp) / _UPLOAD_NAME
            path.write_bytes(content)
            try:
                checked = load_predictions(
                    path,
                    self._public,
                    self._corpus_sizes,
                    source="the leaderboard's claims file",
                    deadline=deadline,
                )
            except OverBudget:
                return self._over_budget(filename)
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
            results = {}
            for part, gold_path in self._parts.items():
                if deadline is not None and time.monotonic() > deadline:
                    return self._over_budget(filename)
                scored_path = Path(tmp) / f"scored-{part}.jsonl"
                ids = self._gold_ids - self._private_ids if part == "public" else self._private_ids
                scored_path.write_bytes(lines_for(content, checked.lines, ids))
                results[part] = evaluate_files(
                    gold_path,
                    scored_path,
                    None,
                    strict=False,
                    n_boot=self.n_boot,
                    seed=self.seed,
                    invocation="sciverify leaderboard",
                )
            result = results["public"]
            if result.problems:
                # Cannot happen for a file valid against the public ids; say nothing gold-specific.
                log.error("leaderboard: a validated upload had scoring problems: %s", result.problems[:3])
                problem = {
                    "file": filename,
                    "line": None,
                    "message": "the file could not be scored; the operator has the details",
                }
                return ScoredFile(False, None, None, [problem], None)
            html = render_html(result, public=self.gold_public)
            html = html.replace(str(Path(tmp) / "scored-public.jsonl"), filename)
        metrics, counts = figures(result)
        private_metrics = private_counts = None
        if "private" in results:
            if results["private"].problems:  # logged only: a public answer must not depend on it
                log.error("leaderboard: private-part scoring problems: %s", results["private"].problems[:3])
            else:
                private_metrics, private_counts = figures(results["private"])
        if self.gold_public:
            # The report names its inputs; the gold's location is not public.
            html = html.replace(str(self._parts["public"]), "(hidden)")
            html = html.replace(str(self.gold), "(hidden)").replace(self.gold.name, "(hidden)")
        return ScoredFile(True, metrics, counts, [], html, private_metrics, private_counts)

    def _over_budget(self, filename: str) -> ScoredFile:
        log.warning("leaderboard: an upload ran past the scoring budget of %s s", self.budget)
        problem = {
            "file": filename,
            "line": None,
            "message": f"the file could not be checked and scored within the {self.budget:g} s allowed "
            "for one upload; nothing was scored (send a smaller file)",
        }
        return ScoredFile(False, None, None, [problem], None)

    # -- ranking ------------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Public gold: scored submissions, best first, each with its test against the top entry.
        Hidden gold: one entry per team, its released figures. Entries with the same ranking F1
        share a rank (1, 2, 2, 4). See :mod:`sciverify.serving.ranking`."""
        return exact_entries(self) if self.gold_public else released_entries(self)

    def p_value(self, top_id: int, other_id: int) -> float:
        """Paired bootstrap p-value of the ranking F1 of row ``other_id`` against row ``top_id``
        (cached: the board asks for the same pairs on every view)."""
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


def _scrub(text: str, tmp_path: str, filename: str) -> str:
    return text.replace(tmp_path, filename)
