"""The analysis policy, declared once (`SWITCHES`): every switch with its type, values, default
(read from the settings where it is a setting), words, the page's and the API's query
parameter and the export's flag.

Made from it: the policy's dataclass `AnalysisSettings` (here), the page's and the API's form
(analysis.forms.AnalysisSettingsForm), the API's OpenAPI parameters and its error message
(analysis.api), the `export_analysis` flags (analysis.switches.add_flags), and the policy's
words in every output: policy.json, the XLSX settings sheet and the API's `policy`
(`AnalysisSettings.policy`), README.txt, methods.md, the figures' footnotes and the page's one
line (`describe`, `note`). A switch added to `SWITCHES` is in all of them.

No Django needed: a notebook can make an `AnalysisSettings` and run analysis.pipeline.
"""

from __future__ import annotations

import functools
from dataclasses import asdict

from analysis.confidence_analysis import ConfidencePolicy
from analysis.stats import CLUSTER_CI_METHOD, DesignPolicy
from analysis.switches import Choice, Switch, make_settings

NOT_PREDICTED = "questions a model has no prediction for are in none of its n"
KAPPA_MISSING = "pairwise deletion (each pair on the questions both answered)"
LEFT_OUT, INCLUDED = "left out", "included"

SWITCHES: tuple[Switch, ...] = (
    Switch(
        "missing",
        str,
        "wrong",
        label="Missing answers",
        help="A missing answer or a failed extraction of a model's answer.",
        choices=(
            Choice(
                "wrong",
                "count as wrong",
                words="missing answers count as wrong",
                means="a missing answer or failed extraction counts as wrong",
            ),
            Choice(
                "exclude",
                "exclude",
                words="missing answers are excluded",
                means="missing answers and failed extractions are left out of n",
            ),
        ),
        param="missing",
        flag="--missing",
        entries=lambda s: {
            "missing": s.missing,
            "missing_means": s.means("missing"),
            "not_predicted": NOT_PREDICTED,
        },
    ),
    Switch(
        "scale",
        str,
        "answer",
        label="Kappa on",
        help="What Cohen's kappa compares: the letters, or right against wrong.",
        choices=(Choice("answer", "A–D answers"), Choice("correct", "correct / incorrect")),
        param="scale",
        flag="--scale",
        entries=lambda s: {
            "kappa_scale": s.scale,
            "kappa_scale_means": s.words("scale"),
            "kappa_missing": KAPPA_MISSING,
        },
    ),
    Switch(
        "include_excluded",
        bool,
        False,
        label="Excluded questions",
        help="Questions the PI excluded.",
        choices=(
            Choice(False, "leave out", words=LEFT_OUT, param="drop"),
            Choice(True, "include", words=INCLUDED, param="keep"),
        ),
        param="excluded",
        flag="--include-excluded",
        entries=lambda s: {"excluded_questions": s.words("include_excluded")},
    ),
    Switch(
        "exclude_rejected",
        bool,
        True,
        label="Expert-rejected questions",
        help="Questions an expert rejected (a PI did not exclude).",
        choices=(
            Choice(
                True,
                "leave out",
                words=LEFT_OUT,
                means="questions an expert rejected are left out",
                param="drop",
            ),
            Choice(
                False,
                "include",
                words=INCLUDED,
                means="questions an expert rejected are included",
                param="keep",
            ),
        ),
        param="rejected",
        flag="--include-rejected",
        entries=lambda s: {
            "exclude_rejected": s.exclude_rejected,
            "rejected_questions": s.means("exclude_rejected"),
        },
    ),
    Switch(
        "ci_method",
        str,
        "wilson",
        label="Confidence intervals",
        help="The interval of a proportion, on the effective sample size by X-ray.",
        choices=(Choice("wilson", "Wilson"), Choice("clopper-pearson", "Clopper–Pearson")),
        param="ci",
        flag="--ci",
        entries=lambda s: {
            "ci_method": s.ci_method,
            "accuracy_ci": CLUSTER_CI_METHOD.format(ci=s.words("ci_method")),
        },
    ),
    Switch(
        "alpha",
        float,
        0.05,
        label="Alpha",
        help="1 − the confidence level of every interval.",
        minimum=0,
        maximum=1,
        exclusive=True,
        flag="--alpha",
        entries=lambda s: {"alpha": s.alpha, "ci_level": s.level},
    ),
    Switch("case_unit", str, "X-ray (imaging study): resampled as a whole"),
    Switch(
        "n_boot",
        int,
        1000,
        label="Bootstrap replicates",
        help="Of each kappa's percentile interval.",
        minimum=1,
        flag="--bootstrap",
        entries=lambda s: {
            "bootstrap": f"{s.n_boot} percentile replicates by X-ray, seed {s.seed}"
        },
    ),
    Switch(
        "seed",
        int,
        0,
        label="Bootstrap seed",
        minimum=0,
        flag="--seed",
        entries=lambda s: {},  # stated in n_boot's `bootstrap`
    ),
    Switch(
        "vrange",
        str,
        "-1,1",
        label="Kappa colour scale",
        help="The colour scale of the kappa heatmaps.",
        choices=(
            Choice("-1,1", "−1 … 1", words="colour scale −1…1, centred on 0"),
            Choice(
                "0,1",
                "0 … 1",
                words="colour scale 0…1: κ < 0 clipped and drawn in the 'below 0' colour",
            ),
        ),
        param="vrange",
        flag="--kappa-range",
        entries=lambda s: {"kappa_colour_scale": s.vrange},
    ),
    Switch(
        "ni_margin",
        float,
        0.05,
        label="Non-inferiority margin (accuracy)",
        help="Aided vs unaided: e.g. 0.05 = 5 percentage points.",
        minimum=0.005,
        maximum=0.5,
        step=0.005,
        param="ni_margin",
        flag="--ni-margin",
        entries=lambda s: {
            "ni_margin": s.ni_margin,
            "ni_margin_means": (
                f"aided is non-inferior to unaided when the lower CI bound of aided − unaided "
                f"accuracy is above −{s.ni_margin:g} (two-arm studies only)"
            ),
        },
    ),
    # A kappa CI from fewer X-rays than this carries a caveat.
    Switch("kappa_min_xrays", int, 20),
    # Fewer readers than this: random-readers results carry a warning, fixed readers beside.
    Switch("min_readers", int, 4),
    Switch(
        "holm_family",
        str,
        "ai_vs_reader",
        label="Holm family",
        help="The paired comparisons Holm's adjustment runs over.",
        choices=(
            Choice("ai_vs_reader", "AI vs reader pairs", words="the AI-versus-reader pairs only"),
            Choice(
                "all_pairs",
                "all pairs",
                words="every pair (reader-reader and model-model included)",
            ),
        ),
        param="holm",
        flag="--holm-family",
        entries=lambda s: {
            "holm_family": s.holm_family,
            "holm_family_means": s.words("holm_family"),
        },
    ),
    Switch(
        "time_cap_ms",
        int,
        30 * 60 * 1000,
        setting="MAX_CASE_TIME_MS",
        entries=lambda s: {
            "time_cap_ms": s.time_cap_ms,
            "time_cap_means": (
                f"a reading time above {s.time_cap_ms / 60000:g} min per answer is stored "
                "as the cap"
            ),
        },
    ),
    # Human answers given in less visible time than this are too fast to be a reading:
    # counted in the flow tables; left out of every n when exclude_fast.
    Switch("fast_answer_ms", int, 2000, setting="FAST_ANSWER_MS"),
    Switch(
        "exclude_fast",
        bool,
        False,
        label="Too-fast answers",
        help="Answers given in less time on screen than the reading policy's minimum "
        "(FAST_ANSWER_MS).",
        choices=(
            Choice(False, "flag, keep", words="flagged, kept", param="keep"),
            Choice(True, "leave out", words=LEFT_OUT, param="drop"),
        ),
        param="fast",
        flag="--exclude-fast",
        entries=lambda s: {"exclude_fast": s.exclude_fast, "fast_answers": s.fast_means()},
    ),
    # The values are readerstudy.vocabulary.KeyPolicy's (a test pins them); the default is
    # its DEFAULT_KEY_POLICY.
    Switch(
        "key_policy",
        str,
        "adjudicated",
        label="Keys",
        help="Adjudicated: each accepted correction applied (until one is accepted, the "
        "imported keys); original: the keys as imported. `key_version` says which were used.",
        choices=(
            Choice(
                "adjudicated",
                "keys as adjudicated",
                means="keys as adjudicated (each correction accepted for a question applied)",
            ),
            Choice(
                "original",
                "original keys",
                means="original keys (as imported; accepted corrections not applied)",
            ),
        ),
        param="key",
        flag="--key",
        entries=lambda s: {"key": s.key_policy, "key_means": s.means("key_policy")},
    ),
)


