"""Installs the non-Python clients of the client matrix from their registries, once per STRATA_HOME.

Each install lands in ``$STRATA_HOME/opt/clients/<name>-<version or source digest>``, built in a
temporary sibling and renamed into place when complete (as ``infra/kafka_node.py`` installs Kafka), so
a second run finds it and returns at once, and an interrupted one leaves nothing half-made behind:

- MySQL Connector/J from Maven Central (``tests/clients/java/pom.xml``, ``mvn dependency:copy-dependencies``)
  plus ``ClientMatrix.java`` compiled with ``javac``;
- Arrow's Flight SQL JDBC driver from Maven Central (``tests/clients/java/flight/pom.xml``) plus
  ``FlightSqlJdbc.java``;
- Node ``mysql2`` from the npm registry (``tests/clients/node/package.json``, ``npm install``);
- the ``mariadb`` (or ``mysql``) command-line client from Debian (``apt-get install -y mariadb-client``);
- dbt-core with dbt-doris from PyPI (``tests/clients/dbt/requirements.txt``) in a virtualenv of their own,
  since dbt pins versions of packages the project itself uses.

A client that cannot be installed here raises :class:`ClientUnavailable` with the reason; the tests
skip with it. The Python clients come from the project's dev extras (pyproject.toml).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from schemas.config import settings

HERE = Path(__file__).resolve().parent
JAVA_DIR = HERE / "java"
NODE_DIR = HERE / "node"
DBT_DIR = HERE / "dbt"
_INSTALL_TIMEOUT_S = 600


class ClientUnavailable(RuntimeError):
    """A client cannot be installed on this machine; the message says why and what would fix it."""


def clients_dir() -> Path:
    return settings().home / "opt" / "clients"


def _tool(name: str, hint: str) -> str:
    found = shutil.which(name)
    if not found:
        raise ClientUnavailable(f"{name} not found on PATH — {hint}")
    return found


def _digest(*files: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def _run(cmd: list[str], what: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise ClientUnavailable(f"{what} failed ({' '.join(cmd[:3])} …):\n{tail}")


def _install_once(target: Path, build: Callable[[Path], None], family: str) -> Path:
    """`target` when it is there; otherwise builds it in a temporary sibling, renames that into place and
    removes the other installs of its `family` (older versions or sources), which nothing uses any more."""
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        build(tmp)
        try:
            tmp.rename(target)
        except OSError:
            if not target.is_dir():  # lost a race with another installer: theirs is as good as ours
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in target.parent.glob(f"{family}-*"):
        if old != target and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return target


def connector_j_version() -> str:
    m = re.search(r"<connector\.j\.version>([^<]+)</connector\.j\.version>", (JAVA_DIR / "pom.xml").read_text())
    assert m, "tests/clients/java/pom.xml names no connector.j.version"
    return m.group(1)


# What every Java client-matrix program is compiled with: how it prints its checks' outcomes.
_JAVA_SHARED = [JAVA_DIR / "JdbcResults.java", JAVA_DIR / "Json.java"]


def _java_client(family: str, version: str, pom: Path, program: Path, what: str) -> str:
    """The Java class path with the jars `pom` fetches and `program` compiled (with `_JAVA_SHARED`)."""
    sources = [program, *_JAVA_SHARED]
    target = clients_dir() / f"{family}-{version}-{_digest(pom, *sources)}"

    def build(tmp: Path) -> None:
        mvn = _tool("mvn", "install Maven 3.8+ (apt-get install maven)")
        javac = _tool("javac", "install a JDK 17+ (apt-get install openjdk-17-jdk-headless)")
        _run([mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-Dstrata.libs={tmp / 'libs'}"],
             f"fetching {what} from Maven Central")
        shutil.rmtree(pom.parent / "target", ignore_errors=True)
        _run([javac, "-encoding", "UTF-8", "-d", str(tmp / "classes"), *map(str, sources)], f"compiling {program.name}")

    found = _install_once(target, build, family)
    return os.pathsep.join([str(found / "libs" / "*"), str(found / "classes")])


def connector_j() -> str:
    """The Java class path with Connector/J's jars and the compiled ClientMatrix."""
    return _java_client("connector-j", connector_j_version(), JAVA_DIR / "pom.xml", JAVA_DIR / "ClientMatrix.java",
                        "Connector/J")


