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
from sciverify.pipeline.study_counts import _GROUP, _rx, sample_size

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

#: Clinical designs named by words that also have a laboratory or field sense ("cohorts" of cells, the
#: "prevalence" of ticks): counted only beside people.
_WORDS_OF_LABS = {"cohort", "cross-sectional"}
_CLINICAL = {"guideline", "meta-analysis", "systematic review", "randomized trial", "case report",
             "case-control", "cohort", "cross-sectional"}


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
        r"|:\s*(?:a|an)\s+(?:[\w-]+\s+)?(?:review|overview)\b"
        r"|\bhere,? we (?:discuss|review|summari[sz]e|highlight|outline)\b|\b(?:this|the present) (?:\w+ )?"
        r"(?:review|overview)\b|\b(?:article|chapter|paper) (?:reviews|summari[sz]es)\b|\bas we review\b"
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
        r"|followed(?: up)? for|were followed|longitudinal"
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
    r"|\b(?:clinical|public health|science|scientific|health) advisory\b"
)
#: An abstract that reports its own experiment or observation (a review of others' work does not).
_OWN_WORK = _rx(
    r"\bwe (?:(?:\w+ly|therefore|also|then|further|thus|next|first|now|have|had) ){0,2}"
    r"(?:show|showed|shown|found|find|demonstrate|demonstrated|identif\w+|report|observed"
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
    r"|guinea pigs?|cattle|cows?|bovine|birds?|mosquito(?:es)?|xenopus|frogs?|ferrets?|animals?|gerbils?"
    r"|ticks|larvae|tadpoles|worms|insects|cats|feline|horses|equine|goats|bats|caenorhabditis)\b"
)
#: What an experiment in a living animal says about itself.
_IN_VIVO = _rx(
    r"\bin vivo\b|knock-?out (?:mice|rats)|-/- mice|transgenic|(?:mouse|rat|animal) models?"
    r"|(?:deficient|null|mutant|transgenic|aged|old|young) (?:mice|rats)"
    r"|\b(?:mice|rats) (?:were|with|lacking|that|develop\w*|fed|treated|given|injected|received|exposed"
    r"|infected|bearing)|\bparabio|\bwild-type (?:mice|littermates)"
    r"|\b(?:in|into) (?:mice|rats|monkeys|macaques|zebrafish|pigs|dogs|gerbils|hamsters|rabbits)\b|xenograft"
    r"|\b(?:an(?:a)?esthetized|conscious|awake|freely moving|living) (?:[\w-]+ )?"
    r"(?:mice|rats|rabbits|dogs|pigs|cats|sheep|monkeys|animals)\b"
)
_CELLS = _rx(
    r"(?<!solar )(?<!fuel )\bcells?\b|cell lines?|\bin vitro\b|cultured|culture|fibroblasts|keratinocytes"
    r"|macrophages|neurons|chondrocytes|astroglia|hela\b|organoids?"
)
_MOLECULAR = _rx(
    r"\bprotein|\benzyme|\bdna\b|\brna\b|nucleosome|peptide|\bkinase|complex(?:es)?\b|spectrometr"
    r"|crystal structures?|\bstructures? of\b|cryo-?(?:em|electron)|\bresidues?\b"
)
#: Microbes: work on them alone is not work in people, animals or their cells ("in E. coli").
_MICROBE = _rx(
    r"\b(?:bacteri(?:a|um|al)|e\. ?coli|escherichia|yeasts?|saccharomyces|schizosaccharomyces|s\. pombe"
    r"|s\. cerevisiae|myxococcus|m\. xanthus|helicobacter|h\. pylori|mycobacteri\w*|salmonella|listeria"
    r"|staphylococc\w*|streptococc\w*|pseudomonas|bacillus|microb\w*|fung(?:i|us|al)|archaea|prokaryot\w*"
    r"|plasmids?|vir(?:us|uses|al|ions?)|phages?|strains)\b"
)
#: Cells of people or animals (a bacterium is a cell too, so "cells" alone does not say which).
_HOST_CELLS = _rx(
    r"cell lines?|\bhela\b|fibroblasts|keratinocytes|macrophages|neurons|chondrocytes|astroglia|organoids?"
    r"|lymphocytes|monocytes|neutrophils|\bt cells|\bb cells|dendritic cells|hepatocytes|stem cells"
    r"|(?:human|mouse|murine|mammalian|host|epithelial|endothelial|tumou?r|cancer|primary) cells"
)
_HUMAN = _rx(
    r"\b(?:patients?|participants?|subjects|volunteers|adults|children|women|men|infants|adolescents"
    r"|individuals|respondents|people|persons|humans|human (?:subjects|volunteers|participants|beings)"
    r"|physicians|smokers|pregnan\w+|population|cases"
    r"|(?:\d+-)?y(?:ea)?r?s?-olds?|drinkers|nurses|students|veterans|twins|births?)\b"
)
#: Work that is an animal experiment though it names no animal, or names it in other words ("In vivo, these
#: antibodies slowed the growth of xenografts", "providing in vivo evidence", "ex vivo and in vivo").
_LIVING_UNNAMED = _rx(
    r"xenograft|\bin vivo evidence\b|(?:^|[.;]\s)in vivo,|\bex vivo and in vivo\b|\bin vivo and ex vivo\b"
    r"|\b(?:knockout|knock-out|deficient|transgenic|mutant|engineered|taste-blind|blind) animals\b"
    r"|\b(?:mice|rats|animals) engineered\b"
)
#: Any word of a living animal or of work in one: beside cell work that the rules do not read as an animal
#: experiment, the design is unclear (cells of an animal, or the animal itself?), so no badge is shown.
_LIVING_HINT = _rx(
    r"\bin vivo\b|\bex vivo\b|xenograft|knock-?outs?\b|transgenic"
    r"|\b(?:mice|rats|animals|worms|flies|larva[el]?"
    r"|zebrafish|tadpoles|c\. elegans|caenorhabditis|drosophila|nematodes|embryos)\b"
)
#: Material of people studied in the laboratory (tissue, biopsies, the genomes of patients): a study of people
#: (design other), not of cells ("p16 expression in 35 endometrial polyps and 33 cases", "biopsies").
_HUMAN_MATERIAL = _rx(
    r"\bspecimens?\b|\bbiops(?:y|ies)\b|\b(?:tissue|tumou?r|blood|serum|plasma|sputum|urine|saliva|stool)"
    r" samples\b|\bimmunohistochemi|\bsurgically resected\b|\bautops(?:y|ies)\b|\bpost-?mortem\b|\btwins\b"
    r"|\bhuman (?:skeletal muscle|tissues?|brains?|tumou?rs|subjects|volunteers)\b|\bpatients'"
)
#: Plants (work on them alone is neither in people, animals nor their cells).
_PLANT = _rx(r"\b(?:plants|arabidopsis|seedlings?|agrobacterium)\b")
#: An animal experiment in the laboratory: a laboratory species, or something done to the animals. Without
#: one, work on animals is a field survey or a population study (design other: "mosquitoes were sampled
#: inside houses", "40 honey bee genomes").
_LAB_ANIMAL = _rx(
    r"\b(?:mice|mouse|murine|rats?|rabbits?|zebrafish|drosophila|c\. elegans|caenorhabditis|xenopus"
    r"|hamsters?|gerbils?|guinea pigs?|macaques?|marmosets?|piglets?|ferrets?|nematodes?)\b"
    r"|\bin vivo\b|xenograft|knock-?out|transgenic"
    r"|\b(?:were|was) (?:treated|injected|fed|given|infected|exposed|immuni[sz]ed|anaesthetized|anesthetized"
    r"|implanted|transplanted)\b|\blaboratory\b"
)
#: Field or population work on animals or their genomes.
_FIELD = _rx(
    r"\b(?:field|villages?|surveillance|sampled|collected|trapped|wild(?!-type)|populations? genomics"
    r"|natural populations|naturally infected|colon(?:y|ies)|species)\b"
)
_MODELS = r"mathematical|monte carlo|\bin silico\b|simulations?\b|numerical|computational model|agent-based"
_COMPUTATIONAL = _rx(
    _MODELS + r"|\bsoftware\b|\b(?:analysis|bioinformatics?|software|web) tools?\b"
)
#: Words of a model or a simulation (software alone may serve a study of people).
_MODELLING = _rx(_MODELS)
#: People taking part in a study (not "human cells").
_PARTICIPANTS = _rx(
    r"\b(?:patients|participants|subjects|volunteers|adults|children|women|men|respondents|individuals"
    r"|adolescents|infants)\b"
)


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


