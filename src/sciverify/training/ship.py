"""Shipping a run: its final models and decision copied into a weights folder, each model card's figures
written from its manifest, and the int8 graphs checked on this CPU and on an AVX2-only one.

Shipping was a hand copy from ``<run>/models/final-*`` into ``src/sciverify/models/weights/`` with model
cards written by hand, so a card's figures could drift from the manifest beside it. :func:`ship` does the
copy (every folder the run's final directory has; a folder the weights hold but the run does not, such as
a reader the new decision no longer uses, is removed, since the Verifier would otherwise load a stale
one), rewrites the part of each ``MODEL_CARD.md`` between :data:`CARD_START` and :data:`CARD_END` from
``manifest.json`` (the prose around it stays the author's), and runs the canaries
(:mod:`sciverify.models.conformance`) natively and, where ``qemu-x86_64`` is installed, on an emulated
AVX2-only CPU (docs/cpu-conformance.md). ``scripts/ship`` is its command line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciverify.data.io import write_text_atomic
from sciverify.decision.settings import DECISION_DIR, DECISION_TOML, dump_decision
from sciverify.errors import ArtifactError

__all__ = [
    "CARD_END",
    "CARD_START",
    "SHIPPED_FOLDERS",
    "Shipped",
    "avx2_check",
    "card_figures",
    "final_dir",
    "ship",
    "write_card",
]

#: The folders of a weights directory, in the order they are copied.
SHIPPED_FOLDERS = ("rationale", "label", "reader", DECISION_DIR)
#: The markers around the part of a model card written from its manifest.
CARD_START = "<!-- figures from manifest.json, written by scripts/ship: edit the manifest, not these -->"
CARD_END = "<!-- end of the figures from manifest.json -->"
#: The emulated CPU of the AVX2 check: the oldest with AVX2 (docs/cpu-conformance.md).
AVX2_CPU = "Haswell"
_FIGURES = ("abstract_label_only", "abstract_rationalized", "sentence_selection", "sentence_label")


@dataclass(frozen=True)
class Shipped:
    """What :func:`ship` did: the folders copied, the cards written, and the canaries' lines (natively,
    then on the emulated AVX2 CPU; ``avx2`` is None where no emulator is installed)."""

    source: Path
    dest: Path
    folders: tuple[str, ...]
    removed: tuple[str, ...]
    cards: tuple[Path, ...]
    native: list[str]
    native_ok: bool
    avx2: list[str] | None = None
    avx2_ok: bool = True

    @property
    def ok(self) -> bool:
        return self.native_ok and self.avx2_ok


def final_dir(run: Path, name: str | None = None) -> Path:
    """The run's final directory: ``models/final-<name>``, or the only ``models/final-*`` there is."""
    models = Path(run) / "models"
    if name is not None:
        found = [models / f"final-{name}"]
    else:
        found = sorted(p for p in models.glob("final-*") if p.is_dir())
    if len(found) != 1 or not found[0].is_dir():
        names = ", ".join(p.name for p in sorted(models.glob("final-*"))) or "none"
        raise ArtifactError(f"{models}: expected one final-* directory (have: {names}); name it with --final")
    if not (found[0] / "rationale").is_dir():
        raise ArtifactError(f"{found[0]}: no rationale/ folder: not a finished run's final models")
    return found[0]


def card_figures(manifest: Mapping[str, Any]) -> str:
    """The card's figures from its manifest: the command, the data's sha256, the code and the
    cross-validated F1s with their intervals."""
    lines = [CARD_START, "", "## Figures (from `manifest.json`)", ""]
    lines.append(f"Made by `{manifest.get('command', '?')}` (seed {manifest.get('seed', '?')}) at git "
                 f"`{manifest.get('git_sha') or 'unknown'}`, {manifest.get('created', '?')}.")
    data = manifest.get("data_sha256") or {}
    if data:
        lines += ["", "| data file | sha256 |", "|---|---|"]
        lines += [f"| `{name}` | `{digest}` |" for name, digest in sorted(data.items())]
    cross = (manifest.get("metrics") or {}).get("cross_validated") or {}
    if cross:
        lines += ["", "Cross-validated, every claim scored by models that never saw it:", "",
                  "| figure | F1 | 95 % interval | precision | recall |", "|---|---|---|---|---|"]
        for name in (*[f for f in _FIGURES if f in cross], *sorted(set(cross) - set(_FIGURES))):
            f = cross[name]
            low, high = (f.get("f1_ci95") or ["?", "?"])[:2]
            row = (name, f.get("f1"), f"{low} to {high}", f.get("precision"), f.get("recall"))
            lines.append("| " + " | ".join(str(x) for x in row) + " |")
    if "decision" in manifest:
        lines += ["", f"Decision: {manifest['decision']} (`../{DECISION_DIR}/{DECISION_TOML}`)."]
    lines += ["", CARD_END]
    return "\n".join(lines)


