from django.urls import path

from annotation import dashboard_views, expert_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("s/<slug:slug>/read/", views.study_start, name="reader-start"),
    path("s/<slug:slug>/read/instructions/", views.instructions, name="reader-instructions"),
    path("s/<slug:slug>/read/session/", views.session, name="reader-session"),
    path("s/<slug:slug>/read/<int:number>/", views.case_page, name="reader-case"),
    path("s/<slug:slug>/read/<int:number>/answer/", views.case_answer, name="reader-answer"),
    path("s/<slug:slug>/read/review/", views.review, name="reader-review"),
    path("s/<slug:slug>/read/done/", views.done, name="reader-done"),
    path("s/<slug:slug>/expert/<int:item_id>/", expert_views.review_question, name="expert-review"),
    path("img/<path:path>", views.media_image, name="media-image"),
    path("s/<slug:slug>/dashboard/", dashboard_views.study_dashboard, name="pi-dashboard"),
    path(
        "s/<slug:slug>/dashboard/reviews.csv",
        dashboard_views.export_reviews,
        name="pi-reviews-csv",
    ),
    path(
        "s/<slug:slug>/dashboard/feedback.csv",
        dashboard_views.export_feedback,
        name="pi-feedback-csv",
    ),
]
