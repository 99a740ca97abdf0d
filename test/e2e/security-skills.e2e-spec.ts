/**
 * Skills (SEP-2640) from the attacker's side. Who may see a skill: a caller its guards refuse
 * finds it on no path (2026-07-28, a 2025-11-25 session, a batch on 2025-03-26, in process like
 * stdio) and cannot tell it from a URI nothing serves, whatever it asks (lists, skills/get, file
 * reads, directory reads, subscriptions, cursors). What it holds: the bytes read at bootstrap,
 * whatever happens to the folder later; links and path tricks reach nothing outside the skills.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Injectable, Module, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import {
  McpExecutionContext,
  McpModule,
  RequireScopes,
  Skill,
  type McpModuleForRootOptions,
  type McpPrincipal,
} from 'nestjs-model-context';
import { McpTestClient } from 'nestjs-model-context/testing';
import { startApp, type RunningApp } from '../utils/app.js';
import { modernRpc } from '../utils/clients.js';
import { ENTRY_PATHS, PathClient, type PathAnswer } from '../utils/paths.js';

type Json = Record<string, any>;

/** Lets through only callers that send `x-role: ops`. */
@Injectable()
class OpsOnly implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = McpExecutionContext.create(context).getRequest<
      { headers?: Record<string, string | undefined> } | undefined
    >();
    return request?.headers?.['x-role'] === 'ops';
  }
}

const RUNBOOK = '---\nname: incident-runbook\ndescription: Triage a production incident\n---\n\nSee steps/triage.md.\n';
const SECRET = 'PAGER-SECRET-4711';

@Injectable()
class GuardedSkills {
  @Skill({ prefix: 'ops' })
  @UseGuards(OpsOnly)
  runbook() {
    return { files: { 'SKILL.md': RUNBOOK, 'steps/triage.md': `Call ${SECRET}.\n` } };
  }
}

const ops = { 'x-role': 'ops' };
const HIDDEN = {
  skill: 'skill://ops/incident-runbook/SKILL.md',
  file: 'skill://ops/incident-runbook/steps/triage.md',
  root: 'skill://ops/incident-runbook',
  dir: 'skill://ops/incident-runbook/steps',
};
/** The same shapes at URIs nothing serves: what a refused caller must get, word for word. */
const NOWHERE = {
  skill: 'skill://ops/nothing-here/SKILL.md',
  file: 'skill://ops/nothing-here/steps/triage.md',
  root: 'skill://ops/nothing-here',
  dir: 'skill://ops/nothing-here/steps',
};

function skillTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'mcp-abuse-skills-'));
  mkdirSync(join(root, 'git-workflow', 'examples'), { recursive: true });
  writeFileSync(
    join(root, 'git-workflow', 'SKILL.md'),
    '---\nname: git-workflow\ndescription: Follow the Git conventions\n---\n\nSee examples/commit.md.\n',
  );
  writeFileSync(join(root, 'git-workflow', 'examples', 'commit.md'), 'feat: add the thing\n');
  symlinkSync('/etc/hostname', join(root, 'git-workflow', 'examples', 'hostname.md'));
  symlinkSync('/etc', join(root, 'git-workflow', 'etc'));
  return root;
}

function appWith(
  options: Partial<McpModuleForRootOptions>,
  providers: Array<new (...args: never[]) => unknown> = [GuardedSkills],
) {
  @Module({
    imports: [
      McpModule.forRoot({ name: 'abuse-skills', version: '1.0.0', pageSize: 1, ...options } as McpModuleForRootOptions),
    ],
    providers: [OpsOnly, ...providers],
  })
  class SkillsAbuseApp {}
  return SkillsAbuseApp;
}

/** The error with the probed URI replaced by a placeholder, so two answers compare whole. */
function shape(answer: PathAnswer, uri: string): Json {
  assert.ok(answer.body.error, `expected an error, got ${JSON.stringify(answer.body)}`);
  return JSON.parse(JSON.stringify({ status: answer.status, error: answer.body.error }).split(uri).join('<uri>'));
}

