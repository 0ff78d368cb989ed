"""The MinIO server: build it from source with ``go install`` (pinned), then run it.

``python -m infra.minio_node install|run``. ``run`` execs the server, so its pid is MinIO's.
The root password is handed over in the environment only, never on a command line or in output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from infra.layout import Layout
from infra.toolchain import StrataError, check_component_ports, find_tool
from schemas.config import Settings, settings

MODULE = "github.com/minio/minio"


def is_installed(lay: Layout) -> bool:
    return lay.minio_bin.is_file() and os.access(lay.minio_bin, os.X_OK)


def install(lay: Layout, quiet: bool = False) -> bool:
    """`go install github.com/minio/minio@<version>` into opt/minio-<version>/. False when present."""
    if is_installed(lay):
        return False
    go = find_tool("go")
    lay.opt_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".minio-{lay.s.minio_version}-", dir=lay.opt_dir))
    try:
        env = dict(os.environ, GOBIN=str(tmp))
        if not quiet:
            print(f"strata: building MinIO {lay.s.minio_version} with go install (first run is slow) …",
                  flush=True)
        proc = subprocess.run([go, "install", f"{MODULE}@{lay.s.minio_version}"], env=env,
                              capture_output=True, text=True)
        built = tmp / "minio"
        if proc.returncode != 0 or not built.is_file():
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise StrataError(f"go install {MODULE}@{lay.s.minio_version} failed:\n{tail}")
        lay.minio_dist.mkdir(parents=True, exist_ok=True)
        os.replace(built, lay.minio_bin)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


def server_env(s: Settings) -> dict[str, str]:
    return dict(
        os.environ,
        MINIO_ROOT_USER=s.minio_root_user,
        MINIO_ROOT_PASSWORD=s.minio_root_password.get_secret_value(),
        MINIO_UPDATE="off",
        MINIO_BROWSER=os.environ.get("MINIO_BROWSER", "on"),
    )


def server_cmd(s: Settings, lay: Layout) -> list[str]:
    return [
        str(lay.minio_bin), "server", str(lay.minio_data),
        "--address", f"{s.minio_host}:{s.minio_port}",
        "--console-address", f"{s.minio_host}:{s.minio_console_port}",
    ]


def run(s: Settings, lay: Layout) -> None:
    check_component_ports(s, ["minio"])
    install(lay)
    lay.minio_data.mkdir(parents=True, exist_ok=True)
    cmd = server_cmd(s, lay)
    sys.stdout.flush()
    os.execve(cmd[0], cmd, server_env(s))


def main(argv: list[str] | None = None) -> int:
    from infra.cli_util import run_action

    return run_action(argv, {"install": lambda: install(Layout(settings())),
                             "run": lambda: run(settings(), Layout(settings()))})


if __name__ == "__main__":
    sys.exit(main())