#: Where a sentence ends, for splitting an abstract given as one string.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")
#: A structured abstract's heading of the work itself (not its background).
_WORK_HEADING = re.compile(
    r"^(?:OBJECTIVES?|AIMS?|PURPOSE|DESIGN|METHODS?|MATERIALS?|SETTINGS?|PARTICIPANTS|SUBJECTS|PATIENTS"
    r"|INTERVENTIONS?|MEASUREMENTS|MAIN OUTCOME|(?:MAIN )?RESULTS|FINDINGS|METHODOLOGY|EXPERIMENTAL"
    r"|SEARCH|(?:STUDY )?SELECTION|DATA (?:SOURCES|COLLECTION|EXTRACTION|SYNTHESIS)|REVIEW METHODS)\b"
    r"|^(?:Objectives?|Aims?|Purpose|Design|Methods?|Participants|Subjects|Patients|Results|Findings)\s*:"
)
#: A sentence that states the aim of the work ("To assess ..., 20 patients were examined").
_AIM = _rx(
    r"^to (?:assess|test|examine|investigate|determine|evaluate|compare|estimate|describe|identify|explore)\b"
    r"|\b(?:we|the authors) (?:aimed|sought|set out|hypothesi[sz]ed|investigated|asked)\b"
    r"|\b(?:aim|purpose|objective) of (?:this|the present|our)\b|\bwas designed to\b"
)
#: First person, or what was done to the people or samples studied ("A total of 106 patients ... were
#: followed up").
_DONE = _rx(
    r"\bwe\b|\bwere (?:followed|included|recruited|selected|identified|interviewed|sampled|screened"
    r"|genotyped|sequenced|collected|obtained|operated|given|fed|injected|infected|grown|sorted|searched)\b"
    r"|\b(?:a total of|in total)\b|\bcollected (?:\w+ )?(?:data|samples|information) (?:from|on)\b"
)
#: A sentence that cites other work ("Recent studies have shown", "A meta-analysis found that").
_CITING = _rx(
    r"\b(?:previous(?:ly)?|prior|recent(?:ly)?|earlier|published|existing|several|many|numerous|other)"
    r" (?:[\w-]+ ){0,3}?(?:stud(?:y|ies)|trials?|meta-?\s?analy[sz]es|meta-?\s?analysis|reviews?|reports?"
    r"|work|data|evidence|findings)\b"
    r"|\b(?:have|has) (?:been )?(?:shown|reported|found|suggested|demonstrated|established|indicated)\b"
    r"|\bet al\b"
    r"|\b(?:a|an|one|another) (?:[\w-]+ ){0,2}?(?:meta-?\s?analysis|pooled analysis|systematic review"
    r"|(?:randomi[sz]ed )?(?:controlled )?trial|cohort study)\b.*?\b(?:found|showed|reported|suggested"
    r"|concluded|demonstrated|indicated|observed)\b"
)
#: A sentence about the paper's own work (beside a citation it is the paper's, not the cited one's).
_SELF = _rx(
    r"\b(?:we|our|here(?:in)?)\b|\b(?:this|the present|the current) (?:[\w-]+ )?"
    r"(?:study|review|meta-?\s?analysis|analysis|trial|article|paper|report|work|overview|investigation|survey)\b"
)


