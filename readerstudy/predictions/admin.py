from django.contrib import admin

from readerstudy.predictions.models import AIModel, Prediction


@admin.register(AIModel)
class AIModelAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "imported_at", "source_file"]
    list_filter = ["dataset"]
    search_fields = ["name"]


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["model", "question", "letter", "rule"]
    list_filter = ["model", "rule"]
    search_fields = ["question__source_id", "raw_response"]
    list_select_related = ["model", "question"]
