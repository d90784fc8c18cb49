"""The evaluations' paper-vs-released switches: `evaluate` defines them as flags, and the switch
table of docs/methods/overview.md lists them beside the methods' training switches
(`MethodSpec.options`). They sit with the baselines, above the tasks: one is a task's
(`eval.short_term_planning`), one a baseline's (`plm_mean`)."""
from tfdialemb.baselines.plm_mean import PLM_INPUT
from tfdialemb.eval.short_term_planning import SCORER

EVALUATION_SWITCHES = (SCORER, PLM_INPUT)
