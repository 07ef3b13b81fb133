import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { configFromEnv } from '../../app/config.js';
import { BadConsistencyHeader, requestedPosition } from '../../api/readRouting.js';
import { formatLsn, parseLsn } from '../../db/index.js';

const primary = 'postgres://u@127.0.0.1:5432/db';

describe('Scale-out settings (WORKERS, DATABASE_REPLICA_URLS)', () => {
  it('WORKERS: default 1, a number, or auto (the cores); more than 1 needs DATABASE_URL', () => {
    assert.equal(configFromEnv({}).workers, 1);
    assert.equal(configFromEnv({ WORKERS: '3', DATABASE_URL: primary }).workers, 3);
    assert.ok(configFromEnv({ WORKERS: 'auto', DATABASE_URL: primary }).workers >= 1);
    assert.throws(() => configFromEnv({ WORKERS: '2' }), /WORKERS above 1 needs DATABASE_URL/);
    for (const bad of ['0', '-1', '1.5', 'many', '999', '2.0', '1e0', '0x2', '+2', '0b10']) assert.throws(() => configFromEnv({ WORKERS: bad, DATABASE_URL: primary }), /WORKERS must be/);
  });

  it('DEMO_SCALE: the first start\'s demo portfolio, 0.05 (500 loans) by default, 0.0001 to 1', () => {
    assert.equal(configFromEnv({}).demoScale, 0.05);
    assert.equal(configFromEnv({ DEMO_SCALE: '' }).demoScale, 0.05);
    assert.equal(configFromEnv({ DEMO_SCALE: '0.005' }).demoScale, 0.005);
    assert.equal(configFromEnv({ DEMO_SCALE: '1' }).demoScale, 1);
    for (const bad of ['0', '-0.1', '1.5', 'big', '1e-3', '0.00001']) assert.throws(() => configFromEnv({ DEMO_SCALE: bad }), /DEMO_SCALE must be a number from 0\.0001 to 1/, bad);
  });

  it('DATABASE_REPLICA_URLS: comma-separated postgres URLs of the primary DATABASE_URL', () => {
    assert.deepEqual(configFromEnv({ DATABASE_URL: primary }).readReplicas.urls, []);
    const config = configFromEnv({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: ' postgres://r1/db , postgresql://r2:6432/db,' });
    assert.deepEqual(config.readReplicas.urls, ['postgres://r1/db', 'postgresql://r2:6432/db']);
    assert.equal(config.readReplicas.maxLagMs, 1000);
    assert.throws(() => configFromEnv({ DATABASE_REPLICA_URLS: 'postgres://r1/db' }), /needs DATABASE_URL/);
    assert.throws(() => configFromEnv({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://r1/db,http://r2' }), /entry 2 is not/);
    assert.throws(() => configFromEnv({ DATABASE_URL: primary, REPLICA_MAX_LAG_MS: 'soon' }), /REPLICA_MAX_LAG_MS must be a whole number/);
  });

  it('WAL positions parse, compare and print as PostgreSQL writes them', () => {
    assert.equal(parseLsn('0/16B3748'), 0x16b3748n);
    assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
    assert.ok(parseLsn('1/0')! > parseLsn('0/FFFFFFFF')!);
    assert.equal(formatLsn(parseLsn('16/b374d848')!), '16/B374D848');
    for (const bad of ['', '16', '16/', 'x/1', '1/2/3', '123456789/0', '0/123456789']) assert.equal(parseLsn(bad), null, bad);
  });

  it('a LoanQL-Consistency header is a WAL position; anything else is refused, absent is no requirement', () => {
    assert.equal(requestedPosition(undefined), null);
    assert.equal(requestedPosition('  '), null);
    assert.equal(requestedPosition('0/16B3748'), 0x16b3748n);
    for (const bad of ['yesterday', '1/2/3', '0/16B3748, 0/1', 'A'.repeat(40)]) assert.throws(() => requestedPosition(bad), BadConsistencyHeader, bad);
  });
});
