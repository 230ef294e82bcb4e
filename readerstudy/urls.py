from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from readerstudy import account_views, invite_views
from readerstudy import views as study_views
from readerstudy.api_urls import v1 as api_v1
from readerstudy.health import health

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/", account_views.account, name="account"),
    path("accounts/token/revoke/", account_views.token_revoke, name="account-token-revoke"),
    path("accounts/invitation/<str:token>/", invite_views.accept, name="invitation-accept"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/", include("readerstudy.api_urls")),
    path("healthz", health, name="health"),
    path("", include("annotation.urls")),
    path("", include("analysis.urls")),
]

urlpatterns += [
    path(
        "studies/new/question-bank-template.<str:ext>",
        study_views.question_bank_template,
        name="question-bank-template",
    ),
    path("s/<slug:slug>/dashboard/members/", study_views.members, name="pi-members"),
    path("s/<slug:slug>/dashboard/members/invite/", invite_views.invite, name="pi-invite"),
    path(
        "s/<slug:slug>/dashboard/invitations/<int:invitation_id>/",
        invite_views.invitation_action,
        name="pi-invitation",
    ),
    path(
        "s/<slug:slug>/dashboard/members/<int:membership_id>/remove/",
        study_views.member_remove_confirm,
        name="pi-member-remove",
    ),
    path(
        "s/<slug:slug>/dashboard/items/<int:item_id>/exclusion/",
        study_views.item_exclusion,
        name="pi-exclusion",
    ),
]

# Dark error pages in plain words with a way back, for every app (JSON for scripts).
handler400 = "readerstudy.errors.bad_request"
handler403 = "readerstudy.errors.permission_denied"
handler404 = "readerstudy.errors.page_not_found"
handler500 = "readerstudy.errors.server_error"
