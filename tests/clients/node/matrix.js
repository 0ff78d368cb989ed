// The client matrix of issue 16 for Node mysql2: each check runs as a mysql2 user would write it (`query`
// for text, `execute` for server-side prepared statements) and its outcome is printed as one JSON object
// (check name to {"value": …} or {"error": {code, errno, sqlstate, message}}). tests/clients/test_mysql2.py
// runs it and compares every value exactly; this script asserts nothing itself.
//
// Usage: node matrix.js <host> <port> <user> <password> <database> <table prefix>
// Values are rendered as [type, text]: a Date as its ISO text (run with TZ=UTC), a Buffer as hex.
'use strict';

const mysql = require('mysql2/promise');

const [host, port, user, password, database, prefix] = process.argv.slice(2);
const dup = `${prefix}_dup`;
const uniq = `${prefix}_uniq`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function render(value) {
  if (value === null) return ['null', null];
  if (value instanceof Date) return ['Date', value.toISOString()];
  if (Buffer.isBuffer(value)) return ['Buffer', value.toString('hex')];
  return [typeof value, String(value)];
}

const renderRows = (rows) => rows.map((row) => row.map(render));

function errorOf(e) {
  return { code: e.code, errno: e.errno, sqlstate: e.sqlState, message: String(e.message) };
}

async function main() {
  const results = {};
  let conn;
  try {
    // supportBigNumbers: a BIGINT past 2^53 comes back as a string instead of a rounded number.
    conn = await mysql.createConnection({ host, port: Number(port), user, password, database,
      supportBigNumbers: true, rowsAsArray: true });
  } catch (e) {
    results.connect = { error: errorOf(e) };
    console.log(JSON.stringify(results));
    return;
  }
  const record = async (name, check) => {
    try {
      results[name] = { value: await check() };
    } catch (e) {
      results[name] = { error: errorOf(e) };
    }
  };
  const errorOfStatement = async (sql) => {
    try {
      await conn.query(sql);
      return 'no error';
    } catch (e) {
      const [rows] = await conn.query('SELECT 1'); // the connection must stay usable after an error
      return [e.errno, e.sqlState, rows[0][0]];
    }
  };

  // Later checks read what earlier ones wrote, in this order (the tables, then their rows).
  await record('connect', async () => (await conn.query('SELECT DATABASE()'))[0][0]);
  await record('ddl', async () => {
    await conn.query(`CREATE TABLE ${dup} (id INT, big BIGINT, amount DECIMAL(10,2), d DATE, dt0 DATETIME,
      dt3 DATETIME(3), dt6 DATETIME(6), txt VARCHAR(64), dbl DOUBLE, flag BOOLEAN)
      DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1`);
    await conn.query(`CREATE TABLE ${uniq} (id INT, v VARCHAR(32)) UNIQUE KEY(id)
      DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_time_travel" = "true")`);
    return 'ok';
  });
  await record('insert', async () => {
    const [result] = await conn.query(`INSERT INTO ${dup} VALUES (1, 9007199254740993, 12345.67, '2026-12-01',
      '2026-12-01 10:00:01', '2026-12-01 10:00:01.123', '2026-12-01 10:00:01.123456', 'Zürich ☃', 2.5, true),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`);
    return result.affectedRows;
  });
  await record('select_types', async () =>
    renderRows((await conn.query(`SELECT * FROM ${dup} WHERE id IN (1, 2) ORDER BY id`))[0]));
  await record('select_date_strings', async () =>
    (await conn.query({ sql: `SELECT d, dt0, dt3, dt6 FROM ${dup} WHERE id = 1`, dateStrings: true }))[0]);
  await record('result_metadata', async () => {
    // An empty result still describes its columns.
    const [, fields] = await conn.query(`SELECT * FROM ${dup} WHERE 1 = 0`);
    return fields.map((f) => [f.name, f.columnType, f.columnLength, f.decimals, f.characterSet]);
  });
  await record('time_travel', async () => {
    await conn.query(`INSERT INTO ${uniq} VALUES (1, 'before')`);
    // A whole second between the first commit and the instant, so the instant is after it even when NOW(6)
    // drops its fraction (this check is about the read; tests/clients/matrix.py's gaps).
    await sleep(1100);
    const [[[instant]]] = await conn.query({ sql: 'SELECT NOW(6)', dateStrings: true });
    await sleep(50);
    await conn.query(`INSERT INTO ${uniq} VALUES (1, 'after')`);
    const [past] = await conn.query(`SELECT id, v FROM ${uniq} FOR TIME AS OF '${instant}'`);
    const [now] = await conn.query(`SELECT id, v FROM ${uniq}`);
    return [renderRows(past), renderRows(now)];
  });
  await record('prepared', async () => {
    const insert = `INSERT INTO ${dup} (id, big, amount, d, dt0, dt3, dt6, txt, dbl, flag)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
    // mysql2 sends a JS Date as a DATETIME in the connection's time zone (local: TZ=UTC here).
    await conn.execute(insert, [3, -9007199254740993n, '-0.05', new Date('1999-12-31T00:00:00Z'),
      new Date('2026-12-01T23:59:59Z'), new Date('2026-12-01T23:59:59.999Z'), '2026-12-01 23:59:59.999999',
      "Zürich ☃ ?'", -1.25, false]);
    await conn.execute(insert, [4, null, null, null, null, null, null, null, null, null]);
    // dateStrings: a Date holds milliseconds, and the microseconds must have made the round trip too.
    const [rows] = await conn.execute({ sql: `SELECT * FROM ${dup} WHERE id >= ? AND (txt = ? OR txt IS NULL)
      ORDER BY id`, dateStrings: true }, [3, "Zürich ☃ ?'"]);
    return renderRows(rows);
  });
  await record('show_tables', async () => renderRows((await conn.query('SHOW TABLES'))[0]));
  await record('error_unknown_table', () => errorOfStatement('SELECT * FROM no_such_table'));
  await record('error_syntax', () => errorOfStatement('SELEC 1'));
  await conn.end();
  console.log(JSON.stringify(results));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
