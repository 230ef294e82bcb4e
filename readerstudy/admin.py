from django import forms
from django.contrib import admin

from readerstudy.blinding import membership_conflict
from readerstudy.design.rules import DESIGN_FIELDS
from readerstudy.models import (
    AuditEvent,
    Case,
    Dataset,
    Image,
    ItemAid,
    Membership,
    Question,
    ReaderAssignment,
    ReaderStudy,
    StudyQuestion,
)
from readerstudy.question_versions import QuestionVersion


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]
    search_fields = ["name"]


class ImageInline(admin.TabularInline):
    model = Image
    extra = 0
    fields = [
        "position",
        "view_position",
        "modality",
        "width",
        "height",
        "bits_stored",
        "source_path",
        "source_uri",
    ]
    readonly_fields = fields


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["study_id", "dataset", "patient_age", "patient_sex", "study_date"]
    list_filter = ["dataset", "patient_sex"]
    search_fields = ["study_id", "study_instance_uid", "patient_id", "indication"]
    inlines = [ImageInline]


@admin.register(Image)
class ImageAdmin(admin.ModelAdmin):
    list_display = [
        "case",
        "position",
        "view_position",
        "modality",
        "width",
        "height",
        "bits_stored",
    ]
    list_filter = ["view_position", "modality", "bits_stored"]
    search_fields = ["case__study_id", "source_path", "source_uri"]
    list_select_related = ["case"]


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["source_id", "dataset", "task", "category", "correct", "present_option"]
    list_filter = ["dataset", "task", "category", "present_option"]
    search_fields = ["source_id", "text", "case__study_id"]
    list_select_related = ["dataset"]
    raw_id_fields = ["case"]


class MembershipAdminForm(forms.ModelForm):
    """A membership made or changed in the admin keeps blinding by person and X-ray as the
    members page does (readerstudy.blinding): the conflict is a form error, in its words."""

    class Meta:
        model = Membership
        fields = ["study", "user", "role", "seniority"]

    def clean(self):
        data = super().clean()
        user, role = data.get("user"), data.get("role")
        study = data.get("study") or getattr(self.instance, "study", None)
        if user is None or role is None or study is None or study.pk is None:
            return data
        old = self.instance
        unchanged = old.pk and (old.user_id, old.study_id, old.role) == (user.pk, study.pk, role)
        conflict = None if unchanged else membership_conflict(user=user, study=study, role=role)
        if conflict:
            raise forms.ValidationError(conflict)
        return data


class MembershipInline(admin.TabularInline):
    model = Membership
    form = MembershipAdminForm
    extra = 0
    raw_id_fields = ["user"]


@admin.register(ReaderStudy)
class ReaderStudyAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "title",
        "kind",
        "dataset",
        "random_order",
        "allow_revision",
        "created_at",
    ]
    list_filter = ["kind", "dataset", "random_order", "allow_revision", "lock_on_finish"]
    search_fields = ["slug", "title"]
    inlines = [MembershipInline]
    # The design is set only by readerstudy.design.services.study_design_set, which checks it
    # and refuses once anyone has answered: here it is shown, never edited. The kind is set at
    # creation (a practice set's answers are marked practice as they are given), and closing
    # reading is the PI's audited action.
    readonly_fields = [
        *DESIGN_FIELDS,
        "kind",
        "plan",
        "sitting",
        "reading_closed_at",
        "reading_closed_by",
    ]


@admin.register(StudyQuestion)
class StudyQuestionAdmin(admin.ModelAdmin):
    list_display = ["study", "position", "question", "excluded", "excluded_by", "excluded_at"]
    list_filter = ["study", "excluded", "question__task"]
    search_fields = ["question__source_id", "question__text", "excluded_reason"]
    list_select_related = ["study", "question", "excluded_by"]
    raw_id_fields = ["question"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipAdminForm
    list_display = ["study", "user", "role", "seniority", "created_at"]
    list_filter = ["role", "study"]
    search_fields = ["user__username", "study__slug"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "study", "actor", "action"]
    list_filter = ["action", "study"]
    search_fields = ["actor__username", "action"]
    readonly_fields = ["study", "actor", "action", "detail", "created_at"]


@admin.register(ReaderAssignment)
class ReaderAssignmentAdmin(admin.ModelAdmin):
    """Read-only: the recorded counterbalancing; changing it would unbalance the design."""

    list_display = ["study", "reader", "first_arm", "reader_group", "created_at"]
    list_filter = ["study"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ItemAid)
class ItemAidAdmin(admin.ModelAdmin):
    """Read-only: the AI's answer as readers were shown it."""

    list_display = ["item", "model_name", "letter", "usable"]
    list_filter = ["item__study", "usable"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(QuestionVersion)
class QuestionVersionAdmin(admin.ModelAdmin):
    """Versions are made by decisions (annotation.corrections), never edited: read only."""

    list_display = ["question", "number", "change", "correct", "accepted", "study", "created_at"]
    list_filter = ["change", "error_type"]
    search_fields = ["question__source_id"]
    list_select_related = ["question", "study"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