describe('security: skills', () => {
  let server: RunningApp;
  let tree: string;
  let paths: PathClient;

  before(async () => {
    tree = skillTree();
    server = await startApp(appWith({ skills: { directory: tree } }));
    paths = new PathClient(server.url);
  });
  after(async () => {
    await server.close();
    rmSync(tree, { recursive: true, force: true });
  });

  for (const path of ENTRY_PATHS) {
    describe(`a refused caller, ${path}`, () => {
      it('finds the guarded skill in no skills/list or resources/list page, and no cursor of an admitted caller shows it', async () => {
        const seen: string[] = [];
        for (const [method, key] of [
          ['skills/list', 'skills'],
          ['resources/list', 'resources'],
        ] as const) {
          let cursor: string | undefined;
          do {
            const page = await paths.call(path, method, cursor === undefined ? {} : { cursor });
            assert.ok(page.body.result, JSON.stringify(page.body));
            seen.push(...(page.body.result[key] as Json[]).map((item) => item.uri as string));
            cursor = page.body.result.nextCursor;
          } while (cursor);
        }
        assert.ok(seen.length > 0);
        assert.ok(!seen.some((uri) => uri.startsWith('skill://ops/')), seen.join(', '));
        // An admitted caller's cursors (pageSize 1: one per skill) replayed by the refused one.
        let cursor: string | undefined;
        do {
          const admitted = await paths.call(path, 'skills/list', cursor === undefined ? {} : { cursor }, ops);
          cursor = admitted.body.result.nextCursor;
          if (!cursor) break;
          const replayed = await paths.call(path, 'skills/list', { cursor });
          assert.ok(!JSON.stringify(replayed.body).includes('skill://ops/'), JSON.stringify(replayed.body));
        } while (cursor);
      });

      it('gets for every URI of the skill exactly what a URI nothing serves gets', async () => {
        const probes: Array<[string, (uri: string) => Json, keyof typeof HIDDEN]> = [
          ['skills/get', (uri) => ({ uri }), 'skill'],
          ['resources/read', (uri) => ({ uri }), 'skill'],
          ['resources/read', (uri) => ({ uri }), 'file'],
          ['resources/directory/read', (uri) => ({ uri }), 'root'],
          ['resources/directory/read', (uri) => ({ uri }), 'dir'],
          path === 'modern'
            ? ['subscriptions/listen', (uri) => ({ notifications: { resourceSubscriptions: [uri] } }), 'file']
            : ['resources/subscribe', (uri) => ({ uri }), 'file'],
        ];
        for (const [method, params, which] of probes) {
          const hidden = await paths.call(path, method, params(HIDDEN[which]));
          const nowhere = await paths.call(path, method, params(NOWHERE[which]));
          assert.deepEqual(shape(hidden, HIDDEN[which]), shape(nowhere, NOWHERE[which]), `${method} ${HIDDEN[which]}`);
          assert.ok(!JSON.stringify(hidden.body).includes(SECRET));
        }
      });
    });
  }

  it('an admitted caller reads the skill on every path', async () => {
    for (const path of ENTRY_PATHS) {
      const read = await paths.call(path, 'resources/read', { uri: HIDDEN.file }, ops);
      assert.equal(read.body.result?.contents?.[0]?.text, `Call ${SECRET}.\n`, `${path}: ${JSON.stringify(read.body)}`);
      const get = await paths.call(path, 'skills/get', { uri: HIDDEN.skill }, ops);
      assert.equal(get.body.result?.skill?.frontmatter?.name, 'incident-runbook', path);
    }
  });

  it('in process (the stdio engine), the refused caller sees nothing and the admitted one sees the skill', async () => {
    const refused = await McpTestClient.create(server.app, { era: '2025-11-25' });
    const admitted = await McpTestClient.create(server.app, { era: '2026-07-28', headers: ops });
    try {
      const listed = await refused.request('skills/list');
      assert.ok(!JSON.stringify(listed).includes('skill://ops/'));
      await assert.rejects(
        refused.request('skills/get', { uri: HIDDEN.skill }),
        (error: { code?: number }) => error.code === -32602,
      );
      await assert.rejects(
        refused.request('resources/read', { uri: HIDDEN.file }),
        (error: { code?: number }) => error.code === -32002,
      );
      const read = await admitted.request('resources/read', { uri: HIDDEN.file });
      assert.equal(read.contents[0].text, `Call ${SECRET}.\n`);
    } finally {
      await refused.close();
      await admitted.close();
    }
  });

  it('path tricks reach no file: dot segments, encoded separators, case, doubled slashes, links', async () => {
    const tricks = [
      'skill://git-workflow/examples/../SKILL.md',
      'skill://git-workflow/examples/%2e%2e/SKILL.md',
      'skill://git-workflow%2Fexamples%2Fcommit.md',
      'skill://git-workflow/examples%2fcommit.md',
      'skill://Git-Workflow/SKILL.md',
      'skill://git-workflow//SKILL.md',
      'skill://git-workflow/./SKILL.md',
      'skill://git-workflow/SKILL.md/',
      'skill://git-workflow/SKILL.md?x=1',
      'skill://git-workflow/SKILL.md#top',
      'skill://git-workflow/examples/hostname.md',
      'skill://git-workflow/etc/hostname',
      'skill://git-workflow/etc/passwd',
      'skill://ops/../git-workflow/SKILL.md',
    ];
    for (const uri of tricks) {
      for (const method of ['resources/read', 'skills/get']) {
        const answer = await paths.call('modern', method, { uri }, ops);
        assert.equal(answer.body.error?.code, -32602, `${method} ${uri}: ${JSON.stringify(answer.body)}`);
      }
    }
    for (const uri of [
      'skill://git-workflow/',
      'skill://git-workflow/examples/',
      'skill://git-workflow/etc',
      'skill://git-workflow/examples/..',
    ]) {
      const answer = await paths.call('modern', 'resources/directory/read', { uri }, ops);
      assert.equal(answer.body.error?.code, -32602, `${uri}: ${JSON.stringify(answer.body)}`);
    }
  });

  it('serves the bytes read at bootstrap, whatever happens to the folder afterwards', async () => {
    const before = await paths.call('modern', 'resources/read', { uri: 'skill://git-workflow/examples/commit.md' });
    writeFileSync(join(tree, 'git-workflow', 'examples', 'commit.md'), 'rewritten after bootstrap\n');
    writeFileSync(join(tree, 'git-workflow', 'examples', 'new.md'), 'added after bootstrap\n');
    const afterWrite = await paths.call('modern', 'resources/read', { uri: 'skill://git-workflow/examples/commit.md' });
    assert.deepEqual(afterWrite.body.result.contents, before.body.result.contents);
    const added = await paths.call('modern', 'resources/read', { uri: 'skill://git-workflow/examples/new.md' });
    assert.equal(added.body.error?.code, -32602);
  });

  it('cursors: a directory cursor on another directory, a tampered or huge one, a list cursor on another list: -32602', async () => {
    const first = await paths.call('modern', 'resources/directory/read', { uri: 'skill://git-workflow' });
    const cursor = first.body.result.nextCursor as string;
    assert.ok(cursor, 'pageSize 1 pages the directory');
    const foreign = await paths.call('modern', 'resources/directory/read', { uri: HIDDEN.root, cursor }, ops);
    assert.equal(foreign.body.error?.code, -32602, JSON.stringify(foreign.body));
    const tampered = await paths.call('modern', 'resources/directory/read', {
      uri: 'skill://git-workflow',
      cursor: `${cursor.slice(0, -2)}AA`,
    });
    assert.equal(tampered.body.error?.code, -32602);
    const huge = await paths.call('modern', 'resources/directory/read', {
      uri: 'skill://git-workflow',
      cursor: 'A'.repeat(60_000),
    });
    assert.equal(huge.body.error?.code, -32602);
    const skillsCursor = (await paths.call('modern', 'skills/list', {}, ops)).body.result.nextCursor as string;
    assert.ok(skillsCursor);
    for (const method of ['resources/list', 'tools/list', 'prompts/list']) {
      const crossed = await paths.call('modern', method, { cursor: skillsCursor });
      assert.equal(crossed.body.error?.code, -32602, `${method}: ${JSON.stringify(crossed.body)}`);
    }
    const listCursor = (await paths.call('modern', 'resources/list', {})).body.result.nextCursor as string;
    const crossed = await paths.call('modern', 'skills/list', { cursor: listCursor });
    assert.equal(crossed.body.error?.code, -32602);
  });
});

