"""The SQL tests' fixtures (`server`, `conn`, `db`: a fresh database per test), for the tests here
that check a projection against what the SQL port answers."""

from tests.query.conftest import config, conn, db, server  # noqa: F401
