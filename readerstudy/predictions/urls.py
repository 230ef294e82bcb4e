from django.urls import path

from readerstudy.predictions import views

# A study's upload sits beside its analysis page (whose PI tools link it); a dataset's, beside
# the new-study form (whose aid model it offers).
urlpatterns = [
    path("studies/new/predictions/", views.dataset_upload, name="dataset-predictions"),
    path(
        "studies/new/predictions/confirm/",
        views.dataset_confirm,
        name="dataset-predictions-confirm",
    ),
    path("s/<slug:slug>/analysis/predictions/", views.upload, name="study-predictions"),
    path(
        "s/<slug:slug>/analysis/predictions/confirm/",
        views.confirm,
        name="study-predictions-confirm",
    ),
]
