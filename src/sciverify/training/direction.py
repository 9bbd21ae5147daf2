"""Direction minimal pairs from the corpus: claims that differ only in the direction of a finding.

The label model gets the side of a finding wrong far more often than it misses the evidence (a quarter of
the gold evidence it emits is on the wrong side), and a claim and its negation often get the same side.
SciFact's ~470 evidence claims are too few to teach what "X increases Y" means against "X decreases Y",
but the corpus states about ten thousand directions in its own sentences. Each such sentence gives four
pairs with no claim label needed: the finding as a claim against its sentence (SUPPORT), the finding
flipped against the sentence (CONTRADICT), the finding against the flipped sentence (CONTRADICT), and the
flipped finding against the flipped sentence (SUPPORT). Every claim string and every evidence text then
occurs with both sides, so only the comparison of the two directions predicts the label: neither the
antonym alone nor word overlap does.

Only sentences that report a finding are used: purpose statements ("to test whether X increases Y"),
questions and negated or null sentences ("did not increase") are skipped, since flipping their direction
does not make the opposite claim. The flip is :func:`sciverify.training.negation.swap_direction`, the table
the rule-negated SciFact claims use.

No claim of SciFact is read here; the corpus holds every abstract, so held-out claims' abstracts are among
the sources, as they are for the retrieval index: what is learned is what the corpus says, not any
claim's label.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import NamedTuple

from sciverify.data.records import Abstract
from sciverify.training.negation import swap_direction

__all__ = ["DIRECTION_WORDS", "DirectionPair", "direction_pairs", "finding_claim"]


class DirectionPair(NamedTuple):
    """One pair: a claim, the abstract's title, the evidence sentences, and whether they agree (SUPPORT)
    or state opposite directions (CONTRADICT)."""

    claim: str
    title: str
    sentences: tuple[str, ...]
    supports: bool


#: The words (and phrase heads) that state the direction of an effect; a sentence is used only when the
#: word its flip changes is one of them.
DIRECTION_WORDS = frozenset(
    "increase increases increased increasing decrease decreases decreased decreasing higher lower "
    "greater smaller upregulates upregulated upregulation downregulates downregulated downregulation "
    "promotes inhibits activates suppresses enhances impairs improves worsens improved worsened elevated "
    "reduced raises lowers reduce reduces reducing reduction lowered protects protect protected "
    "positively negatively beneficial harmful better worse prevents attenuates".split()
)

_SKIP = re.compile(
    r"\b(whether|to (determine|investigate|assess|examine|evaluate|explore|test|compare|identify)|aims?|"
    r"objectives?|hypothes\w*|not|no|without|neither|nor|failed|unchanged|similar|unaffected|"
    r"n\.?s\.?)\b|\?",
    re.I,
)
_REPORT = re.compile(
    r"^.{0,120}?\b(show|shows|showed|shown|suggest|suggests|suggested|indicate|indicates|indicated|"
    r"demonstrate|demonstrates|demonstrated|reveal|reveals|revealed|found|find|finds|conclude|concluded|"
    r"confirm|confirms|confirmed|observed|report|reported)\s+that\s+",
    re.I,
)
_LEAD = re.compile(
    r"^(in conclusion|conclusions?|results?|findings|overall|together|taken together)\s*[:,]\s*", re.I
)
_PAREN = re.compile(r"\s*[\(\[][^()\[\]]*[\)\]]")
_WORDS = re.compile(r"[A-Za-z][A-Za-z-]*")


def finding_claim(sentence: str) -> str:
    """The finding a sentence reports, written as a claim: the clause after "we found that" / "these
    results suggest that", without a leading "In conclusion:", parentheses (statistics, abbreviations)
    or the final full stop; capitalised."""
    text = _LEAD.sub("", sentence.strip())
    m = _REPORT.match(text)
    if m is not None:
        text = text[m.end() :]
    text = _PAREN.sub("", text).strip().rstrip(".;: ")
    return text[:1].upper() + text[1:] if text else text


def _changed_word(text: str, flipped: str) -> str:
    """The first word of ``text`` that ``flipped`` changes (lower case), or ''."""
    for a, b in zip(_WORDS.findall(text), _WORDS.findall(flipped), strict=False):
        if a != b:
            return str(a).lower()
    return ""


def _usable(sentence: str) -> bool:
    words = len(sentence.split())
    return 8 <= words <= 45 and _SKIP.search(sentence) is None


def direction_pairs(corpus: Iterable[Abstract], limit: int, seed: int) -> list[DirectionPair]:
    """Up to ``limit`` pairs (four per sentence, a seeded sample of the corpus's direction sentences; 0 =
    every sentence, as an aux set's budget of 0 means all).

    The evidence is the sentence under its abstract's title, half the time after the sentence before it,
    as the label model reads a rationale in context."""
    found: list[tuple[Abstract, int, str, str, str]] = []
    for doc in corpus:
        for i, sentence in enumerate(doc.sentences):
            if not _usable(sentence):
                continue
            claim = finding_claim(sentence)
            flipped_claim = swap_direction(claim)
            flipped_sentence = swap_direction(sentence)
            if not claim or flipped_claim is None or flipped_sentence is None:
                continue
            if _changed_word(claim, flipped_claim) not in DIRECTION_WORDS:
                continue
            if _changed_word(sentence, flipped_sentence) not in DIRECTION_WORDS:
                continue
            found.append((doc, i, claim, flipped_claim, flipped_sentence))
    rng = random.Random(seed)
    rng.shuffle(found)
    out: list[DirectionPair] = []
    for doc, i, claim, flipped_claim, flipped_sentence in found[: limit // 4 if limit > 0 else len(found)]:
        before = (doc.sentences[i - 1],) if i > 0 and rng.random() < 0.5 else ()
        for evidence, same, opposite in (
            (doc.sentences[i], claim, flipped_claim),
            (flipped_sentence, flipped_claim, claim),
        ):
            out.append(DirectionPair(same, doc.title, (*before, evidence), True))
            out.append(DirectionPair(opposite, doc.title, (*before, evidence), False))
    return out
