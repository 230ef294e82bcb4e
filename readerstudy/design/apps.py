from django.apps import AppConfig


class DesignConfig(AppConfig):
    """A study's design and its creation with one (its pages, its task and `create_study`): in
    the domain, below the reading, which follows the design, and beside the AI predictions an
    aided arm shows."""

    name = "readerstudy.design"
    label = "design"
    verbose_name = "Study design"
