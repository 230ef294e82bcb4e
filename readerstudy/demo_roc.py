"""The demo's rated study: questions on the demo's chest radiograph, read with a 5-point
confidence scale, so that the analysis has ratings to make ROC curves and calibration from.

Most are yes/no presence questions, which the import detects as binary (their "Yes" means the
finding is present: readerstudy.rexvqa.yes_no_present); a few are ordinary multiple-choice
questions (accuracy by confidence). The keys are true of the radiograph: multiple round masses
in both lungs, most in the mid and lower zones; no effusion, pneumothorax, enlarged heart or
fracture. Six cases share its pixels (one X-ray by blinding's identity).
"""

from __future__ import annotations

from pathlib import Path

from readerstudy.demo import CHEST_FINDINGS, CHEST_IMPRESSION, _instance_path, _record
from readerstudy.rexvqa_synthetic import place_image, write_file

YES_NO = ("Cannot be determined on this film", "Only on a lateral view")


def _binary(category: str, text: str, present: bool, explanation: str) -> tuple:
    return (
        "Presence Assessment",
        category,
        text,
        ["Yes", "No", *YES_NO],
        "A" if present else "B",
        explanation,
    )


PRESENT = [
    _binary("Lung", "Are there pulmonary masses?", True, "Round masses in both lungs."),
    _binary("Lung", "Are both lungs involved?", True, "Masses are seen on both sides."),
    _binary("Lung", "Are there lesions in the lower zones?", True, "Most are mid and lower zone."),
    _binary("Lung", "Is there more than one lung lesion?", True, "The masses are numerous."),
    _binary("Lung", "Are there lesions in the mid zones?", True, "Mid and lower zones."),
    _binary("Lung", "Are the lesions of varying size?", True, "They vary in size."),
]
ABSENT = [
    _binary("Pleura", "Is there a pleural effusion?", False, "The costophrenic angles are sharp."),
    _binary("Pleura", "Is there a pneumothorax?", False, "Lung markings reach the chest wall."),
    _binary("Cardiac", "Is the heart enlarged?", False, "The cardiothoracic ratio is below 0.5."),
    _binary("Bone", "Is there a rib fracture?", False, "The visualised bones are intact."),
    _binary("Abdomen", "Is there free air under the diaphragm?", False, "No free air is seen."),
    _binary(
        "Lung", "Is there lobar consolidation?", False, "No air bronchograms, no lobar opacity."
    ),
]
CHOICE = [
    (
        "Location and Distribution Assessment",
        "Lung",
        "Where are the masses most numerous?",
        ["Lung apices", "Mid and lower zones", "Retrocardiac only", "Pleural surfaces"],
        "B",
        "Most masses are in the mid and lower zones.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "What is the most likely diagnosis?",
        ["Haematogenous metastases", "Lobar pneumonia", "Pulmonary oedema", "Sarcoidosis"],
        "A",
        "Multiple round masses of varying size: metastases.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "How are the masses' margins?",
        ["Spiculated", "Smooth and well defined", "Ill defined, fluffy", "Lobulated"],
        "B",
        "The masses are round and well circumscribed.",
    ),
]
RATED_CASES = [
    ("rated-cxr-01", "Cough and weight loss.", "58Y", "F"),
    ("rated-cxr-02", "Known renal cell carcinoma; staging.", "61Y", "F"),
    ("rated-cxr-03", "Shortness of breath.", "59Y", "F"),
    ("rated-cxr-04", "Follow-up of lung nodules.", "60Y", "F"),
    ("rated-cxr-05", "Chest pain.", "60Y", "F"),
    ("rated-cxr-06", "Pre-operative film.", "62Y", "F"),
]
RATED_DATASET_NAME = "ReXVQA demo (rated)"
RATED_SLUG = "demo-rated"
# Its readers, other people than the demo study's (reader2 practises on this X-ray, reader4-6
# were shown the AI's answers on it): reader7 is left for a person to try, the others simulated.
RATED_READERS = ("reader7", "reader8", "reader9", "reader10")
# The binary questions' options: "Yes" (the finding present) is A, "No" is B.
PRESENT_LETTER, ABSENT_LETTER = "A", "B"


def case_questions(index: int) -> list[tuple]:
    """Case `index`'s questions: two binary ones (present and absent in turn) and a
    multiple-choice one on every other case."""
    questions = [PRESENT[index], ABSENT[index]]
    if index % 2 == 0:
        questions.append(CHOICE[index // 2])
    return questions


def write_rated_file(root: Path) -> Path:
    """Write the rated study's questions (on the demo's chest radiograph) as a ReXVQA file
    under root; return its path."""
    from pydicom.data import get_testdata_file

    chest = Path(get_testdata_file("RG1_UNCR.dcm"))
    records: dict[str, dict] = {}
    for index, (study_id, indication, age, sex) in enumerate(RATED_CASES):
        uid = f"3{index + 1}"
        rel = _instance_path(f"p003{index + 1}", f"a003{index + 1}", uid, "dcm")
        place_image(chest, root / rel)
        for qnum, q in enumerate(case_questions(index)):
            records[f"{study_id}-q{qnum + 1}"] = _record(
                study_id, uid, rel, indication, age, sex, q, "PA", CHEST_FINDINGS, CHEST_IMPRESSION
            )
    return write_file(root, records, name="rated", indent=1)
