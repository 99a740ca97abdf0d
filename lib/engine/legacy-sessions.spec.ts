import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressOwner } from './legacy-sessions.js';

describe('addressOwner (limits.sessionsPerAddress)', () => {
  it('counts IPv4 addresses as they are and IPv6 ones per /64', () => {
    assert.equal(addressOwner('10.0.0.1'), '10.0.0.1');
    assert.equal(addressOwner('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(addressOwner('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressOwner('2001:0db8:0000:0000:ffff::1'), '2001:db8:0:0::/64');
    assert.equal(addressOwner('2001:db8:0:1::7'), '2001:db8:0:1::/64');
    assert.equal(addressOwner('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressOwner('::1'), '0:0:0:0::/64');
    assert.equal(addressOwner(undefined), 'unknown');
  });
});
