"""Rule-based claim negation: SUPPORT/CONTRADICT training pairs that differ only in polarity.

SciFact's CONTRADICT claims were written by annotators who negated or altered a supported claim, so the
label model must tell "X increases Y" from "X does not increase Y" / "X decreases Y" against the same
evidence. Only ~470 training claims carry evidence, too few to learn that contrast from. These rules
produce the contrast mechanically: a negated claim paired with the same rationale gets the opposite
label. The rules only need to be right often enough to teach polarity; they return None rather than
guess when no rule applies.

Which flips are safe differs by direction. Evidence that supports P contradicts both "not P" and "P with
the direction swapped" (increase -> decrease). Evidence that contradicts P supports "not P", but not
necessarily the swapped claim (a null result contradicts "X increases Y" without supporting "X decreases
Y"), so :func:`negate` with ``allow_antonym=False`` is what CONTRADICT pairs use.
"""

from __future__ import annotations

import random
import re

__all__ = ["negate", "swap_direction"]

# Directional pairs: each word maps to its opposite (both directions are added below).
_ANTONYMS = {
    "increase": "decrease",
    "increases": "decreases",
    "increased": "decreased",
    "increasing": "decreasing",
    "higher": "lower",
    "more": "less",
    "greater": "smaller",
    "positively": "negatively",
    "positive": "negative",
    "upregulates": "downregulates",
    "upregulated": "downregulated",
    "upregulation": "downregulation",
    "promotes": "inhibits",
    "activates": "suppresses",
    "enhances": "impairs",
    "improves": "worsens",
    "improved": "worsened",
    "beneficial": "harmful",
    "elevated": "reduced",
    "raises": "lowers",
    "gain": "loss",
    "above": "below",
    "before": "after",
    "effective": "ineffective",
    "common": "rare",
}
_ANTONYMS.update({v: k for k, v in list(_ANTONYMS.items())})
# One-way swaps: "reduce" is the commonest direction word of SciFact claims after "increase" ("Statins
# reduce cardiovascular risk"), but its natural opposite, "increase", already maps back to "decrease".
_ANTONYMS.update(
    {
        "reduce": "increase",
        "reduces": "increases",
        "reducing": "increasing",
        "reduction": "increase",
        "lowered": "raised",
        "prevents": "causes",
        "protects": "harms",
        "attenuates": "amplifies",
        "worse": "better",
        "better": "worse",
    }
)

# Base forms of verbs that SciFact claims use in the third person ("X regulates Y").
_VERBS = (
    "increase decrease reduce cause lead promote inhibit regulate improve induce require result correlate "
    "predict prevent enhance impair activate suppress mediate affect contribute protect trigger block "
    "encourage translate occur exhibit drive control bind limit alter restore determine stimulate reverse "
    "facilitate modulate elevate lower raise attenuate accelerate delay impede disrupt confer contain "
    "depend express form interact localize play show target undergo use worsen associate correspond cross "
    "decline exist function indicate influence initiate involve maintain outperform persist produce "
    "provide remain repress rescue respond support sustain yield encode need reflect act lack enable"
).split()


def _third_person(base: str) -> str:
    if base.endswith("y") and base[-2:] not in ("ay", "ey", "oy", "uy"):
        return base[:-1] + "ies"
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    return base + "s"


_THIRD = {_third_person(b): b for b in _VERBS}
_BASES = frozenset(_VERBS)
_AUX = ("is", "are", "was", "were", "can", "could", "may", "might", "will", "would", "should", "must")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")


def _remove_negation(claim: str) -> str | None:
    """ "X is not Y" -> "X is Y", "X does not V" -> "X Vs", "X has no Y" -> "X has a Y"."""
    m = re.search(r"\b(does|do|did) not (\w+)", claim)
    if m:
        verb = m.group(2)
        if m.group(1) == "does":
            verb = _third_person(verb)
        return claim[: m.start()] + verb + claim[m.end() :]
    m = re.search(rf"\b({'|'.join(_AUX)}|has|have) not\b ?", claim)
    if m:
        return claim[: m.start()] + m.group(1) + " " + claim[m.end() :]
    m = re.search(r"\b(cannot)\b", claim)
    if m:
        return claim[: m.start()] + "can" + claim[m.end() :]
    m = re.search(r"\b[Nn]o\b ", claim)
    if m and m.start() > 0:
        return claim[: m.start()] + "a " + claim[m.end() :]
    return None


def _insert_negation(claim: str) -> str | None:
    """ "X is Y" -> "X is not Y", "X regulates Y" -> "X does not regulate Y"."""
    words = list(_WORD.finditer(claim))
    for m in words[1:]:
        w = m.group(0)
        if w == "can":
            return claim[: m.start()] + "cannot" + claim[m.end() :]
        if w in _AUX:
            return claim[: m.end()] + " not" + claim[m.end() :]
        if w in ("has", "have") and m.end() < len(claim):
            nxt = claim[m.end() :].lstrip()
            if nxt.startswith("been") or nxt.split(" ")[0].endswith("ed"):
                return claim[: m.end()] + " not" + claim[m.end() :]
            return claim[: m.start()] + ("does not have" if w == "has" else "do not have") + claim[m.end() :]
        if w in _THIRD:
            return claim[: m.start()] + "does not " + _THIRD[w] + claim[m.end() :]
        if w in _BASES:
            return claim[: m.start()] + "do not " + w + claim[m.end() :]
    return None


def _swap_antonym(claim: str) -> str | None:
    for m in _WORD.finditer(claim):
        w = m.group(0)
        opposite = _ANTONYMS.get(w.lower())
        if opposite is not None:
            if w[0].isupper():
                opposite = opposite[0].upper() + opposite[1:]
            return claim[: m.start()] + opposite + claim[m.end() :]
    return None


#: Phrases whose direction no single word carries, swapped before any word (both ways).
_PHRASES = {
    "protects against": "raises the risk of",
    "protect against": "raise the risk of",
    "protected against": "raised the risk of",
    "increases the risk of": "protects against",
    "increase the risk of": "protect against",
    "increased the risk of": "protected against",
    "raises the risk of": "protects against",
    "a risk factor for": "protective against",
    "protective against": "a risk factor for",
}
_PHRASE = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _PHRASES), key=len, reverse=True)) + r")\b", re.I
)


def swap_direction(text: str) -> str | None:
    """``text`` with its first direction word or phrase turned to the opposite ("increases" ->
    "decreases", "protects against" -> "raises the risk of"), or None when it states no direction.

    The same table :func:`negate` uses, so a claim's rule-made opposite and a corpus sentence's
    flipped form agree on what the opposite of a direction is."""
    m = _PHRASE.search(text)
    if m is not None:
        opposite = _PHRASES[m.group(0).lower()]
        if m.group(0)[0].isupper():
            opposite = opposite[0].upper() + opposite[1:]
        return text[: m.start()] + opposite + text[m.end() :]
    return _swap_antonym(text)


def negate(claim: str, rng: random.Random | None = None, *, allow_antonym: bool = True) -> str | None:
    """A claim of opposite polarity, or None when no rule applies.

    A claim that is already negated loses its negation; otherwise a directional word is swapped for its
    opposite (when allowed; picked at random against inserting "not" when both apply) or "not" is inserted
    after the first auxiliary or known verb.
    """
    rng = rng or random.Random(0)
    removed = _remove_negation(claim)
    if removed is not None:
        return removed
    options = [r for r in (_insert_negation(claim), _swap_antonym(claim) if allow_antonym else None) if r]
    if not options:
        return None
    return options[0] if len(options) == 1 else rng.choice(options)