def _split(sentences: Sequence[str]) -> list[str]:
    """The abstract's sentences (an element holding several sentences is split)."""
    return [part for s in sentences for part in _SENTENCE_SPLIT.split(" ".join(s.split())) if part]


def _is_work(sentence: str) -> bool:
    """Whether a sentence describes the paper's own work: first person, "this study", a methods or results
    heading, a passive report of what was done, or the aim of the work."""
    return bool(_OWN_WORK.search(sentence) or _WORK_HEADING.match(sentence) or _AIM.search(sentence)
                or _DONE.search(sentence))


def work_text(title: str, sentences: Sequence[str]) -> str:
    """The title and the abstract from its first sentence about the paper's own work on: where the work is
    described, so that the system and the counts come from what was done, not from the background that
    precedes it ("Half the world's population is infected with H. pylori. Here we report the structure of
    its urea channel"). The whole text where no sentence says what was done (a review, an essay)."""
    parts = _split(sentences)
    first = next((i for i, s in enumerate(parts) if _is_work(s)), 0)
    return " ".join((title, *parts[first:]))


def _cited(sentence: str) -> bool:
    """A sentence that cites other work and does not speak of the paper's own."""
    return bool(_CITING.search(sentence)) and not _SELF.search(sentence)


_IN_VITRO = _rx(r"\bin vitro\b")
_IN_VITRO_ONLY = _rx(r"\bin vivo\b")