describe('security: skills with guardAwareLists off', () => {
  it('still hides a guarded skill from skills/list: its entry is the skill itself', async () => {
    const server = await startApp(appWith({ guardAwareLists: false, skills: {} }));
    try {
      const list = (await modernRpc(server.url, 'skills/list', { cursor: '' })).json as Json;
      assert.ok(!JSON.stringify(list).includes('incident-runbook'), JSON.stringify(list));
      const files = (await modernRpc(server.url, 'resources/list', {})).json as Json;
      assert.ok(!JSON.stringify(files).includes('skill://ops/'), JSON.stringify(files));
    } finally {
      await server.close();
    }
  });
});

@Injectable()
class OpenNestedSkill {
  /** A skill nested in the guarded one's tree, from another source and without its guard. */
  @Skill({ prefix: 'ops/incident-runbook' })
  nested() {
    return { files: { 'SKILL.md': '---\nname: steps\ndescription: Public checklist\n---\n\nA public checklist.\n' } };
  }
}

describe('security: a skill nested in a guarded skill by another source', () => {
  it("does not open the guarded skill's directories to callers its guard refuses", async () => {
    const server = await startApp(appWith({ skills: {} }, [GuardedSkills, OpenNestedSkill]));
    try {
      const dir = (await modernRpc(server.url, 'resources/directory/read', { uri: HIDDEN.dir })).json as Json;
      assert.ok(!JSON.stringify(dir).includes('triage.md'), JSON.stringify(dir));
      const root = (await modernRpc(server.url, 'resources/directory/read', { uri: HIDDEN.root })).json as Json;
      assert.equal(root.error?.code, -32602, JSON.stringify(root));
      // The nested skill's own file stays listed to everyone, and an admitted caller sees both skills' children.
      assert.deepEqual(
        (dir.result.resources as Json[]).map((child) => child.name),
        ['SKILL.md'],
      );
      const admitted = (await modernRpc(server.url, 'resources/directory/read', { uri: HIDDEN.dir }, { headers: ops }))
        .json as Json;
      const next = (
        await modernRpc(
          server.url,
          'resources/directory/read',
          { uri: HIDDEN.dir, cursor: admitted.result.nextCursor },
          { headers: ops },
        )
      ).json as Json;
      assert.deepEqual(
        [...admitted.result.resources, ...next.result.resources].map((child: Json) => child.name),
        ['SKILL.md', 'triage.md'],
      );
    } finally {
      await server.close();
    }
  });
});

