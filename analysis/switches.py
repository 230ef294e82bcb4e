"""A switch of the analysis policy (`Switch`, its values `Choice`) and what a declaration of
switches makes: the policy's frozen dataclass, the commands' flags, and the words for
the values a switch accepts (the API's error message, the OpenAPI descriptions, the CLI's
errors). The declaration itself is analysis.policy.SWITCHES; the page's and the API's form
(analysis.forms) and the OpenAPI parameters (analysis.api) are made from it there.

No Django needed: a default that is a Django setting is read from the settings when Django is
configured, and is the switch's own default in a notebook without Django.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, make_dataclass
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class Choice:
    """One value a switch takes, with its words."""

    value: Any
    # The form's choice: a word or two.
    label: str
    # In a sentence (the page's one-line policy, figure notes, methods.md); the label if empty.
    words: str = ""
    # In full, in policy.json (`<switch>_means` and the like).
    means: str = ""
    # As the page's and the API's query and the export's flag spell it; str(value) if empty.
    param: str = ""

    @property
    def spelt(self) -> str:
        return self.param or str(self.value)

    @property
    def phrase(self) -> str:
        return self.words or self.label


@dataclass(frozen=True)
class Switch:
    """One switch of the analysis policy: the field of the policy's dataclass `name`, its type
    and default, the values it takes (`choices`, or a number within `minimum`..`maximum` in
    steps of `step`), its words, and where it is asked: the page's and the API's query
    parameter `param` and the export's `flag` (none: the switch is fixed, or a setting)."""

    name: str
    type: type
    default: Any
    label: str = ""
    help: str = ""
    choices: tuple[Choice, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive: bool = False  # the bounds themselves are refused
    step: float | None = None
    # A Django setting that gives the default (`default` where Django is not configured).
    setting: str = ""
    param: str = ""
    flag: str = ""
    # The switch's lines in the policy object (policy.json, the XLSX settings sheet, the API's
    # `policy`, the page's full policy), from the whole policy; by default its name and value,
    # and what the chosen value means where the choices say.
    entries: Callable[[Any], dict[str, Any]] | None = None

    def __post_init__(self):
        if self.type is bool and {c.value for c in self.choices} != {False, True}:
            raise ValueError(f"switch {self.name}: a yes/no switch has the choices False, True")

    def default_value(self) -> Any:
        """The default: the setting's value where it is a setting and Django is configured."""
        if not self.setting:
            return self.default
        try:
            from django.conf import settings
            from django.core.exceptions import ImproperlyConfigured
        except ImportError:
            return self.default
        try:
            return getattr(settings, self.setting)
        except ImproperlyConfigured:
            return self.default

    def choice(self, value: Any) -> Choice:
        for choice in self.choices:
            if choice.value == value:
                return choice
        raise ValueError(f"{self.name}: no choice {value!r}")

    def spell(self, value: Any) -> str:
        """`value` as the query and the flags spell it."""
        if self.choices:
            return self.choice(value).spelt
        return f"{value:g}" if isinstance(value, float) else str(value)

    def accepts(self) -> str:
        """The values this switch accepts, in words ("wrong|exclude", "0.005–0.5 in steps of
        0.005"): the API's error message, the OpenAPI descriptions, the CLI's errors."""
        if self.choices:
            return "|".join(choice.spelt for choice in self.choices)
        kind = "an integer" if self.type is int else "a number"
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            span = f"{low:g}–{high:g}" if not self.exclusive else f"between {low:g} and {high:g}"
        elif low is not None:
            span = f"{kind} above {low:g}" if self.exclusive else f"{kind} of at least {low:g}"
        elif high is not None:
            span = f"{kind} below {high:g}" if self.exclusive else f"{kind} of at most {high:g}"
        else:
            span = kind
        return span + (f" in steps of {self.step:g}" if self.step else "")

    def parse(self, text: str) -> Any:
        """The value spelt `text`; ValueError saying what is accepted."""
        if self.choices:
            for choice in self.choices:
                if choice.spelt == text:
                    return choice.value
            raise ValueError(f"{self.param or self.name} takes {self.accepts()}, not {text!r}")
        try:
            value = self.type(text)
        except (TypeError, ValueError):
            raise ValueError(f"{self.param or self.name} takes {self.accepts()}") from None
        self.check(value)
        return self.normalise(value)

    def check(self, value: float) -> None:
        """ValueError unless the number `value` is within the bounds, on a step."""
        low, high = self.minimum, self.maximum
        below = low is not None and (value <= low if self.exclusive else value < low)
        above = high is not None and (value >= high if self.exclusive else value > high)
        off_step = self.step is not None and not _on_step(value, self.step, low or 0)
        if below or above or off_step:
            raise ValueError(f"{self.param or self.name} takes {self.accepts()}, not {value:g}")

    def normalise(self, value: Any) -> Any:
        """A stepped number rounded to its step's digits: 0.015 and 0.015000000001 are one
        policy (each policy is a full analysis in the background)."""
        if self.step is None or value is None:
            return value
        return round(value, _digits(self.step))

    def policy_entries(self, settings: Any) -> dict[str, Any]:
        if self.entries is not None:
            return self.entries(settings)
        value = getattr(settings, self.name)
        out = {self.name: value}
        if self.choices and self.choice(value).means:
            out[f"{self.name}_means"] = self.choice(value).means
        return out


def _digits(step: float) -> int:
    return max(0, -int(Decimal(repr(step)).as_tuple().exponent))


def _on_step(value: float, step: float, offset: float) -> bool:
    steps = (value - offset) / step
    return abs(steps - round(steps)) < 1e-9


def make_settings(switches: tuple[Switch, ...], base: type, module: str) -> type:
    """The frozen dataclass of a policy: one field per switch (keyword-only, its default the
    switch's, read from the settings at each instance where it is a setting), `base`'s
    methods, and the switches it was made from (`switches`)."""
    fields = []
    for switch in switches:
        if switch.setting:
            default = field(default_factory=switch.default_value)
        else:
            default = field(default=switch.default)
        fields.append((switch.name, switch.type, default))
    return make_dataclass(
        "AnalysisSettings",
        fields,
        bases=(base,),
        namespace={"__module__": module, "switches": switches},
        frozen=True,
        kw_only=True,
    )


def add_flags(parser: argparse.ArgumentParser, switches: Iterable[Switch]) -> None:
    """A command's flags, one per switch with a `flag`: a yes/no switch is a flag that turns
    its default over; the others take a value as the query spells it. Each default is the
    page's (a setting's value where the switch is a setting)."""
    for switch in switches:
        default = switch.default_value()
        if not switch.flag:
            continue
        if switch.type is bool:
            other = next(c for c in switch.choices if c.value != default)
            parser.add_argument(
                switch.flag,
                dest=switch.name,
                action="store_const",
                const=other.value,
                default=default,
                help=_escaped(
                    f"{switch.label}: {other.label} (default: {switch.choice(default).label})."
                    + (f" {switch.help}" if switch.help else "")
                ),
            )
            continue
        takes = switch.accepts()
        parser.add_argument(
            switch.flag,
            dest=switch.name,
            type=_argument_type(switch),
            default=default,
            # The values as the query spells them; a number's name, and what it takes in words.
            metavar=takes if switch.choices else switch.flag.lstrip("-").replace("-", "_").upper(),
            help=_escaped(
                f"{switch.label}{'' if switch.choices else ': ' + takes} "
                f"(default: {switch.spell(default)})." + (f" {switch.help}" if switch.help else "")
            ),
        )


def _escaped(help_text: str) -> str:
    return help_text.replace("%", "%%")  # argparse formats its help with %


def _argument_type(switch: Switch) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return switch.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = switch.name  # argparse names the type in its error
    return parse


def from_flags(cls: type, options: Mapping[str, Any]) -> Any:
    """The policy the export command's options ask for (`add_flags`)."""
    flagged = {s.name: options[s.name] for s in cls.switches if s.flag and s.name in options}
    return cls(**flagged)
