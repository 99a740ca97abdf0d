/**
 * The documentation holds: every TypeScript snippet of README.md and docs/*.md compiles against
 * the package as an app imports it, every relative link and anchor resolves, each docs page opens
 * with code, the README stays short, and the options reference is the one the typings generate.
 *
 * How a ```ts block is checked is said by the HTML comment on the line before it:
 * - none: a block starting with `import` is a whole module; any other block is a fragment,
 *   compiled after docs/preludes/common.ts (the imports and the app's own types it uses);
 * - `<!-- prelude: NAME -->`: a fragment compiled inside docs/preludes/NAME.ts, at its
 *   `// <snippet>` line (NAME.ts starts after common.ts too), e.g. `members` for class members;
 *   on a whole module, NAME.ts is put after it, for the declarations it makes (`app-module`);
 * - `<!-- excerpt-of: DIR -->`: a `// <path>.ts` line, then parts of DIR/<path>.ts in order
 *   (`// ...` lines stand for what is left out);
 * - `<!-- checked-by: readme.e2e-spec -->`: compiled (and run) by test/e2e/readme.e2e-spec.ts;
 * - `<!-- not-compiled: why -->`: not compiled, for the reason given.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { anchors, fencedBlocks, links, README_SPEC_SECTIONS, slug, type FencedBlock } from '../utils/markdown.js';
import { appCompilerOptions, tscRun } from '../utils/tsc.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const docsDir = join(root, 'docs');

/** The pages whose snippets are compiled. */
function snippetPages(): string[] {
  return [
    'README.md',
    ...readdirSync(docsDir)
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
}

/** The pages whose links are checked. */
function linkedPages(): string[] {
  const samples = readdirSync(join(root, 'sample'))
    .map((name) => `sample/${name}/README.md`)
    .filter((path) => existsSync(join(root, path)));
  return [...snippetPages(), 'SECURITY.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...samples];
}

interface Snippet {
  page: string;
  block: FencedBlock;
}

function tsSnippets(): Snippet[] {
  return snippetPages().flatMap((page) =>
    fencedBlocks(readFileSync(join(root, page), 'utf8'))
      .filter((block) => block.lang === 'ts' || block.lang === 'typescript')
      .map((block) => ({ page, block })),
  );
}

/** The section (`## ` heading) of `page` a line is in. */
function sectionOf(page: string, line: number): string | undefined {
  const lines = readFileSync(join(root, page), 'utf8').split('\n').slice(0, line);
  return lines.reverse().find((text) => /^## /.test(text));
}

/** The directive of a block's annotation: `prelude`, `excerpt-of`, `checked-by`, `not-compiled`, or none. */
function directive(block: FencedBlock): { kind: string; value: string } | undefined {
  const match = block.note ? /^([\w-]+):\s*(.*)$/.exec(block.note) : null;
  return match ? { kind: match[1]!, value: match[2]! } : undefined;
}

const isModule = (text: string): boolean => /^(?:\/\/[^\n]*\n|\s)*import\s/.test(text);

describe('Docs', () => {
  const dir = join(root, 'dist', '.docs-snippets');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('README.md is a short page: at most 250 lines, the contributor commands at its end', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const lines = readme.trimEnd().split('\n');
    assert.ok(lines.length <= 250, `README.md has ${lines.length} lines; move detail to a docs/ page`);
    const tail = lines.slice(-10).join('\n');
    assert.match(tail, /npm install && npm run sample/);
    assert.match(tail, /npm install && npm test/);
  });

  it('every docs/ page opens with a code block, right under its title', () => {
    for (const name of readdirSync(docsDir).filter((file) => file.endsWith('.md'))) {
      const lines = readFileSync(join(docsDir, name), 'utf8').split('\n');
      assert.match(lines[0]!, /^# \S/, `docs/${name} starts with its "# Title"`);
      const first = lines.slice(1).find((line) => line.trim() !== '' && !/^<!--.*-->$/.test(line.trim()));
      assert.match(
        first ?? '',
        /^```\w+/,
        `docs/${name}: the first thing under the title is a code block, not: ${first}`,
      );
    }
  });

  it('the anchors follow GitHub: lower case, punctuation dropped, spaces to hyphens, repeats numbered', () => {
    assert.equal(slug('DTO → JSON Schema'), 'dto--json-schema');
    assert.equal(
      slug('`@Tool()` options, parameters, results and errors'),
      'tool-options-parameters-results-and-errors',
    );
    assert.equal(slug("Behind the app's auth guard"), 'behind-the-apps-auth-guard');
    assert.equal(slug('Legacy HTTP+SSE transport (2024-11-05)'), 'legacy-httpsse-transport-2024-11-05');
    assert.equal(slug('Routing on arguments: `@McpHeader`'), 'routing-on-arguments-mcpheader');
    assert.deepEqual([...anchors('# A\n## B\n## B\n```md\n## C\n```\n')], ['a', 'b', 'b-1']);
  });

  it('every sample has a README saying how to run it', () => {
    for (const name of readdirSync(join(root, 'sample')).filter((entry) =>
      statSync(join(root, 'sample', entry)).isDirectory(),
    )) {
      const readme = join(root, 'sample', name, 'README.md');
      assert.ok(existsSync(readme), `sample/${name} has no README.md`);
      assert.match(
        readFileSync(readme, 'utf8'),
        /npm run [\w:-]+/,
        `sample/${name}/README.md does not say how to run it`,
      );
    }
  });

  it("the README's map of the docs links every docs/ page", () => {
    const linked = new Set(
      links(readFileSync(join(root, 'README.md'), 'utf8')).map(({ target }) => target.split('#')[0]),
    );
    const missing = readdirSync(docsDir).filter((name) => name.endsWith('.md') && !linked.has(`docs/${name}`));
    assert.deepEqual(missing, [], 'docs pages the README does not link to');
  });

  it('every relative link and #anchor resolves (GitHub anchor rules)', () => {
    const broken: string[] = [];
    const anchorCache = new Map<string, Set<string>>();
    const anchorsOf = (path: string): Set<string> => {
      if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')));
      return anchorCache.get(path)!;
    };
    let checked = 0;
    for (const page of linkedPages()) {
      const file = join(root, page);
      for (const { target, line } of links(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const [path, hash] = target.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!resolved.startsWith(root) || !existsSync(resolved)) {
          broken.push(`${page}:${line}: ${target} (no such file: ${relative(root, resolved)})`);
          continue;
        }
        if (hash !== undefined) {
          if (!resolved.endsWith('.md') || statSync(resolved).isDirectory())
            broken.push(`${page}:${line}: ${target} (an anchor into a file that is not Markdown)`);
          else if (!anchorsOf(resolved).has(hash))
            broken.push(
              `${page}:${line}: ${target} (no heading with the anchor #${hash} in ${relative(root, resolved)})`,
            );
        }
      }
    }
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
    assert.ok(checked > 50, `only ${checked} relative links were found: is the link reader broken?`);
  });

  it('every `npm run <script>` the pages name is a script of package.json', () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const unknown: string[] = [];
    for (const page of linkedPages()) {
      for (const match of readFileSync(join(root, page), 'utf8').matchAll(/npm run ([\w:-]+)/g)) {
        if (!(match[1]! in scripts)) unknown.push(`${page}: npm run ${match[1]}`);
      }
    }
    assert.deepEqual(unknown, [], `scripts the docs name that package.json does not have:\n${unknown.join('\n')}`);
  });

  it('every annotated ```ts block says how it is checked, with a known directive', () => {
    for (const { page, block } of tsSnippets()) {
      const found = directive(block);
      if (!found) continue;
      assert.ok(
        ['prelude', 'excerpt-of', 'checked-by', 'not-compiled'].includes(found.kind),
        `${page}:${block.line}: unknown directive "${found.kind}"`,
      );
      if (found.kind === 'not-compiled')
        assert.ok(found.value.length >= 10, `${page}:${block.line}: not-compiled needs a reason`);
      if (found.kind === 'prelude')
        assert.ok(
          existsSync(join(docsDir, 'preludes', `${found.value}.ts`)),
          `${page}:${block.line}: no docs/preludes/${found.value}.ts`,
        );
      if (found.kind === 'checked-by') {
        assert.equal(found.value, 'readme.e2e-spec', `${page}:${block.line}`);
        const section = sectionOf(page, block.line);
        assert.ok(
          README_SPEC_SECTIONS.some((checked) => checked.page === page && checked.heading === section),
          `${page}:${block.line}: readme.e2e-spec checks no block of "${section}" in ${page}`,
        );
      }
    }
    const skipped = tsSnippets().filter(({ block }) => directive(block)?.kind === 'not-compiled');
    assert.ok(
      skipped.length <= 3,
      `not-compiled is for the rare block that cannot compile; ${skipped.length} are marked`,
    );
  });

  it('every excerpt is, part by part and in order, in the file it names', () => {
    let count = 0;
    for (const { page, block } of tsSnippets()) {
      const found = directive(block);
      if (found?.kind !== 'excerpt-of') continue;
      const [header, ...lines] = block.text.replace(/\n$/, '').split('\n');
      const path = /^\/\/ ([\w./-]+\.ts)$/.exec(header!)?.[1];
      assert.ok(path, `${page}:${block.line}: an excerpt starts with a "// <path>.ts" line, not: ${header}`);
      const chunks: string[][] = [[]];
      for (const line of lines) {
        if (line.trim() === '// ...') chunks.push([]);
        else chunks.at(-1)!.push(line);
      }
      const file = readFileSync(join(root, found.value, path), 'utf8');
      let from = 0;
      for (const chunk of chunks
        .map((part) => part.join('\n').replace(/^\n+|\n+$/g, ''))
        .filter((part) => part !== '')) {
        const at = file.indexOf(chunk, from);
        assert.ok(
          at >= 0,
          `${page}:${block.line}: this part of ${found.value}/${path} is not in the file (or not in this order):\n${chunk}`,
        );
        from = at + chunk.length;
      }
      count++;
    }
    assert.ok(count >= 9, `only ${count} excerpts of the enterprise app: docs/existing-app.md walks through it`);
  });

  // The issue's acceptance: a new user adds MCP to a Nest 11 CommonJS app with a global passport
  // guard and Swagger DTOs from the docs alone. The enterprise app is that app (the consumers spec
  // compiles and runs it): everything in it that touches the package must be on the page.
  it('docs/existing-app.md shows every place the enterprise app touches the package, and how to install it', () => {
    const app = join(root, 'test/consumers/nest11-enterprise');
    const page = readFileSync(join(docsDir, 'existing-app.md'), 'utf8');
    const excerpted = new Set(
      fencedBlocks(page)
        .filter((block) => directive(block)?.kind === 'excerpt-of')
        .map((block) => /^\/\/ ([\w./-]+\.ts)\n/.exec(block.text)?.[1]),
    );
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) =>
        statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : name.endsWith('.ts') ? [join(dir, name)] : [],
      );
    const users = [...walk(join(app, 'src')), ...walk(join(app, 'test'))].filter((file) =>
      /from 'nestjs-model-context(?:\/testing)?'/.test(readFileSync(file, 'utf8')),
    );
    assert.ok(users.length >= 3, 'the enterprise app imports the package in its module, its tools and its tests');
    for (const file of users) {
      const path = relative(app, file);
      assert.ok(
        excerpted.has(path),
        `docs/existing-app.md has no excerpt of ${path}, which imports nestjs-model-context`,
      );
      for (const match of readFileSync(file, 'utf8').matchAll(
        /import \{([^}]*)\} from 'nestjs-model-context(?:\/testing)?'/g,
      )) {
        for (const name of match[1]!
          .split(',')
          .map((part) => part.trim().replace(/^type\s+/, ''))
          .filter(Boolean)) {
          assert.ok(
            new RegExp(`\\b${name}\\b`).test(page),
            `docs/existing-app.md never shows ${name}, which ${path} imports`,
          );
        }
      }
    }
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const install = /`npm install (nestjs-model-context[^`]*)`/.exec(page)?.[1];
    assert.ok(install, 'docs/existing-app.md gives the install command');
    for (const dependency of ['nestjs-model-context', 'light-my-request']) {
      assert.ok(dependency in manifest.dependencies, `the enterprise app depends on ${dependency}`);
      assert.match(install, new RegExp(`\\b${dependency}\\b`), `the install command names ${dependency}`);
    }
    assert.match(
      install,
      new RegExp(
        `light-my-request@${manifest.dependencies['light-my-request']!.replace(/\.\d+$/, '').replace('.', '\\.')}\\b`,
      ),
      'the install command pins the light-my-request the app uses',
    );
  });

  it('every other ```ts block compiles as an ES module against the built package', async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'node_modules'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'docs-snippets', private: true, type: 'module' }));
    symlinkSync(root, join(dir, 'node_modules', 'nestjs-model-context'), 'dir');
    const common = readFileSync(join(docsDir, 'preludes', 'common.ts'), 'utf8');
    // Each snippet file: where its lines came from, to report errors at the page's own line.
    const origins = new Map<string, { page: string; blockLine: number; offset: number }>();
    let compiled = 0;
    for (const { page, block } of tsSnippets()) {
      const found = directive(block);
      if (found && found.kind !== 'prelude') continue;
      let text: string;
      let offset = 0;
      if (isModule(block.text)) {
        // A whole module: a prelude only adds declarations after it (its own imports come first).
        text = found
          ? `${block.text}\n${readFileSync(join(docsDir, 'preludes', `${found.value}.ts`), 'utf8')}`
          : block.text;
      } else {
        const wrapper = found ? readFileSync(join(docsDir, 'preludes', `${found.value}.ts`), 'utf8') : '// <snippet>\n';
        const [head, tail = ''] = wrapper.split(/^\s*\/\/ <snippet>\s*$/m) as [string, string?];
        text = `${common}\n${head}${block.text}${tail}`;
        offset = `${common}\n${head}`.split('\n').length - 1;
      }
      const name = `${page.replace(/[/.]/g, '_')}_${block.line}.ts`;
      writeFileSync(join(dir, name), `${text}\nexport {};\n`);
      origins.set(name, { page, blockLine: block.line, offset });
      compiled++;
    }
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...appCompilerOptions, noEmit: true, lib: ['ES2023'] }, include: ['*.ts'] }),
    );
    const result = await tscRun(join(dir, 'tsconfig.json'), dir);
    const errors = result.output
      .split('\n')
      .filter((line) => /error TS/.test(line))
      .map((line) => {
        const at = /^([\w.-]+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line.trim());
        const origin = at && origins.get(at[1]!);
        if (!at || !origin) return line;
        const inBlock = Number(at[2]) - origin.offset;
        return inBlock >= 1
          ? `${origin.page}:${origin.blockLine + inBlock}: ${at[4]}`
          : `${origin.page}:${origin.blockLine} (in its prelude, line ${at[2]}): ${at[4]}`;
      });
    assert.equal(result.code, 0, `snippets that do not compile:\n${errors.join('\n') || result.output}`);
    assert.ok(compiled >= 30, `only ${compiled} snippets compiled`);
  });

  it('docs/options.md is what scripts/gen-options-doc.mjs generates from the options types, and names every option', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          process.execPath,
          [join(root, 'scripts/gen-options-doc.mjs'), ...args],
          { cwd: root, maxBuffer: 16 * 1024 * 1024 },
          (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const listed = await run(['--list']);
    assert.equal(listed.code, 0, listed.stderr);
    const options = JSON.parse(listed.stdout) as string[];
    for (const expected of [
      'name',
      'path',
      'controllerDecorators',
      'limits.maxBatchLength',
      'sessions.idleTtlMs',
      'redis.keyPrefix',
      'tasks.maxResultBytes',
      'skills.maxFilesPerSkill',
      'auth.resource',
    ]) {
      assert.ok(options.includes(expected), `the generator did not find the option ${expected} in the options types`);
    }
    const page = readFileSync(join(docsDir, 'options.md'), 'utf8');
    const missing = options.filter((option) => !page.includes(`| \`${option}\` |`));
    assert.deepEqual(
      missing,
      [],
      `docs/options.md has no row for: ${missing.join(', ')}. Run: node scripts/gen-options-doc.mjs`,
    );
    const checked = await run(['--check']);
    assert.equal(checked.code, 0, `docs/options.md is stale:\n${checked.stderr}`);
  });
});