const PRINCIPALS: Record<string, McpPrincipal> = {
  'alice-token': { id: 'alice', scopes: ['skills:ops'] },
  'bob-token': { id: 'bob', scopes: [] },
};

@Injectable()
class ScopedSkills {
  @Skill({ prefix: 'ops' })
  @RequireScopes('skills:ops')
  runbook() {
    return { files: { 'SKILL.md': RUNBOOK, 'steps/triage.md': `Call ${SECRET}.\n` } };
  }
}

describe('security: a skill behind scopes, two principals', () => {
  it('is in no list of the principal without the scope, even with guardAwareLists off; a direct ask gets 403 naming the scope (step-up)', async () => {
    const auth = {
      resource: 'http://127.0.0.1/mcp',
      authorizationServers: ['https://auth.example.com'],
      verifyToken: (token: string) => PRINCIPALS[token] ?? null,
    };
    const server = await startApp(appWith({ auth, guardAwareLists: false, skills: {} }, [ScopedSkills]));
    const paths = new PathClient(server.url);
    try {
      for (const path of ENTRY_PATHS) {
        const bob = { Authorization: 'Bearer bob-token' };
        const alice = { Authorization: 'Bearer alice-token' };
        for (const method of ['skills/list', 'resources/list']) {
          const listed = await paths.call(path, method, {}, bob);
          assert.ok(
            listed.body.result && !JSON.stringify(listed.body).includes('skill://ops/'),
            `${path} ${method}: ${JSON.stringify(listed.body)}`,
          );
          assert.ok(
            JSON.stringify((await paths.call(path, method, {}, alice)).body).includes('skill://ops/'),
            `${path} ${method} alice`,
          );
        }
        const get = await paths.call(path, 'skills/get', { uri: HIDDEN.skill }, bob);
        assert.equal(get.status, 403, `${path}: ${JSON.stringify(get.body)}`);
        assert.ok(!JSON.stringify(get.body).includes(SECRET));
      }
    } finally {
      await server.close();
    }
  });
});

