from django.urls import path

from annotation import correction_views, practice_views, views

# The reader's pages and the site's home. The PI's dashboard and the expert pages share their
# paths with other layers' pages: the root urls.py lays those out, each in one list.
urlpatterns = [
    path("", views.home, name="home"),
    path("s/<slug:slug>/read/", views.study_start, name="reader-start"),
    path("s/<slug:slug>/read/instructions/", views.instructions, name="reader-instructions"),
    path("s/<slug:slug>/read/session/", views.session, name="reader-session"),
    path("s/<slug:slug>/read/preset/", views.reading_preset, name="reader-preset"),
    path("s/<slug:slug>/read/<int:number>/", views.case_page, name="reader-case"),
    path("s/<slug:slug>/read/<int:number>/answer/", views.case_answer, name="reader-answer"),
    path("s/<slug:slug>/read/review/", views.review, name="reader-review"),
    path("s/<slug:slug>/read/done/", views.done, name="reader-done"),
    path("img/<path:path>", views.media_image, name="media-image"),
    path("practice/new/", practice_views.practice_new, name="practice-new"),
    path(
        "practice/plans/<int:plan_id>/start/",
        practice_views.plan_start,
        name="practice-plan-start",
    ),
    # Corrections of the study's questions (experts and PIs), and the corrected bank.
    path("s/<slug:slug>/corrections/", correction_views.corrections, name="corrections"),
    path(
        "s/<slug:slug>/corrections/<int:correction_id>/",
        correction_views.correction,
        name="correction",
    ),
    path(
        "s/<slug:slug>/corrections/versions/<int:version_id>/reverse/",
        correction_views.version_reverse,
        name="version-reverse",
    ),
    path(
        "s/<slug:slug>/corrections/bank.<str:fmt>",
        correction_views.bank_download,
        name="corrections-bank",
    ),
]
