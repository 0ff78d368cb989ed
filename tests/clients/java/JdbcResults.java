import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * What a client-matrix program prints: each check's outcome by name, {"value": …} or {"error": {class, code,
 * sqlstate, message}}, as one JSON object. A program asserts nothing itself: the Python test compares the
 * values, so a failure is reported with what the driver really returned. Values are rendered as
 * [Java class name, toString()] so a wrong type fails as surely as a wrong value.
 */
final class JdbcResults {
    interface Check {
        Object run(Connection conn) throws Exception;
    }

    private final Map<String, Object> outcomes = new LinkedHashMap<>();

    /** Connects, runs `checks` on the connection and prints every outcome (or the failed "connect"). */
    static void run(String url, String user, String password, BiConsumer<JdbcResults, Connection> checks) {
        JdbcResults results = new JdbcResults();
        try (Connection conn = DriverManager.getConnection(url, user, password)) {
            checks.accept(results, conn);
        } catch (SQLException e) {
            if (results.outcomes.isEmpty()) {
                results.outcomes.put("connect", Map.of("error", error(e)));
            }
        }
        System.out.println(Json.write(results.outcomes));
    }

    void record(String name, Connection conn, Check check) {
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
        outcomes.put(name, outcome);
    }

    static Map<String, Object> error(SQLException e) {
        Map<String, Object> err = new LinkedHashMap<>();
        err.put("class", e.getClass().getName());
        err.put("code", e.getErrorCode());
        err.put("sqlstate", e.getSQLState());
        err.put("message", String.valueOf(e.getMessage()));
        return err;
    }

    static List<Object> render(Object value) {
        List<Object> out = new ArrayList<>();
        out.add(value == null ? "null" : value.getClass().getName());
        out.add(value == null ? null : value.toString());
        return out;
    }

    /** Each result column as JDBC describes it: label, type name, java.sql.Types, precision, scale, class. */
    static List<List<Object>> columns(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        List<List<Object>> cols = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
            // Arrays.asList, not List.of: a driver may know no type or class name (null).
            cols.add(Arrays.asList(md.getColumnLabel(i), md.getColumnTypeName(i), md.getColumnType(i),
                    md.getPrecision(i), md.getScale(i), md.getColumnClassName(i)));
        }
        return cols;
    }

    /** The rows `sql` answers, run as a plain statement. */
    static List<List<Object>> queryRows(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rows(rs);
        }
    }

    /** The columns of what `sql` answers (`columns`), run as a plain statement. */
    static List<List<Object>> queryColumns(Connection conn, String sql) throws SQLException {
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return columns(rs);
        }
    }

    static List<List<Object>> rows(ResultSet rs) throws SQLException {
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
}
