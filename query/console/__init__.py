"""The web console on the SQL server's HTTP port: tables, a table's timeline, pipelines (issue 9)."""
