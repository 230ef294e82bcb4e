"""No rater may be called what a table calls its rows of several raters ("mean of readers",
"readers pooled"): a reader labelled so, or a model named so, would read as the panel in
auc.csv, accuracy_by_confidence.csv and the figures."""

import pytest

from analysis.confidence_analysis import PANEL, POOLED
from analysis.rater_names import RaterLabelError, display_names, rater_labels_set
from readerstudy.models import Role
from tests.factories import MembershipFactory, UserFactory, build_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("label", [PANEL, POOLED, "Mean of  Readers"])
def test_a_pi_cannot_label_a_reader_as_the_panel(label):
    study = build_study(1)
    reader = UserFactory(username="r1")
    MembershipFactory(study=study, user=reader, role=Role.READER)
    raters = display_names([(reader.pk, reader.username)], [], {})
    with pytest.raises(RaterLabelError, match="names rows of several raters"):
        rater_labels_set(study=study, actor=None, raters=raters, labels={raters[0].rater_id: label})


def test_a_model_named_like_the_panel_gets_a_suffix():
    [model] = display_names([], [(1, "Readers pooled")], {})
    assert model.name == "Readers pooled (model)"
