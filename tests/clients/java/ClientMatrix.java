import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * The client matrix of issue 16 for MySQL Connector/J: each check runs as a JDBC user would write it and its
 * outcome is printed as one JSON object (JdbcResults). tests/clients/test_connector_j.py runs it once per
 * connection setting and compares every value exactly.
 *
 * Usage: java -cp <jars>:<classes> ClientMatrix <jdbc url> <user> <password> <database> <table prefix>
 */
public final class ClientMatrix {
    private final String database;
    private final String dup;
    private final String uniq;

    private ClientMatrix(String database, String prefix) {
        this.database = database;
        this.dup = prefix + "_dup";
        this.uniq = prefix + "_uniq";
    }

    public static void main(String[] args) throws Exception {
        String url = args[0], user = args[1], password = args[2];
        ClientMatrix matrix = new ClientMatrix(args[3], args[4]);
        JdbcResults.run(url, user, password, (results, conn) -> {
            // Later checks read what earlier ones wrote, in this order (the tables, then their rows).
            results.record("connect", conn, matrix::connect);
            results.record("ddl", conn, matrix::ddl);
            results.record("insert", conn, matrix::insert);
            results.record("select_types", conn,
                    c -> JdbcResults.queryRows(c, "SELECT * FROM " + matrix.dup + " WHERE id IN (1, 2) ORDER BY id"));
            // An empty result still describes its columns (BI tools prepare a query with WHERE 1 = 0 for this).
            results.record("result_metadata", conn,
                    c -> JdbcResults.queryColumns(c, "SELECT * FROM " + matrix.dup + " WHERE 1 = 0"));
            results.record("time_travel", conn, matrix::timeTravel);
            results.record("prepared", conn, matrix::prepared);
            results.record("batch", conn, matrix::batch);
            results.record("get_tables", conn, matrix::getTables);
            results.record("get_columns", conn, matrix::getColumns);
            results.record("get_primary_keys", conn, matrix::getPrimaryKeys);
            results.record("get_index_info", conn, matrix::getIndexInfo);
            results.record("error_unknown_table", conn, c -> matrix.errorOf(c, "SELECT * FROM no_such_table"));
            results.record("error_syntax", conn, c -> matrix.errorOf(c, "SELEC 1"));
        });
    }

