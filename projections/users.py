"""SQL users and their privileges as the fold keeps them, and the one question asked of them: may
this user do that to this object? Doris' privilege names, on `*.*`, `db.*` and `db.table`; a
privilege on a wider scope covers every narrower one. `root` is not stored: it may do everything."""

from __future__ import annotations

from pydantic import BaseModel, Field

ROOT = "root"
ANY = "*"
# Doris' default of the user property max_user_connections.
DEFAULT_MAX_USER_CONNECTIONS = 100
PRIVILEGES = ("SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV", "DROP_PRIV", "ADMIN_PRIV")


def scope_key(db: str, table: str) -> str:
    return f"{db.lower()}.{table.lower()}"


class UserRecord(BaseModel):
    name: str
    auth_string: str = Field(default="", description="the sealed mysql_native_password hash")
    grants: dict[str, list[str]] = Field(default_factory=dict, description="'db.table' → privileges")
    created_ts_ms: int = 0
    failed_login_attempts: int = Field(default=0, description="lock after this many failed logins in a row (0: never)")
    password_lock_time_s: int = Field(default=0, description="how long a lock lasts, seconds (-1: until unlocked)")
    max_user_connections: int = DEFAULT_MAX_USER_CONNECTIONS
    query_timeout_s: int = Field(default=0, description="overrides the session's query_timeout (0: not set)")
    insert_timeout_s: int = Field(default=0, description="overrides the session's insert_timeout (0: not set)")
    lock_reset_ts_ms: int = Field(default=0, description="commit time of the last unlock or lockout-policy change")

    def privileges_on(self, db: str, table: str) -> set[str]:
        """The privileges that apply to `db.table` (`table` '*': to the database itself)."""
        found: set[str] = set(self.grants.get(scope_key(ANY, ANY), []))
        found |= set(self.grants.get(scope_key(db, ANY), []))
        if table != ANY:
            found |= set(self.grants.get(scope_key(db, table), []))
        return found

    def may(self, privilege: str, db: str = ANY, table: str = ANY) -> bool:
        held = self.privileges_on(db, table)
        return privilege in held or "ADMIN_PRIV" in self.privileges_on(ANY, ANY)

    def sees_database(self, db: str) -> bool:
        """A database shows (SHOW DATABASES) when any privilege reaches it or a table in it."""
        if self.privileges_on(db, ANY):
            return True
        prefix = f"{db.lower()}."
        return any(key.startswith(prefix) and privileges for key, privileges in self.grants.items())

    def sees_table(self, db: str, table: str) -> bool:
        return bool(self.privileges_on(db, table))
