from django.urls import path

from readerstudy.design import views

urlpatterns = [
    path("studies/new/", views.create, name="study-create"),
    path("studies/new/<int:job_id>/", views.create_progress, name="create-study-progress"),
    path("s/<slug:slug>/design/", views.design_page, name="pi-design"),
]
