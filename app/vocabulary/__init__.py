"""The product's one vocabulary: how every face (wizard, review window, HTML report, CLI) words things.

Nothing else turns a knob, a value, a configuration, a workload or a figure into text,
so the same thing reads the same wherever the admin meets it. The rules:

- A knob is its identifier, as typed on the command line (``nfsd_threads``); where a
  knob stands alone with room to spare (a row, a heading) ``knob_label`` adds its
  catalog title: ``nfsd_threads (nfsd threads)``.
- A knob's value is a plain decimal in the knob's own unit (``rsize=1048576``,
  ``read_ahead_kb=16384``): what ``--knob`` parses, what /proc/mounts, sysfs and the
  config files take, and what the snippets and the journal hold.
- A configuration is its settings ``knob=value``, sorted by knob, joined by ", ".
- A workload is its identifier (``seq_read``); with room, ``workload_label`` adds its
  name: ``seq_read (sequential read)``. Aliases (``seqread``, ``seq-read``) read as the identifier.
- A latency has three significant figures and its unit: ``0.412 ms``, ``4.12 ms``, ``412 ms``;
  a trial's are ``p50 1.23 ms, p99 4.12 ms, p99.9 9.87 ms``.
- Rates carry their unit: ``112.3 MB/s`` (decimal megabytes, as ``--link-mbps``) or
  ``1,234 ops/s``; an interval is ``112.3 ± 1.8 MB/s``; a share is ``18 %`` or ``3.2 %``;
  a sign is ``+`` or a real minus ``−``; a missing or non-finite number is ``—``.
- A change says where it acts, as the knob's catalog entry says: ``the server``, ``the test
  mount`` (nfs-tuner's own), ``the whole client`` (host-wide), ``both ends of the link`` (``where_text``).
- A sentence about one host starts with its name, once: ``nfs1: connection … refused``
  (``about_host``).
- A phased figure whose phases ended at their time limit says so: a cell ``1,234 ops/s
  (time-limited)``, a trial's line ``create and delete ended at their share of the 1 min 05 s
  limit: the rate of what they completed``.
- Fairness between clients: shares largest first (``client1 69 %, client2 31 %``), a
  ratio ``2.1×``, a table cell ``2.2×, Jain 0.87``, and on a trial's line, only beyond the
  noise, ``clients 2.2×, Jain 0.87`` (app.vocabulary.fairness).

The ``--json`` outputs stay raw identifiers and numbers: none of this goes into them.
"""

from app.vocabulary.hosts import about_host
from app.vocabulary.figures import (
    BYTES,
    OPS,
    figure_text,
    gain_text,
    interval_text,
    latencies_text,
    latency_text,
    memory_text,
    percent_text,
    signed_figure_text,
    signed_percent_text,
    signed_range_text,
    unit_of,
    unit_word,
)
from app.vocabulary.fairness import (
    beyond_noise_text,
    clients_note,
    fairness_cell,
    fairness_note,
    fairness_sentences,
    late_text,
    lowest_text,
    ratio_text,
    shares_text,
)
from app.vocabulary.goals import GOAL_TITLES, goal_text
from app.vocabulary.knobs import (
    change_text,
    coherence_text,
    config_text,
    held_text,
    knob_label,
    knob_value_text,
    knob_values_text,
    setting_text,
    transition_text,
    trial_config_text,
    where_text,
)
from app.vocabulary.stored import data_text
from app.vocabulary.times import (DURATION_FORM, TIME_LIMITED, bounds_text, date_text, duration_text, pace_note, parse_duration,
                                   planned_text, span_text, time_limited_text)
from app.vocabulary.workloads import (
    WORKLOAD_ALIASES,
    WORKLOAD_WORDS,
    WorkloadWords,
    workload_detail,
    workload_id,
    workload_label,
)

__all__ = [
    "about_host", "where_text", "pace_note", "planned_text", "bounds_text",
    "BYTES", "DURATION_FORM", "GOAL_TITLES", "OPS", "TIME_LIMITED", "WORKLOAD_ALIASES", "WORKLOAD_WORDS", "WorkloadWords", "change_text",
    "coherence_text", "config_text", "data_text", "date_text", "duration_text", "fairness_cell", "figure_text", "gain_text",
    "goal_text", "held_text", "ratio_text", "shares_text", "beyond_noise_text", "clients_note", "fairness_note",
    "fairness_sentences", "late_text", "lowest_text",
    "interval_text", "knob_label", "knob_value_text", "knob_values_text", "latencies_text", "latency_text", "parse_duration",
    "memory_text", "percent_text", "setting_text", "signed_figure_text",
    "signed_percent_text", "signed_range_text", "span_text", "time_limited_text", "transition_text", "trial_config_text", "unit_of", "unit_word", "workload_detail",
    "workload_id", "workload_label",
]  # fmt: skip
