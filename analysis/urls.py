from django.urls import path

from analysis import learning_views, triage_views, views

urlpatterns = [
    path("s/<slug:slug>/analysis/", views.analysis_page, name="analysis"),
    path("s/<slug:slug>/analysis/export.zip", views.export_zip, name="analysis-zip"),
    path("s/<slug:slug>/analysis/report.xlsx", views.report_xlsx, name="analysis-report"),
    path("s/<slug:slug>/analysis/names/", views.rater_names, name="analysis-names"),
    path("s/<slug:slug>/analysis/status/", views.analysis_status, name="analysis-status"),
    path(
        "s/<slug:slug>/analysis/figure-slot/<str:name>/",
        views.figure_slot,
        name="analysis-figure-slot",
    ),
    path(
        "s/<slug:slug>/analysis/figure/<str:name>.<str:fmt>",
        views.figure_download,
        name="analysis-figure",
    ),
    path(
        "s/<slug:slug>/analysis/table/<str:name>.<str:fmt>",
        views.table_download,
        name="analysis-table",
    ),
]

# Item analysis (it uses AI predictions); the expert queue's routes are in the root urls.py.
urlpatterns += [
    path("s/<slug:slug>/items/", triage_views.item_analysis_page, name="item-analysis"),
    path(
        "s/<slug:slug>/items.<str:fmt>",
        triage_views.item_analysis_download,
        name="item-analysis-download",
    ),
]

# What readers get back: their results in a study, progress over time, and a
# programme director's view of their residents.
urlpatterns += [
    path("s/<slug:slug>/results/", learning_views.results, name="reader-results"),
    path(
        "s/<slug:slug>/results/case/<int:number>/",
        learning_views.results_case,
        name="reader-results-case",
    ),
    path("s/<slug:slug>/results.csv", learning_views.results_csv, name="reader-results-csv"),
    path(
        "s/<slug:slug>/results/practise/",
        learning_views.practise_misses,
        name="reader-practise-misses",
    ),
    path("progress/", learning_views.my_progress, name="my-progress"),
    path("progress/residents/", learning_views.programme, name="programme"),
    path("progress/residents.csv", learning_views.programme_csv, name="programme-csv"),
]
