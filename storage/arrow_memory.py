"""The Arrow memory pool of Strata's many-threaded servers: the system allocator, not pyarrow's
default (mimalloc).

mimalloc keeps freed pages with the thread that freed them. The SQL server runs statements, and
encodes streamed results, on a pool of up to `sql_worker_threads` threads: after a burst of
concurrent statements, the batches of one large result are built on whichever of dozens of idle
threads picks each up, and every one of them keeps what it held. Measured (bench.result_stream right
after 15 s of 32 concurrent writers): streaming 1M rows to pymysql grew the server's RSS by 342–395
MB with mimalloc, 102 MB with the system allocator — what a fresh server grows with either — at the
same speed (8.5–8.7 s). An operator's ARROW_DEFAULT_MEMORY_POOL still decides.
"""

from __future__ import annotations

import os

import pyarrow as pa

OVERRIDE = "ARROW_DEFAULT_MEMORY_POOL"


def use_system_pool() -> str:
    """Makes the system allocator Arrow's default pool for this process (unless the environment names
    one); returns the backend in use. Buffers already allocated are freed to the pool that made them."""
    if not os.environ.get(OVERRIDE):
        pa.set_memory_pool(pa.system_memory_pool())
    return pa.default_memory_pool().backend_name