describe('security: odd skill folders', () => {
  it('a FIFO, a link to a directory and a 300-level tree neither hang nor break the bootstrap, and serve nothing of theirs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'mcp-abuse-odd-skills-'));
    try {
      mkdirSync(join(root, 'deep'));
      writeFileSync(join(root, 'deep', 'SKILL.md'), '---\nname: deep\ndescription: A deep tree\n---\n');
      let dir = join(root, 'deep');
      for (let level = 0; level < 300; level++) mkdirSync((dir = join(dir, 'd')));
      writeFileSync(join(dir, 'bottom.md'), 'bottom\n');
      // A reader of a FIFO waits for a writer that never comes: it must never be opened.
      execFileSync('mkfifo', [join(root, 'deep', 'pipe.md')]);
      symlinkSync('/proc', join(root, 'deep', 'proc'));
      const server = await startApp(appWith({ skills: { directory: root } }, []));
      try {
        const entry = (await modernRpc(server.url, 'skills/get', { uri: 'skill://deep/SKILL.md' })).json as Json;
        const uris = (entry.result.skill.resources as Json[]).map((file) => file.uri as string);
        assert.equal(uris.length, 2, uris.join(', '));
        assert.ok(uris[1]!.endsWith('/d/bottom.md'));
        for (const uri of ['skill://deep/pipe.md', 'skill://deep/proc/self/environ']) {
          assert.equal(
            ((await modernRpc(server.url, 'resources/read', { uri })).json as Json).error?.code,
            -32602,
            uri,
          );
        }
      } finally {
        await server.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a folder with more entries than skills.maxFolderEntries fails the bootstrap naming the option', async () => {
    const root = mkdtempSync(join(tmpdir(), 'mcp-abuse-wide-skills-'));
    try {
      mkdirSync(join(root, 'wide'));
      writeFileSync(join(root, 'wide', 'SKILL.md'), '---\nname: wide\ndescription: Many files\n---\n');
      for (let n = 0; n < 20; n++) writeFileSync(join(root, 'wide', `f${n}.md`), 'x');
      await assert.rejects(
        startApp(appWith({ skills: { directory: root, maxFolderEntries: 10 } }, [])),
        /more than 10 entries \(skills\.maxFolderEntries\)/,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