def write_card(folder: Path) -> Path | None:
    """Rewrite the figures of ``folder/MODEL_CARD.md`` from ``folder/manifest.json`` (appended to a card
    without them; a card is started where there is none). None when the folder has no manifest."""
    manifest_path = folder / "manifest.json"
    if not manifest_path.exists():
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ArtifactError(f"{manifest_path}: not a readable manifest ({exc})") from None
    card = folder / "MODEL_CARD.md"
    text = card.read_text(encoding="utf-8") if card.exists() else f"# {folder.name}\n"
    figures = card_figures(manifest)
    if CARD_START in text and CARD_END in text:
        head, rest = text.split(CARD_START, 1)
        text = head + figures + rest.split(CARD_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + figures + "\n"
    write_text_atomic(card, text)
    return card


def _decision_in_its_folder(dest: Path) -> None:
    """A run written before the decision had its folder ships it in ``rationale/pipeline.toml``: moved
    to ``decision/decision.toml``, as the package holds it."""
    from sciverify.pipeline.config import PIPELINE_TOML, PipelineConfig, tuned_config

    if (dest / DECISION_DIR / DECISION_TOML).exists():
        return
    config = tuned_config(dest)
    dump_decision(config.decision, dest / DECISION_DIR / DECISION_TOML)
    PipelineConfig.load_toml(dest / "rationale" / PIPELINE_TOML).dump_toml(
        dest / "rationale" / PIPELINE_TOML, decision=False
    )


def _read_card(folder: Path) -> str | None:
    """The model card a shipped folder holds, if any: a run's final models carry none, and the card's
    prose (data, recipe, limitations) is the author's, so a new model of the same role keeps it and only
    the figures between the markers are rewritten from the new manifest."""
    card = folder / "MODEL_CARD.md"
    return card.read_text(encoding="utf-8") if card.is_file() else None


def avx2_check(dest: Path, emulator: str | None = None) -> tuple[bool, list[str]] | None:
    """``sciverify doctor --no-index`` over ``dest`` on an emulated AVX2-only CPU: (ok, its lines), or
    None where ``qemu-x86_64`` is not installed."""
    emulator = emulator or shutil.which("qemu-x86_64")
    if emulator is None:
        return None
    argv = [emulator, "-cpu", AVX2_CPU, sys.executable, "-m", "sciverify", "doctor", "--no-index",
            "--models", str(dest)]
    from sciverify.models.conformance import emulation_env

    env = emulation_env(AVX2_CPU)
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    lines = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if line.strip() and not line.startswith("qemu-x86_64: warning")  # features TCG does not emulate
    ]
    return done.returncode == 0, lines


def ship(
    run: Path, dest: Path | None = None, *, name: str | None = None, check: bool = True, avx2: bool = True
) -> Shipped:
    """Copy the run's final models and decision into ``dest`` (None: the package's weights), write each
    model card's figures from its manifest, and run the canaries (see the module docstring)."""
    from sciverify.models.conformance import check_dirs
    from sciverify.pipeline.config import default_model_dir

    source = final_dir(run, name)
    dest = Path(dest) if dest is not None else default_model_dir()
    folders, removed = [], []
    for folder in SHIPPED_FOLDERS:
        card = _read_card(dest / folder)
        if (dest / folder).exists():
            shutil.rmtree(dest / folder)
            if not (source / folder).is_dir() and folder != DECISION_DIR:  # an older run's is moved below
                removed.append(folder)
        if (source / folder).is_dir():
            shutil.copytree(source / folder, dest / folder)
            folders.append(folder)
            if card is not None and not (dest / folder / "MODEL_CARD.md").exists():
                write_text_atomic(dest / folder / "MODEL_CARD.md", card)
    _decision_in_its_folder(dest)
    cards = tuple(c for c in (write_card(dest / f) for f in folders) if c is not None)
    native, native_ok, lines_avx2, ok_avx2 = [], True, None, True
    if check:
        report = check_dirs(dest)
        native, native_ok = [r.line() for r in report.results], report.ok
        found = avx2_check(dest) if avx2 else None
        if found is not None:
            ok_avx2, lines_avx2 = found
    return Shipped(
        source, dest, tuple(folders), tuple(removed), cards, native, native_ok, lines_avx2, ok_avx2
    )
