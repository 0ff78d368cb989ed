"""CREATE / ALTER / DROP USER, SET PASSWORD, GRANT / REVOKE and SHOW GRANTS. Users, grants and
login-lockout policies are events like everything else; a password
goes on the log only as its mysql_native_password hash (SHA1(SHA1(password))), sealed with the
machine-local key, and is never shown."""

from __future__ import annotations

from mysql_mimic.auth import NativePasswordAuthPlugin

from projections.users import ANY, PRIVILEGES, ROOT, UserRecord, scope_key
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from schemas import commands as cmd
from schemas.errors import ErrorCode


def _identity(user: st.UserIdentity) -> str:
    if user.host != "%":
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"user {user}: only the host '%' is supported (a Strata user "
                                                      "logs in from anywhere)")
    if not user.name or len(user.name) > 64 or any(ord(ch) < 32 for ch in user.name):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "a user name is 1 to 64 printable characters")
    if user.name.lower() == ROOT:
        raise SqlFailure(ErrorCode.CANNOT_USER, "root is built in: its password comes from the configuration "
                                                "(STRATA_ROOT_PASSWORD)")
    return user.name


def sealed_hash(ctx: Context, password: str) -> str:
    return ctx.stores.box.seal(NativePasswordAuthPlugin.create_auth_string(password)) if password else ""


def create_user(ctx: Context, session: SessionState, s: st.CreateUser) -> Done:
    name = _identity(s.user)
    if s.if_not_exists and name.lower() in ctx.projection.users:
        return Done()
    ctx.propose(cmd.CreateUser(name=name, auth_string=sealed_hash(ctx, s.password or ""),
                               if_not_exists=s.if_not_exists,
                               failed_login_attempts=s.policy.failed_login_attempts or 0,
                               password_lock_time_s=s.policy.password_lock_time_s or 0))
    return Done()


def alter_user(ctx: Context, session: SessionState, s: st.AlterUser) -> Done:
    name = _identity(s.user)
    if name.lower() not in ctx.projection.users:
        if s.if_exists:
            return Done()
        raise SqlFailure(ErrorCode.CANNOT_USER, f"Operation ALTER USER failed for {s.user}: the user does not exist")
    if s.password is not None:
        ctx.propose(cmd.SetPassword(name=name, auth_string=sealed_hash(ctx, s.password)))
    if s.policy != st.PasswordPolicy() or s.unlock:
        ctx.propose(cmd.AlterUser(name=name, failed_login_attempts=s.policy.failed_login_attempts,
                                  password_lock_time_s=s.policy.password_lock_time_s, unlock=s.unlock))
    return Done()




def drop_user(ctx: Context, session: SessionState, s: st.DropUser) -> Done:
    name = _identity(s.user)
    if s.if_exists and name.lower() not in ctx.projection.users:
        return Done()
    ctx.propose(cmd.DropUser(name=name, if_exists=s.if_exists))
    return Done()


def set_password(ctx: Context, session: SessionState, s: st.SetPassword) -> Done:
    name = _identity(s.user) if s.user is not None else session.user
    if name.lower() == ROOT:
        raise SqlFailure(ErrorCode.CANNOT_USER, "root's password comes from the configuration (STRATA_ROOT_PASSWORD)")
    ctx.propose(cmd.SetPassword(name=name, auth_string=sealed_hash(ctx, s.password)))
    return Done()


def grant(ctx: Context, session: SessionState, s: st.GrantPrivileges) -> Done:
    name = _identity(s.user)
    if name.lower() not in ctx.projection.users:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"User {s.user} does not exist")
    if "ADMIN_PRIV" in s.privileges and (s.db, s.table) != (ANY, ANY):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "ADMIN_PRIV can only be granted on *.*")
    if s.db != ANY:
        db_id, db_name = ctx.database_id(session, s.db)
        if s.table != ANY and ctx.projection.table_by_name(db_id, s.table) is None \
                and ctx.projection.view_by_name(db_id, s.table) is None:
            raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db_name}.{s.table}' doesn't exist")
    ctx.propose(cmd.ChangeGrants(name=name, db=s.db, table=s.table, privileges=s.privileges, revoke=s.revoke))
    return Done()


def _grant_rows(user: UserRecord) -> list[tuple[str, str]]:
    shown = []
    for scope, privileges in sorted(user.grants.items()):
        if privileges:
            ordered = [p for p in PRIVILEGES if p in privileges]
            shown.append(f"{scope}: {', '.join(ordered)}")
    return [(f"'{user.name}'@'%'", "; ".join(shown) or "(none)")]


def show_grants(ctx: Context, session: SessionState, s: st.ShowGrants) -> Rows:
    columns = ["UserIdentity", "Privileges"]
    if s.all:
        rows = [(f"'{ROOT}'@'%'", f"{scope_key(ANY, ANY)}: {', '.join(PRIVILEGES)}")]
        for user in sorted(ctx.projection.users.values(), key=lambda u: u.name.lower()):
            rows.extend(_grant_rows(user))
        return Rows(columns, rows)
    name = s.user.name if s.user is not None else session.user
    if name.lower() == ROOT:
        return Rows(columns, [(f"'{ROOT}'@'%'", f"{scope_key(ANY, ANY)}: {', '.join(PRIVILEGES)}")])
    found = ctx.projection.users.get(name.lower())
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"User '{name}'@'%' does not exist")
    return Rows(columns, _grant_rows(found))
