import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  DEFAULT_SKILL_LIMITS,
  buildSkill,
  parseFrontmatter,
  skillDigest,
  skillPathProblem,
  SkillDefinitionError,
} from './skill-entry.js';

const build = (path: string, files: Record<string, string | Uint8Array>) =>
  buildSkill({
    path,
    files: Object.entries(files).map(([p, content]) => ({ path: p, content })),
    access: {},
    limits: DEFAULT_SKILL_LIMITS,
    parseYaml: parse,
    site: 'spec',
    warn: () => undefined,
  });

const MAIN =
  '---\nname: refunds\ndescription: Process refunds\nlicense: MIT\nmetadata:\n  version: "2.1.0"\n---\n\nBody.\n';

describe('buildSkill', () => {
  it('renders the frontmatter verbatim and digests the raw bytes of every file, SKILL.md first', () => {
    const skill = build('acme/billing/refunds', { 'templates/b.md': 'b', 'SKILL.md': MAIN, 'templates/a.md': 'a' });
    assert.equal(skill.uri, 'skill://acme/billing/refunds/SKILL.md');
    assert.deepEqual(skill.entry.frontmatter, {
      name: 'refunds',
      description: 'Process refunds',
      license: 'MIT',
      metadata: { version: '2.1.0' },
    });
    assert.deepEqual(
      skill.entry.resources.map((r) => r.uri),
      [
        'skill://acme/billing/refunds/SKILL.md',
        'skill://acme/billing/refunds/templates/a.md',
        'skill://acme/billing/refunds/templates/b.md',
      ],
    );
    assert.deepEqual(skill.entry.resources[0], {
      uri: skill.uri,
      digest: skillDigest(Buffer.from(MAIN)),
      size: Buffer.byteLength(MAIN),
    });
    assert.match(skill.entry.resources[0]!.digest, /^sha256:[0-9a-f]{64}$/);
  });

  it('maps every directory to its direct children, subdirectories as inode/directory', () => {
    const skill = build('pdf', {
      'SKILL.md': MAIN.replace('refunds', 'pdf'),
      'templates/regional/eu.md': 'eu',
      'templates/invoice.md': 'i',
    });
    assert.deepEqual(
      [...skill.directories.keys()],
      ['skill://pdf', 'skill://pdf/templates', 'skill://pdf/templates/regional'],
    );
    assert.deepEqual(
      skill.directories.get('skill://pdf/templates')!.map((c) => [c.name, c.mimeType]),
      [
        ['invoice.md', 'text/markdown'],
        ['regional', 'inode/directory'],
      ],
    );
  });

  it('serves binary files as blobs and keeps a UTF-8 BOM in the text, so the digest still matches', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe]);
    const bom = '\ufeffnote';
    const skill = build('pdf', { 'SKILL.md': MAIN.replace('refunds', 'pdf'), 'logo.png': png, 'note.txt': bom });
    const descriptor = (uri: string) => skill.files.find((f) => f.uri === uri)!.descriptor;
    assert.equal(descriptor('skill://pdf/logo.png').mimeType, 'image/png');
    assert.equal(descriptor('skill://pdf/note.txt').size, Buffer.byteLength(bom));
  });

  it('titles and describes every file by its skill, so a resource list shows more than a bare file name', () => {
    const skill = build('acme/billing/refunds', { 'SKILL.md': MAIN, 'references/POLICY.md': 'policy' });
    const descriptor = (uri: string) => skill.files.find((f) => f.uri === uri)!.descriptor;
    const main = descriptor('skill://acme/billing/refunds/SKILL.md');
    assert.deepEqual([main.name, main.title, main.description], ['refunds', 'refunds skill', 'Process refunds']);
    const policy = descriptor('skill://acme/billing/refunds/references/POLICY.md');
    assert.deepEqual(
      [policy.name, policy.title, policy.description],
      [
        'POLICY.md',
        'refunds skill: references/POLICY.md',
        'The file references/POLICY.md of the refunds skill (Process refunds).',
      ],
    );
  });

  const refusals: Array<[string, string, Record<string, string>, RegExp]> = [
    [
      'a last segment other than the name',
      'other',
      { 'SKILL.md': MAIN },
      /last path segment "other" must equal the frontmatter name "refunds"/,
    ],
    ['no SKILL.md', 'refunds', { 'README.md': 'x' }, /has no SKILL\.md at its root/],
    ['no frontmatter', 'refunds', { 'SKILL.md': '# just text' }, /must begin with a YAML frontmatter block/],
    ['a frontmatter list', 'refunds', { 'SKILL.md': '---\n- a\n---\n' }, /must be a YAML mapping/],
    ['invalid YAML', 'refunds', { 'SKILL.md': '---\nname: [unclosed\n---\n' }, /not valid YAML/],
    ['a backslash path', 'refunds', { 'SKILL.md': MAIN, 'a\\b.md': 'x' }, /use "\/" as the separator/],
    ['an absolute path', 'refunds', { 'SKILL.md': MAIN, '/etc/passwd': 'x' }, /it is absolute/],
    ['a "%" in a path', 'refunds', { 'SKILL.md': MAIN, 'a%2e.md': 'x' }, /"%"/],
  ];
  for (const [what, path, files, error] of refusals) {
    it(`refuses ${what}`, () =>
      assert.throws(
        () => build(path, files),
        (e: unknown) => e instanceof SkillDefinitionError && error.test(e.message),
      ));
  }
});

describe('skillPathProblem and parseFrontmatter', () => {
  it('accepts nested paths and refuses empty, dot and authority-breaking segments', () => {
    assert.equal(skillPathProblem('acme/billing/refunds'), undefined);
    assert.match(skillPathProblem('acme//refunds')!, /empty/);
    assert.match(skillPathProblem('../refunds')!, /"\.\."/);
    assert.match(skillPathProblem('user@host/refunds')!, /authority/);
    assert.match(skillPathProblem('a b/refunds')!, /cannot/);
  });

  it('reads a frontmatter block after a BOM and with CRLF line ends', () => {
    assert.deepEqual(parseFrontmatter('\ufeff---\r\nname: a\r\ndescription: b\r\n---\r\nbody', parse, 'spec'), {
      name: 'a',
      description: 'b',
    });
  });
});
