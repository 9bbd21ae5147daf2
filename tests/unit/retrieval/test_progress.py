"""An index build off a terminal prints a progress line for every tenth of each step, with rate and ETA."""

from __future__ import annotations

import io
import re

from sciverify.retrieval.builder import build_index
from sciverify.retrieval.layout import IndexConfig
from sciverify.retrieval.progress import BuildProgress, format_duration, progress_line


def test_a_line_for_every_tenth_and_none_in_between() -> None:
    out = io.StringIO()
    with BuildProgress(True, stream=out) as bar:
        task = bar.task("embedding sentences", 1000)
        for _ in range(1000):
            bar.advance(task, 1)
    lines = out.getvalue().splitlines()
    assert [int(re.search(r": (\d+)%", line).group(1)) for line in lines] == list(range(10, 101, 10))
    assert all(re.search(r"\d+/s, \d+s left$", line) for line in lines), lines


def test_a_big_step_prints_one_line_not_one_per_tenth_crossed() -> None:
    out = io.StringIO()
    with BuildProgress(True, stream=out) as bar:
        task = bar.task("embedding titles", 100)
        bar.advance(task, 35)
        bar.advance(task, 65)
    assert [line.split(":")[1].split()[0] for line in out.getvalue().splitlines()] == ["35%", "100%"]


def test_chunks_that_straddle_a_tenth_still_print_every_chunk() -> None:
    """Chunks of 9 %: crossing tenths alone would leave 18 % between lines (from 81 % to 99 %)."""
    out = io.StringIO()
    with BuildProgress(True, stream=out) as bar:
        task = bar.task("embedding sentences", 100)
        for _ in range(11):
            bar.advance(task, 9)
        bar.advance(task, 1)
    shares = [int(line.split(": ")[1].split("%")[0]) for line in out.getvalue().splitlines()]
    assert shares == [*range(9, 100, 9), 100]


def test_disabled_prints_nothing() -> None:
    out = io.StringIO()
    with BuildProgress(False, stream=out) as bar:
        bar.advance(bar.task("embedding", 10), 10)
    assert out.getvalue() == ""


def test_line_and_durations_read_plainly() -> None:
    assert progress_line("embedding sentences", 20_000, 50_000, 64.5) == (
        "embedding sentences: 40% (20,000 of 50,000), 310/s, 1m37s left"
    )
    assert progress_line("reading corpus.jsonl", 1200, None, 4.0) == (
        "reading corpus.jsonl: 1,200 so far, 300/s, 4s elapsed"
    )
    assert [format_duration(s) for s in (0, 59.4, 185, 3720)] == ["0s", "59s", "3m05s", "1h02m"]


def test_a_real_build_piped_prints_progress_lines(tmp_path, write_jsonl, capsys) -> None:
    corpus = write_jsonl("c.jsonl", [
        f'{{"doc_id": {i}, "title": "Title {i}", "abstract": ["Sentence one of {i}.", "Sentence two."]}}'
        for i in range(1, 31)
    ])
    build_index(corpus, tmp_path / "idx", IndexConfig(embed_chunk=8), progress=True)
    lines = capsys.readouterr().out.splitlines()
    sentences = [line for line in lines if line.startswith("embedding sentences:")]
    assert sentences[-1].startswith("embedding sentences: 100% (60 of 60)"), lines
    assert len(sentences) >= 4  # 60 sentences in chunks of 8: a line at each tenth a chunk crosses
