"""The sample size of a study, read from its abstract: how many people it counted, or none when unclear.

One fact of :mod:`sciverify.pipeline.study`, kept apart because it is its own small grammar: counts
written with thousands separators or in words, two groups that add up ("2702 women and 1398 men"),
totals, "n =", what a meta-analysis pooled, and the cases where no single number is the sample (two
cohorts with no total, the same group counted again, people screened against people enrolled). Where the
abstract gives no one count the answer is None: a missing number misleads less than a wrong one.
The words for people and counts (:data:`_PEOPLE`, :data:`_NUMBER`, :data:`_GROUP`) serve the design and
system rules too, which import them from here.
"""

from __future__ import annotations

import re

__all__ = ["sample_size"]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_PEOPLE = (
    r"patients|participants|subjects|volunteers|adults|children|women|men|infants|adolescents|individuals"
    r"|respondents|people|persons|cases|controls|mothers|pregnancies|smokers|physicians|students|nurses"
    r"|veterans|twins|newborns|neonates|girls|boys|residents|users|workers|samples"
)


#: Words that make "20 years for children" a duration, not a head count.
_NOT_PEOPLE = r"(?!(?:years?|months?|weeks?|days?|hours?|minutes?|times|mg|kg|g|ml|cm|mm|percent|of|per)\b)"


#: A count, with thousands written "70,388", "70 388" or with a thin or no-break space ("70\u2009388").
_NUMBER = r"(?<![\d.,\u00b7])(\d{1,3}(?:[,\u2009\u202f\u00a0 ]\d{3}(?!\d))+|\d+)(?![\d.\u00b7]\d)"


#: "2702 women and 1398 men", "1,376 cases and 1,376 matched controls": the two groups add up.
_OF_THE = r"(?:\d[\d,]* of (?:the |these |all )?)?"


_TWO_GROUPS = _rx(
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b(?: \((?:[^()]|\([^()]*\))*\))?,? and "
    rf"{_OF_THE}{_NUMBER} "
    rf"(?:{_NOT_PEOPLE}[\w-]+ ){{0,5}}(?:{_PEOPLE})\b"
)


#: "29 men with a subsequent diagnosis of gastric cancer and 116 aged matched controls": cases and controls.
_WITH_CONTROLS = _rx(
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b[^.;()]{{0,80}}? and {_NUMBER} "
    rf"(?:[\w-]+ ){{0,3}}controls\b"
)


_TOTAL = _rx(rf"(?:a total of|in total,?|overall,?) {_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b")


_TOTAL_WAS = _rx(rf"total number of (?:{_PEOPLE}) (?:was|were|of) {_NUMBER}")


#: "(n = 10)" after "studies", "trials" or "reviews" counts studies, not people.
_COUNTS_STUDIES = _rx(r"(?:studies|trials|reviews|analyses|articles|papers)\b[^.;]{0,25}$")


_GROUP = _rx(rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,2}}(?:{_PEOPLE})\b")


_N_EQUALS = _rx(rf"\bn\s*=\s*{_NUMBER}")


#: "4432 were randomized to alendronate or placebo": a count of people by what was done to them.
_WERE_ENROLLED = _rx(
    rf"(?<!of ){_NUMBER} (?:(?:{_PEOPLE}) )?(?:were|had been) (?:randomi[sz]ed|randomly assigned|enrolled"
    rf"|recruited)\b"
)


#: "patients (n = 45) and controls (n = 50)": two groups stated as n = , added.
_TWO_N = _rx(rf"\bn\s*=\s*{_NUMBER}\)?[^.;()=]{{0,60}}?\band\b[^.;()=]{{0,60}}?\(?n\s*=\s*{_NUMBER}\)")


_SENTENCE_END = re.compile(r"[.;](?:\s|$)")


#: A count of people and, a few words on, a second group: "N women, M men", "N patients with X and M controls"
_SECOND_GROUP = _rx(
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b(?: [\w-]+){{0,4}}?,? (?:and )?"
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b"
)


#: Counts a meta-analysis or systematic review gives for everyone its studies included (not one study's).
_POOLED = _rx(
    rf"(?:studies|trials|cohorts|reports|articles|analyses)\b[^.;]{{0,40}}?\b(?:including|involving|with"
    rf"|enrolling|enrolled|comprising|of|in|totall?ing) (?:a total of |data (?:on|from) |over |more than )?"
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b"
    rf"|\b(?:of|among) (?:the|all|these) {_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})"
    rf" (?:included|analy[sz]ed|pooled|enrolled|studied)"
    rf"|{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE}) (?:in|from|of) (?:\d+|\w+)"
    rf" (?:[\w-]+ ){{0,2}}(?:studies|trials|cohorts)\b"
)