    private Object connect(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT DATABASE()")) {
            rs.next();
            return List.of(conn.getCatalog(), rs.getString(1));
        }
    }

    private Object ddl(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE " + dup + " (id INT, big BIGINT, amount DECIMAL(10,2), d DATE, dt0 DATETIME,"
                    + " dt3 DATETIME(3), dt6 DATETIME(6), txt VARCHAR(64), dbl DOUBLE, flag BOOLEAN)"
                    + " DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1");
            st.execute("CREATE TABLE " + uniq + " (id INT, v VARCHAR(32)) UNIQUE KEY(id)"
                    + " DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES (\"enable_time_travel\" = \"true\")");
        }
        return "ok";
    }

    private Object insert(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement()) {
            return st.executeUpdate("INSERT INTO " + dup + " VALUES (1, 9007199254740993, 12345.67, '2026-12-01',"
                    + " '2026-12-01 10:00:01', '2026-12-01 10:00:01.123', '2026-12-01 10:00:01.123456',"
                    + " 'Zürich ☃', 2.5, true), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)");
        }
    }

    private Object timeTravel(Connection conn) throws Exception {
        try (Statement st = conn.createStatement()) {
            st.executeUpdate("INSERT INTO " + uniq + " VALUES (1, 'before')");
            // A whole second between the first commit and the instant, so the instant is after it even when
            // NOW(6) drops its fraction (this check is about the read; tests/clients/matrix.py's gaps).
            Thread.sleep(1100);
            String instant;
            try (ResultSet rs = st.executeQuery("SELECT NOW(6)")) {
                rs.next();
                instant = rs.getString(1);
            }
            Thread.sleep(50);
            st.executeUpdate("INSERT INTO " + uniq + " VALUES (1, 'after')");
            List<Object> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT id, v FROM " + uniq + " FOR TIME AS OF '" + instant + "'")) {
                out.add(JdbcResults.rows(rs));
            }
            try (ResultSet rs = st.executeQuery("SELECT id, v FROM " + uniq)) {
                out.add(JdbcResults.rows(rs));
            }
            return out;
        }
    }

    private Object prepared(Connection conn) throws SQLException {
        String sql = "INSERT INTO " + dup + " (id, big, amount, d, dt0, dt3, dt6, txt, dbl, flag)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            ps.setInt(1, 3);
            ps.setLong(2, -9007199254740993L);
            ps.setBigDecimal(3, new BigDecimal("-0.05"));
            ps.setObject(4, LocalDate.of(1999, 12, 31));
            ps.setObject(5, LocalDateTime.of(2026, 12, 1, 23, 59, 59));
            ps.setObject(6, LocalDateTime.of(2026, 12, 1, 23, 59, 59, 999_000_000));
            ps.setObject(7, LocalDateTime.of(2026, 12, 1, 23, 59, 59, 999_999_000));
            ps.setString(8, "Zürich ☃ ?'");
            ps.setDouble(9, -1.25);
            ps.setBoolean(10, false);
            ps.executeUpdate();
            ps.setInt(1, 4);
            int[] nullTypes = {Types.BIGINT, Types.DECIMAL, Types.DATE, Types.TIMESTAMP, Types.TIMESTAMP,
                    Types.TIMESTAMP, Types.VARCHAR, Types.DOUBLE, Types.BOOLEAN};
            for (int i = 0; i < nullTypes.length; i++) {
                ps.setNull(i + 2, nullTypes[i]);
            }
            ps.executeUpdate();
        }
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT * FROM " + dup + " WHERE id >= ? AND (txt = ? OR txt IS NULL) ORDER BY id")) {
            ps.setInt(1, 3);
            ps.setString(2, "Zürich ☃ ?'");
            try (ResultSet rs = ps.executeQuery()) {
                return JdbcResults.rows(rs);
            }
        }
    }

    private Object batch(Connection conn) throws SQLException {
        List<Object> out = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO " + uniq + " VALUES (?, ?)")) {
            for (int id = 10; id < 13; id++) {
                ps.setInt(1, id);
                ps.setString(2, "batch " + id);
                ps.addBatch();
            }
            List<Object> counts = new ArrayList<>();
            for (int count : ps.executeBatch()) {
                counts.add(count);
            }
            out.add(counts);
        }
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT id, v FROM " + uniq + " WHERE id >= 10 ORDER BY id")) {
            out.add(JdbcResults.rows(rs));
        }
        return out;
    }

    private Object getTables(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = md.getTables(database, null, "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                out.add(List.of(rs.getString("TABLE_CAT"), rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE")));
            }
        }
        return out;
    }

    private Object getColumns(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = md.getColumns(database, null, dup, "%")) {
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                row.add(rs.getString("COLUMN_NAME"));
                row.add(rs.getString("TYPE_NAME"));
                row.add(rs.getInt("DATA_TYPE"));
                row.add(rs.getInt("COLUMN_SIZE"));
                row.add(rs.getObject("DECIMAL_DIGITS") == null ? null : rs.getInt("DECIMAL_DIGITS"));
                row.add(rs.getString("IS_NULLABLE"));
                row.add(rs.getInt("ORDINAL_POSITION"));
                out.add(row);
            }
        }
        return out;
    }

    private Object getPrimaryKeys(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = md.getPrimaryKeys(database, null, uniq)) {
            while (rs.next()) {
                out.add(List.of(rs.getString("TABLE_NAME"), rs.getString("COLUMN_NAME"), rs.getInt("KEY_SEQ")));
            }
        }
        return out;
    }

    private Object getIndexInfo(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<List<Object>> out = new ArrayList<>();
        try (ResultSet rs = md.getIndexInfo(database, null, uniq, false, false)) {
            while (rs.next()) {
                List<Object> row = new ArrayList<>();
                row.add(rs.getString("TABLE_NAME"));
                row.add(rs.getBoolean("NON_UNIQUE"));
                row.add(rs.getString("INDEX_NAME"));
                row.add(rs.getString("COLUMN_NAME"));
                out.add(row);
            }
        }
        return out;
    }

    private Object errorOf(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement()) {
            st.execute(sql);
            return "no error";
        } catch (SQLException e) {
            // The connection must stay usable after an error.
            try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
                rs.next();
                return List.of(e.getErrorCode(), e.getSQLState(), rs.getInt(1));
            }
        }
    }
}
