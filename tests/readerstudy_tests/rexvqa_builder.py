"""Build small ReXVQA-shaped files on disk for import tests."""

import json
import shutil
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def image_rel(study: str, name: str = "img.png") -> str:
    return f"deid_png/p1/{study}/studies/1.2/series/1.3/instances/{name}"


def record(qid: int = 1, study: str = "s1", **overrides) -> dict:
    base = {
        "question": f"Is there a finding number {qid}?",
        "options": ["A. Yes", "B. No", "C. Maybe", "D. Not assessable"],
        "correct_answer": "A",
        "correct_answer_explanation": "SENTINEL-EXPLANATION",
        "task_name": "Presence Assessment",
        "category": "Lung",
        "subcategory": "Nodule",
        "class": "detection",
        "study_id": study,
        "StudyInstanceUid": "1.2",
        "PatientID": "p1",
        "PatientAge": "058Y",
        "PatientSex": "F",
        "StudyDate": "20200101",
        "Indication": "Cough.",
        "Findings": "SENTINEL-FINDINGS",
        "Impression": "SENTINEL-IMPRESSION",
        "ImagePath": [f"../{image_rel(study)}"],
        "ImageModality": ["CR"],
        "ImageViewPosition": ["PA"],
    }
    base.update(overrides)
    return base


def write(root: Path, records: dict, *, images: bool = True, source: str = "tiny_8bit.png"):
    """Write records to root/metadata/test.json, and each referenced image under root."""
    json_path = root / "metadata" / "test.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(records))
    if images:
        for rec in records.values():
            paths = rec.get("ImagePath") if isinstance(rec, dict) else None
            for p in paths if isinstance(paths, list) else []:
                if isinstance(p, str) and p.startswith("../deid_png"):
                    target = root / p[3:]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not target.exists():
                        shutil.copyfile(RESOURCES / source, target)
    return json_path
