import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  literalPrefix,
  MAX_TEMPLATE_LENGTH,
  MAX_URI_LENGTH,
  meterMatches,
  UriTemplate,
  UriTemplateError,
} from './uri-template.js';

type Expected = Record<string, string | string[]> | null;

/** [template, uri, expected match] */
const MATCH_TABLE: ReadonlyArray<readonly [string, string, Expected]> = [
  // MCP conformance suite
  ['test://template/{id}/data', 'test://template/123/data', { id: '123' }],
  ['test://template/{id}/data', 'test://template//data', null],
  ['test://template/{id}/data', 'test://template/1/2/data', null],
  ['test://template/{id}/data', 'test://template/123/data/', null],
  ['test://template/{id}/data', 'test://template/123/dat', null],
  ['test://template/{id}/data', 'TEST://template/123/data', null],

  // literal only
  ['config://app', 'config://app', {}],
  ['config://app', 'config://app/', null],
  ['config://app', 'config://ap', null],

  // {var}: one segment, non-empty, stops at / ? # and the next literal
  ['users://{id}', 'users://42', { id: '42' }],
  ['users://{id}', 'users://', null],
  ['users://{id}', 'users://4/2', null],
  ['users://{id}', 'users://42?x=1', null],
  ['users://{id}', 'users://42#x', null],
  ['users://{id}', 'users://a,b;c=d&e@f:g', { id: 'a,b;c=d&e@f:g' }],
  ['users://{id}', 'users://caf\u00e9', { id: 'caf\u00e9' }],
  ['users://{id}/profile', 'users://42/profile', { id: '42' }],
  ['users://{id}.json', 'users://v1.2.json', { id: 'v1.2' }],
  ['x://{a}-{b}', 'x://1-2-3', { a: '1', b: '2-3' }],
  ['x://{a}.{b}.json', 'x://f.v1.json', { a: 'f', b: 'v1' }],
  ['x://{a}.{b}.json', 'x://f.json', null],
  ['x://s?q={q}&n={n}', 'x://s?q=a&n=1', { q: 'a', n: '1' }],
  ['x://s?q={q}', 'x://s?q=a&other=1', null],

  // percent-decoding exactly once
  ['test://template/{id}/data', 'test://template/a%2Fb/data', { id: 'a/b' }],
  ['test://template/{id}/data', 'test://template/a%2fb/data', { id: 'a/b' }],
  ['test://template/{id}/data', 'test://template/a%252Fb/data', { id: 'a%2Fb' }],
  ['test://template/{id}/data', 'test://template/%E2%82%AC%20x/data', { id: '\u20ac x' }],
  ['test://template/{id}/data', 'test://template/a+b/data', { id: 'a+b' }],
  ['test://template/{id}/data', 'test://template/%3F%23/data', { id: '?#' }],

  // invalid percent-encoding / not UTF-8 -> null, never a throw
  ['test://template/{id}/data', 'test://template/%/data', null],
  ['test://template/{id}/data', 'test://template/%2/data', null],
  ['test://template/{id}/data', 'test://template/%zz/data', null],
  ['test://template/{id}/data', 'test://template/%C3%28/data', null],
  ['test://template/{id}/data', 'test://template/%C0%AF/data', null],
  ['test://template/{id}/data', 'test://template/%ED%A0%80/data', null],
  ['test://template/{id}/data', 'test://template/%E2%82/data', null],
  ['test://template/{id}/data', 'test://template/\ud800/data', null],
  ['file:///{+path}', 'file:///a/%FF', null],
  ['x://a{/segs*}', 'x://a/ok/%C3', null],
  ['x://a{?q}', 'x://a?q=%E2%82', null],
  ['x://a{#f}', 'x://a#%', null],

  // {+path}: reserved, spans segments, non-empty, stops at ? and #
  ['file:///{+path}', 'file:///a/b/c.txt', { path: 'a/b/c.txt' }],
  ['file:///{+path}', 'file:///', null],
  ['file:///{+path}', 'file:///a?b', null],
  ['file:///{+path}', 'file:///a%3Fb%2F..', { path: 'a?b/..' }],
  ['file:///{+path}/meta', 'file:///a/b/meta', { path: 'a/b' }],
  ['file:///{+path}/meta', 'file:///a/meta/b/meta', { path: 'a/meta/b' }],
  ['file:///{+dir}/{file}', 'file:///a/b/c.txt', { dir: 'a/b', file: 'c.txt' }],
  ['file:///{+dir}/{file}', 'file:///c.txt', null],
  ['file:///{+base}.{ext}', 'file:///a.b/c.tar', { base: 'a.b/c', ext: 'tar' }],
  ['x://{+a}/x/{b}', 'x://1/x/2/x/3', { a: '1/x/2', b: '3' }],

  // {/var}: optional single segment
  ['x://root{/v}', 'x://root', {}],
  ['x://root{/v}', 'x://root/one', { v: 'one' }],
  ['x://root{/v}', 'x://root/', null],
  ['x://root{/v}', 'x://root/one/two', null],
  ['x://root{/v}', 'x://root/a%2Fb', { v: 'a/b' }],
  ['x://root{/a}{/b}', 'x://root/1', { a: '1' }],
  ['x://root{/a}{/b}', 'x://root/1/2', { a: '1', b: '2' }],
  ['x://root{/v}.json', 'x://root/a.b.json', { v: 'a.b' }],
  ['x://root{/v}.json', 'x://root.json', {}],
  ['x://{id}{/rest*}', 'x://1/a/b', { id: '1', rest: ['a', 'b'] }],

  // {/var*}: zero or more segments
  ['x://root{/segs*}', 'x://root', { segs: [] }],
  ['x://root{/segs*}', 'x://root/a', { segs: ['a'] }],
  ['x://root{/segs*}', 'x://root/a/b/c', { segs: ['a', 'b', 'c'] }],
  ['x://root{/segs*}', 'x://root/a%2Fb/c', { segs: ['a/b', 'c'] }],
  ['x://root{/segs*}', 'x://root/a//c', null],
  ['x://root{/segs*}', 'x://root/a/', null],
  ['x://root{/segs*}/end', 'x://root/a/b/end', { segs: ['a', 'b'] }],
  ['x://root{/segs*}/end', 'x://root/end', { segs: [] }],
  ['x://root{/segs*}/end', 'x://root/end/end', { segs: ['end'] }],

  // {?a,b}{&c}: any order, each optional, unknown ignored
  ['x://s{?q,limit}', 'x://s', {}],
  ['x://s{?q,limit}', 'x://s?', {}],
  ['x://s{?q,limit}', 'x://s?q=cats', { q: 'cats' }],
  ['x://s{?q,limit}', 'x://s?limit=5&q=cats', { q: 'cats', limit: '5' }],
  ['x://s{?q,limit}', 'x://s?q=cats&limit=5', { q: 'cats', limit: '5' }],
  ['x://s{?q,limit}', 'x://s?utm=1&q=cats&&x&limit=5', { q: 'cats', limit: '5' }],
  ['x://s{?q,limit}', 'x://s?q=', { q: '' }],
  ['x://s{?q,limit}', 'x://s?q', { q: '' }],
  ['x://s{?q,limit}', 'x://s?q=a%26b%3Dc', { q: 'a&b=c' }],
  ['x://s{?q,limit}', 'x://s?q=a=b', { q: 'a=b' }],
  ['x://s{?q,limit}', 'x://s?%71=cats', { q: 'cats' }],
  ['x://s{?q,limit}', 'x://s?bad%=1&q=cats', { q: 'cats' }],
  ['x://s{?q,limit}', 'x://s?q=1&q=2', null],
  ['x://s{?q,limit}', 'x://s/extra?q=1', null],
  ['x://s{?q,limit}', 'x://s&q=1', null],
  ['x://s{?q,limit}', 'x://s?q=1#frag', null],
  ['x://s{?q}{&limit}', 'x://s?limit=5&q=1', { q: '1', limit: '5' }],
  ['x://s?v=1{&limit}', 'x://s?v=1&limit=5', { limit: '5' }],
  ['x://s?v=1{&limit}', 'x://s?v=1', {}],
  ['x://s?v=1{&limit}', 'x://s?v=2&limit=5', null],
  ['x://s?v={v}{&limit}', 'x://s?v=9&limit=5&z', { v: '9', limit: '5' }],
  ['x://items/{id}{?fields}', 'x://items/7?fields=a,b', { id: '7', fields: 'a,b' }],
  ['x://items/{id}{?fields}', 'x://items/7', { id: '7' }],
  ['file:///{+path}{?rev}', 'file:///a/b?rev=3', { path: 'a/b', rev: '3' }],
  ['x://r{/segs*}{?q}', 'x://r/a/b?q=1', { segs: ['a', 'b'], q: '1' }],

  // {#frag}
  ['x://doc{#section}', 'x://doc', {}],
  ['x://doc{#section}', 'x://doc#intro/part?2', { section: 'intro/part?2' }],
  ['x://doc{#section}', 'x://doc#', { section: '' }],
  ['x://doc{#section}', 'x://doc#a%20b', { section: 'a b' }],
  ['x://doc{?v}{#section}', 'x://doc?v=1#top', { v: '1', section: 'top' }],
  ['x://doc{?v}{#section}', 'x://doc#top', { section: 'top' }],
  ['x://doc/{id}{#section}', 'x://doc/1#top', { id: '1', section: 'top' }],
];