def flight_sql_jdbc_version() -> str:
    m = re.search(r"<flight\.sql\.jdbc\.version>([^<]+)</flight\.sql\.jdbc\.version>",
                  (JAVA_DIR / "flight" / "pom.xml").read_text())
    assert m, "tests/clients/java/flight/pom.xml names no flight.sql.jdbc.version"
    return m.group(1)


def flight_sql_jdbc() -> str:
    """The Java class path with Arrow's Flight SQL JDBC driver and the compiled FlightSqlJdbc."""
    return _java_client("flight-sql-jdbc", flight_sql_jdbc_version(), JAVA_DIR / "flight" / "pom.xml",
                        JAVA_DIR / "FlightSqlJdbc.java", "the Flight SQL JDBC driver")


def mysql2_version() -> str:
    return str(json.loads((NODE_DIR / "package.json").read_text())["dependencies"]["mysql2"])


def mysql2() -> Path:
    """A directory whose node_modules holds mysql2 (for NODE_PATH)."""
    target = clients_dir() / f"node-mysql2-{mysql2_version()}-{_digest(NODE_DIR / 'package.json')}"

    def build(tmp: Path) -> None:
        npm = _tool("npm", "install Node.js 18+ with npm (apt-get install nodejs npm)")
        shutil.copy(NODE_DIR / "package.json", tmp / "package.json")
        # No lock file in the repository: the exact version is pinned in package.json.
        _run([npm, "install", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error"],
             "installing mysql2 from npm", cwd=tmp)

    return _install_once(target, build, "node-mysql2") / "node_modules"


def mysql_cli() -> str:
    """The `mariadb` (or `mysql`) client's path, installing Debian's mariadb-client when neither is there."""
    for name in ("mariadb", "mysql"):
        found = shutil.which(name)
        if found:
            return found
    apt = shutil.which("apt-get")
    if apt is None:
        raise ClientUnavailable("no mariadb or mysql client, and no apt-get to install mariadb-client")
    if os.geteuid() != 0:
        raise ClientUnavailable("no mariadb or mysql client; `apt-get install -y mariadb-client` needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    proc = subprocess.run([apt, "install", "-y", "-q", "mariadb-client"], capture_output=True, text=True,
                          env=env, timeout=_INSTALL_TIMEOUT_S)
    if proc.returncode != 0:  # a stale package list: refresh it once and try again
        subprocess.run([apt, "update", "-q"], capture_output=True, env=env, timeout=_INSTALL_TIMEOUT_S)
        proc = subprocess.run([apt, "install", "-y", "-q", "mariadb-client"], capture_output=True, text=True,
                              env=env, timeout=_INSTALL_TIMEOUT_S)
    found = shutil.which("mariadb") or shutil.which("mysql")
    if found is None:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise ClientUnavailable(f"apt-get install -y mariadb-client did not install a client:\n{tail}")
    return found


def dbt_python() -> Path:
    """The Python of a virtualenv holding dbt-core and dbt-doris, pinned in tests/clients/dbt/requirements.txt."""
    requirements = DBT_DIR / "requirements.txt"
    target = clients_dir() / f"dbt-{_digest(requirements)}"

    def build(tmp: Path) -> None:
        python = _tool("python3", "install Python 3.10+ with venv (apt-get install python3-venv)")
        _run([python, "-m", "venv", str(tmp / "venv")], "creating dbt's virtualenv")
        # Used only as `<venv>/bin/python script`, which still works once renamed into place (the
        # console scripts' #! lines would not).
        _run([str(tmp / "venv" / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "-r",
              str(requirements)], "installing dbt-core and dbt-doris from PyPI")

    return _install_once(target, build, "dbt") / "venv" / "bin" / "python"
