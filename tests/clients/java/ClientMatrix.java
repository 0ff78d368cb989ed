import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client matrix of issue 16 for MySQL Connector/J: each check runs as a JDBC user would write it and its
 * outcome is printed as one JSON object (check name to {"value": …} or {"error": {class, code, sqlstate,
 * message}}). tests/clients/test_connector_j.py runs it once per connection setting and compares every value
 * exactly; this program asserts nothing itself, so a failure is reported with what the driver really returned.
 *
 * Usage: java -cp <jars>:<classes> ClientMatrix <jdbc url> <user> <password> <database> <table prefix>
 * Values are rendered as [Java class name, toString()] so a wrong type fails as surely as a wrong value.
 */
public final class ClientMatrix {
    private interface Check {
        Object run(Connection conn) throws Exception;
    }

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
        Map<String, Object> results = new LinkedHashMap<>();
        Connection conn;
        try {
            conn = DriverManager.getConnection(url, user, password);
        } catch (SQLException e) {
            results.put("connect", error(e));
            System.out.println(Json.write(results));
            return;
        }
        try (conn) {
            // Later checks read what earlier ones wrote, in this order (the tables, then their rows).
            matrix.record(results, "connect", conn, matrix::connect);
            matrix.record(results, "ddl", conn, matrix::ddl);
            matrix.record(results, "insert", conn, matrix::insert);
            matrix.record(results, "select_types", conn, matrix::selectTypes);
            matrix.record(results, "result_metadata", conn, matrix::resultMetadata);
            matrix.record(results, "time_travel", conn, matrix::timeTravel);
            matrix.record(results, "prepared", conn, matrix::prepared);
            matrix.record(results, "batch", conn, matrix::batch);
            matrix.record(results, "get_tables", conn, matrix::getTables);
            matrix.record(results, "get_columns", conn, matrix::getColumns);
            matrix.record(results, "get_primary_keys", conn, matrix::getPrimaryKeys);
            matrix.record(results, "get_index_info", conn, matrix::getIndexInfo);
            matrix.record(results, "error_unknown_table", conn, c -> matrix.errorOf(c, "SELECT * FROM no_such_table"));
            matrix.record(results, "error_syntax", conn, c -> matrix.errorOf(c, "SELEC 1"));
        }
        System.out.println(Json.write(results));
    }

    private void record(Map<String, Object> results, String name, Connection conn, Check check) {
        Map<String, Object> outcome = new LinkedHashMap<>();
        try {
            outcome.put("value", check.run(conn));
        } catch (SQLException e) {
            outcome.put("error", error(e));
        } catch (Exception e) {
            Map<String, Object> err = new LinkedHashMap<>();
            err.put("class", e.getClass().getName());
            err.put("message", String.valueOf(e.getMessage()));
            outcome.put("error", err);
        }
        results.put(name, outcome);
    }

    private static Map<String, Object> error(SQLException e) {
        Map<String, Object> err = new LinkedHashMap<>();
        err.put("class", e.getClass().getName());
        err.put("code", e.getErrorCode());
        err.put("sqlstate", e.getSQLState());
        err.put("message", String.valueOf(e.getMessage()));
        return err;
    }

    private static List<Object> render(Object value) {
        List<Object> out = new ArrayList<>();
        out.add(value == null ? "null" : value.getClass().getName());
        out.add(value == null ? null : value.toString());
        return out;
    }

    private static List<List<Object>> rows(ResultSet rs) throws SQLException {
        List<List<Object>> rows = new ArrayList<>();
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            List<Object> row = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                row.add(render(rs.getObject(i)));
            }
            rows.add(row);
        }
        return rows;
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

    private Object selectTypes(Connection conn) throws SQLException {
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT * FROM " + dup + " WHERE id IN (1, 2) ORDER BY id")) {
            return rows(rs);
        }
    }

    private Object resultMetadata(Connection conn) throws SQLException {
        // An empty result still describes its columns (BI tools prepare a query with WHERE 1 = 0 for this).
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT * FROM " + dup + " WHERE 1 = 0")) {
            ResultSetMetaData md = rs.getMetaData();
            List<List<Object>> cols = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                cols.add(List.of(md.getColumnLabel(i), md.getColumnTypeName(i), md.getColumnType(i),
                        md.getPrecision(i), md.getScale(i), md.getColumnClassName(i)));
            }
            return cols;
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
                out.add(rows(rs));
            }
            try (ResultSet rs = st.executeQuery("SELECT id, v FROM " + uniq)) {
                out.add(rows(rs));
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
                return rows(rs);
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
            out.add(rows(rs));
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

    /** The little JSON this program prints: maps, lists, strings, numbers, booleans and null. */
    private static final class Json {
        static String write(Object value) {
            StringBuilder sb = new StringBuilder();
            append(sb, value);
            return sb.toString();
        }

        private static void append(StringBuilder sb, Object value) {
            if (value == null) {
                sb.append("null");
            } else if (value instanceof Map<?, ?> map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (!first) sb.append(',');
                    first = false;
                    appendString(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    append(sb, e.getValue());
                }
                sb.append('}');
            } else if (value instanceof List<?> list) {
                sb.append('[');
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) sb.append(',');
                    append(sb, list.get(i));
                }
                sb.append(']');
            } else if (value instanceof Integer || value instanceof Long || value instanceof Boolean) {
                sb.append(value);
            } else {
                appendString(sb, value.toString());
            }
        }

        private static void appendString(StringBuilder sb, String s) {
            sb.append('"');
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    default -> {
                        if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                        else sb.append(c);
                    }
                }
            }
            sb.append('"');
        }
    }
}
