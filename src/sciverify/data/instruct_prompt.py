"""The instruction-style SciFact task as text: one claim-abstract pair, the prompt a model is shown, and the
tokens its copied evidence is compared by.

Both the scorer of instruction outputs (:mod:`sciverify.scoring.instruct`) and the pipeline's language-model
judge (:mod:`sciverify.models.llm`) ask and read exactly this, so the two agree on what a model was asked
and said; the answer's parser is :mod:`sciverify.data.instruct_parse`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sciverify.data.records import doc_key

__all__ = ["InstructPair", "evidence_tokens", "instruct_prompt"]


@dataclass(frozen=True)
class InstructPair:
    """One gold claim-abstract pair: the model input (claim, sentences) and the expected answer."""

    claim_id: int | str
    doc_id: int | str
    claim: str
    title: str
    sentences: tuple[str, ...]
    verdict: str
    evidence: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (str(self.claim_id), doc_key(self.doc_id))


_TOKEN = re.compile(r"[^\W_]+")


def evidence_tokens(text: str) -> list[str]:
    """Lowercase and split on anything that is not a letter or digit (Unicode-aware)."""
    return _TOKEN.findall(text.lower())


def instruct_prompt(pair: InstructPair) -> str:
    """The instruction shown to a model for one pair: claim, then the abstract one sentence per line."""
    abstract = "\n".join(pair.sentences)
    return (
        "Read the scientific claim and the abstract of a biomedical paper below; the abstract has one "
        "sentence per line. Answer with a single JSON object and nothing else, with two fields:\n"
        '- "verdict": "SUPPORT" if the abstract supports the claim, "CONTRADICT" if it contradicts '
        'the claim, or "NEI" if it does not give enough information to decide.\n'
        '- "evidence": a list of the abstract sentences, copied verbatim, that justify the verdict; '
        'an empty list when the verdict is "NEI".\n\n'
        f"Claim: {pair.claim}\n\nAbstract:\n{abstract}\n"
    )