#: Two or more cohorts of people ("a discovery and a validation cohort", "two independent cohorts"): with no
#: stated total, which count is "the" sample is ambiguous ("cohort studies" names a design, not a cohort).
_COHORTS = _rx(
    r"\b(?:two|three|four|five|several|multiple|both|separate|independent) (?:[\w-]+ ){0,2}?"
    r"(?:cohorts|populations|samples)\b"
    r"|\b(?:validation|replication|derivation|discovery|second|another|additional|external|independent)"
    r" (?:[\w-]+ )?(?:cohort|population|data ?set)s?\b(?! stud)"
)


#: Numbers that are measurements or dates, not head counts.
_NOT_A_COUNT = _rx(r"^(?:19|20)\d\d$")


def _int(raw: str) -> int | None:
    if _NOT_A_COUNT.match(raw):
        return None
    value = int(re.sub(r"\D", "", raw))
    return value if value >= 2 else None


def _counts(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """(position, count) of every match of a one-number ``pattern``."""
    return [(m.start(), n) for m in pattern.finditer(text) if (n := _int(m.group(1))) is not None]


def _pooled(text: str) -> list[tuple[int, int]]:
    """(position, count) of every pooled count ("10 trials enrolled 70 388 people")."""
    return [(m.start(), n) for m in _POOLED.finditer(text)
            for g in m.groups() if g and (n := _int(g)) is not None]


def sample_size(text: str, pooled: bool = False) -> int | None:
    """How many people the study included, when the abstract states it unambiguously.

    A primary study: the first of "a total of N ...", "N women and M men" or "29 cases ... and 116
    controls" (added), "N patients", "(n = N)"; None when the abstract gives two different totals, or
    studies two cohorts and states no total (each cohort's count is a sample size; showing one of them as
    the study's would mislead).
    ``pooled`` (a meta-analysis or systematic review): only a count of everyone the studies included
    ("10 trials enrolled a total of 70 388 people"), the largest; None rather than one study's count.
    Counts written in words ("Thirty patients") are read as numbers; a count of people screened or invited
    is not the sample, and where the count enrolled differs from the count analysed, none is shown."""
    words, text = text, _in_digits(text)
    totals = _counts(_TOTAL, text) + _counts(_TOTAL_WAS, text)
    if pooled:
        sums = [a + b for m in _TWO_GROUPS.finditer(text)
                if any(0 <= m.start() - at <= 15 for at, _ in totals)  # "a total of N cases and M controls"
                and (a := _int(m.group(1))) is not None and (b := _int(m.group(2))) is not None]
        return max([n for _, n in totals + _pooled(text)] + sums, default=None)
    found: list[tuple[int, int]] = [(at, -n) for at, n in totals]  # (position, -size): first, then largest
    for m in (*_TWO_GROUPS.finditer(text), *_WITH_CONTROLS.finditer(text)):
        a, b = _int(m.group(1)), _int(m.group(2))
        if a is not None and b is not None:
            # "a total of 3437 cases and 3437 controls": the sum belongs where the total starts
            start = next((t for t, _ in found if 0 <= m.start() - t <= 15), m.start())
            found.append((start, -(a + b)))
    for m in _TWO_N.finditer(text):
        a, b = _int(m.group(1)), _int(m.group(2))
        if a is not None and b is not None and not _COUNTS_STUDIES.search(text[: m.start()]):
            found.append((m.start(), -(a + b)))
    found += [(m.start() + 1, -n) for m in _GROUP.finditer(text)
              if (n := _int(m.group(1))) is not None and not _SHARE.match(text, m.end())]
    found += [(at + 1, -n) for at, n in _counts(_WERE_ENROLLED, text)]
    # (a sum or total at the same number wins)
    for m in _N_EQUALS.finditer(text):
        if (n := _int(m.group(1))) is not None and not _COUNTS_STUDIES.search(text[: m.start()]):
            found.append((m.start() + 1, -n))
    by_start: dict[int, int] = {}
    for at, neg in found:
        by_start[at] = min(by_start.get(at, 0), neg)
    if len({by_start[at] for at, _ in totals}) > 1:
        return None  # "a total of 500 were screened ... a total of 320 enrolled": which one?
    screened = [m.span() for m in _SCREENED.finditer(text)]
    found = [(at, neg) for at, neg in found if not any(a - 12 <= at <= b for a, b in screened)]
    if not found or (not totals and _COHORTS.search(words)):
        return None
    start, size = min(found)
    if any(n != -size for _, n in _counts(_ANALYSED, text)):
        return None  # "930 were randomly assigned ... 597 of whom ... are included in this analysis"
    return None if _another_group(text, max(0, start - 1), -size) else -size


#: A count given with its share ("Thirty patients (15%) had KRAS mutations"): a part of the sample.
_SHARE = re.compile(r"\s*\(\d+(?:[.\u00b7]\d+)?\s?%")


#: A count of people screened, assessed, approached or invited: those asked, not those studied ("we screened
#: 135 participants, of whom ... were recruited").
_SCREENED = _rx(
    rf"\b(?:screened|assessed for eligibility|approached|invited|contacted)\s+(?:a total of )?{_NUMBER}"
    rf"|{_NUMBER} (?:[\w-]+ ){{0,3}}(?:were |had been )?"
    rf"(?:screened|assessed for eligibility|approached|invited|contacted)\b"
)


#: A count of people analysed apart from those enrolled ("597 of whom ... are included in this analysis"; not
#: "19,046 weeks of treatment were analyzed").
_ANALYSED = _rx(
    rf"{_NUMBER} (?:of whom|of them|(?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE}))\b[^.;]{{0,80}}?"
    rf"\b(?:(?:are|were) included in (?:this|the|our|the final) analys[ie]s|(?:were|are) analy[sz]ed\b)"
)


_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
          " sixteen seventeen eighteen nineteen").split()