#: Work done both in cells and in living animals ("antitumor responses in vitro and in vivo").
_BOTH_WAYS = _rx(r"\bin vitro and in vivo\b|\bin vivo and in vitro\b|\bboth in vitro and in vivo\b")


def _in_vivo(text: str) -> bool:
    """An experiment in a living animal: a plain "in vivo" counts only where the text says no "in vitro"
    ("mimics events that occur in vivo" in a cell paper)."""
    found = [m.group(0).lower() for m in _IN_VIVO.finditer(text)]
    return any(f != "in vivo" for f in found) or (bool(found) and not _IN_VITRO.search(text))


def _own_work(text: str) -> bool:
    """The abstract reports work of its own: it says so, or it reports measurements and reads not like a
    review."""
    return bool(_OWN_WORK.search(text)) or (bool(_MEASURED.search(text)) and not _REVIEWISH.search(text))


def _named_design(text: str, work: str) -> str | None:
    """The first design of :data:`_DESIGN_RULES` that the text names as its own: a sentence that cites
    other work ("A meta-analysis of 12 trials found ...") does not name the paper's design, and in a text
    that calls itself a review, a meta-analysis or systematic review counts only where the sentence speaks
    of the paper's own work ("we pooled", "MEDLINE ... were searched"). A clinical design needs at least as
    many people as animals in the work described ("mice were randomized" is no trial in people), and a
    cohort or a cross-sectional study needs people named ("cohorts" of stem cells, the "prevalence" of
    ticks)."""
    own = [s for s in _split([text]) if not _cited(s)]
    review = _DESIGN_RULES[3][1]
    says_review = any(review.search(s) for s in own)
    humans, animals = len(_HUMAN.findall(work)), len(_ANIMAL.findall(work))
    for design, pattern in _DESIGN_RULES:
        hits = [s for s in own if pattern.search(s)]
        if says_review and design in ("meta-analysis", "systematic review"):
            hits = [s for s in hits if _SELF.search(s) or _is_work(s)]
        if not hits:
            continue
        if design in _CLINICAL and (animals > humans or (design in _WORDS_OF_LABS and not humans)):
            continue
        if design == "randomized trial" and any(_OBSERVATIONAL.search(s) for s in own):
            return "other"
        if design == "cohort" and _not_a_cohort(own, hits, work):
            return "other"
        return design
    return None


#: A trial that is not randomized ("We conducted a controlled trial ... Women were systematically assigned",
#: "an expansion cohort of the phase 1 study"): its follow-up makes it no cohort study.
_TRIAL = _rx(
    r"\b(?:controlled|clinical|open-label|single-arm|non-?randomi[sz]ed|pilot|uncontrolled|intervention)"
    r" (?:[\w-]+ )?trial\b|\bphase (?:[1-4]|i{1,3}|iv)(?:/[\w]+)?\b[^.;]{0,30}\b(?:study|trial)\b"
    r"|\bexpansion cohort\b|\b(?:were|was) (?:\w+ly )?assigned\b|\bsingle[- ]arm\b"
)
#: A cohort named as where samples came from ("cells from 197 individuals from the 200FG cohort", "we employ a
#: large cohort of >230 patients" in an RNA-seq study): a laboratory study of people's material, not a
#: cohort study.
_SOURCE_COHORT = _rx(r"\b(?:from|employ\w*|us(?:e|ed|ing)) (?:the |a |an )?(?:[\w()>-]+ ){0,4}cohorts?\b")
_LAB_WORDS = _rx(
    r"sequencing|rna-seq|genotyp|genome-wide|\bsnps?\b|cell lines?|mononuclear cells|cytokines?|\bt-cell"
    r"|transcriptom|immunohistochem|\bexpression\b|lncrnas?|micro-?rnas?|\bmrnas?\b|\bin vitro\b"
)


