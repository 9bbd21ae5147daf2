"""Study facts from the abstract: the rules on small cases, and their accuracy on abstracts labelled by hand.

``tests/fixtures/study_facts_labels.jsonl`` holds doc ids of 76 SciFact corpus abstracts and the design,
system and sample size read from each abstract by a person; no abstract text. 66 were drawn at random (seed
35, ``"sample": "random"``); 10 more were drawn among abstracts that name a meta-analysis, a systematic
review or a case report (``"targeted"``), designs the random draw missed. The rules were written from these.
``tests/fixtures/study_facts_unseen60.jsonl`` holds 60 more, drawn at random (seed 41, its first line) from
the rest and labelled before the rules ran on them (``"unseen"``); ``study_facts_second60.jsonl`` 60 more
(seed 50, ``"second"``), drawn from the rest again and labelled before the revision for issue 50 ran on
them, then used to revise it; ``study_facts_third60.jsonl`` 60 more (seed 51, ``"third"``), labelled before
that revision ran on them, then used for the second round; ``study_facts_fourth60.jsonl`` 60 more (seed 52,
``"fourth"``), labelled before the second round was written or ran on them: the figures in docs/evidence.md.
The accuracy test needs the SciFact corpus (skipped, with the reason, where it is missing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciverify.data.records import PaperMeta, StudyFacts
from sciverify.pipeline.study import (
    DESIGNS,
    SYSTEMS,
    display_title,
    is_real_title,
    sample_size,
    study_badges,
    study_facts,
)

FIXTURES = Path(__file__).parents[2] / "fixtures"
LABELS = (FIXTURES / "study_facts_labels.jsonl", FIXTURES / "study_facts_unseen60.jsonl",
          FIXTURES / "study_facts_second60.jsonl", FIXTURES / "study_facts_third60.jsonl",
          FIXTURES / "study_facts_fourth60.jsonl")

#: Floors one abstract under the labels matched as measured (docs/evidence.md), with the rules of the second
#: issue 50 revision: fourth (measured once, held out) design 33/60, system 39/60, sample size 58/60 (59/60
#: since a fix after the run: a count analysed must be of people); third
#: design 47/60, system 47/60, sample size 56/60; second 51/60, 52/60, 60/60; unseen
#: 44/60, 39/60, 55/60; random 51/66, 57/66, 64/66; targeted 8/10, 9/10, 10/10.
FLOORS = {
    "fourth": {"design": 32, "system": 38, "sample_size": 58},
    "third": {"design": 46, "system": 46, "sample_size": 55},
    "second": {"design": 50, "system": 51, "sample_size": 59},
    "unseen": {"design": 43, "system": 38, "sample_size": 54},
    "random": {"design": 50, "system": 56, "sample_size": 63},
    "targeted": {"design": 7, "system": 8, "sample_size": 9},
}
#: Ceilings one abstract over the wrong facts shown as measured: a rule that shows more facts must not show
#: more wrong ones (fourth 10, 10, 1; third 2, 3, 0; second 3, 2, 0; unseen 3, 5, 0; random 7, 5, 1;
#: targeted 2, 1, 0).
CEILINGS = {
    "fourth": {"design": 11, "system": 11, "sample_size": 2},
    "third": {"design": 3, "system": 4, "sample_size": 1},
    "second": {"design": 4, "system": 3, "sample_size": 1},
    "unseen": {"design": 4, "system": 6, "sample_size": 1},
    "random": {"design": 8, "system": 6, "sample_size": 2},
    "targeted": {"design": 3, "system": 2, "sample_size": 1},
}
FIELDS = ("design", "system", "sample_size")


@pytest.mark.parametrize(
    ("text", "design", "system"),
    [
        ("A meta-analysis of 12 randomized trials of statins.", "meta-analysis", "human"),
        ("We systematically reviewed MEDLINE and Embase (PRISMA).", "systematic review", "human"),
        ("In this multicenter trial we randomly assigned 626 patients to temsirolimus.", "randomized trial",
         "human"),
        ("We report a case of a 54-year-old woman with a rare rash.", "case report", "human"),
        ("Clinicians completed a case report form for 3368 patients in a cross-sectional study.",
         "cross-sectional", "human"),
        ("A case-control study of 300 cases and 600 matched controls.", "case-control", "human"),
        ("In a prospective cohort of 10,000 nurses followed for 20 years.", "cohort", "human"),
        ("A cross-sectional survey of 529 physicians.", "cross-sectional", "human"),
        ("Knockout mice lacking the receptor were treated in vivo; the mice developed tumours.",
         "animal study", "animal"),
        ("HeLa cells were transfected and the protein localized to the nucleus.", "in vitro", "cells"),
        ("This Review discusses recent advances in autophagy.", "review", "other"),
        ("We present a mathematical model solved by numerical simulation.", "other", "computational"),
    ],
)
def test_design_and_system_rules(text: str, design: str, system: str) -> None:
    facts = study_facts("", [text])
    assert (facts.design, facts.system) == (design, system)
    assert facts.design in DESIGNS and facts.system in SYSTEMS


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("The mean age of the 529 respondents was 40 years; 75% were internists (n=378).", 529),
        ("Men with localized cancer (n = 1557) were selected.", 1557),
        ("In the study 2702 women and 1398 men aged 30 or more were recruited.", 4100),
        ("A total of 106 consecutive hypertensive patients were followed.", 106),
        ("Ten studies with a total of 3437 cases and 3437 healthy controls were pooled.", 6874),
        ("The total number of patients was 2,657,365, of whom 3643 had cancer.", 2657365),
        ("We included systematic reviews and meta-analyses (n = 10) and trials.", None),
        ("11 pregnant women (33 wk gestation, BMI: 23.5 kg/m(2)) and 11 nonpregnant controls.", 22),
        ("Reference curves from birth to 20 years for children.", None),
        ("Cases were recruited between 1989 and 1992.", None),
        ("No count is given here.", None),
    ],
)
def test_sample_size(text: str, n: int | None) -> None:
    assert sample_size(text) == n


@pytest.mark.parametrize(
    ("text", "n"),
    [
        # the thousands separators of the corpus: a space, a comma, a thin space, a no-break space
        ("RESULTS 10 trials enrolled a total of 70 388 people, of whom 23 681 (34%) were women.", 70388),
        ("A total of 70,388 people were enrolled.", 70388),
        ("A total of 70\u2009388 people were enrolled.", 70388),
        ("A total of 70\u00a0388 people were enrolled.", 70388),
        ("Homocysteine fell by 26\u00b799 % in 120 patients.", 120),  # a decimal point is not a separator
        # cases and controls add up, also as "N of the M cases ... and K of the L controls"
        ("RESULTS 20 of the 29 cases (69%) and 54 of the 116 controls (47%) were positive for H pylori "
         "specific antibody.", 145),
        ("We studied 29 cases and 116 controls.", 145),
        ("SUBJECTS 29 men with a subsequent diagnosis of gastric cancer and 116 aged matched controls "
         "selected from over 22,000 middle aged men participating in two ongoing cohort studies.", 145),
        ("A total of 27,035 patients with cholecystectomy and 106,531 matched controls were identified.",
         133566),
        # "n =" in every spacing and case
        ("Participants (N=1,204) completed the survey.", 1204),
        ("Patients were included (n  =  88).", 88),
        ("Patients with psoriasis (n = 45) and healthy controls (n = 50) were compared.", 95),
        # two different totals, or a second group the count leaves out: which one was the sample? none shown
        ("A total of 500 patients were screened and a total of 320 patients were enrolled.", None),
        ("We analysed data from individuals aged 16-44 years (4992 women, 3406 men).", None),
        ("We analysed 120 patients with asthma and 80 patients with COPD.", None),
        ("Samples came from two cohorts [registry, n = 200] and [ARDS study, n = 243].", None),
        # percentages' sub-counts after the count do not make it ambiguous
        ("The mean age of the 529 respondents was 40.3 years, 75.1% were internists (n=378), and 42.7% "
         "(n=226) were women.", 529),
    ],
)
def test_sample_size_forms(text: str, n: int | None) -> None:
    assert sample_size(text) == n


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("RESULTS 10 trials enrolled a total of 70 388 people, of whom 23 681 (34%) were women and 16 078 "
         "(23%) had diabetes mellitus.", 70388),
        ("SETTING The meta-analysis included fourteen randomized controlled trials, SUBJECTS A total of "
         "39 420 patients.", 39420),
        ("Ten case-control studies were assessed with a total of 3437 cases and 3437 healthy controls.",
         6874),
        ("Of the 5346 patients included, 2602 (57.3%) had an adverse event.", 5346),
        ("Meta-analyses of long-term outcome among 100,000 women in 123 randomised trials.", 100000),
        # one study's count is not the pooled count: none
        ("The largest trial included 500 patients; 39 patients withdrew.", None),
    ],
)
def test_a_meta_analysis_gives_the_pooled_count_or_none(text: str, n: int | None) -> None:
    assert sample_size(text, pooled=True) == n


def test_a_meta_analysis_never_shows_a_sub_count() -> None:
    facts = study_facts("Statins for prevention: a meta-analysis.",
                        ["We pooled 12 trials.", "In the largest trial, 39 patients had a stroke."])
    assert (facts.design, facts.sample_size) == ("meta-analysis", None)


@pytest.mark.parametrize(
    ("title", "text", "design", "system"),
    [
        # a guideline or recommendation statement is its own design, whatever trials it cites
        ("Screening for Lung Cancer: U.S. Preventive Services Task Force Recommendation Statement",
         "The USPSTF recommends annual screening for lung cancer with low-dose computed tomography in adults "
         "aged 55 to 80 years. Three randomized trials were reviewed.", "guideline", "human"),
        ("", "This consensus statement gives recommendations on the care of adults with asthma.", "guideline",
         "human"),
        # a cohort that followed a guideline is still a cohort
        ("", "In a prospective cohort of 10,000 nurses, care followed clinical practice guidelines.",
         "cohort", "human"),
        # a title that says "guidelines" about lab rules is not a clinical guideline
        ("Guidelines for the selection of highly effective siRNA sequences",
         "We analyzed 62 targets in mammalian cells in vitro.", "in vitro", "cells"),
        # animals before cells: a mouse experiment measures cells too
        ("Rejuvenation of aged progenitor cells by exposure to a young systemic environment",
         "We established parabiotic pairings between young and old mice. Heterochronic parabiosis restored "
         "the proliferation of aged satellite cells. The exposure of satellite cells from old mice to young "
         "serum enhanced proliferation in vitro. Hepatocyte cells proliferated as in young animals.",
         "animal study", "animal"),
        ("", "We analyzed bone marrow-derived macrophages from mice with S. mansoni egg-induced pulmonary "
         "granulomas; these cells expressed FIZZ1, and the cells responded to TLR agonists.", "animal study",
         "animal"),
        # a title that says "in vitro" names the system, whatever in-vivo work the text cites
        ("The murine H19 gene is activated during embryonic stem cell differentiation in vitro",
         "The differentiation in vitro of murine embryonic stem cells mimics events that occur in vivo. Here "
         "we describe the isolation of cDNA clones.", "in vitro", "cells"),
        # people before cells: tissue from patients is a study of people
        ("", "We measured apoptotic cells in tumours from 120 patients; patients with a high index died "
         "sooner.", "other", "human"),
        # a review of cell biology reports no work of its own: no badge rather than "in vitro"
        ("Macrophage Diversity Enhances Tumor Progression and Metastasis",
         "There is persuasive clinical and experimental evidence that macrophages promote cancer. As tumors "
         "progress, macrophages stimulate angiogenesis and enhance tumor cell migration.", "other", "other"),
        ("", "Recent studies have shown that autophagy protects neurons; we discuss how cells use it.",
         "other", "other"),
        # a trial beside an observational cohort: conflicting cues, no design badge
        ("", "In this observational cohort of 300 patients we compared outcomes with those of randomized "
         "trials in patients.", "other", "human"),
        ("", "Patients were randomized to drug or placebo.", "randomized trial", "human"),
    ],
)
def test_design_cues_in_order(title: str, text: str, design: str, system: str) -> None:
    facts = study_facts(title, [text])
    assert (facts.design, facts.system) == (design, system)


@pytest.mark.parametrize(
    ("title", "text", "design"),
    [
        # an overview that cites a meta-analysis is a review, not a meta-analysis
        ("Aspirin in the chemoprevention of colorectal neoplasia: an overview.",
         "Epidemiologic studies have observed an inverse association between aspirin use and cancer. "
         "A separate metaanalysis of nearly 3,000 patients in four randomized trials showed that aspirin "
         "reduced adenomas by 28%.", "review"),
        ("Statins and the heart",
         "A recent meta-analysis of 27 trials found fewer strokes with statins. Here we discuss how statins "
         "act on the vessel wall.", "review"),
        ("", "In this review we summarize recent advances. A meta-analysis of 12 trials has shown fewer "
         "strokes with statins.", "review"),
        # its own meta-analysis or search, in a text that also calls itself a review, is what it is
        ("Corticosteroid injections for shoulder pain.",
         "This review is one in a series of reviews of interventions for shoulder disorders. SEARCH STRATEGY "
         "MEDLINE and EMBASE were searched up to June 2002.", "systematic review"),
        ("", "This review pools 14 trials; we performed a meta-analysis of their outcomes.", "meta-analysis"),
        # a design cited in the background of a primary study does not name the study's design
        ("", "Previous cohort studies have reported that statins lower mortality. We measured the binding of "
         "statins to HMG-CoA reductase in vitro.", "in vitro"),
    ],
)
def test_a_review_that_cites_a_meta_analysis_is_a_review(title: str, text: str, design: str) -> None:
    assert study_facts(title, [text]).design == design


@pytest.mark.parametrize(
    ("title", "sentences", "design", "system"),
    [
        # people named only in the background: the work is in gerbils, or in E. coli
        ("AlpA and AlpB bind host laminin and influence gastric inflammation in gerbils.",
         ["Helicobacter pylori persistently colonizes humans, causing gastritis in many patients and people "
          "worldwide.", "We report that the H. pylori mutant causes more severe inflammation than the "
          "wild-type strain in gerbils."], "animal study", "animal"),
        ("Expansion and deletion of CTG repeats from human disease genes depend on the direction of "
         "replication",
         ["Several human disease genes of patients and their families are associated with CTG repeats.",
          "Here we show that the frequency of expansions in Escherichia coli depends on the direction of "
          "replication."], "in vitro", "other"),
        ("Structure of the urea channel of Helicobacter pylori",
         ["Half the world's population is infected, and patients develop ulcers.",
          "Here we report the crystal structure of the channel; mutation of residue 153 changes its "
          "selectivity."], "in vitro", "other"),
        # cells of people or animals beside a microbe are cells
        ("", ["Here we show that Salmonella replicates in human macrophages and HeLa cells."], "in vitro",
         "cells"),
        # where the work names no system, the background says which ("in mouse oocytes")
        ("CDK1 times kinetochore attachments in meiosis I",
         ["During meiosis I in mouse oocytes, spindle formation takes 3-4 h in these cells.",
          "Here we show that attachments are regulated by CDK1 activity."], "in vitro", "cells"),
        # a cohort of cells in mice is no cohort study
        ("", ["We analyzed the cell cycle of stem cells in normal adult mice in vivo.",
              "BrdU incorporation was used to follow different cohorts of stem cells in the mice."],
         "animal study", "animal"),
    ],
)
def test_the_system_comes_from_the_work_done(
    title: str, sentences: list[str], design: str, system: str
) -> None:
    facts = study_facts(title, sentences)
    assert (facts.design, facts.system) == (design, system)
    assert "in people" not in study_badges(facts) or system == "human"


@pytest.mark.parametrize(
    ("sentences", "n"),
    [
        # two cohorts of different sizes and no total: none
        (["We studied 1,052 patients in a derivation cohort and 748 in a validation cohort."], None),
        (["METHODS We included 2,310 adults from the discovery cohort.",
          "RESULTS The association was replicated in an independent cohort of 1,120 adults."], None),
        (["Risk was estimated in two independent cohorts of 540 and 910 women."], None),
        # a stated total of both is the sample size
        (["A total of 1,800 patients from two cohorts were included."], 1800),
        # cases and controls from two cohort studies are one sample
        (["29 men with gastric cancer and 116 matched controls were selected from two ongoing cohort "
          "studies."], 145),
        # a count from the background is not the study's
        (["In a previous trial of 5,000 patients, statins lowered mortality.",
          "We therefore examined 120 patients with heart failure."], 120),
    ],
)
def test_two_cohorts_show_no_sample_size(sentences: list[str], n: int | None) -> None:
    facts = study_facts("", sentences)
    assert facts.system == "human"
    assert facts.sample_size == n


@pytest.mark.parametrize(
    ("title", "sentences", "design", "system"),
    [
        # an animal experiment that names no animal, or names it in other words
        ("", ["Antibodies reduced the invasion of prostate cancer cells in vitro.",
              "In vivo, these antibodies slowed the growth of established xenografts."],
         "animal study", "animal"),
        ("", ["NRG1 increased synapse number in cultured interneurons.",
              "Deletion of ErbB4 in interneurons reduced mEPSCs, providing in vivo evidence for its role."],
         "animal study", "animal"),
        # cells beside a living animal the rules do not read as the experiment: no design, no system
        ("", ["We show that the demethylase is displaced from Hox genes during stem cell differentiation.",
              "Depletion of its C. elegans homolog increased H3K4me3 levels in cells of the worm."], "other",
         "other"),
        # tissue or genomes of people studied in the laboratory are a study of people, not of cells
        ("", ["In this study, we examined p16 expression by immunohistochemistry in 35 endometrial polyps.",
              "Stromal cells were positive in 31 specimens."], "other", "human"),
        # an overview that never calls itself a review: no design rather than "in vitro"
        ("", ["Here we describe the current state of the art for RNAi screening in human cells."], "other",
         "other"),
        # plants are neither people, animals nor their cells
        ("", ["We show that Arabidopsis plants regenerate shoots from root cells in culture."],
         "other", "other"),
        # animals sampled in the field: a survey, not an animal experiment (the system is still animals)
        ("", ["Anopheles mosquitoes were sampled inside houses in 30 villages; we identified their "
              "species by PCR."],
         "other", "animal"),
    ],
)
def test_an_uncertain_laboratory_study_shows_no_design(
    title: str, sentences: list[str], design: str, system: str
) -> None:
    facts = study_facts(title, sentences)
    assert (facts.design, facts.system) == (design, system)


@pytest.mark.parametrize(
    ("sentences", "design"),
    [
        # a trial that is not randomized is no cohort, whatever its follow-up
        (["METHODS We conducted a controlled trial of 263 women attending a clinic.",
          "Women were systematically assigned to advance provision or education; follow-up was completed in "
          "213."], "other"),
        (["We enrolled 50 patients in an expansion cohort of the phase 1 study of crizotinib."], "other"),
        # a cohort named only as where samples came from, in a laboratory study of them
        (["We profiled cytokines of mononuclear cells from 197 individuals from the 200FG cohort and "
          "genotyped them genome-wide."], "other"),
        # a follow-up alone names no cohort study; a cohort followed does
        (["We surveyed 120 patients; clinical follow-up is advisable."], "cross-sectional"),
        (["A cohort of 1,050 women was followed for 20 years."], "cohort"),
    ],
)
def test_what_is_not_a_cohort(sentences: list[str], design: str) -> None:
    assert study_facts("", sentences).design == design


@pytest.mark.parametrize(
    ("text", "n"),
    [
        # counts written in words
        ("METHODS AND RESULTS Thirty patients with PH (21 women; mean age, 50 years) were randomly "
         "assigned.", 30),
        ("PARTICIPANTS Two hundred Chinese patients with renal insufficiency.", 200),
        ("PARTICIPANTS Seven hundred seventeen men and women aged 55 to 74.", 717),
        ("Sixty-eight volunteers took part.", 68),
        # those screened are not those studied
        ("We screened 135 participants, of whom 40 healthy volunteers, 40 individuals with COPD, and 39 with "
         "heart disease were recruited.", None),
        ("A total of 412 patients were screened.", None),
        # enrolled and analysed differ: which one? none
        ("In the trial, 930 subjects were randomly assigned to calcium or placebo. We obtained follow-up "
         "for 822 subjects, 597 of whom had a colonoscopy and are included in this analysis.", None),
        # what was analysed must be people to make the count ambiguous
        ("On protocol Total XII, 182 children achieved remission. A total of 709 TGN measurements, along "
         "with dose information for 19,046 weeks of therapy, were analyzed.", 182),
        # a count with its share is a part of the sample
        ("RESULTS Thirty patients (15%) had KRAS mutations.", None),
    ],
)
def test_sample_size_in_words_screened_and_analysed(text: str, n: int | None) -> None:
    assert sample_size(text) == n


def test_the_count_after_a_background_paragraph_is_read() -> None:
    facts = study_facts("", ["Samoa has a high burden of noncommunicable diseases in adults and children.",
                             "The teams collected data from 2234 adults in seven villages.",
                             "Of the adults older than 40 years, 54 were at high risk."])
    assert (facts.system, facts.sample_size) == ("human", 2234)


def test_tissue_of_people_shows_no_sample_size() -> None:
    facts = study_facts("", ["In this study, we examined stromal p16 expression by immunohistochemistry "
                             "in 35 endometrial polyps and 33 cases of hyperplasia; positive stromal cells "
                             "surrounded glands."])
    assert (facts.design, facts.system, facts.sample_size) == ("other", "human", None)


def test_year_and_journal_come_from_the_corpus_record() -> None:
    facts = study_facts("T", ["We surveyed 40 nurses."], PaperMeta(journal="BMJ", year=2019))
    assert facts == StudyFacts("cross-sectional", "human", 40, 2019, "BMJ")
    assert study_badges(facts) == ["cross-sectional", "in people", "40 people", "2019", "BMJ"]
    assert study_badges(StudyFacts()) == [] and study_badges(None) == []
    assert study_facts("T", ["Cells."]).year is None


@pytest.mark.parametrize(
    ("title", "real"),
    [
        ("Original Article", False), ("Summary", False), ("THE EMBO JOURNAL", False),
        ("Corresponding author:", False), ("in polyploid species", False), ("Review article", False),
        ("p53 mutations in cancer", True), ("mTOR signalling", True), ("Anxiety", True),
        ("Temsirolimus, interferon alfa, or both for advanced renal-cell carcinoma.", True),
    ],
)
def test_titles_that_are_not_titles(title: str, real: bool) -> None:
    assert is_real_title(title) is real


def test_a_title_that_is_not_one_falls_back_to_the_first_sentence() -> None:
    sentences = ["BACKGROUND: Smoking causes lung cancer in most cases.", "More."]
    assert display_title("Original Article", sentences) == "Smoking causes lung cancer in most cases."
    assert display_title("A real title", sentences) == "A real title"
    unlabelled = ["UNLABELLED Fruit and vegetable consumption has been inversely associated with cancer."]
    assert display_title("Original Article", unlabelled).startswith("Fruit and vegetable consumption")
    radiation = ["Background radiation was measured."]
    assert display_title("Summary", radiation) == radiation[0]
    assert display_title("Summary", []) == "Summary"
    assert len(display_title("Summary", ["x" * 500])) == 160


def test_accuracy_on_hand_labelled_abstracts() -> None:
    from sciverify.data.datasets import resolve_data_dir

    try:
        corpus = resolve_data_dir(None).root / "corpus.jsonl"
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"SciFact data not available: {exc}")
    rows = [json.loads(line) for path in LABELS for line in path.read_text(encoding="utf-8").splitlines()]
    meta = [r["_meta"] for r in rows if "_meta" in r]
    assert [m["seed"] for m in meta] == [41, 50, 51, 52]
    labels = [r for r in rows if "_meta" not in r]
    assert sum(x["sample"] == "unseen" for x in labels) == 60
    assert sum(x["sample"] == "second" for x in labels) == 60
    assert sum(x["sample"] == "third" for x in labels) == 60
    assert sum(x["sample"] == "fourth" for x in labels) == 60
    wanted = {x["doc_id"] for x in labels}
    docs = {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["doc_id"] in wanted:
                docs[d["doc_id"]] = d
    assert sum(x["sample"] == "random" for x in labels) >= 60
    for sample, floors in FLOORS.items():
        part = [x for x in labels if x["sample"] == sample]
        correct, wrong_shown = dict.fromkeys(FIELDS, 0), dict.fromkeys(FIELDS, 0)
        for x in part:
            d = docs[x["doc_id"]]
            assert x["design"] in DESIGNS and x["system"] in SYSTEMS
            facts = study_facts(d["title"], d["abstract"])
            for field in FIELDS:
                got = getattr(facts, field)
                correct[field] += got == x[field]
                wrong_shown[field] += got != x[field] and got not in (None, "other")
        for field, floor in floors.items():
            got = f"{sample} {field}: {correct[field]}/{len(part)} right, {wrong_shown[field]} wrong shown"
            assert correct[field] >= floor, f"{got}, floor {floor}"
            assert wrong_shown[field] <= CEILINGS[sample][field], f"{got}, ceiling {CEILINGS[sample][field]}"
