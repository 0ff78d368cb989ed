import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;

/**
 * The client matrix for Apache Arrow's Flight SQL JDBC driver (`jdbc:arrow-flight-sql://`), which Doris documents
 * for its Arrow Flight SQL port: each check runs as a JDBC user would write it and its outcome is printed as one
 * JSON object (JdbcResults). tests/clients/test_flight_sql_jdbc.py compares every value exactly.
 *
 * Usage: java --add-opens=java.base/java.nio=ALL-UNNAMED -cp <jars>:<classes> FlightSqlJdbc <host> <flight port>
 *        <user> <password> <database> <table prefix>
 */
public final class FlightSqlJdbc {
    private final String database;
    private final String table;

    private FlightSqlJdbc(String database, String prefix) {
        this.database = database;
        this.table = database + "." + prefix + "_t";
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:arrow-flight-sql://" + args[0] + ":" + args[1] + "/?useEncryption=false";
        FlightSqlJdbc matrix = new FlightSqlJdbc(args[4], args[5]);
        JdbcResults.run(url, args[2], args[3], (results, conn) -> {
            // Later checks read what earlier ones wrote, in this order (the table, then its rows).
            results.record("connect", conn, matrix::connect);
            results.record("ddl", conn, matrix::ddl);
            results.record("insert", conn, matrix::insert);
            results.record("select_types", conn, c -> JdbcResults.queryRows(c, "SELECT * FROM " + matrix.table + " ORDER BY id"));
            results.record("result_metadata", conn,
                    c -> JdbcResults.queryColumns(c, "SELECT id, txt AS label, amount FROM " + matrix.table + " WHERE id = 1"));
            results.record("prepared_query", conn, matrix::preparedQuery);
            results.record("prepared_insert", conn, matrix::preparedInsert);
            results.record("batch", conn, matrix::batch);
            results.record("prepared_delete", conn, matrix::preparedDelete);
            results.record("show_tables", conn, c -> JdbcResults.queryRows(c, "SHOW TABLES FROM " + matrix.database));
            results.record("get_tables", conn, matrix::getTables);
            results.record("get_columns", conn, matrix::getColumns);
            results.record("get_primary_keys", conn, matrix::getPrimaryKeys);
            results.record("error_unknown_table", conn, c -> errorOf(c, "SELECT * FROM " + matrix.database + ".nope"));
            results.record("error_syntax", conn, c -> errorOf(c, "SELEC 1"));
        });
    }

    private Object connect(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 6 * 7 AS answer")) {
            rs.next();
            return List.of(rs.getInt(1), conn.getMetaData().getDatabaseProductName());
        }
    }

    private Object ddl(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            return st.executeUpdate("CREATE TABLE " + table + " (id INT, big BIGINT, amount DECIMAL(10,2), d DATE,"
                    + " dt6 DATETIME(6), txt VARCHAR(64), dbl DOUBLE, flag BOOLEAN)"
                    + " DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
        }
    }

    private Object insert(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            return st.executeUpdate("INSERT INTO " + table + " VALUES (1, 9000000000, 12.50, '2024-02-29',"
                    + " '2024-02-29 12:34:56.123456', 'héllo', 2.5, true),"
                    + " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
        }
    }

    private Object preparedQuery(Connection conn) throws SQLException {
        List<Object> out = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT id, txt FROM " + table + " WHERE id = ? OR txt = ?")) {
            out.add(ps.getParameterMetaData().getParameterCount());
            for (Object[] values : new Object[][] {{1, "nobody' OR '1'='1"}, {0, "héllo"}, {2, "x"}}) {
                ps.setInt(1, (Integer) values[0]);
                ps.setString(2, (String) values[1]);
                try (ResultSet rs = ps.executeQuery()) {
                    out.add(JdbcResults.rows(rs));
                }
            }
        }
        return out;
    }

    private Object preparedInsert(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
            ps.setInt(1, 3);
            ps.setLong(2, -7L);
            ps.setBigDecimal(3, new BigDecimal("-0.25"));
            ps.setDate(4, Date.valueOf("1999-12-31"));
            ps.setTimestamp(5, Timestamp.valueOf("2000-01-01 00:00:00.5"));
            ps.setString(6, "it's");
            ps.setDouble(7, 1e300);
            ps.setBoolean(8, false);
            int count = ps.executeUpdate();
            return List.of(count, JdbcResults.queryRows(conn, "SELECT * FROM " + table + " WHERE id = 3"));
        }
    }

    private Object batch(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + table + " (id, txt) VALUES (?, ?)")) {
            for (int id = 10; id < 13; id++) {
                ps.setInt(1, id);
                ps.setString(2, "batch-" + id);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            int total = 0;
            for (int c : counts) {
                total += c;
            }
            return List.of(total, JdbcResults.queryRows(conn, "SELECT id, txt FROM " + table + " WHERE id >= 10 ORDER BY id"));
        }
    }

    private Object preparedDelete(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("DELETE FROM " + table + " WHERE id = ?")) {
            ps.setInt(1, 11);
            ps.executeUpdate();
            return JdbcResults.queryRows(conn, "SELECT id FROM " + table + " WHERE id >= 10 ORDER BY id");
        }
    }

    private Object getTables(Connection conn) throws SQLException {
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = conn.getMetaData().getTables(null, database, "%", null)) {
            while (rs.next()) {
                out.add(List.of(rs.getString("TABLE_SCHEM"), rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE")));
            }
        }
        return out;
    }

    private Object getColumns(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = md.getColumns(null, database, table.substring(database.length() + 1), "%")) {
            while (rs.next()) {
                out.add(List.of(rs.getString("COLUMN_NAME"), rs.getInt("DATA_TYPE"), rs.getInt("ORDINAL_POSITION")));
            }
        }
        return out;
    }

    private Object getPrimaryKeys(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("CREATE TABLE " + table + "_uniq (id INT, v VARCHAR(8)) UNIQUE KEY(id)"
                    + " DISTRIBUTED BY HASH(id) BUCKETS 1");
        }
        List<List<Object>> out = new ArrayList<>();
        for (String name : new String[] {table + "_uniq", table}) {
            try (ResultSet rs = conn.getMetaData().getPrimaryKeys(null, database, name.substring(database.length() + 1))) {
                while (rs.next()) {
                    out.add(List.of(rs.getString("TABLE_NAME"), rs.getString("COLUMN_NAME"), rs.getInt("KEY_SEQ")));
                }
            }
        }
        return out;
    }

    private static Object errorOf(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.executeQuery(sql).close();
            return "no error";
        } catch (SQLException e) {
            // The connection must stay usable after an error.
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
                rs.next();
                String message = String.valueOf(e.getMessage());
                return List.of(message.contains("ERROR ") ? message.substring(message.indexOf("ERROR ")) : message,
                               rs.getInt(1));
            }
        }
    }
}
