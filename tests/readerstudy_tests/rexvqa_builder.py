"""Small ReXVQA-shaped files on disk for import tests: readerstudy.rexvqa_synthetic's records
with sentinel texts (a page that shows them has leaked what a reader must not see), and the
tests' tiny PNGs as their images."""

from pathlib import Path

from readerstudy.rexvqa_synthetic import instance_path, place_image, write_file
from readerstudy.rexvqa_synthetic import record as synthetic_record

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def image_rel(study: str, name: str = "img.png") -> str:
    return instance_path(
        patient="p1", accession=study, study_uid="1.2", series_uid="1.3", instance=name
    )


def record(qid: int = 1, study: str = "s1", **overrides) -> dict:
    """A valid record; `overrides` replace fields by their names in the file."""
    base = synthetic_record(
        question=f"Is there a finding number {qid}?",
        options=["Yes", "No", "Maybe", "Not assessable"],
        correct="A",
        task="Presence Assessment",
        study_id=study,
        images=[image_rel(study)],
        views=["PA"],
        correct_answer_explanation="SENTINEL-EXPLANATION",
        category="Lung",
        subcategory="Nodule",
        StudyInstanceUid="1.2",
        PatientID="p1",
        PatientAge="058Y",
        PatientSex="F",
        StudyDate="20200101",
        Indication="Cough.",
        Findings="SENTINEL-FINDINGS",
        Impression="SENTINEL-IMPRESSION",
        **{"class": "detection"},
    )
    base.update(overrides)
    return base


def write(root: Path, records: dict, *, images: bool = True, source: str = "tiny_8bit.png"):
    """Write records to root/metadata/test.json, and each referenced image under root."""
    if images:
        for rec in records.values():
            paths = rec.get("ImagePath") if isinstance(rec, dict) else None
            for p in paths if isinstance(paths, list) else []:
                if isinstance(p, str) and p.startswith("../deid_png"):
                    place_image(RESOURCES / source, root / p[3:], link=False)
    return write_file(root, records, name="test")
