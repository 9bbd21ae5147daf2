"""Study facts from an abstract: design, species or system, sample size; year and journal from the corpus.

A fact-checker weighs a mouse study differently from a randomized trial in 5,000 people, so every shown
paper carries what its abstract says about the study. The tagger is a few ordered keyword rules, not a
model: a person can read why a paper got its badge, and it costs microseconds. Where its cues conflict it
gives no fact ("other", no sample size): a missing badge misleads less than a wrong one. Its accuracy per
field, measured on 60 abstracts drawn at random and labelled by hand before the rules ran on them
(``tests/fixtures/study_facts_unseen60.jsonl``), is in docs/evidence.md. Year and journal come only from
the corpus record (CORD-19 and PubMed carry them; the SciFact corpus does not).

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
    "guideline",
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

_CLINICAL = {"guideline", "meta-analysis", "systematic review", "randomized trial", "case report",
             "case-control", "cohort", "cross-sectional"}


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: (design, pattern) tried in order on title + abstract; the first that matches decides.
_DESIGN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("guideline", _rx(
        r"recommendation statement|consensus statement|position (?:statement|stand)"
        r"|\b(?:this|these|the present) (?:guidelines?|recommendations?)\b|task force recommends"
        r"|\buspstf recommends"
    )),
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

#: Words of an observational study: beside "randomized" elsewhere in the text, the design is unclear.
_OBSERVATIONAL = _rx(r"\bcohort|\bobservational\b|case-?\s?control|cross-?\s?sectional")
#: A title that names a guideline (only titles: an abstract also cites the guidelines its study followed).
_GUIDELINE_TITLE = _rx(
    r"recommendation statement|consensus statement|position (?:statement|stand|paper)|practice guideline"
    r"|clinical (?:practice )?guideline|guidelines? (?:for|on) the (?:diagnosis|management|treatment"
    r"|prevention|screening|care)|\bguidance on\b|\brecommendations (?:for|on)\b"
)
#: An abstract that reports its own experiment or observation (a review of others' work does not).
_OWN_WORK = _rx(
    r"\bwe (?:\w+ly )?(?:show|showed|shown|found|find|demonstrate|demonstrated|identif\w+|report|observed"
    r"|used|use|analy[sz]ed|examined|investigated|tested|measured|generated|performed|describe|determined"
    r"|established|developed|compared|assessed|evaluated|characteri[sz]ed|studied|provide|reveal\w*|present"
    r"|isolated|cloned|obtained|detected|designed|treated|conducted|sought|asked|hypothesi[sz]ed|addressed)\b"
    r"|\bhere,? we\b|\bin (?:this|the present|our) (?:study|work|paper|report)"
    r"|\bour (?:results|data|findings)|\bthis study\b|\bwere (?:treated|incubated|transfected|cultured"
    r"|stimulated|exposed|measured|analy[sz]ed|examined|assessed|randomi[sz]ed|enrolled|recruited|included"
    r"|studied)\b|\bresults:|\bmethods:"
    r"|\bresults (?:show|showed|indicate|suggest|revealed)|\bthe present study\b|\bwas undertaken\b"
)
#: Measurements an experiment reports (a review rarely gives them).
_MEASURED = _rx(
    r"\d\s?(?:bp|nt|kda|nm|[μµu]m|mm|mg|[μµu]g|ng|ml|[μµu]l|°|%|h|hrs?|min|fold|[μµun]M)(?!\w)|\bassays?\b"
    r"|\b(?:was|were) (?:detected|observed|found|identified|measured|quantified)"
)
#: What a review says of itself or of the field it surveys.
_REVIEWISH = _rx(
    r"\b(?:recent|emerging|growing|accumulating|persuasive) (?:\w+ )?(?:studies|evidence|findings|advances"
    r"|work|data|concepts|insights)|\bwe (?:discuss|review|summari[sz]e|highlight|propose|consider)\b"
    r"|\b(?:is|are) discussed"
    r"|\b(?:this|the present) (?:article|chapter)\b|\bour (?:current )?understanding\b"
)
_ANIMAL = _rx(
    r"\b(?:mice|mouse|murine|rats?|rabbits?|pigs?|piglets?|boars?|sheep|dogs?|canine|monkeys?|macaques?"
    r"|marmosets?|primates?|zebrafish|drosophila|flies|c\. elegans|nematodes?|chicks?|chickens?|hamsters?"
    r"|guinea pigs?|cattle|cows?|bovine|birds?|mosquito(?:es)?|xenopus|frogs?|ferrets?|animals?)\b"
)
#: What an experiment in a living animal says about itself.
_IN_VIVO = _rx(
    r"\bin vivo\b|knock-?out (?:mice|rats)|-/- mice|transgenic|(?:mouse|rat|animal) models?"
    r"|(?:deficient|null|mutant|transgenic|aged|old|young) (?:mice|rats)"
    r"|\b(?:mice|rats) (?:were|with|lacking|that|develop\w*|fed|treated|given|injected|received|exposed"
    r"|infected|bearing)|\bparabio|\bwild-type (?:mice|littermates)"
    r"|\b(?:in|into) (?:mice|rats|monkeys|macaques|zebrafish|pigs|dogs)\b|xenograft"
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


_IN_VITRO = _rx(r"\bin vitro\b")
_IN_VITRO_ONLY = _rx(r"\bin vivo\b")


def _in_vivo(text: str) -> bool:
    """An experiment in a living animal: a plain "in vivo" counts only where the text says no "in vitro"
    ("mimics events that occur in vivo" in a cell paper)."""
    found = [m.group(0).lower() for m in _IN_VIVO.finditer(text)]
    return any(f != "in vivo" for f in found) or (bool(found) and not _IN_VITRO.search(text))


def _own_work(text: str) -> bool:
    """The abstract reports work of its own: it says so, or it reports measurements and reads not like a
    review."""
    return bool(_OWN_WORK.search(text)) or (bool(_MEASURED.search(text)) and not _REVIEWISH.search(text))


def tag_design(text: str, title: str = "") -> str:
    """The study design: a guideline when the title names one; else the first rule in :data:`DESIGNS`
    order that the title matches, else the text (a title names its own design; an abstract also names the
    designs it cites); then an animal experiment, people, or a cell or molecular experiment, in that order.

    "other" means no design badge: none is named, or the cues conflict (a trial's randomisation beside an
    observational cohort; an abstract about cells that reports no experiment of its own, as a review
    does), since a missing badge misleads less than a wrong one."""
    if title and _GUIDELINE_TITLE.search(title):
        return "guideline"
    for where in (title, text):
        for design, pattern in _DESIGN_RULES:
            if where and pattern.search(where):
                if where is text and design == "randomized trial" and _OBSERVATIONAL.search(text):
                    return "other"
                return design
    if _COMPUTATIONAL.search(text) and not _PARTICIPANTS.search(text):
        return "other"  # a model or a simulation
    animals, cells = len(_ANIMAL.findall(text)), len(_CELLS.findall(text))
    if _IN_VITRO.search(title) and not _IN_VITRO_ONLY.search(title):
        pass  # the title names its system: cells, even where the text cites the animal work before
    elif animals and (_in_vivo(text) or (animals >= 3 and animals >= cells)):
        return "animal study"  # before cells: a mouse experiment reports on cells too
    if len(_PARTICIPANTS.findall(text)) >= 2:
        return "other"  # people studied, but no design named
    if not _own_work(text) or (animals >= 3 and not _IN_VITRO.search(title)):
        return "other"  # no experiment of its own (a review), or cells of animals in or out of the body
    if cells or _MOLECULAR.search(text):
        return "in vitro"
    return "other"


def study_system(text: str, design: str) -> str:
    """Human, animal, cells, computational or other: what the study was done in ("other" where the
    abstract reports no work of its own and names no participants)."""
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
    participants = len(_PARTICIPANTS.findall(text))
    if not _own_work(text) and participants < 2:
        return "other"
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
    controls" (added), "N patients", "(n = N)"; None when the abstract gives two different totals.
    ``pooled`` (a meta-analysis or systematic review): only a count of everyone the studies included
    ("10 trials enrolled a total of 70 388 people"), the largest; None rather than one study's count."""
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
    found += [(at + 1, -n) for at, n in _counts(_GROUP, text)]  # a sum or total at the same number wins
    for m in _N_EQUALS.finditer(text):
        if (n := _int(m.group(1))) is not None and not _COUNTS_STUDIES.search(text[: m.start()]):
            found.append((m.start() + 1, -n))
    by_start: dict[int, int] = {}
    for at, neg in found:
        by_start[at] = min(by_start.get(at, 0), neg)
    if len({by_start[at] for at, _ in totals}) > 1:
        return None  # "a total of 500 were screened ... a total of 320 enrolled": which one?
    if not found:
        return None
    start, size = min(found)
    return None if _another_group(text, max(0, start - 1), -size) else -size


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
    if m is None or m.start() > 15:
        return False
    a, b = _int(m.group(1)), _int(m.group(2))
    return a is not None and b is not None and size != a + b


_NO_SAMPLE = {"review", "guideline", "case report"}
_POOLED_DESIGNS = {"meta-analysis", "systematic review"}


def study_facts(title: str, sentences: Sequence[str], meta: PaperMeta | None = None) -> StudyFacts:
    """The study facts of one abstract (year and journal from ``meta`` when the corpus has them)."""
    text = " ".join((title, *sentences))
    design = tag_design(text, title)
    system = study_system(text, design)
    counted = system == "human" and design not in _NO_SAMPLE
    n = sample_size(text, pooled=design in _POOLED_DESIGNS) if counted else None
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
