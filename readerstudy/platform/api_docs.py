"""The OpenAPI schema and its Swagger UI, behind the API_DOCS_PUBLIC switch.

The schema describes endpoints and fields, never data; still, a hospital deployment may not
want its API surface open to anyone who can reach the server. API_DOCS_PUBLIC=0 (the default)
asks for a signed-in user: the docs page sends anonymous visitors to the sign-in page and the
schema answers them 401; the schema takes an API token as every endpoint does.
API_DOCS_PUBLIC=1 opens both.

OPTIONS on the docs page asked DRF to render its description with the page's HTML template
renderer, which has no template for it (a 500 for anyone): it answers the allowed methods
instead.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission

from readerstudy.platform.token_auth import ExpiringTokenAuthentication

SIGN_IN = "Sign in to read the API schema (API_DOCS_PUBLIC is off)."


class _Options:
    def options(self, request, *args, **kwargs) -> HttpResponse:
        return HttpResponse(headers={"Allow": ", ".join(self.allowed_methods)})


class _Swagger(_Options, SpectacularSwaggerSplitView):
    pass


class _SignedIn(BasePermission):
    def has_permission(self, request, view) -> bool:
        return _open_to(request)


class _Schema(_Options, SpectacularAPIView):
    """The schema, read by DRF's authentication like every API endpoint: a session or an API
    token (a script or a client generator holds a token, not a session). The token first,
    so a refusal is a 401 with `WWW-Authenticate: Token`."""

    authentication_classes = [ExpiringTokenAuthentication, SessionAuthentication]
    permission_classes = [_SignedIn]

    def permission_denied(self, request, message=None, code=None):
        raise NotAuthenticated(SIGN_IN)


def _open_to(request: HttpRequest) -> bool:
    return settings.API_DOCS_PUBLIC or request.user.is_authenticated


def schema_view():
    return _Schema.as_view()


def docs_view(*, url_name: str):
    view = _Swagger.as_view(url_name=url_name)

    def docs(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not _open_to(request):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return docs
