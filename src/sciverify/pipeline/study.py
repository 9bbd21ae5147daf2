"""Study facts from an abstract: design, species or system, sample size; year and journal from the corpus.

A fact-checker weighs a mouse study differently from a randomized trial in 5,000 people, so every shown
paper carries what its abstract says about the study. The tagger is a few ordered keyword rules, not a
model: a person can read why a paper got its badge, and it costs microseconds. Its accuracy per field,
measured on abstracts labelled by hand (``tests/fixtures/study_facts_labels.jsonl``), is in
docs/evidence.md. Year and journal come only from the corpus record (CORD-19 and PubMed carry them;
the SciFact corpus does not).

Titles that are not titles ("Original Article", "Summary", a journal header) are replaced, for display,
by the abstract's first sentence (:func:`display_title`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sciverify.data.records import PaperMeta, StudyFacts

__all__ = [
    "DESIGNS",
    "SYSTEMS",
    "display_title",
    "is_real_title",
    "sample_size",
    "study_badges",
    "study_facts",
    "study_system",
    "tag_design",
]

#: Every design the tagger gives, most specific first (the order in which the rules are tried).
DESIGNS = (
    "meta-analysis",
    "systematic review",
    "review",
    "randomized trial",
    "case report",
    "case-control",
    "cohort",
    "cross-sectional",
    "animal study",
    "in vitro",
    "other",
)
#: Species or system studied.
SYSTEMS = ("human", "animal", "cells", "computational", "other")

_CLINICAL = {"meta-analysis", "systematic review", "randomized trial", "case report", "case-control",
             "cohort", "cross-sectional"}


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: (design, pattern) tried in order on title + abstract; the first that matches decides.
_DESIGN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("meta-analysis", _rx(r"meta-?\s?analy[sz]|pooled analysis of \d+ (?:studies|trials)")),
    ("systematic review", _rx(
        r"systematic(?:ally)? (?:literature )?(?:review|search)|cochrane|\bprisma\b"
        r"|\b(?:medline|embase|web of science|psycinfo)\b"
    )),
    ("review", _rx(
        r"\b(?:this|our|the present|in this) (?:review|opinion|perspective|essay|minireview|primer)\b"
        r"|\bwe review\b|\breviews? (?:the|recent|current) (?:literature|advances|evidence|progress)"
        r"|papers were (?:located|identified|retrieved)|narrative review|literature review"
    )),
    ("randomized trial", _rx(
        r"randomi[sz]ed|randomly (?:assigned|allocated)|randomi[sz]ation|placebo-controlled|double-blind"
        r"|\bwere assigned to\b"
    )),
    ("case report", _rx(
        r"case report(?! form)|we (?:report|describe|present) (?:a|an|the|two|three) (?:case|patient|unusual)"
        r"|\b(?:a|an) \d{1,3}-year-old (?:man|woman|boy|girl|male|female|patient|child)"
    )),
    ("case-control", _rx(r"case-?\s?control|\bcases and \d[\d,]* (?:\w+ ){0,4}controls")),
    ("cohort", _rx(
        r"\bcohort|prospective(?:ly)? (?:study|studies|followed|collected)|retrospective(?:ly)?"
        r"|followed(?: up)? for|were followed|follow-up|longitudinal"
    )),
    ("cross-sectional", _rx(
        r"cross-?\s?sectional|\bsurvey(?:ed)?\b|questionnaire|\bprevalence\b|population-based"
    )),
)

_ANIMAL = _rx(
    r"\b(?:mice|mouse|murine|rats?|rabbits?|pigs?|piglets?|boars?|sheep|dogs?|canine|monkeys?|macaques?"
    r"|marmosets?|primates?|zebrafish|drosophila|flies|c\. elegans|nematodes?|chicks?|chickens?|hamsters?"
    r"|guinea pigs?|cattle|cows?|bovine|birds?|mosquito(?:es)?|xenopus|frogs?|ferrets?|animals?)\b"
)
#: What an experiment in a living animal says about itself.
_IN_VIVO = _rx(
    r"\bin vivo\b|knock-?out mice|-/- mice|deficient mice|transgenic|mouse model|mice (?:were|with|lacking)"
    r"|\bparabio|\bwild-type (?:mice|littermates)|\b(?:mice|rats) (?:fed|treated|given|injected)"
)
_CELLS = _rx(
    r"\bcells?\b|cell lines?|\bin vitro\b|cultured|culture|fibroblasts|keratinocytes|macrophages|neurons"
    r"|chondrocytes|astroglia|hela\b|organoids?"
)
_MOLECULAR = _rx(
    r"\bprotein|\benzyme|\bdna\b|\brna\b|nucleosome|peptide|\bkinase|complex(?:es)?\b|spectrometr"
)
_HUMAN = _rx(
    r"\b(?:patients?|participants?|subjects|volunteers|adults|children|women|men|infants|adolescents"
    r"|individuals|respondents|people|persons|humans?|physicians|smokers|pregnan\w+|population|cases"
    r"|(?:\d+-)?y(?:ea)?r?s?-olds?|drinkers|nurses|students|veterans|twins|births?)\b"
)
_COMPUTATIONAL = _rx(r"mathematical|\bin silico\b|simulations?\b|numerical|computational model|agent-based")
#: People taking part in a study (not "human cells").
_PARTICIPANTS = _rx(
    r"\b(?:patients|participants|subjects|volunteers|adults|children|women|men|respondents|individuals"
    r"|adolescents|infants)\b"
)

_PEOPLE = (
    r"patients|participants|subjects|volunteers|adults|children|women|men|infants|adolescents|individuals"
    r"|respondents|people|persons|cases|controls|mothers|pregnancies|smokers|physicians|students|nurses"
    r"|veterans|twins|newborns|neonates|girls|boys|residents|users|workers|samples"
)
#: Words that make "20 years for children" a duration, not a head count.
_NOT_PEOPLE = r"(?!(?:years?|months?|weeks?|days?|hours?|minutes?|times|mg|kg|g|ml|cm|mm|percent|of|per)\b)"
_NUMBER = r"(\d{1,3}(?:,\d{3})+|\d+)"
#: "2702 women and 1398 men", "1,376 cases and 1,376 matched controls": the two groups add up.
_TWO_GROUPS = _rx(
    rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b(?: \((?:[^()]|\([^()]*\))*\))? and {_NUMBER} "
    rf"(?:{_NOT_PEOPLE}[\w-]+ ){{0,5}}(?:{_PEOPLE})\b"
)
_TOTAL = _rx(rf"(?:a total of|in total,?|overall,?) {_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,3}}(?:{_PEOPLE})\b")
_TOTAL_WAS = _rx(rf"total number of (?:{_PEOPLE}) (?:was|were|of) {_NUMBER}")
#: "(n = 10)" after "studies", "trials" or "reviews" counts studies, not people.
_COUNTS_STUDIES = _rx(r"(?:studies|trials|reviews|analyses|articles|papers)\b[^.;]{0,25}$")
_GROUP = _rx(rf"{_NUMBER} (?:{_NOT_PEOPLE}[\w-]+ ){{0,2}}(?:{_PEOPLE})\b")
_N_EQUALS = _rx(rf"\b[nN]\s?=\s?{_NUMBER}")
#: Numbers that are measurements or dates, not head counts.
_NOT_A_COUNT = _rx(r"^(?:19|20)\d\d$")

#: Headings and page furniture that PDF extraction sometimes leaves where the title should be.
_NOT_TITLES = frozenset({
    "", "summary", "abstract", "article", "original article", "original articles", "review article",
    "research article", "research letter", "research letters", "letter", "letters", "editorial",
    "table of contents", "contents", "corresponding author", "corresponding author:", "downloaded from",
    "methods and results", "introduction", "background", "results", "conclusions", "brief report",
    "short communication", "commentary", "correspondence", "in", "full text", "untitled", "n/a",
})
#: A structured abstract's first heading ("BACKGROUND", "UNLABELLED", "Objective:"), not part of a title.
_HEADING = re.compile(
    r"^(?:(?:ABSTRACT|BACKGROUND|OBJECTIVES?|CONTEXT|PURPOSE|INTRODUCTION|AIMS?|UNLABELLED|IMPORTANCE"
    r"|RATIONALE|MOTIVATION|SUMMARY|STUDY OBJECTIVES?|SETTING|QUESTION)(?: AND [A-Z]+)?\s*:?\s+"
    r"|(?:Abstract|Background|Objectives?|Introduction|Aims?|Purpose|Context|Summary)\s*:\s+)"
)


def tag_design(text: str, title: str = "") -> str:
    """The study design: the first rule in :data:`DESIGNS` order that the title matches, else the text
    (a title names its own design; an abstract also names the designs it cites); then an animal
    experiment, a cell or molecular experiment, or "other"."""
    for where in (title, text):
        for design, pattern in _DESIGN_RULES:
            if where and pattern.search(where):
                return design
    if _COMPUTATIONAL.search(text) and not _PARTICIPANTS.search(text):
        return "other"  # a model or a simulation
    animals, cells = len(_ANIMAL.findall(text)), len(_CELLS.findall(text))
    if animals and (_IN_VIVO.search(text) or animals >= 3) and animals >= cells:
        return "animal study"
    if len(_PARTICIPANTS.findall(text)) >= 2:
        return "other"  # people studied, but no design named
    if cells or _MOLECULAR.search(text):
        return "in vitro"
    return "other"


def study_system(text: str, design: str) -> str:
    """Human, animal, cells, computational or other: what the study was done in."""
    if design in _CLINICAL:
        return "human"
    if design == "animal study":
        return "animal"
    humans = len(_HUMAN.findall(text))
    if design == "review":
        return "human" if _PARTICIPANTS.search(text) else "other"
    if _COMPUTATIONAL.search(text) and not _PARTICIPANTS.search(text):
        return "computational"
    if design == "in vitro":
        return "cells" if _CELLS.search(text) else "other"
    animals = len(_ANIMAL.findall(text))
    if humans and humans >= animals:
        return "human"
    if animals:
        return "animal"
    if _CELLS.search(text):
        return "cells"
    return "other"


def _int(raw: str) -> int | None:
    if _NOT_A_COUNT.match(raw):
        return None
    value = int(raw.replace(",", ""))
    return value if value >= 2 else None


def sample_size(text: str) -> int | None:
    """How many people the study included, when the abstract states it: the first of "a total of N
    ...", "N women and M men" (added), "N patients", "(n = N)"."""
    found: list[tuple[int, int]] = []  # (position, -size): the first wins, then the largest there
    for pattern in (_TOTAL, _TOTAL_WAS):
        for m in pattern.finditer(text):
            if (n := _int(m.group(1))) is not None:
                found.append((m.start(), -n))
    for m in _TWO_GROUPS.finditer(text):
        a, b = _int(m.group(1)), _int(m.group(2))
        if a is not None and b is not None:
            # "a total of 3437 cases and 3437 controls": the sum belongs where the total starts
            start = next((t for t, _ in found if 0 <= m.start() - t <= 15), m.start())
            found.append((start, -(a + b)))
    for m in _GROUP.finditer(text):
        if (n := _int(m.group(1))) is not None:
            found.append((m.start() + 1, -n))  # a sum or total starting at the same number wins
    for m in _N_EQUALS.finditer(text):
        if (n := _int(m.group(1))) is not None and not _COUNTS_STUDIES.search(text[: m.start()]):
            found.append((m.start(), -n))
    return -min(found)[1] if found else None


