"""Where each file of the stack lives. Every path derives from ``settings().home`` (STRATA_HOME)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from schemas.config import REPO_ROOT, Settings

INFRA_DIR = REPO_ROOT / "infra"
PROCFILE = REPO_ROOT / "Procfile"
VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"


@dataclass(frozen=True)
class Layout:
    """The directories and files of one stack (one STRATA_HOME)."""

    s: Settings

    # Installed software: one directory per version, so upgrading never mixes jar sets.
    @property
    def opt_dir(self) -> Path:
        return self.s.home / "opt"

    @property
    def kafka_dist(self) -> Path:
        return self.opt_dir / f"kafka-{self.s.kafka_version}"

    @property
    def kafka_libs(self) -> Path:
        return self.kafka_dist / "libs"

    @property
    def kafka_stamp(self) -> Path:
        return self.kafka_dist / "INSTALLED"

    @property
    def minio_dist(self) -> Path:
        return self.opt_dir / f"minio-{self.s.minio_version}"

    @property
    def minio_bin(self) -> Path:
        return self.minio_dist / "minio"

    # Kafka state. Node 1 (the single local broker) keeps home/kafka; the other nodes of a local
    # multi-broker cluster get home/kafka-<id>, so that three brokers can share one STRATA_HOME.
    @property
    def kafka_home(self) -> Path:
        node = self.s.kafka_node_id
        return self.s.home / ("kafka" if node == 1 else f"kafka-{node}")

    @property
    def kafka_data(self) -> Path:
        return self.kafka_home / "data"

    @property
    def kafka_logs(self) -> Path:
        return self.kafka_home / "logs"

    @property
    def kafka_config(self) -> Path:
        return self.kafka_home / "server.properties"

    @property
    def kafka_cluster_id(self) -> Path:
        """One cluster id per home: every node of a local cluster formats its storage with it."""
        return self.s.home / "kafka" / "cluster.id"

    @property
    def kafka_log4j(self) -> Path:
        return INFRA_DIR / "kafka" / "log4j.properties"

    # MinIO state.
    @property
    def minio_data(self) -> Path:
        return self.s.home / "minio" / "data"

    # Processes started by `infra/up --detach`.
    @property
    def run_dir(self) -> Path:
        return self.s.run_dir

    def pid_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid"

    def log_file(self, name: str) -> Path:
        return self.run_dir / f"{name}.log"

    @property
    def up_report(self) -> Path:
        """JSON written by the last successful `up --detach`: seconds to healthy per component."""
        return self.run_dir / "up.json"