def _not_a_cohort(own: list[str], hits: list[str], work: str) -> bool:
    """Whether what the cohort rule matched is no cohort study: a trial that is not randomized, or a cohort
    that is only the source of samples studied in the laboratory (design "other" for both, as labelled)."""
    if any(_TRIAL.search(s) for s in own):
        return True
    named_only_as_source = all(_SOURCE_COHORT.search(s) for s in hits)
    return named_only_as_source and len(_LAB_WORDS.findall(work)) >= 2


def tag_design(text: str, title: str = "", work: str | None = None) -> str:
    """The study design: a guideline when the title names one; else the first rule in :data:`DESIGNS`
    order that the title matches, else the text, where the text names the design as its own (a title
    names its own design; an abstract also names the designs it cites: :func:`_named_design`); then an
    animal experiment, people, or a cell or molecular experiment, in that order, counted in ``work`` (the
    part of the text about the paper's own work, :func:`work_text`; the whole text where not given).

    "other" means no design badge: none is named, or the cues conflict (a trial's randomisation beside an
    observational cohort; an abstract about cells that reports no experiment of its own, as a review
    does), since a missing badge misleads less than a wrong one."""
    work = text if work is None else work
    if title and _GUIDELINE_TITLE.search(title):
        return "guideline"
    for design, pattern in _DESIGN_RULES:
        if title and pattern.search(title):
            return design
    named = _named_design(text, work)
    if named is not None:
        return named
    if _modelled(work):
        return "other"  # a model or a simulation
    text = _system_text(text, work)
    animals, cells = len(_ANIMAL.findall(text)), len(_CELLS.findall(text))
    in_vitro_title = bool(_IN_VITRO.search(title)) and not _IN_VITRO_ONLY.search(title)
    if in_vitro_title:
        pass  # the title names its system: cells, even where the text cites the animal work before
    elif animals and (_in_vivo(text) or (animals >= 3 and animals >= cells)):
        if _FIELD.search(text) and not _LAB_ANIMAL.search(text):
            return "other"  # animals sampled in the field or their genomes: a survey, not an experiment
        return "animal study"  # before cells: a mouse experiment reports on cells too
    elif _BOTH_WAYS.search(text) and not _PARTICIPANTS.search(text):
        return "animal study"  # "in vitro and in vivo" of a drug or a cell: the in vivo part is in animals
    elif _LIVING_UNNAMED.search(text) and len(_PARTICIPANTS.findall(text)) < 2:
        return "animal study"  # xenografts, "in vivo evidence": an animal named in other words or not at all
    if len(_PARTICIPANTS.findall(text)) >= 2:
        return "other"  # people studied, but no design named
    if not _own_work(text) or (animals >= 3 and not in_vitro_title):
        return "other"  # no experiment of its own (a review), or cells of animals in or out of the body
    if not in_vitro_title and _lab_material(text) is not None:
        return "other"  # tissue of people, a plant, or cells beside a living animal: not plainly in vitro
    if not in_vitro_title and _OVERVIEW.search(text):
        return "other"  # an overview of the field: a review or a primer that does not call itself one
    if cells or _MOLECULAR.search(text) or _MICROBE.search(text):
        return "in vitro"
    return "other"


#: What an overview says of the field it surveys ("Here we describe the current state of the art", "we expand
#: on this view in the context of recent data").
_OVERVIEW = _rx(
    r"\bstate of the art\b|\bexpand on (?:this|these|the) views?\b"
    r"|\bin the context of recent (?:data|findings|studies|work|advances)"
    r"|\bwe (?:describe|discuss|consider|outline|summari[sz]e) (?:the )?(?:current|recent|emerging)\b"
    r"|\bour current (?:knowledge|understanding)\b"
)


def _lab_material(text: str) -> str | None:
    """What makes laboratory work on cells or molecules other than plainly "in vitro": "human" where it is
    material of people (tissue, biopsies, the genomes of patients, a count of people), "plant" for plants,
    "living" where a living animal or "in vivo" is named beside it (the cells of an animal, or the animal
    itself?); None where none is. The design is then shown as nothing, and the system as people, or as
    nothing."""
    if _HUMAN_MATERIAL.search(text) or _GROUP.search(text):
        return "human"
    if _PLANT.search(text) and not _ANIMAL.search(text):
        return "plant"
    if _LIVING_HINT.search(text):
        return "living"
    return None