def study_facts(title: str, sentences: Sequence[str], meta: PaperMeta | None = None) -> StudyFacts:
    """The study facts of one abstract (year and journal from ``meta`` when the corpus has them)."""
    text = " ".join((title, *sentences))
    design = tag_design(text, title)
    system = study_system(text, design)
    n = sample_size(text) if system == "human" else None
    return StudyFacts(
        design=design,
        system=system,
        sample_size=n,
        year=meta.year if meta is not None else None,
        journal=meta.journal if meta is not None else "",
    )


def is_real_title(title: str) -> bool:
    """False for headings, page furniture, journal banners and sentence fragments left as titles."""
    text = " ".join(title.split()).strip()
    if text.lower().rstrip(".:") in _NOT_TITLES or text.lower() in _NOT_TITLES:
        return False
    words = text.split()
    if len(words) <= 6 and text.isupper():
        return False  # "THE EMBO JOURNAL", "ACTA PSYCHIATRICA"
    first = words[0]
    if first.isalpha() and first.islower() and first.isascii() and len(first) > 1:
        return False  # "in polyploid species": the tail of a title cut by extraction
    return True


def display_title(title: str, sentences: Sequence[str], limit: int = 160) -> str:
    """``title``, or the abstract's first sentence (without a leading "Background:") when the title is
    not one; clipped to ``limit`` characters."""
    if is_real_title(title) or not sentences:
        return title
    first = _HEADING.sub("", " ".join(sentences[0].split()))
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "\u2026"


_SYSTEM_WORDS = {"human": "in people", "animal": "in animals", "cells": "in cells or molecules",
                 "computational": "computer model"}


def study_badges(study: StudyFacts | None) -> list[str]:
    """Short labels for a paper's study, as the page and the CLI show them: design, system, sample size,
    year, journal (what is known; "other" is left out)."""
    if study is None:
        return []
    out = [] if study.design == "other" else [study.design]
    if study.system in _SYSTEM_WORDS:
        out.append(_SYSTEM_WORDS[study.system])
    if study.sample_size is not None:
        out.append(f"{study.sample_size:,} people")
    if study.year is not None:
        out.append(str(study.year))
    if study.journal:
        out.append(study.journal)
    return out
