"""Arrow Flight SQL, as Doris 2.1 serves it on `arrow_flight_sql_port`: the same logins, privileges and
statement engine as the SQL port, answered with Arrow record batches."""