_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


_NUMBER_WORD = "|".join([*_UNITS, *_TENS, "hundred", "thousand"])


#: A number written in words: "Thirty", "Seven hundred seventeen", "two hundred and six", "Sixty-eight".
_WORDS = _rx(rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b")


def _word_value(words: str) -> int:
    """The value of a number written in words ("seven hundred seventeen" is 717)."""
    total = current = 0
    for word in re.split(r"[\s-]+", words.lower()):
        if word in _UNITS:
            current += _UNITS.index(word)
        elif word in _TENS:
            current += 10 * (_TENS.index(word) + 2)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total, current = total + max(current, 1) * 1000, 0
    return total + current


def _in_digits(text: str) -> str:
    """``text`` with numbers written in words given in digits, so that "Thirty patients (21 women ...)"
    counts 30 people, not 21."""
    return _WORDS.sub(lambda m: str(_word_value(m.group(0))), text)


def _another_group(text: str, start: int, size: int) -> bool:
    """Whether the sentence from ``start`` names a second group beside the count ``size`` that the count
    leaves out: "(4992 women, 3406 men)", "27,035 patients with X and 106,531 matched controls",
    "[n = 200] and ... [n = 243]" (the rules add only the simplest forms; the rest is shown as nothing)."""
    end = _SENTENCE_END.search(text, start)
    span = text[start: end.start() if end else len(text)]
    sizes = {n for m in _N_EQUALS.finditer(span) if (n := _int(m.group(1))) is not None}
    if size in sizes and len(sizes) >= 2:
        return True  # one of several groups given as n = (percentages' "(n = 378)" after a count are not)
    m = _SECOND_GROUP.search(span)
    if m is not None and m.start() <= 15:
        a, b = _int(m.group(1)), _int(m.group(2))
        return a is not None and b is not None and size != a + b
    return _parallel(text, start, size)


_PERIOD_END = re.compile(r"\.(?:\s|$)")


#: Words before a count that make it a part or the source of the sample, not a second group ("12 of 20
#: patients", "selected from over 22,000 men").
_PART_OR_SOURCE = _rx(
    r"\b(?:of|from|among|within)(?: the| all| these| those)?(?: over| more than| about| nearly| almost"
    r"| approximately| some)?\s*$"
)


def _parallel(text: str, start: int, size: int) -> bool:
    """Whether the sentence from ``start`` lists the same kind of people again with another count, as
    parallel groups ("5082 cases in 2003; 5379 cases in 2004; ..."): none of them is the study's sample
    ("12 of 20 patients", a part of the count, is not another group)."""
    end = _PERIOD_END.search(text, start)
    groups = list(_GROUP.finditer(text, start, end.start() if end else len(text)))
    if not groups:
        return False
    noun = groups[0].group(0).split()[-1].lower()
    return any(m.group(0).split()[-1].lower() == noun and _int(m.group(1)) not in (None, size)
               and not _PART_OR_SOURCE.search(text, max(0, m.start() - 30), m.start()) for m in groups[1:])
