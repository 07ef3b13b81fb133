import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clientNetwork, LoginThrottle } from '../../app/loginThrottle.js';
import { html } from '../../dashboard/html.js';
import { formatTimestamp } from '../../dashboard/pages/layout.js';

describe('LoginThrottle', () => {
  const limits = { windowMs: 60_000, perEmailAndAddress: 3, perAddress: 5, maxTrackedKeys: 100 };

  it('allows attempts until the e-mail + address limit, then waits until the oldest failure leaves the window', () => {
    let now = 1_000_000;
    const throttle = new LoginThrottle(limits, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.retryAfterMs('Ann@Example.test', '10.0.0.1'), 0);
      throttle.recordFailure('ann@example.test', '10.0.0.1');
      now += 1_000;
    }
    assert.equal(throttle.retryAfterMs('ANN@example.test ', '10.0.0.1'), 57_000, 'e-mails compare case-insensitively');
    assert.equal(throttle.retryAfterMs('ann@example.test', '10.0.0.2'), 0, 'another address is not affected');
    now += 57_000;
    assert.equal(throttle.retryAfterMs('ann@example.test', '10.0.0.1'), 0);
  });

  it('also limits one address across many e-mails', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (let i = 0; i < 5; i++) throttle.recordFailure(`user${i}@example.test`, '10.0.0.9');
    assert.ok(throttle.retryAfterMs('someone-else@example.test', '10.0.0.9') > 0);
  });

  it('forgets an e-mail’s failures after a successful login', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (let i = 0; i < 3; i++) throttle.recordFailure('bo@example.test', '10.0.0.3');
    throttle.recordSuccess('bo@example.test', '10.0.0.3');
    assert.equal(throttle.retryAfterMs('bo@example.test', '10.0.0.3'), 0);
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as its IPv4 address', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (let i = 1; i <= 3; i++) throttle.recordFailure('cy@example.test', `2001:db8:1:2::${i.toString(16)}`);
    assert.ok(throttle.retryAfterMs('cy@example.test', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff') > 0, 'any address of the /64, however written');
    assert.equal(throttle.retryAfterMs('cy@example.test', '2001:db8:1:3::1'), 0, 'another /64 is another client');
    for (let i = 0; i < 3; i++) throttle.recordFailure('di@example.test', '::ffff:192.0.2.9');
    assert.ok(throttle.retryAfterMs('di@example.test', '192.0.2.9') > 0);
    assert.equal(clientNetwork('2001:db8::1.2.3.4'), '2001:db8:0:0::/64');
    assert.equal(clientNetwork('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientNetwork('::ffff:c000:209'), '192.0.2.9');
    assert.equal(clientNetwork('10.0.0.1'), '10.0.0.1');
    assert.equal(clientNetwork('unknown'), 'unknown');
  });

  it('remembers a bounded number of keys', () => {
    const throttle = new LoginThrottle({ ...limits, maxTrackedKeys: 4 }, () => 0);
    for (let i = 0; i < 50; i++) throttle.recordFailure(`u${i}@example.test`, `10.0.1.${i}`);
    assert.equal(throttle.retryAfterMs('u0@example.test', '10.0.1.0'), 0, 'the oldest were dropped');
  });
});

describe('Dashboard HTML', () => {
  it('escapes every interpolated value unless it is itself html', () => {
    const name = `<script>alert("x")</script>&'`;
    assert.equal(html`<td title="${name}">${name}</td>`.text, '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>');
    assert.equal(html`<ul>${['a', 'b'].map((item) => html`<li>${item}</li>`)}</ul>`.text, '<ul><li>a</li><li>b</li></ul>');
    assert.equal(html`${null}${undefined}${false}${0}`.text, '0');
  });

  it('shows PostgreSQL timestamps as date, minutes and zone', () => {
    assert.equal(formatTimestamp('2025-05-01 10:11:12.345678+00').text, '<time datetime="2025-05-01T10:11:12.345678+00:00">2025-05-01 10:11 UTC</time>');
    assert.equal(formatTimestamp('2025-05-01 10:11:12+05:30').text, '<time datetime="2025-05-01T10:11:12+05:30">2025-05-01 10:11 +05:30</time>');
    assert.match(formatTimestamp(null).text, /never/);
  });
});
