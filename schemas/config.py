"""Every address, credential, port and path Strata uses, in one validated model.

Values come from, highest priority first: environment variables prefixed ``STRATA_``
(``STRATA_KAFKA_PORT=19092``), a TOML file named by ``STRATA_CONFIG``, then local defaults.

It lives in ``schemas`` rather than ``infra`` because every layer reads it and ``schemas`` is the
one package every layer may import (DESIGN §2); ``infra`` owns *starting* things, not this contract.
Secrets are ``SecretStr`` so that a logged or printed config shows ``**********``.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]


class ConfigError(ValueError):
    """The configuration is invalid; the message names every offending key."""


class _TomlSource(PydanticBaseSettingsSource):
    """Reads the TOML file named by STRATA_CONFIG (flat keys, same names as the fields)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("STRATA_CONFIG")
        if not path:
            return {}
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise ConfigError(f"STRATA_CONFIG: cannot read {path}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"STRATA_CONFIG: {path} is not valid TOML: {exc}") from exc
        return {str(k): v for k, v in data.items()}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="STRATA_", extra="forbid", frozen=True)

    home: Path = Field(default=REPO_ROOT / "var", description="root of every file the stack writes")

    kafka_version: str = "3.9.1"
    kafka_host: str = "127.0.0.1"
    kafka_port: int = 9092
    # A real cluster: its bootstrap list ("b1:9093,b2:9093") instead of the local broker, and the
    # librdkafka settings every Strata client uses with it (security.protocol, sasl.mechanism,
    # sasl.username, ssl.ca.location, …; STRATA_KAFKA_CLIENT_PROPERTIES as a JSON object). The SASL
    # password is kept apart so that it is never printed with the rest.
    kafka_brokers: str | None = None
    kafka_client_properties: dict[str, str] = Field(default_factory=dict)
    kafka_sasl_password: SecretStr = SecretStr("")
    # S3 over TLS with a private CA: the CA bundle every object store client trusts (resources
    # with an https:// endpoint verify against it; None: the system's CAs).
    s3_ca_file: Path | None = None
    kafka_controller_port: int = 9093
    # The local broker's Strata listener (SASL_PLAINTEXT, SCRAM-SHA-512), next to the plain one: every
    # Strata process of a local stack connects here as this principal, the broker's only super user,
    # and the ACLs (infra/kafka_acl.py) keep Strata's topics, groups and transactional ids to it. The
    # password is generated on first start into `kafka_password_file`, never configured or printed.
    kafka_sasl_listener_port: int = 9094
    kafka_sasl_listener_user: str = Field(default="strata", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    # A local cluster of several such brokers (the scale-out rehearsal): their Strata listeners
    # ("127.0.0.1:23002,127.0.0.1:23012,…"), while `kafka_brokers` lists their plain ones for outside
    # clients. None: this host's `kafka_sasl_listener_port`.
    kafka_strata_listeners: str | None = None
    # A local multi-broker cluster (the scale-out rehearsal): this broker's KRaft node id, and the
    # controller quorum every node of it names ("1@127.0.0.1:9093,2@127.0.0.1:9193,…"). None: a
    # single node that is its own quorum ("<kafka_node_id>@<kafka_host>:<kafka_controller_port>").
    kafka_node_id: int = Field(default=1, ge=1)
    kafka_voters: str | None = None
    # Replicas of Strata's internal topics and of Kafka's own (offsets, transaction state), and how
    # many must have a write before acks=all returns. 1/1 for one broker; 3/2 survives losing one.
    kafka_replication_factor: int = Field(default=1, ge=1)
    kafka_min_insync_replicas: int = Field(default=1, ge=1)
    kafka_heap: str = "1G"
    topic_partitions: int = Field(default=1, ge=1, le=64)

    minio_version: str = "v0.0.0-20260212201848-7aac2a2c5b7c"
    minio_host: str = "127.0.0.1"
    minio_port: int = 9000
    minio_console_port: int = 9001
    minio_root_user: str = "minioadmin"
    minio_root_password: SecretStr = SecretStr("minioadmin")
    # The SQL port's root password; empty only for a local stack (the server warns at start).
    root_password: SecretStr = SecretStr("")

    sql_host: str = "127.0.0.1"
    sql_port: int = 9030
    http_port: int = 8030
    # Doris' `arrow_flight_sql_port`: Arrow Flight SQL (query.flight), served by the SQL server with
    # the SQL port's logins and privileges; 0 turns it off.
    arrow_flight_sql_port: int = 9090
    # The MySQL protocol's limits (query.wire): the largest statement or packet a client may send
    # (MySQL's max_allowed_packet, 64 MB), how long a socket may take from connecting to a finished
    # login before it is closed, and how many prepared statements one connection may keep open.
    sql_max_packet_bytes: int = Field(default=64 << 20, ge=1 << 20, le=1 << 30)
    sql_handshake_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    sql_max_prepared_statements: int = Field(default=16382, ge=1)
    # A text-protocol SELECT's rows go to the client as DuckDB produces them, a record batch at a
    # time (query.streamed_rows); off: fetched whole first (the path before streaming, for comparison).
    sql_stream_results: bool = True
    # Threads that parse and execute statements off the event loop (each running statement holds one).
    sql_worker_threads: int = Field(default=64, ge=2, le=1024)
    # Doris' FE `qe_max_connection`: client connections of this SQL server at once, logged in or not
    # (a user's own share is its `max_user_connections` property).
    qe_max_connection: int = Field(default=1024, ge=1, le=65535)
    worker_port: int = 6066
    # Names one worker process among several of a cluster (its group member id and its state
    # directories); empty for the single worker of a local stack.
    worker_instance: str = Field(default="", pattern=r"^[A-Za-z0-9_-]{0,40}$")

    ssd_root: Path | None = None
    hdd_root: Path | None = None
    # Size cap of each process's local cache of remote (cooled) rowset files.
    file_cache_bytes: int = Field(default=1 << 30, ge=0)

    # The tiering agent: how often it looks for due rowsets, how long a moved rowset's local copy
    # stays for queries that resolved their snapshot before the move, and the S3 client's timeouts.
    tiering_interval_s: float = Field(default=1.0, gt=0)
    cooldown_local_grace_s: float = Field(default=10.0, ge=0)
    s3_connect_timeout_s: float = Field(default=3.0, gt=0)
    s3_read_timeout_s: float = Field(default=20.0, gt=0)
    # What one S3() table function, Broker Load or INTO OUTFILE may move through a SQL server's
    # memory at once (all matched objects together): more is refused with an error saying so.
    s3_transfer_max_bytes: int = Field(default=512 << 20, gt=0)
    # How much of a Stream Load body or Broker Load file is read, checked and written at a time: a
    # chunk's rows take about fifteen times its bytes at their peak, whatever the body's size.
    stream_load_chunk_bytes: int = Field(default=8 << 20, gt=0)
    # The largest Stream Load body that must be read whole (2PC, group commit, partial_columns, AUTO
    # PARTITION, a JSON document, CSV with enclose/escape): its rows take about ten times its bytes.
    load_whole_max_bytes: int = Field(default=512 << 20, gt=0)

    # SSD data of a partition without its own storage_cooldown_time moves to HDD this long after the
    # partition was created (Doris' storage_cooldown_second, 30 days).
    storage_cooldown_seconds: float = Field(default=30 * 86400.0, gt=0)
    # How often the dynamic partition scheduler looks at every dynamic table (Doris'
    # dynamic_partition_check_interval_seconds); it also runs at once when such a table changes.
    dynamic_partition_check_interval_s: float = Field(default=600.0, gt=0)
    # Tests only: the scheduler and the tiering agent run on the wall clock plus an offset a test
    # moves forward (projections.policy_clock), so a year of partitions passes in seconds.
    simulated_clock: bool = False

    # Projection snapshots (projections.snapshots): the worker's leader uploads a RocksDB checkpoint
    # of its replica, with the log position it holds, to this bucket of the stack's MinIO every
    # interval (0: never); a process whose projection directory is empty restores the newest one
    # (unless `projection_snapshot_restore` is off) and catches up from the log instead of from 0.
    projection_snapshot_interval_s: float = Field(default=300.0, ge=0)
    projection_snapshot_restore: bool = True
    projection_snapshot_bucket: str = Field(default="strata-snapshots", pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")

    # How long a statement waits for its command's outcome on strata.events before it fails.
    command_timeout_s: float = Field(default=30.0, gt=0)

    # Background agents of the worker.
    compaction_interval_s: float = Field(default=2.0, gt=0)
    recycle_interval_s: float = Field(default=5.0, gt=0)
    # A stale rowset outlives its last possible reader by this long before its file is deleted;
    # also how old an unreferenced file must be before it counts as an orphan (it must exceed
    # command_timeout_s, the longest a written file can wait for its commit).
    recycle_grace_s: float = Field(default=120.0, ge=0)
    # How long a dropped table without time travel can be brought back by RECOVER TABLE (Doris'
    # catalog_trash_expire_second); a time-travel table stays recoverable for its retention.
    recovery_window_s: float = Field(default=86400.0, ge=0)
    # Seconds in one day of `time_travel_retention_days`. Only tests shorten it, to watch
    # retention pass.
    time_travel_day_s: float = Field(default=86400.0, gt=0)

    @field_validator("kafka_port", "kafka_controller_port", "kafka_sasl_listener_port", "minio_port",
                     "minio_console_port", "sql_port", "http_port", "worker_port", "arrow_flight_sql_port")
    @classmethod
    def _is_port(cls, value: int, info: ValidationInfo) -> int:
        if value == 0 and info.field_name == "arrow_flight_sql_port":
            return value
        if not 1 <= value <= 65535:
            raise ValueError(f"{value} is not a TCP port (1-65535)")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))

    # Derived paths: one place decides where each thing lives under `home`.
    @property
    def kafka_bootstrap(self) -> str:
        return self.kafka_brokers or f"{self.kafka_host}:{self.kafka_port}"

    @property
    def kafka_password_file(self) -> Path:
        """The local stack's Strata principal password (mode 0600), made by infra/kafka_node.py."""
        return self.home / "secrets" / "kafka-strata.password"

    def local_kafka_password(self) -> str | None:
        """The local stack's Strata principal password; None before `infra/up` made it."""
        try:
            return self.kafka_password_file.read_text().strip() or None
        except FileNotFoundError:
            return None

    def kafka_client(self, **properties: Any) -> dict[str, Any]:
        """librdkafka settings for a Strata client of the cluster: bootstrap, security, then `properties`.

        A configured cluster (`kafka_brokers`) is used as configured. A local stack (or a local cluster
        with `kafka_strata_listeners`) is reached on its Strata listener as the Strata principal, since
        the plain listener may not touch Strata's topics; a home whose broker predates that listener (no
        password file yet) still gets the plain one, so a running old stack keeps working until its next
        `infra/down` / `infra/up`.
        """
        own = self.kafka_brokers is None or self.kafka_strata_listeners is not None
        local = self.local_kafka_password() if own else None
        conf: dict[str, Any]
        if local is not None:
            listeners = self.kafka_strata_listeners or f"{self.kafka_host}:{self.kafka_sasl_listener_port}"
            conf = {"bootstrap.servers": listeners,
                    "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": self.kafka_sasl_listener_user, **self.kafka_client_properties}
        else:
            conf = {"bootstrap.servers": self.kafka_bootstrap, **self.kafka_client_properties}
        password: str | None = local or self.kafka_sasl_password.get_secret_value()
        if not password and str(conf.get("security.protocol", "")).upper().startswith("SASL"):
            # None configured: the home's password file (an operator's way to keep it out of the
            # environment and the config file).
            password = self.local_kafka_password()
        if password:
            conf["sasl.password"] = password
        conf.update(properties)
        return conf

    @property
    def minio_endpoint(self) -> str:
        return f"{self.minio_host}:{self.minio_port}"

    @property
    def ssd_dir(self) -> Path:
        return self.ssd_root or self.home / "data" / "ssd"

    @property
    def hdd_dir(self) -> Path:
        return self.hdd_root or self.home / "data" / "hdd"

    @property
    def state_dir(self) -> Path:
        """Where each process keeps its RocksDB projections."""
        return self.home / "state"

    @property
    def worker_state_dir(self) -> Path:
        """This worker's projections (the sequencer's, the agents'): apart from another worker's."""
        return self.state_dir / f"worker-{self.worker_instance}" if self.worker_instance else self.state_dir

    @property
    def cache_dir(self) -> Path:
        """Each process's file cache of remote rowsets (a subfolder per process)."""
        return self.home / "cache"

    @property
    def secret_key_file(self) -> Path:
        """The machine-local key that seals secrets before they go on the log."""
        return self.home / "secrets" / "strata.key"

    @property
    def run_dir(self) -> Path:
        """Pid files and logs of the processes `infra/up` started."""
        return self.home / "run"

    def redacted(self) -> dict[str, Any]:
        """The settings as a dict safe to print: secrets stay masked."""
        return {k: (str(v) if isinstance(v, SecretStr | Path) else v) for k, v in self}


def load_settings(**overrides: Any) -> Settings:
    """Builds the settings, turning pydantic's errors into one message naming each bad key."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"]) or "?"
            problems.append(f"STRATA_{key.upper()}: {err['msg']}")
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()


def strata_version() -> str:
    """The installed Strata's version (SHOW BACKENDS / FRONTENDS, the workers' /health)."""
    try:
        return version("strata")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"