class PolicyWords:
    """What every AnalysisSettings says of itself: the policy object every output carries
    and the sentences the page, README.txt, methods.md and the figures' footnotes use."""

    switches: tuple[Switch, ...] = ()

    @classmethod
    def switch(cls, name: str) -> Switch:
        for switch in cls.switches:
            if switch.name == name:
                return switch
        raise KeyError(name)

    def words(self, name: str, value=None) -> str:
        """Switch `name`'s value (this policy's, or `value`) in a sentence."""
        return self.switch(name).choice(getattr(self, name) if value is None else value).phrase

    def means(self, name: str) -> str:
        """What switch `name`'s value means, in full."""
        return self.switch(name).choice(getattr(self, name)).means

    @property
    def level(self) -> str:
        return f"{(1 - self.alpha) * 100:g}%"

    def policy(self) -> dict:
        """The policy as a JSON-ready object, the same in every output: each switch's lines,
        in the declaration's order."""
        out: dict = {}
        for switch in self.switches:
            out.update(switch.policy_entries(self))
        return out

    def key(self) -> str:
        return "|".join(f"{k}={v}" for k, v in sorted(asdict(self).items()))

    def fast_means(self) -> str:
        """The too-fast policy in words (the page, policy.json, README.txt)."""
        what = (
            "left out of that reader's n (as not presented) and of the reading times"
            if self.exclude_fast
            else "kept in the analysis, counted in the flow tables (too_fast)"
        )
        return (
            f"a reader's answer given in under {self.fast_answer_ms:g} ms on screen is {what} "
            "(a time of 0 is not recorded, not fast)"
        )

    def design_policy(self) -> DesignPolicy:
        """The part of this policy the design-aware (aided vs unaided) results rest on."""
        return DesignPolicy(missing=self.missing, alpha=self.alpha, ni_margin=self.ni_margin)

    def confidence_policy(self) -> ConfidencePolicy:
        """The part of this policy the confidence, ROC and calibration tables rest on."""
        return ConfidencePolicy(
            alpha=self.alpha, n_boot=self.n_boot, seed=self.seed, min_readers=self.min_readers
        )

    def describe(self) -> str:
        """One line for the page: the policy in force."""
        return (
            f"{self.words('missing')}; "
            f"excluded questions {self.words('include_excluded')}; "
            f"expert-rejected questions {self.words('exclude_rejected')}; "
            f"{self.words('ci_method')} "
            f"{self.level} CIs on the effective sample size by X-ray; κ on "
            f"{self.words('scale')} (pairwise deletion); the X-ray is the case for "
            f"OR/Hillis, paired comparisons and bootstraps; Holm over "
            f"{self.words('holm_family')}; reading time capped at "
            f"{self.time_cap_ms / 60000:g} min per answer; answers under "
            f"{self.fast_answer_ms:g} ms {self.words('exclude_fast')}; "
            f"{self.words('key_policy')}"
        )

    def selection_note(self, excluded: int | None = None, rejected: int | None = None) -> str:
        """The questions the policy leaves out (or keeps), in words, with their counts when
        given: those a PI excluded, and those an expert rejected that a PI did not exclude
        (the flow table counts a question both excluded and rejected once, as excluded)."""

        def count(n: int | None, word: str) -> str:
            if n is None:
                return f"{word}s"
            return f"{n} {word}{'' if n == 1 else 's'}"

        further = "question" if excluded is None else "further question"
        return (
            f"{count(excluded, 'question')} a PI excluded {self.words('include_excluded')}; "
            f"{count(rejected, further)} an expert rejected {self.words('exclude_rejected')}"
        )

    def note(
        self, figure: str, scale: str | None = None, left_out: tuple[int, int] | None = None
    ) -> str:
        """The footnote of one figure: only what applies to it. `left_out`: the counts of
        questions a PI excluded and (further) an expert rejected (`AnalysisResult.left_out`)."""
        excluded = self.selection_note(*(left_out or (None, None)))
        if figure == "accuracy":
            missing = (
                "a missing answer or failed extraction counts as wrong"
                if self.missing == "wrong"
                else "missing answers are left out of n"
            )
            return (
                f"Whiskers: {self.words('ci_method')} {self.level} CI on the effective sample "
                f"size (questions clustered by X-ray). {missing.capitalize()}; {excluded}."
            )
        if figure == "kappa":
            return (
                f"Cohen's κ on {self.words('scale', scale)}; each pair on the questions both "
                f"answered (pairwise deletion); {excluded}; {self.words('vrange')}. CIs: "
                "kappa_pairs table."
            )
        if figure == "time":
            return (
                "Time on screen per answered question, as recorded (0 = not recorded, left "
                f"out; capped at {self.time_cap_ms / 60000:g} min per answer). Right: each "
                f"reader's answers in quartiles of their own time, {self.words('ci_method')} "
                f"{self.level} CI by X-ray; {excluded}."
            )
        raise ValueError(f"no figure {figure!r}")


@functools.cache
def _settings_class(switches: tuple[Switch, ...]) -> type:
    return make_settings(switches, PolicyWords, __name__)


def settings_class() -> type:
    """The policy's dataclass as `SWITCHES` declares it now (a test may extend them)."""
    return _settings_class(SWITCHES)


def default():
    """The default policy: what the page shows unless asked otherwise, and what the worker
    keeps up to date."""
    return settings_class()()


def asked() -> list[Switch]:
    """The switches the page and the API take, in the declaration's order."""
    return [switch for switch in SWITCHES if switch.param]


AnalysisSettings = settings_class()