def _modelled(text: str) -> bool:
    """A model, a simulation or software is the work: named once where no participants are, or named
    again and again ("Twelve mathematical models ... of HIV-infected individuals")."""
    return len(_MODELLING.findall(text)) >= 3 or (bool(_COMPUTATIONAL.search(text))
                                                    and not _PARTICIPANTS.search(text))


def _system_text(text: str, work: str) -> str:
    """Where to read the system: the work described when it names one (people, animals, cells or
    microbes); else the whole text ("Here we show that CDK1 ..." after "in mouse oocytes" in the
    background)."""
    named = any(p.search(work) for p in (_HUMAN, _ANIMAL, _CELLS, _MICROBE))
    return work if named else text


def _microbes_only(text: str) -> bool:
    """Work on microbes with no cells of people or animals named ("cells" of E. coli are not human)."""
    people = [m for m in _PARTICIPANTS.findall(text) if m.lower() != "individuals"]
    return bool(_MICROBE.search(text)) and not _HOST_CELLS.search(text) and not people


def study_system(text: str, design: str, work: str | None = None) -> str:
    """Human, animal, cells, computational or other: what the study was done in, counted in ``work`` (the
    part of the text about the paper's own work, :func:`work_text`), so that people named in the
    background do not make a study of gerbils or of E. coli one "in people" ("other" where the abstract
    reports no work of its own and names no participants, or the work is on microbes, plants or
    molecules alone)."""
    if design in _CLINICAL:
        return "human"
    if design == "animal study":
        return "animal"
    if design == "review":
        return "human" if _PARTICIPANTS.search(text) else "other"
    text = text if work is None else _system_text(text, work)
    humans = len(_HUMAN.findall(text))
    if _modelled(text):
        return "computational"
    if design == "in vitro":
        return "cells" if _CELLS.search(text) and not _microbes_only(text) else "other"
    if _microbes_only(text) and not _ANIMAL.search(text):
        return "other"
    participants = len(_PARTICIPANTS.findall(text))
    if not _own_work(text) and participants < 2:
        return "other"
    animals = len(_ANIMAL.findall(text))
    material = _lab_material(text) if _CELLS.search(text) or _MOLECULAR.search(text) else None
    if participants < 2 and (material == "living" or _OVERVIEW.search(text)):
        return "other"  # cells beside a living animal, or an overview ("patients" in a closing line)
    if humans and humans >= animals:
        return "human"
    if material == "human" and not animals:
        return "human"  # tissue or genomes of people studied in the laboratory
    if material in ("plant", "living"):
        return "other"  # a plant; cells beside a living animal: which of the two was studied is unclear
    if animals:
        return "animal"
    if _CELLS.search(text):
        return "cells"
    return "other"


_NO_SAMPLE = {"review", "guideline", "case report"}
_POOLED_DESIGNS = {"meta-analysis", "systematic review"}


def study_facts(title: str, sentences: Sequence[str], meta: PaperMeta | None = None) -> StudyFacts:
    """The study facts of one abstract (year and journal from ``meta`` when the corpus has them)."""
    text = " ".join((title, *sentences))
    work = work_text(title, sentences)
    design = tag_design(text, title, work)
    system = study_system(text, design, work)
    counted = system == "human" and design not in _NO_SAMPLE and not _material_of_people(design, work)
    pooled = design in _POOLED_DESIGNS
    n = sample_size(text if pooled else work, pooled=pooled) if counted else None
    return StudyFacts(
        design=design,
        system=system,
        sample_size=n,
        year=meta.year if meta is not None else None,
        journal=meta.journal if meta is not None else "",
    )


def _material_of_people(design: str, work: str) -> bool:
    """Work on tissue, biopsies or genomes of people in the laboratory with no design named: its counts are of
    specimens or of several groups ("35 endometrial polyps and 33 cases", "a pair of twins ... 241 patients"),
    so no sample size is shown."""
    return design == "other" and bool(_CELLS.search(work) or _MOLECULAR.search(work)) \
        and bool(_HUMAN_MATERIAL.search(work))


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
