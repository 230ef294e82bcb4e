from django.contrib import admin

from annotation.models import (
    Answer,
    AnswerRevision,
    Correction,
    CorrectionVote,
    ExpertReview,
    ReaderCompletion,
)
from readerstudy.vocabulary import ANSWER_FIELDS


class RevisionInline(admin.TabularInline):
    model = AnswerRevision
    extra = 0
    readonly_fields = ["editor", "created_at", "old", "new", "time_ms"]
    can_delete = False


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = [
        "item",
        "reader",
        *(f.name for f in ANSWER_FIELDS if f.choices is not None or f.scaled),
        "time_ms",
        "revisions_count",
        "updated_at",
    ]
    list_filter = [
        "item__study",
        *(f.name for f in ANSWER_FIELDS if (f.choices and not f.required) or f.scaled),
    ]
    search_fields = ["reader__username", "item__question__source_id", "comment"]
    list_select_related = ["item__study", "reader"]
    inlines = [RevisionInline]


@admin.register(AnswerRevision)
class AnswerRevisionAdmin(admin.ModelAdmin):
    list_display = ["answer", "editor", "created_at", "time_ms"]
    search_fields = ["editor__username"]


@admin.register(ReaderCompletion)
class ReaderCompletionAdmin(admin.ModelAdmin):
    list_display = ["study", "reader", "finished_at", "locked"]
    list_filter = ["study", "locked"]


@admin.register(ExpertReview)
class ExpertReviewAdmin(admin.ModelAdmin):
    list_display = [
        "item",
        "expert",
        "decision",
        "difficulty",
        "flag_multiple_valid",
        "flag_image_mismatch",
        "updated_at",
    ]
    list_filter = [
        "item__study",
        "decision",
        "flag_multiple_valid",
        "flag_comparison",
        "flag_clinically_invalid",
        "flag_hallucinated",
        "flag_image_mismatch",
    ]
    search_fields = ["expert__username", "item__question__source_id", "comment"]
    list_select_related = ["item__study", "expert"]


class VoteInline(admin.TabularInline):
    model = CorrectionVote
    extra = 0
    readonly_fields = ["voter", "agree", "note", "created_at"]
    can_delete = False


@admin.register(Correction)
class CorrectionAdmin(admin.ModelAdmin):
    """Proposals change only through their services (votes, decisions): read only here."""

    list_display = ["item", "kind", "error_type", "proposer", "status", "created_at", "version"]
    list_filter = ["status", "kind", "error_type", "item__study"]
    search_fields = ["item__question__source_id", "proposer__username"]
    list_select_related = ["item__study", "proposer", "version"]
    inlines = [VoteInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
