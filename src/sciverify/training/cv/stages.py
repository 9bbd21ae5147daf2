"""Named stages that run once: a stage whose outputs all exist is skipped, so a killed run (or a run in a
later session) resumes where it stopped; ``stages.json`` records each stage's wall time."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sciverify.data.io import write_text_atomic

__all__ = ["STAGES_FILE", "Stages"]

STAGES_FILE = "stages.json"


class Stages:
    """The stages of one run directory (``root``); ``log`` gets one line as each starts and ends."""

    def __init__(self, root: Path, log: Callable[[str], None]) -> None:
        self.path = root / STAGES_FILE
        self.log = log
        self.times: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def run(self, name: str, outputs: Sequence[Path], fn: Callable[[], object]) -> bool:
        """Run ``fn`` unless every path of ``outputs`` exists; True when it ran."""
        if outputs and all(p.exists() for p in outputs):
            self.log(f"[{name}] done before: skipped")
            return False
        self.log(f"[{name}] ...")
        start = time.perf_counter()
        fn()
        seconds = round(time.perf_counter() - start, 1)
        if self.path.exists():  # another run may have recorded stages meanwhile
            self.times = {**json.loads(self.path.read_text()), **self.times}
        self.times[name] = {"seconds": seconds, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        write_text_atomic(self.path, json.dumps(self.times, indent=1, sort_keys=True) + "\n")
        self.log(f"[{name}] {seconds:.0f} s")
        return True
