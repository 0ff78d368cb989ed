"""Doris Stream Load over HTTP: request headers (request), body readers (readers), the load and its
reply (job, reply), rejected rows (error_log), two-phase commit (transactions), the routes (routes)."""
