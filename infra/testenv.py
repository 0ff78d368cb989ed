"""The test stack's settings: STRATA_HOME=<repo>/var/test, every port shifted by +10000, and
shorter tiering delays so tests watch cooldown (and MinIO faults) in seconds.

``python -m infra.testenv`` prints ``export`` lines for bash (for variables not already set);
:func:`test_env` gives the same as a dict (bench/startup uses it). The shifted ports derive from
the defaults in schemas/config.py, so they follow when a default changes.
"""

from __future__ import annotations

import os
import shlex
import sys

from schemas.config import REPO_ROOT, Settings

PORT_SHIFT = 10000
# Settings the test stack shortens (a test may still override each from its environment).
TEST_OVERRIDES = {"STRATA_TIERING_INTERVAL_S": "0.5", "STRATA_COOLDOWN_LOCAL_GRACE_S": "2",
                  "STRATA_S3_CONNECT_TIMEOUT_S": "1", "STRATA_S3_READ_TIMEOUT_S": "3", "STRATA_SIMULATED_CLOCK": "true",
                  "STRATA_DYNAMIC_PARTITION_CHECK_INTERVAL_S": "1"}
PORT_FIELDS = ("kafka_port", "kafka_controller_port", "kafka_sasl_listener_port", "minio_port",
               "minio_console_port", "sql_port", "http_port", "worker_port", "arrow_flight_sql_port")


def test_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """STRATA_* values for the test stack; variables already in `environ` win."""
    environ = dict(os.environ if environ is None else environ)
    out = {"STRATA_HOME": str(REPO_ROOT / "var" / "test"), **TEST_OVERRIDES}
    for name in PORT_FIELDS:
        default = Settings.model_fields[name].default
        out[f"STRATA_{name.upper()}"] = str(int(default) + PORT_SHIFT)
    return {k: environ.get(k, v) for k, v in out.items()}


def main() -> int:
    for k, v in test_env().items():
        print(f"export {k}={shlex.quote(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
