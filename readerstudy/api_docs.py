"""The OpenAPI schema and its Swagger UI, behind the API_DOCS_PUBLIC switch.

The schema describes endpoints and fields, never data; still, a hospital deployment may not
want its API surface open to anyone who can reach the server. API_DOCS_PUBLIC=0 (the default)
asks for a signed-in user: the docs page sends anonymous visitors to the sign-in page and the
schema answers them 401. API_DOCS_PUBLIC=1 opens both (issue 25, finding 12).

OPTIONS on the docs page asked DRF to render its description with the page's HTML template
renderer, which has no template for it (a 500 for anyone, finding 9): it answers the allowed
methods instead.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

SIGN_IN = "Sign in to read the API schema (API_DOCS_PUBLIC is off)."


class _Options:
    def options(self, request, *args, **kwargs) -> HttpResponse:
        return HttpResponse(headers={"Allow": ", ".join(self.allowed_methods)})


class _Swagger(_Options, SpectacularSwaggerSplitView):
    pass


class _Schema(_Options, SpectacularAPIView):
    pass


def _open_to(request: HttpRequest) -> bool:
    return settings.API_DOCS_PUBLIC or request.user.is_authenticated


def schema_view():
    view = _Schema.as_view()

    def schema(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not _open_to(request):
            return JsonResponse({"detail": SIGN_IN}, status=401)
        return view(request, *args, **kwargs)

    return schema


def docs_view(*, url_name: str):
    view = _Swagger.as_view(url_name=url_name)

    def docs(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not _open_to(request):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return docs
