"""SmolLM2-135M behind a local llama.cpp server against the shipped pipeline, on the same pairs.

Run:  python benchmarks/bench_llm.py [--claims claims_train.jsonl] [--sample 100] [--seed 0]
      [--out out/bench_llm]
      [--base-url URL --model NAME]   (default: start llama.cpp with SmolLM2-135M-Instruct on 127.0.0.1)

Both systems answer the instruction-style task (one claim, one abstract: verdict + evidence sentences) and
both are scored by ``score_instruct``: the LLM through ``instruct-run`` (with and without ``--json-schema``),
the shipped pipeline by reading each pair's abstract as its only candidate (trees + label model, the
tuned rationale settings under VeriSci's emit rule, as ``predict --retrieval oracle`` does); its verdict
is the emitted label (NEI when nothing is emitted) and its evidence the listed sentences. Outputs go to
``--out`` and are resumed on a re-run. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from sciverify.data.datasets import resolve_data_dir
from sciverify.models.llm import LlmConfig
from sciverify.models.llm_local import SMOLLM2_ALIAS, LocalLlamaServer
from sciverify.pipeline.instruct_run import read_prompted_pairs, run_instruct, select_pairs
from sciverify.scoring.instruct import (
    InstructReport,
    read_instruct_gold,
    read_instruct_outputs,
    score_instruct,
    write_instruct_pairs,
)


def pipeline_outputs(pairs_path: Path, out: Path, sample: int, seed: int) -> tuple[list[dict], float]:
    """The shipped pipeline's answer for each selected pair, and its seconds per pair (models loaded)."""
    from sciverify.decision.rule import decide
    from sciverify.pipeline.config import tuned_config
    from sciverify.pipeline.run import oracle_config
    from sciverify.pipeline.verify import Verifier
    from sciverify.retrieval.base import Hit

    chosen = select_pairs(read_prompted_pairs(pairs_path), sample=sample, seed=seed)
    tuned = tuned_config()
    config = replace(tuned, decision=oracle_config(tuned, "oracle", None).decision)
    verifier = Verifier.load(config=config)
    rows = []
    started = time.perf_counter()
    for item in chosen:
        pair = item.pair
        row = verifier.index.row_of(str(pair.doc_id))
        hits = [Hit(row, pair.doc_id, 1.0)]
        emb = verifier.embed([pair.claim])[0]
        scores = verifier.score_candidates(pair.claim, emb, hits)
        probs = verifier.label_candidates(pair.claim, hits, scores)
        verdicts = decide(scores, probs, config.decision)
        sentences = verifier.index.sentences(row)
        if verdicts:
            v = verdicts[0]
            answer = {"verdict": v.label.value, "evidence": [sentences[i] for i in sorted(v.sentences)]}
        else:
            answer = {"verdict": "NEI", "evidence": []}
        rows.append({"claim_id": pair.claim_id, "doc_id": pair.doc_id, "output": json.dumps(answer)})
    per_pair = (time.perf_counter() - started) / max(1, len(chosen))
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows, per_pair


def row(name: str, r: InstructReport, speed: str) -> str:
    return (
        f"| {name} | {r.accuracy:.3f} | {r.macro_f1:.3f} | {r.label_f1_non_nei:.3f} | "
        f"{r.evidence_token_f1:.3f} | {r.evidence_token_f1_pooled:.3f} | {r.unparseable} | {speed} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data = resolve_data_dir(None)
    parser.add_argument("--claims", type=Path, default=data.root / "claims_train.jsonl")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("out/bench_llm"))
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--model", default=SMOLLM2_ALIAS)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pairs_path = args.out / "pairs.jsonl"
    if not pairs_path.exists():
        write_instruct_pairs(pairs_path, read_instruct_gold(args.claims, data.corpus))
    gold = [p.pair for p in select_pairs(read_prompted_pairs(pairs_path), sample=args.sample, seed=args.seed)]
    counts = ", ".join(f"{v} {sum(p.verdict == v for p in gold)}" for v in ("SUPPORT", "CONTRADICT", "NEI"))
    lines = [
        f"pairs: {len(gold)} (--sample {args.sample} --seed {args.seed} of {args.claims.name}), {counts}",
        "",
        "| system | accuracy | macro F1 | label F1 (S/C) | evidence token F1 | pooled | unparseable "
        "| speed |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    server = None
    base_url = args.base_url
    if base_url is None:
        server = LocalLlamaServer(log=args.out / "llama-server.log").start()
        base_url = server.url
    try:
        for schema in (False, True):
            name = "schema" if schema else "plain"
            config = LlmConfig(
                base_url=base_url,
                model=args.model,
                max_tokens=args.max_tokens,
                concurrency=args.concurrency,
                json_schema=schema,
                timeout=300,
            )
            result = run_instruct(
                pairs_path, args.out / f"llm-{name}.jsonl", config, sample=args.sample, seed=args.seed
            )
            p = result.progress
            speed = (
                f"{p.requests_per_s:.2f} req/s, {p.tokens_per_s:.1f} generated tok/s, "
                f"{p.prompt_tokens / max(p.elapsed, 1e-9):.0f} prompt tok/s ({p.done} requests this run)"
            )
            if p.done == 0:
                speed = "(resumed: all answers already on disk)"
            assert result.report is not None
            label = f"{args.model} via llama.cpp" + (", --json-schema" if schema else "")
            lines.append(row(label, result.report, speed))
            for note in result.notes:
                lines.append(f"note ({name}): {note}")
    finally:
        if server is not None:
            server.stop()
    from sciverify.retrieval.index import default_index_dir

    if (default_index_dir() / "manifest.json").exists():
        _, per_pair = pipeline_outputs(pairs_path, args.out / "pipeline.jsonl", args.sample, args.seed)
        shipped = score_instruct(gold, read_instruct_outputs(args.out / "pipeline.jsonl"))
        speed = f"{1000 * per_pair:.0f} ms/pair in-process"
        lines.insert(
            4, row("sciverify shipped models (the pair's abstract as the only candidate)", shipped, speed)
        )
    else:
        lines.append(f"(shipped models not run: no default index at {default_index_dir()})")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
