"""What OPTIONS on an API view answers: its name, description, renderers and parsers.

DRF's default also describes the PUT and POST fields, and to do so calls get_object() and
get_queryset(); our views authorise through study_for_user rather than a queryset, so that
answered OPTIONS with a 500 (AssertionError: ... should either include a `queryset`). The
fields are in the OpenAPI schema (/api/schema/, /api/docs/).
"""

from rest_framework.metadata import SimpleMetadata


class ViewMetadata(SimpleMetadata):
    def determine_actions(self, request, view):
        return {}
