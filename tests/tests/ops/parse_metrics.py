"""Parses a Prometheus text exposition (the file named by METRICS_FILE) with the Prometheus client library's own parser
and prints its families as JSON, for tests/tests/ops/metrics.rs. A malformed exposition raises."""

import json
import os
import sys

from prometheus_client.parser import text_string_to_metric_families

families = [
    {
        "name": family.name,
        "type": family.type,
        "samples": [
            {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples
        ],
    }
    for family in text_string_to_metric_families(open(os.environ["METRICS_FILE"]).read())
]
json.dump(families, sys.stdout)
