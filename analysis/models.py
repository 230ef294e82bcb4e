"""The analysis's own records: the names a PI gives raters in a study's figures and tables."""

from __future__ import annotations

from django.db import models


class RaterLabel(models.Model):
    """The name a PI gives a reader or a model in this study's figures and tables.

    `rater` is the internal key, kind + id ("reader:12", "model:3"), so a model can never be
    mistaken for a reader whatever either is called; the label is what a paper shows.
    """

    study = models.ForeignKey(
        "readerstudy.ReaderStudy", on_delete=models.CASCADE, related_name="rater_labels"
    )
    rater = models.CharField(max_length=40)
    label = models.CharField(max_length=60)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "rater"]
        constraints = [
            models.UniqueConstraint(fields=["study", "rater"], name="raterlabel_unique_rater"),
            models.UniqueConstraint(fields=["study", "label"], name="raterlabel_unique_label"),
        ]

    def __str__(self) -> str:
        return f"{self.rater} = {self.label}"
