"""A small ReXVQA-shaped demo dataset built on real radiographs from `pydicom-data`.

`RG1_UNCR.dcm` is a real PA chest CR with multiple round masses in both lungs; `RG3_UNCR.dcm`
is an extremity radiograph, used as the "image does not match the question" case that experts
should find. The demo is written as a real ReXVQA file and imported through the normal path.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from readerstudy.rexvqa_synthetic import instance_path, place_image, write_file
from readerstudy.rexvqa_synthetic import record as synthetic_record

CHEST_FINDINGS = (
    "Multiple round, well-circumscribed soft-tissue masses of varying size are present "
    "throughout both lungs, most numerous in the mid and lower zones. No pleural effusion. "
    "No pneumothorax. The cardiomediastinal silhouette is within normal limits. "
    "The visualised bones are intact."
)
CHEST_IMPRESSION = "Multiple bilateral pulmonary masses, most consistent with metastatic disease."

# (task name, category, question, options, correct, explanation)
CHEST_QUESTIONS = [
    (
        "Presence Assessment",
        "Lung",
        "Are there pulmonary masses on this radiograph?",
        [
            "Yes, multiple bilateral round masses",
            "No, the lungs are clear",
            "Only a single solitary nodule",
            "Only calcified granulomas",
        ],
        "A",
        "Several round soft-tissue masses are seen in both lungs.",
    ),
    (
        "Presence Assessment",
        "Pleura",
        "Is there a pneumothorax?",
        [
            "Yes, a large right pneumothorax",
            "Yes, a small left apical pneumothorax",
            "No pneumothorax is seen",
            "Tension pneumothorax",
        ],
        "C",
        "Lung markings extend to the chest wall on both sides; no pleural line.",
    ),
    (
        "Presence Assessment",
        "Pleura",
        "Is there a pleural effusion?",
        [
            "Large left effusion",
            "Bilateral small effusions",
            "Right subpulmonic effusion",
            "No pleural effusion",
        ],
        "D",
        "Both costophrenic angles are sharp.",
    ),
    (
        "Presence Assessment",
        "Cardiac",
        "Is the heart enlarged?",
        [
            "Yes, markedly",
            "Yes, mildly",
            "No, the heart size is normal",
            "Cannot be assessed on a PA film",
        ],
        "C",
        "The cardiothoracic ratio is below 0.5 on this PA view.",
    ),
    (
        "Negation Assessment",
        "Pleura",
        "Which of the following findings is NOT present?",
        [
            "Multiple pulmonary masses",
            "Bilateral lung involvement",
            "Pleural effusion",
            "Round opacities",
        ],
        "C",
        "The report states there is no pleural effusion.",
    ),
    (
        "Negation Assessment",
        "Pleura",
        "Which finding is absent on this study?",
        ["Pneumothorax", "Pulmonary masses", "Bilateral opacities", "Mid-zone nodularity"],
        "A",
        "No pneumothorax is described or seen.",
    ),
    (
        "Negation Assessment",
        "Lung",
        "Which of these is NOT a feature of the lung lesions?",
        ["Round shape", "Multiplicity", "Air bronchograms", "Varying size"],
        "C",
        "The lesions are solid round masses, not consolidation with air bronchograms.",
    ),
    (
        "Negation Assessment",
        "Bone",
        "Which of the following is NOT seen?",
        ["Intact visualised bones", "Rib fracture", "Normal mediastinum", "Bilateral masses"],
        "B",
        "The bones are intact; there is no fracture.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "What is the most likely diagnosis?",
        ["Haematogenous metastases", "Lobar pneumonia", "Pulmonary oedema", "Sarcoidosis"],
        "A",
        "Multiple round masses of varying size in both lungs are classic for metastases.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "Which diagnosis is LEAST likely to explain these findings?",
        [
            "Metastatic renal cell carcinoma",
            "Septic emboli",
            "Granulomatosis with polyangiitis",
            "Spontaneous pneumothorax",
        ],
        "D",
        "A pneumothorax does not produce multiple round masses.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "Which primary tumour classically gives this pattern?",
        ["Basal cell carcinoma of the skin", "Renal cell carcinoma", "Meningioma", "Lipoma"],
        "B",
        "'Cannonball' metastases are typical of renal cell carcinoma among others.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "What is the best next imaging step?",
        [
            "Contrast-enhanced CT of the chest",
            "Repeat radiograph in one year",
            "No further imaging",
            "Barium swallow",
        ],
        "A",
        "CT characterises the masses and stages disease.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "How are the masses distributed?",
        [
            "Bilateral, most numerous in the mid and lower zones",
            "Right upper lobe only",
            "Left apex only",
            "Confined to the hila",
        ],
        "A",
        "Masses are seen in both lungs with mid and lower zone predominance.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Which lung is involved?",
        ["Right only", "Left only", "Both lungs", "Neither"],
        "C",
        "Both lungs contain masses.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Where is the largest concentration of lesions?",
        ["Lung apices", "Mid and lower zones", "Retrocardiac only", "Pleural surfaces"],
        "A",  # mis-keyed on purpose (MISKEYED): the explanation and the report say B
        "Lesions are most numerous in the mid and lower zones.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Are the lesions central or peripheral?",
        [
            "Exclusively central",
            "Exclusively subpleural",
            "Scattered, central and peripheral",
            "Only in the hila",
        ],
        "C",
        "Metastases are scattered throughout both lungs.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "How would you describe the lesions' shape?",
        ["Round and well circumscribed", "Linear", "Thick-walled and cavitating", "Spiculated"],
        "A",
        "The masses are round with smooth margins.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "What is the approximate size of the largest masses?",
        ["Under 5 mm", "About 2 to 5 cm", "Over 10 cm", "About 1 mm"],
        "B",
        "The largest masses measure a few centimetres.",
    ),
    (
        "Geometric Information Assessment",
        "Cardiac",
        "What is the cardiothoracic ratio?",
        ["Below 0.5", "About 0.6", "About 0.7", "Above 0.8"],
        "A",
        "The heart size is normal.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "Are the lesions of uniform size?",
        [
            "Yes, all identical",
            "No, they vary in size",
            "There is a single lesion",
            "There are no lesions",
        ],
        "B",
        "The masses vary in size, as haematogenous metastases do.",
    ),
]
MISMATCH_QUESTIONS = [
    (
        "Presence Assessment",
        "Pleura",
        "Is there a pleural effusion on this chest radiograph?",
        ["Yes, on the left", "Yes, on the right", "Bilateral effusions", "No pleural effusion"],
        "D",
        "Both costophrenic angles are sharp.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Where is the consolidation?",
        ["Right lower lobe", "Left upper lobe", "Lingula", "There is no consolidation"],
        "A",
        "Consolidation in the right lower lobe obscures the right hemidiaphragm.",
    ),
]
CHEST_CASES = [
    ("demo-cxr-01", "Cough and weight loss for three months.", "058Y", "F"),
    ("demo-cxr-02", "Known renal cell carcinoma; staging.", "61Y", "F"),
    ("demo-cxr-03", "Shortness of breath.", "58", "F"),
    ("demo-cxr-04", "Follow-up of lung nodules.", "059Y", "F"),
    ("demo-cxr-05", "Chest pain.", "60Y", "F"),
]
# The demo study's people and their roles in it.
USERS = {
    "reader1": "reader",
    "reader2": "reader",
    "reader3": "reader",
    "expert1": "expert",
    "pi1": "pi",
}
# The question the demo keys wrongly, as banks sometimes do (its explanation and the report say
# mid and lower zones, option B; the key says A): the simulated readers and the demo models
# all answer the right option, so the expert queue ranks it first and an expert can propose
# "wrong key, B".
MISKEYED = "demo-cxr-05-q3"
MISKEYED_RIGHT = "B"

# The readers of the AI-assisted demo study (analysis.demo), other people than the demo's: it
# holds the same X-rays, and someone reading them unaided may not be shown the AI's answers
# on them in another study (readerstudy.blinding). reader4 is left for a person to try.
AIDED_READERS = ("reader4", "reader5", "reader6")
DATASET_NAME = "ReXVQA demo"
STUDY_SLUG = "demo"


def _instance_path(patient: str, accession: str, uid: str, ext: str) -> str:
    return instance_path(
        patient=patient,
        accession=accession,
        study_uid=f"1.2.826.0.1.{uid}",
        series_uid=f"1.2.826.0.2.{uid}",
        instance=f"1.2.826.0.3.{uid}.{ext}",
    )


def _write_png16(source: Path, target: Path) -> None:
    """A 16-bit PNG version of a MONOCHROME1 DICOM, as the ReXVQA deid_png files are."""
    import pydicom
    from PIL import Image

    if target.exists():
        return
    ds = pydicom.dcmread(source)
    stored = ds.pixel_array.astype(np.int64)
    values = (stored.max() - stored) * (65535 // max(1, int(stored.max())))
    target.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(values.astype(np.uint16)).save(target)


def write_demo_files(root: Path) -> Path:
    """Write the demo ReXVQA file and images under root; return the JSON path."""
    from pydicom.data import get_testdata_file

    chest = Path(get_testdata_file("RG1_UNCR.dcm"))
    extremity = Path(get_testdata_file("RG3_UNCR.dcm"))
    records: dict[str, dict] = {}
    for index, (study_id, indication, age, sex) in enumerate(CHEST_CASES):
        uid = f"{index + 1}"
        if index == 1:
            rel = _instance_path("p0002", "a0002", uid, "png")
            _write_png16(chest, root / rel)
        else:
            rel = _instance_path(f"p000{index + 1}", f"a000{index + 1}", uid, "dcm")
            place_image(chest, root / rel)
        questions = CHEST_QUESTIONS[index::5]  # four questions, spread over the tasks
        for qnum, q in enumerate(questions):
            records[f"{study_id}-q{qnum + 1}"] = _record(
                study_id, uid, rel, indication, age, sex, q, "PA", CHEST_FINDINGS, CHEST_IMPRESSION
            )
    rel = _instance_path("p0009", "a0009", "9", "dcm")
    place_image(extremity, root / rel)
    for qnum, q in enumerate(MISMATCH_QUESTIONS):
        records[f"demo-mismatch-q{qnum + 1}"] = _record(
            "demo-mismatch",
            "9",
            rel,
            "Shortness of breath.",
            "047Y",
            "M",
            q,
            "PA",
            "Right lower lobe consolidation. No pleural effusion.",
            "Right lower lobe pneumonia.",
        )
    return write_file(root, records, name="demo", indent=1)


def _record(study_id, uid, rel, indication, age, sex, q, view, findings, impression) -> dict:
    task, category, text, options, correct, explanation = q
    return synthetic_record(
        question=text,
        options=options,
        correct=correct,
        task=task,
        study_id=study_id,
        images=[rel],
        views=[view],
        correct_answer_explanation=explanation,
        category=category,
        subcategory="",
        StudyInstanceUid=f"1.2.826.0.1.{uid}",
        PatientID=f"demo-{uid}",
        PatientAge=age,
        PatientSex=sex,
        StudyDate="20240101",
        Indication=indication,
        Findings=findings,
        Impression=impression,
        **{"class": "demo"},
    )


# A teaching file for the demo's practice set: other questions on the same chest
# radiograph (no package we can install ships another), so the same X-ray as the demo study's
# by blinding's identity (the same pixels): its readers, who read that X-ray blind, are refused
# a practice set of it. (task, category, question, options, key, explanation)
TEACHING_QUESTIONS = [
    (
        "Presence Assessment",
        "Lung",
        "Are the lung masses calcified?",
        [
            "No, they are of soft-tissue density",
            "Yes, densely calcified",
            "Only rim calcification",
            "Popcorn calcification",
        ],
        "A",
        "The masses are of soft-tissue density; none shows calcification.",
    ),
    (
        "Presence Assessment",
        "Mediastinum",
        "Is the mediastinum widened?",
        [
            "Yes, markedly",
            "No, the mediastinum is normal",
            "Only the right paratracheal stripe",
            "Cannot be assessed",
        ],
        "B",
        "The cardiomediastinal silhouette is within normal limits.",
    ),
    (
        "Presence Assessment",
        "Lung",
        "Is there lobar consolidation?",
        ["Right upper lobe", "Left lower lobe", "No lobar consolidation", "Both lower lobes"],
        "C",
        "The opacities are discrete round masses, not airspace consolidation.",
    ),
    (
        "Negation Assessment",
        "Lung",
        "Which of these is NOT seen on this radiograph?",
        [
            "Masses in both lungs",
            "Cavitating masses",
            "Masses of varying size",
            "A normal heart size",
        ],
        "B",
        "The masses are solid; no cavity or air-fluid level is seen.",
    ),
    (
        "Negation Assessment",
        "Pleura",
        "Which finding is absent?",
        ["Bilateral lung masses", "Mid-zone masses", "Pleural effusion", "Lower-zone masses"],
        "C",
        "Both costophrenic angles are sharp: there is no effusion.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "In a patient with known renal cell carcinoma, these findings most likely are:",
        ["Pulmonary metastases", "Pulmonary infarcts", "Hamartomas", "Round atelectasis"],
        "A",
        "Multiple round masses of varying size in a patient with a known primary are metastases "
        "until proven otherwise.",
    ),
    (
        "Differential Diagnosis",
        "Lung",
        "Which finding would favour septic emboli over metastases?",
        [
            "Smooth, well-defined margins",
            "Rapidly cavitating nodules in a febrile patient",
            "Lower-zone predominance",
            "Varying size",
        ],
        "B",
        "Septic emboli cavitate early and come with fever; the other features fit both.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Which zones are least involved?",
        ["The lung apices", "The mid zones", "The lower zones", "All zones equally"],
        "A",
        "The masses are most numerous in the mid and lower zones; the apices are least involved.",
    ),
    (
        "Location and Distribution Assessment",
        "Lung",
        "Is the involvement unilateral or bilateral?",
        ["Right only", "Left only", "Bilateral", "Hilar only"],
        "C",
        "Masses are present in both lungs.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "How are the masses' margins?",
        ["Spiculated", "Smooth and well defined", "Ill defined, fluffy", "Lobulated with notches"],
        "B",
        "The masses are round and well circumscribed.",
    ),
    (
        "Geometric Information Assessment",
        "Cardiac",
        "Is the cardiac silhouette of normal size?",
        [
            "Yes, the cardiothoracic ratio is below 0.5",
            "No, it is mildly enlarged",
            "No, it is markedly enlarged",
            "It cannot be measured",
        ],
        "A",
        "The heart size is normal on this PA view.",
    ),
    (
        "Geometric Information Assessment",
        "Lung",
        "About how many masses are visible?",
        ["One", "Two or three", "More than ten", "None"],
        "C",
        "Numerous masses are seen throughout both lungs.",
    ),
]
TEACHING_CASES = [
    ("teach-cxr-01", "Known renal cell carcinoma; follow-up.", "61Y", "F"),
    ("teach-cxr-02", "Staging chest radiograph.", "061Y", "F"),
    ("teach-cxr-03", "Cough.", "62", "F"),
]
TEACHING_DATASET_NAME = "ReXVQA demo teaching file"


def write_teaching_file(root: Path) -> Path:
    """Write the teaching file (four questions per case, on the demo's chest radiograph) as a
    ReXVQA file under root; return its path."""
    from pydicom.data import get_testdata_file

    chest = Path(get_testdata_file("RG1_UNCR.dcm"))
    records: dict[str, dict] = {}
    for index, (study_id, indication, age, sex) in enumerate(TEACHING_CASES):
        uid = f"2{index + 1}"
        rel = _instance_path(f"p002{index + 1}", f"a002{index + 1}", uid, "dcm")
        place_image(chest, root / rel)
        for qnum, q in enumerate(TEACHING_QUESTIONS[index::3]):
            records[f"{study_id}-q{qnum + 1}"] = _record(
                study_id, uid, rel, indication, age, sex, q, "PA", CHEST_FINDINGS, CHEST_IMPRESSION
            )
    return write_file(root, records, name="teaching", indent=1)


PACS_DATASET_NAME = "ReXVQA demo (PACS)"
PACS_STUDY_SLUG = "demo-pacs"


def pacs_instances(json_path: Path) -> list:
    """The demo radiographs as DICOM instances carrying the UIDs that the demo file's ImagePaths
    name, to load into a PACS (`make demo-pacs`); the 16-bit PNG case is stored as DICOM."""
    import pydicom
    from pydicom.data import get_testdata_file

    from readerstudy.dicomweb import parse_resource

    sources = {
        "chest": Path(get_testdata_file("RG1_UNCR.dcm")),
        "extremity": Path(get_testdata_file("RG3_UNCR.dcm")),
    }
    instances = {}
    for record in json.loads(Path(json_path).read_text()).values():
        ref = parse_resource(record["ImagePath"][0])
        if ref is None or ref.sop in instances:
            continue
        kind = "extremity" if record["study_id"] == "demo-mismatch" else "chest"
        ds = pydicom.dcmread(sources[kind])
        ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.SOPInstanceUID = (
            ref.study,
            ref.series,
            ref.sop,
        )
        ds.file_meta.MediaStorageSOPInstanceUID = ref.sop
        ds.PatientID = record["PatientID"]
        instances[ref.sop] = ds
    return list(instances.values())
