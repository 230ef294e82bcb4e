from django.contrib import admin
from django.urls import include, path

from analysis import triage_views
from annotation import dashboard_views, expert_views
from readerstudy import invite_views
from readerstudy import views as study_views
from readerstudy.config.api_urls import v1 as api_v1
from readerstudy.platform import account_views
from readerstudy.platform.browser_storage import SignInView, SignOutView
from readerstudy.platform.health import health
from readerstudy.platform.log_redaction import INVITATION_PATH
from readerstudy.platform.login_limits import BoundedAdminAuthenticationForm

admin.site.login_form = BoundedAdminAuthenticationForm

urlpatterns = [
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", SignOutView.as_view(), name="logout"),
    path("accounts/", account_views.account, name="account"),
    path("accounts/session/", account_views.session, name="account-session"),
    path("accounts/token/revoke/", account_views.token_revoke, name="account-token-revoke"),
    path(f"{INVITATION_PATH}<str:token>/", invite_views.accept, name="invitation-accept"),
    path("accounts/", include("django.contrib.auth.urls")),
    # The admin's sign-out clears the browser's storage too (readerstudy.platform.browser_storage).
    path("admin/logout/", SignOutView.as_view(next_page="admin:login"), name="admin-logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/", include("readerstudy.config.api_urls")),
    path("healthz", health, name="health"),
    path("", include("readerstudy.predictions.urls")),
    path("", include("readerstudy.design.urls")),
    path("", include("annotation.urls")),
    path("", include("analysis.urls")),
]

urlpatterns += [
    path(
        "studies/new/question-bank-template.<str:ext>",
        study_views.question_bank_template,
        name="question-bank-template",
    ),
]

# A path shared by pages of several layers is laid out here, once: the PI's dashboard (the
# study's summary from annotation; members and exclusions from the domain) and the expert's
# pages (the queue, ranked with AI predictions, from analysis; a question's review from
# annotation).
dashboard = [
    path("", dashboard_views.study_dashboard, name="pi-dashboard"),
    path("reviews.csv", dashboard_views.export_reviews, name="pi-reviews-csv"),
    path("feedback.csv", dashboard_views.export_feedback, name="pi-feedback-csv"),
    path("members/", study_views.members, name="pi-members"),
    path("members/invite/", invite_views.invite, name="pi-invite"),
    path("reading/", study_views.reading_settings, name="pi-reading"),
    path("results/", study_views.results_settings, name="pi-results"),
    path("close/", study_views.close_reading, name="pi-close-reading"),
    path(
        "invitations/<int:invitation_id>/",
        invite_views.invitation_action,
        name="pi-invitation",
    ),
    path(
        "members/<int:membership_id>/remove/",
        study_views.member_remove_confirm,
        name="pi-member-remove",
    ),
    path("items/<int:item_id>/exclusion/", study_views.item_exclusion, name="pi-exclusion"),
]
expert = [
    path("", triage_views.queue, name="expert-queue"),
    path("next/", triage_views.next_question, name="expert-next"),
    path("<int:item_id>/", expert_views.review_question, name="expert-review"),
    path("<int:item_id>/evidence/", triage_views.evidence, name="expert-evidence"),
]
urlpatterns += [
    path("s/<slug:slug>/dashboard/", include(dashboard)),
    path("s/<slug:slug>/expert/", include(expert)),
]

# Dark error pages in plain words with a way back, for every app (JSON for scripts).
handler400 = "readerstudy.platform.errors.bad_request"
handler403 = "readerstudy.platform.errors.permission_denied"
handler404 = "readerstudy.platform.errors.page_not_found"
handler500 = "readerstudy.platform.errors.server_error"
