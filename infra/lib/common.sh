# Sourced by the infra/ entry points: finds the repo root and makes sure .venv is current.
# shellcheck shell=bash

STRATA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export STRATA_ROOT
VENV="$STRATA_ROOT/.venv"
PY="$VENV/bin/python"

strata_die() { echo "strata: $*" >&2; exit 1; }

# mysqlclient (a dev dependency: the client-matrix tests run it) builds against libmysqlclient's
# headers, found with pkg-config; on Debian they come from default-libmysqlclient-dev.
strata_ensure_mysqlclient_headers() {
  if command -v pkg-config >/dev/null 2>&1 && { pkg-config --exists mysqlclient || pkg-config --exists libmariadb; }; then
    return 0
  fi
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    echo "strata: installing libmysqlclient headers (apt-get install default-libmysqlclient-dev pkg-config) …" >&2
    apt-get install -y -q default-libmysqlclient-dev pkg-config >/dev/null \
      || { apt-get update -q >/dev/null && apt-get install -y -q default-libmysqlclient-dev pkg-config >/dev/null; } \
      || strata_die "apt-get install default-libmysqlclient-dev pkg-config failed"
  else
    strata_die "mysqlclient needs libmysqlclient headers and pkg-config: install default-libmysqlclient-dev and pkg-config"
  fi
}

# Creates .venv with python3 when missing; reinstalls the project (pip install -e '.[dev]') when
# pyproject.toml changed since the last successful install (sha256 stamp inside .venv).
strata_ensure_venv() {
  command -v python3 >/dev/null 2>&1 || strata_die "python3 not found on PATH — install Python 3.11+"
  if [ ! -x "$PY" ]; then
    echo "strata: creating $VENV" >&2
    python3 -m venv "$VENV" || strata_die "python3 -m venv failed (apt-get install python3-venv?)"
  fi
  local want have stamp="$VENV/.strata-pyproject.sha256"
  want="$(sha256sum "$STRATA_ROOT/pyproject.toml" | cut -d' ' -f1)"
  have="$(cat "$stamp" 2>/dev/null || true)"
  if [ "$want" != "$have" ]; then
    strata_ensure_mysqlclient_headers
    echo "strata: installing Python dependencies (pyproject.toml changed) …" >&2
    local t0=$SECONDS
    "$PY" -m pip install -q --disable-pip-version-check -e "$STRATA_ROOT[dev]" \
      || strata_die "pip install -e '.[dev]' failed (see above)"
    echo "$want" > "$stamp"
    echo "strata: Python dependencies installed in $((SECONDS - t0)) s" >&2
  fi
}