describe('UriTemplate.match', () => {
  for (const [template, uri, expected] of MATCH_TABLE) {
    it(`${template} ~ ${JSON.stringify(uri)} -> ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(UriTemplate.parse(template).match(uri), expected);
    });
  }

  it('returns null for URIs over MAX_URI_LENGTH and for non-strings', () => {
    const t = UriTemplate.parse('x://{+rest}');
    assert.deepEqual(t.match('x://' + 'a'.repeat(MAX_URI_LENGTH - 4)), { rest: 'a'.repeat(MAX_URI_LENGTH - 4) });
    assert.equal(t.match('x://' + 'a'.repeat(MAX_URI_LENGTH)), null);
    assert.equal(t.match(undefined as unknown as string), null);
  });

  it('is reusable and independent between calls', () => {
    const t = UriTemplate.parse('x://{a}/{b}');
    assert.deepEqual(t.match('x://1/2'), { a: '1', b: '2' });
    assert.equal(t.match('x://1'), null);
    assert.deepEqual(t.match('x://3/4'), { a: '3', b: '4' });
  });

  it('does not let "__proto__"-like query names touch the result prototype', () => {
    const m = UriTemplate.parse('x://s{?q}').match('x://s?__proto__=1&constructor=2&q=3');
    assert.deepEqual(m, { q: '3' });
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
  });
});

describe('UriTemplate.parse', () => {
  it('exposes template, variables and literalPrefix', () => {
    const t = UriTemplate.parse('file:///{+dir}/{file}{?rev,mode}{#line}');
    assert.equal(t.template, 'file:///{+dir}/{file}{?rev,mode}{#line}');
    assert.deepEqual(t.variables, ['dir', 'file', 'rev', 'mode', 'line']);
    assert.equal(t.literalPrefix, 'file:///');
    assert.equal(String(t), t.template);
    assert.equal(UriTemplate.parse('{+uri}').literalPrefix, '');
    assert.equal(UriTemplate.parse('config://app').literalPrefix, 'config://app');
    assert.equal(literalPrefix('test://template/{id}/data'), 'test://template/');
    assert.deepEqual(UriTemplate.parse('x://{a.b}/{c_1}').variables, ['a.b', 'c_1']);
  });

  const ERRORS: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['empty template', '', /empty/],
    ['non-string', 42, /must be a string/],
    ['too long', 'x://' + 'a'.repeat(MAX_TEMPLATE_LENGTH), /limit is 1024/],
    ['empty expression', 'x://{}', /expression \{\} is empty/],
    ['unclosed brace', 'x://{id', /never closed/],
    ['nested brace', 'x://{a{b}}', /never closed/],
    ['stray closing brace', 'x://id}', /no matching "\{"/],
    ['label operator', 'x://{.ext}', /\{\.ext\}.*"\." operator/],
    ['path-param operator', 'x://{;x}', /\{;x\}.*";" operator/],
    ['reserved operator =', 'x://{=x}', /\{=x\}.*reserves/],
    ['reserved operator !', 'x://{!x}', /\{!x\}.*reserves/],
    ['prefix modifier', 'x://{id:3}', /\{id:3\}.*prefix modifier/],
    ['explode on simple', 'x://{list*}', /\{list\*\}.*explode/],
    ['explode on query', 'x://s{?list*}', /\{\?list\*\}.*explode/],
    ['several simple vars', 'x://{a,b}', /\{a,b\}.*several variables/],
    ['empty name in list', 'x://s{?a,}', /\{\?a,\}.*empty variable name/],
    ['operator only', 'x://{+}', /\{\+\}.*empty variable name/],
    ['invalid name', 'x://{a-b}', /\{a-b\}.*invalid variable name "a-b"/],
    ['pct-encoded name', 'x://{a%20b}', /invalid variable name/],
    ['proto name', 'x://{__proto__}', /__proto__/],
    ['repeated variable', 'x://{id}/{id}', /"id" appears more than once/],
    ['repeated across shapes', 'x://{id}{?id}', /"id" appears more than once/],
    ['adjacent simple vars', 'x://{a}{b}', /\{a\} and \{b\} are adjacent/],
    ['reserved then path', 'x://{+a}{/b}', /\{\+a\} and \{\/b\} are adjacent/],
    ['explode then path', 'x://r{/a*}{/b}', /\{\/a\*\} and \{\/b\} are adjacent/],
    ['literal after query', 'x://s{?q}/more', /literal text "\/more" follows/],
    ['expression after query', 'x://s{?q}{id}', /\{id\} follows a query/],
    ['second {?}', 'x://s{?a}{?b}', /second query/],
    ['{?} after literal ?', 'x://s?v=1{?q}', /already contains "\?"/],
    ['{&} without query', 'x://s{&q}', /never started/],
    ['anything after {#}', 'x://s{#f}{?q}', /must be last/],
    ['{#} after literal #', 'x://s#top{#f}', /literal "#"/],
    ['space in literal', 'x://a b/{id}', /space or control character/],
    ['bad percent in literal', 'x://100%/{id}', /does not start a %XX escape/],
  ];
  for (const [label, template, pattern] of ERRORS) {
    it(`refuses ${label}`, () => {
      assert.throws(
        () => UriTemplate.parse(template as string),
        (error: unknown) => {
          assert.ok(error instanceof UriTemplateError);
          assert.equal(error.name, 'UriTemplateError');
          assert.match(error.message, pattern);
          if (typeof template === 'string' && template.length > 0 && template.length <= MAX_TEMPLATE_LENGTH) {
            assert.match(error.message, /Supported expressions: \{var\}/);
          }
          return true;
        },
      );
    });
  }

  it('accepts a template exactly MAX_TEMPLATE_LENGTH long', () => {
    const t = 'x://{id}/' + 'a'.repeat(MAX_TEMPLATE_LENGTH - 9);
    assert.equal(UriTemplate.parse(t).template.length, MAX_TEMPLATE_LENGTH);
  });
});

describe('UriTemplate.expand', () => {
  const EXPANSIONS: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ['test://template/{id}/data', { id: '123' }, 'test://template/123/data'],
    ['test://template/{id}/data', { id: 123 }, 'test://template/123/data'],
    ['x://{v}', { v: "a b/c?d#e&f=g!'()*~-._%" }, 'x://a%20b%2Fc%3Fd%23e%26f%3Dg%21%27%28%29%2A~-._%25'],
    ['x://{v}', { v: '\u20ac\u{1F600}' }, 'x://%E2%82%AC%F0%9F%98%80'],
    ['x://{v}', { v: ['a', 'b c'] }, 'x://a,b%20c'],
    ['x://{v}', { v: true }, 'x://true'],
    ['file:///{+p}', { p: 'a/b c/d?e#f%2Fg%zz' }, 'file:///a/b%20c/d?e#f%2Fg%25zz'],
    ['x://r{/v}', {}, 'x://r'],
    ['x://r{/v}', { v: null }, 'x://r'],
    ['x://r{/v}', { v: 'a/b' }, 'x://r/a%2Fb'],
    ['x://r{/v}', { v: ['a', 'b'] }, 'x://r/a,b'],
    ['x://r{/v*}', { v: [] }, 'x://r'],
    ['x://r{/v*}', { v: ['a', 'b/c', 'd e'] }, 'x://r/a/b%2Fc/d%20e'],
    ['x://r{/v*}', { v: 'one' }, 'x://r/one'],
    ['x://s{?q,limit}', {}, 'x://s'],
    ['x://s{?q,limit}', { limit: 5 }, 'x://s?limit=5'],
    ['x://s{?q,limit}', { q: 'a&b=c d', limit: 5 }, 'x://s?q=a%26b%3Dc%20d&limit=5'],
    ['x://s{?q,limit}', { q: '' }, 'x://s?q='],
    ['x://s{?q}{&limit}', { limit: 1 }, 'x://s?limit=1'],
    ['x://s{?q}{&limit}', { q: 'a', limit: 1 }, 'x://s?q=a&limit=1'],
    ['x://s?v=1{&limit}', { limit: 1 }, 'x://s?v=1&limit=1'],
    ['x://doc{#f}', { f: 'a/b?c d' }, 'x://doc#a/b?c%20d'],
    ['x://doc{#f}', {}, 'x://doc'],
    ['config://app', {}, 'config://app'],
  ];
  for (const [template, values, expected] of EXPANSIONS) {
    it(`${template} with ${JSON.stringify(values)} -> ${expected}`, () => {
      assert.equal(UriTemplate.parse(template).expand(values), expected);
    });
  }

  const ROUND_TRIPS: ReadonlyArray<readonly [string, Record<string, string | string[]>]> = [
    ['test://template/{id}/data', { id: '123' }],
    ['test://template/{id}/data', { id: 'a/b?c#d%2F e\u20ac' }],
    ['users://{id}/profile', { id: '%252F' }],
    ['file:///{+dir}/{file}', { dir: 'a/b c', file: 'x.txt' }],
    ['x://r{/v}', { v: 'a/b' }],
    ['x://r{/v}', {}],
    ['x://r{/segs*}', { segs: [] }],
    ['x://r{/segs*}', { segs: ['one'] }],
    ['x://r{/segs*}', { segs: ['a', 'b/c', '%', '\u{1F600}'] }],
    ['x://s{?q,limit}', { q: 'a&b=c#d', limit: '5' }],
    ['x://s{?q,limit}', { limit: '' }],
    ['x://s{?q}{&limit}', { limit: '2' }],
    ['x://items/{id}{?fields}{#f}', { id: '7', fields: 'a,b', f: 'sec/1' }],
  ];
  for (const [template, values] of ROUND_TRIPS) {
    it(`round-trips ${template} with ${JSON.stringify(values)}`, () => {
      const t = UriTemplate.parse(template);
      assert.deepEqual(t.match(t.expand(values)), values);
    });
  }

  const EXPAND_ERRORS: ReadonlyArray<readonly [string, Record<string, unknown>, RegExp]> = [
    ['x://{id}', {}, /\{id\}.*"id" is missing or empty/],
    ['x://{id}', { id: '' }, /missing or empty/],
    ['x://{id}', { id: [] }, /missing or empty/],
    ['file:///{+p}', { p: null }, /missing or empty/],
    ['x://{id}', { id: { a: 1 } }, /"id" is object.*string, number, boolean/],
    ['x://{id}', { id: [1, {}] }, /object inside an array/],
    ['x://{id}', { id: 'a\ud800' }, /unpaired surrogate/],
    ['x://r{/v*}', { v: ['a', ''] }, /empty path segment/],
    ['x://r{/v}', { v: '' }, /empty path segment/],
  ];
  for (const [template, values, pattern] of EXPAND_ERRORS) {
    it(`refuses to expand ${template} with ${JSON.stringify(values)}`, () => {
      assert.throws(
        () => UriTemplate.parse(template).expand(values),
        (error: unknown) => {
          assert.ok(error instanceof UriTemplateError);
          assert.match(error.message, pattern);
          return true;
        },
      );
    });
  }

  it('ignores inherited properties of the values object', () => {
    const t = UriTemplate.parse('x://s{?toString,valueOf}');
    assert.equal(t.expand({}), 'x://s');
  });
});

// Counted, not timed: the VM reports its steps, so the bound holds on a loaded machine too. How
// fast matching is lives in bench/pipeline-cost.ts.
describe('UriTemplate.match runs in linear time', () => {
  // Each case is a template whose naive regex translation backtracks (polynomially or worse) on
  // a long near-miss input that never matches.
  const CASES: ReadonlyArray<{ name: string; template: string; uri: (n: number) => string }> = [
    // /^x:\/\/(.+)\/x\/(.+)\/y$/ on "x://" + "/x/".repeat(k): cubic backtracking
    { name: 'reserved, literal, reserved', template: 'x://{+a}/x/{+b}/y', uri: (n) => 'x://' + '/x/'.repeat(n / 3) },
    // /^x:\/\/([^/]+)-([^/]+)-([^/]+)!$/ on "x://" + "-".repeat(k): cubic backtracking
    { name: 'simple vars split by the same literal', template: 'x://{a}-{b}-{c}!', uri: (n) => 'x://' + '-'.repeat(n) },
    // /^x:\/\/r((?:\/[^/]+)*)\/end$/ style, nested quantifier in naive translations
    { name: 'exploded path segments', template: 'x://r{/segs*}/end', uri: (n) => 'x://r' + '/a'.repeat(n / 2) + '/' },
  ];

  for (const { name, template, uri } of CASES) {
    it(`${name}: ${template}`, (context) => {
      const t = UriTemplate.parse(template);
      const n = 6000;
      const small = uri(n);
      const large = uri(10 * n);
      assert.ok(large.length <= MAX_URI_LENGTH);
      const wSmall = meterMatches(() => assert.equal(t.match(small), null));
      const wLarge = meterMatches(() => assert.equal(t.match(large), null));
      context.diagnostic(
        `${small.length} chars: ${wSmall.steps} steps; ${large.length} chars: ${wLarge.steps} steps; program ${wLarge.programSize}`,
      );
      assert.ok(wSmall.steps > 0, 'the matcher ran');
      // Each character is read once and costs at most one step per instruction: O(n × program).
      assert.ok(wLarge.positions <= large.length + 1, `${wLarge.positions} positions for ${large.length} characters`);
      assert.ok(wLarge.steps <= (large.length + 1) * wLarge.programSize, `${wLarge.steps} steps`);
      // Linear growth is 10x for 10x the input; quadratic would be 100x.
      assert.ok(wLarge.steps <= 11 * wSmall.steps, `10n took ${wLarge.steps} steps vs ${wSmall.steps} for n`);
    });
  }

  it('rejects a 100k-character URI without scanning it', () => {
    const t = UriTemplate.parse('x://{+a}/x/{+b}/y');
    const huge = 'x://' + '/x/'.repeat(33_334);
    assert.ok(huge.length > MAX_URI_LENGTH);
    const work = meterMatches(() => assert.equal(t.match(huge), null));
    assert.deepEqual(work, { positions: 0, steps: 0, programSize: 0 });
  });
});
