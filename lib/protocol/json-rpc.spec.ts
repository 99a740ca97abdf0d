import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyMessage } from './json-rpc.js';
import { decodeHeaderValue } from './header-value.js';
import { isModernVersionString, negotiateLegacyVersion, supportsPrimingEvents } from './versions.js';

describe('classifyMessage', () => {
  it('tells requests, notifications and responses apart', () => {
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, method: 'ping' }).kind, 'request');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 'a', method: 'ping', params: {} }).kind, 'request');
    assert.equal(classifyMessage({ jsonrpc: '2.0', method: 'notifications/initialized' }).kind, 'notification');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, result: {} }).kind, 'response');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }).kind, 'response');
  });

  it('refuses malformed messages, keeping a readable id', () => {
    const cases: Array<[unknown, unknown]> = [
      [null, null],
      [[], null],
      ['x', null],
      [{ id: 3, method: 'ping' }, 3],
      [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
      [{ jsonrpc: '2.0', id: 4, method: '' }, 4],
      [{ jsonrpc: '2.0', id: 5, method: 'x', params: [1] }, 5],
      [{ jsonrpc: '2.0', id: 6 }, 6],
      [{ jsonrpc: '2.0', id: 7, result: 'str' }, 7],
    ];
    for (const [value, id] of cases) {
      const parsed = classifyMessage(value);
      assert.equal(parsed.kind, 'invalid', JSON.stringify(value));
      assert.equal((parsed as { id: unknown }).id, id, JSON.stringify(value));
    }
  });
});

describe('protocol versions', () => {
  it('negotiates down to the latest legacy version', () => {
    assert.equal(negotiateLegacyVersion('2025-06-18'), '2025-06-18');
    assert.equal(negotiateLegacyVersion('2026-07-28'), '2025-11-25');
    assert.equal(negotiateLegacyVersion(undefined), '2025-11-25');
  });

  it('recognises modern version strings by date', () => {
    assert.equal(isModernVersionString('2026-07-28'), true);
    assert.equal(isModernVersionString('2027-01-01'), true);
    assert.equal(isModernVersionString('2025-11-25'), false);
    assert.equal(isModernVersionString('v999.0.0'), false);
  });

  it('sends priming events only to 2025-11-25 and later', () => {
    assert.equal(supportsPrimingEvents('2025-06-18'), false);
    assert.equal(supportsPrimingEvents('2025-11-25'), true);
  });
});

describe('decodeHeaderValue', () => {
  it('decodes plain, trimmed and base64 values', () => {
    assert.deepEqual(decodeHeaderValue('us-west1'), { ok: true, value: 'us-west1' });
    assert.deepEqual(decodeHeaderValue('  padded  '), { ok: true, value: 'padded' });
    assert.deepEqual(decodeHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?='), { ok: true, value: 'Hello, 世界' });
  });

  it('refuses bad padding, bad characters and control characters', () => {
    assert.equal(decodeHeaderValue('=?base64?SGVsbG8?=').ok, false);
    assert.equal(decodeHeaderValue('=?base64?SGVs!!!bG8=?=').ok, false);
    assert.equal(decodeHeaderValue('line\u0001break').ok, false);
    assert.equal(decodeHeaderValue('caf\u00e9').ok, false);
  });
});
