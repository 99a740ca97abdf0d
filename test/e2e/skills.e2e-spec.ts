/**
 * Skills (SEP-2640) beyond what the conformance scenarios check: guards hide a skill from the
 * callers they refuse on every path (lists, skills/get, resources/read, directory reads), both
 * eras serve the same entries, digests match the bytes read back, and a skill that breaks a
 * rule or a limit fails the bootstrap with a message naming it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpModule, Skill } from 'nestjs-model-context';
import type { McpSkillsOptions } from 'nestjs-model-context/options';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectSdkClient, modernRpc } from '../utils/clients.js';

@Injectable()
class OpsOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return (
      context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-role'] === 'ops'
    );
  }
}

const RUNBOOK =
  '---\nname: incident-runbook\ndescription: Triage a production incident\n---\n\nStart with steps/triage.md.\n';

@Injectable()
class GuardedSkills {
  @Skill({ prefix: 'ops' })
  @UseGuards(OpsOnly)
  runbook() {
    return { files: { 'SKILL.md': RUNBOOK, 'steps/triage.md': 'Page the on-call engineer.\n' } };
  }
}

function skillTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'mcp-skills-'));
  mkdirSync(join(root, 'git-workflow', 'examples'), { recursive: true });
  writeFileSync(
    join(root, 'git-workflow', 'SKILL.md'),
    '---\nname: git-workflow\ndescription: Follow the Git conventions\n---\n\nSee examples/commit.md.\n',
  );
  writeFileSync(join(root, 'git-workflow', 'examples', 'commit.md'), 'feat: add the thing\n');
  writeFileSync(join(root, 'git-workflow', '.hidden'), 'never served');
  symlinkSync('/etc/hostname', join(root, 'git-workflow', 'examples', 'outside.md'));
  mkdirSync(join(root, 'git-workflow', 'commit-msg'));
  writeFileSync(
    join(root, 'git-workflow', 'commit-msg', 'SKILL.md'),
    '---\nname: commit-msg\ndescription: Write a commit message\n---\n\nImperative mood.\n',
  );
  return root;
}

function appWith(skills: McpSkillsOptions, providers: Array<new (...args: never[]) => unknown> = []) {
  @Module({
    imports: [McpModule.forRoot({ name: 'skills-e2e', version: '1.0.0', skills })],
    providers: [OpsOnly, ...providers],
  })
  class SkillsApp {}
  return SkillsApp;
}

type Entry = {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: Array<{ uri: string; digest: string; size: number }>;
};
const ops = { headers: { 'x-role': 'ops' } };

describe('Skills (SEP-2640) served from a folder and a guarded @Skill() provider', () => {
  let server: RunningApp;
  let tree: string;

  before(async () => {
    tree = skillTree();
    server = await startApp(appWith({ directory: tree }, [GuardedSkills]));
  });
  after(async () => {
    await server.close();
    rmSync(tree, { recursive: true, force: true });
  });

  it('skills/list shows the guarded skill only to callers its guard admits', async () => {
    const anonymous = (await modernRpc(server.url, 'skills/list')).json as {
      result: { skills: Entry[]; cacheScope: string };
    };
    assert.deepEqual(
      anonymous.result.skills.map((s) => s.uri),
      ['skill://git-workflow/SKILL.md', 'skill://git-workflow/commit-msg/SKILL.md'],
    );
    assert.equal(anonymous.result.cacheScope, 'private', 'a page some callers see differently is never shared');
    const admitted = (await modernRpc(server.url, 'skills/list', {}, ops)).json as { result: { skills: Entry[] } };
    assert.deepEqual(
      admitted.result.skills.map((s) => s.uri),
      [
        'skill://git-workflow/SKILL.md',
        'skill://git-workflow/commit-msg/SKILL.md',
        'skill://ops/incident-runbook/SKILL.md',
      ],
    );
  });

  it('skills/get, resources/read and resources/directory/read refuse a hidden skill like an unknown one', async () => {
    const uri = 'skill://ops/incident-runbook/SKILL.md';
    const get = (await modernRpc(server.url, 'skills/get', { uri })).json as {
      error: { code: number; data: { uri: string } };
    };
    assert.equal(get.error.code, -32602);
    assert.equal(get.error.data.uri, uri);
    const dir = (await modernRpc(server.url, 'resources/directory/read', { uri: 'skill://ops/incident-runbook' }))
      .json as { error: { code: number } };
    assert.equal(dir.error.code, -32602);
    const read = (await modernRpc(server.url, 'resources/read', { uri })).json as {
      error?: { code: number };
      result?: unknown;
    };
    assert.equal(read.error?.code, -32602, `a refused caller reads nothing: ${JSON.stringify(read)}`);
    const listed = (await modernRpc(server.url, 'resources/list')).json as {
      result: { resources: Array<{ uri: string }> };
    };
    assert.ok(
      !listed.result.resources.some((r) => r.uri.startsWith('skill://ops/')),
      'its files are not listed either',
    );

    const admitted = (await modernRpc(server.url, 'skills/get', { uri }, ops)).json as {
      result: { skill: Entry; ttlMs: number };
    };
    assert.equal(admitted.result.skill.frontmatter.name, 'incident-runbook');
    assert.equal(typeof admitted.result.ttlMs, 'number');
    const children = (
      await modernRpc(server.url, 'resources/directory/read', { uri: 'skill://ops/incident-runbook' }, ops)
    ).json as { result: { resources: Array<{ uri: string; mimeType: string }> } };
    assert.deepEqual(
      children.result.resources.map((r) => [r.uri, r.mimeType]),
      [
        ['skill://ops/incident-runbook/SKILL.md', 'text/markdown'],
        ['skill://ops/incident-runbook/steps', 'inode/directory'],
      ],
    );
  });

  it('every digest and size matches the bytes resources/read returns; hidden files and links are not served', async () => {
    const { result } = (await modernRpc(server.url, 'skills/get', { uri: 'skill://git-workflow/SKILL.md' })).json as {
      result: { skill: Entry };
    };
    // A nested skill's files are the enclosing skill's too (SEP-2640: nested content is supporting content).
    assert.deepEqual(
      result.skill.resources.map((r) => r.uri),
      [
        'skill://git-workflow/SKILL.md',
        'skill://git-workflow/commit-msg/SKILL.md',
        'skill://git-workflow/examples/commit.md',
      ],
    );
    for (const file of result.skill.resources) {
      const read = (await modernRpc(server.url, 'resources/read', { uri: file.uri })).json as {
        result: { contents: Array<{ text: string }> };
      };
      const bytes = Buffer.from(read.result.contents[0]!.text, 'utf8');
      assert.equal(bytes.byteLength, file.size, file.uri);
      assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, file.digest, file.uri);
    }
    for (const uri of [
      'skill://git-workflow/.hidden',
      'skill://git-workflow/examples/outside.md',
      'skill://git-workflow/../../etc/passwd',
    ]) {
      const read = (await modernRpc(server.url, 'resources/read', { uri })).json as { error?: { code: number } };
      assert.equal(read.error?.code, -32602, uri);
    }
  });

  it('the legacy era (sdk 1.32.2 client) sees the same extension and entries', async () => {
    const connection = await connectSdkClient(server.url, { headers: { 'x-role': 'ops' } });
    try {
      const extensions = (connection.client.getServerCapabilities() as { extensions?: Record<string, unknown> })
        .extensions;
      assert.deepEqual(extensions?.['io.modelcontextprotocol/skills'], { directoryRead: true });
      const list = (await connection.client.request(
        { method: 'skills/list', params: {} },
        ResultSchema,
      )) as unknown as { skills: Entry[]; ttlMs?: number };
      assert.deepEqual(
        list.skills.map((s) => s.uri),
        [
          'skill://git-workflow/SKILL.md',
          'skill://git-workflow/commit-msg/SKILL.md',
          'skill://ops/incident-runbook/SKILL.md',
        ],
      );
      assert.equal(list.ttlMs, undefined, 'no cache hints before 2026-07-28');
      const modern = (await modernRpc(server.url, 'skills/list', {}, ops)).json as { result: { skills: Entry[] } };
      assert.deepEqual(list.skills, modern.result.skills);
      await assert.rejects(
        connection.client.request({ method: 'skills/get', params: { uri: 'skill://nope/SKILL.md' } }, ResultSchema),
        (error: { code?: number }) => error.code === -32602,
      );
    } finally {
      await connection.close();
    }
  });
});

describe('Skills from a folder that is itself a skill', () => {
  it('serves it under the folder name, and the skills nested in it at their own paths', async () => {
    const tree = skillTree();
    const server = await startApp(appWith({ directory: join(tree, 'git-workflow'), prefix: 'team' }));
    try {
      const list = (await modernRpc(server.url, 'skills/list')).json as { result: { skills: Entry[] } };
      assert.deepEqual(
        list.result.skills.map((s) => s.uri),
        ['skill://team/git-workflow/SKILL.md', 'skill://team/git-workflow/commit-msg/SKILL.md'],
      );
    } finally {
      await server.close();
      rmSync(tree, { recursive: true, force: true });
    }
  });
});

describe('Skills that break SEP-2640 or a limit fail the bootstrap, naming the skill', () => {
  const cases: Array<{ what: string; skills: McpSkillsOptions; files: Record<string, string>; error: RegExp }> = [
    {
      what: 'more files than skills.maxFilesPerSkill',
      skills: { maxFilesPerSkill: 1 },
      files: { 'SKILL.md': RUNBOOK, 'a.md': 'a' },
      error: /Skill "incident-runbook".*has 2 files; the limit is 1 \(skills\.maxFilesPerSkill/,
    },
    {
      what: 'more bytes than skills.maxBytesPerSkill',
      skills: { maxBytesPerSkill: 10 },
      files: { 'SKILL.md': RUNBOOK },
      error: /holds \d+ bytes; the limit is 10 \(skills\.maxBytesPerSkill/,
    },
    {
      what: 'a path that climbs out of the skill',
      skills: {},
      files: { 'SKILL.md': RUNBOOK, '../escape.md': 'x' },
      error: /invalid file path "\.\.\/escape\.md".*"\.\."/,
    },
    {
      what: 'a name that breaks the naming rules',
      skills: {},
      files: { 'SKILL.md': '---\nname: Bad--Name\ndescription: d\n---\n' },
      error: /breaks the Agent Skills naming rules/,
    },
    {
      what: 'no description',
      skills: {},
      files: { 'SKILL.md': '---\nname: lonely\n---\n' },
      error: /needs a non-empty string "description"/,
    },
  ];
  for (const { what, skills, files, error } of cases) {
    it(what, async () => {
      @Injectable()
      class Broken {
        @Skill()
        broken() {
          return { path: 'incident-runbook', files };
        }
      }
      await assert.rejects(startApp(appWith(skills, [Broken])), error);
    });
  }
});
