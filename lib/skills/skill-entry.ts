import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { defer, of } from 'rxjs';
import type { McpAccess, ResourceRuntime } from '../protocol/catalog.js';
import type { JsonObject } from '../protocol/mcp-types.js';
import type { ResourceDescriptor } from '../protocol/resource-contents.js';

/*
 * Agent Skills served per SEP-2640 (`io.modelcontextprotocol/skills`): one skill is a directory
 * holding a SKILL.md with YAML frontmatter plus any files it references. Everything a listing
 * needs (frontmatter, digests, sizes, directories) is computed once, when the skill is built.
 */

/** The extension identifier a server declares under `capabilities.extensions`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** The MIME type SEP-2640 gives directory resources. */
export const DIRECTORY_MIME_TYPE = 'inode/directory';
export const SKILL_FILE = 'SKILL.md';

/** The per-skill bounds (the SEP's host-side limits by default: 512 files, 16 MiB), and the most entries one folder walk visits. */
export interface SkillLimits {
  maxFilesPerSkill: number;
  maxBytesPerSkill: number;
  maxFolderEntries: number;
}

export const DEFAULT_SKILL_LIMITS: SkillLimits = {
  maxFilesPerSkill: 512,
  maxBytesPerSkill: 16 * 1024 * 1024,
  maxFolderEntries: 100_000,
};

/** One file of a skill, as read from disk or returned by a provider. */
export interface SkillFileInput {
  /** Path below the skill root, `/`-separated (`references/FORMS.md`). */
  path: string;
  content: string | Uint8Array;
  mimeType?: string;
}

/** One `{uri, digest, size}` triple of a skill entry. */
export interface SkillResourceEntry {
  uri: string;
  digest: string;
  size: number;
}

/** A skill entry of `skills/list` and `skills/get`. */
export interface SkillEntry {
  uri: string;
  frontmatter: JsonObject;
  resources: SkillResourceEntry[];
}

/** A child of a directory resource, as `resources/directory/read` lists it. */
export interface DirectoryChild {
  uri: string;
  name: string;
  mimeType: string;
  size?: number;
}

/** A built skill: its entry, its files as resources, and its directories. */
export interface SkillRuntime extends McpAccess {
  /** `skill://<skill-path>/SKILL.md`. */
  readonly uri: string;
  /** `skill://<skill-path>`, the skill's root directory. */
  readonly root: string;
  readonly name: string;
  readonly entry: Readonly<SkillEntry>;
  /** One resource per file, SKILL.md first. */
  readonly files: readonly ResourceRuntime[];
  /** Every directory of the skill (its root included) to its direct children, in name order. */
  readonly directories: ReadonlyMap<string, readonly DirectoryChild[]>;
  /** Where the skill was declared, for bootstrap errors. */
  readonly site: string;
}

/** Parses YAML text (the `yaml` package's `parse`). */
export type YamlParse = (text: string) => unknown;

/** Agent Skills naming rules: 1-64 lowercase letters, digits and hyphens, no leading, trailing or double hyphen. */
const SKILL_NAME = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
const PATH_SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@-]+$/;
const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Thrown at bootstrap when a skill cannot be served as SEP-2640 requires; the message names the skill and the fix. */
export class SkillDefinitionError extends Error {
  override readonly name = 'SkillDefinitionError';
}

/**
 * Checks a skill path (`git-workflow`, `acme/billing/refunds`): `/`-separated segments, each a
 * valid URI path segment, the first a valid authority. Returns why not, or undefined.
 */
export function skillPathProblem(path: string): string | undefined {
  if (path.length === 0) return 'it is empty';
  const segments = path.split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..')
      return `segment ${JSON.stringify(segment)} is empty, "." or ".."`;
    if (!PATH_SEGMENT.test(segment))
      return `segment ${JSON.stringify(segment)} holds characters a URI path segment cannot (use letters, digits, "-", "_", ".")`;
  }
  if (segments[0]!.includes(':') || segments[0]!.includes('@'))
    return `the first segment ${JSON.stringify(segments[0])} is the URI authority and cannot hold ":" or "@"`;
  return undefined;
}

/** `sha256:{64 lowercase hex}` of raw bytes. */
export function skillDigest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

const MIME_BY_EXTENSION: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ts: 'text/x-typescript',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  html: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  pdf: 'application/pdf',
};

/** The MIME type of a skill file from its extension (`application/octet-stream` when unknown). */
export function skillFileMimeType(path: string): string {
  const dot = path.lastIndexOf('.');
  return (dot >= 0 && MIME_BY_EXTENSION[path.slice(dot + 1).toLowerCase()]) || 'application/octet-stream';
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file as text when its bytes are UTF-8 (so the text is exactly the digested bytes), else undefined. */
function asText(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The SKILL.md frontmatter as a JSON object, parsed with the given YAML parser.
 *
 * @throws SkillDefinitionError when there is no frontmatter block, it is not a mapping, or it
 *   lacks a non-empty `name` or `description`.
 */
export function parseFrontmatter(text: string, parse: YamlParse, where: string): JsonObject {
  const match = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).match(FRONTMATTER);
  if (!match)
    throw new SkillDefinitionError(
      `${where}: SKILL.md must begin with a YAML frontmatter block between two "---" lines (name and description at least).`,
    );
  let value: unknown;
  try {
    value = parse(match[1]!);
  } catch (error) {
    throw new SkillDefinitionError(
      `${where}: the SKILL.md frontmatter is not valid YAML: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SkillDefinitionError(
      `${where}: the SKILL.md frontmatter must be a YAML mapping (name: ..., description: ...).`,
    );
  }
  const frontmatter = JSON.parse(JSON.stringify(value)) as JsonObject;
  for (const field of ['name', 'description'] as const) {
    if (typeof frontmatter[field] !== 'string' || (frontmatter[field] as string).length === 0) {
      throw new SkillDefinitionError(
        `${where}: the SKILL.md frontmatter needs a non-empty string "${field}" (the Agent Skills specification requires it).`,
      );
    }
  }
  return frontmatter;
}

/** What building one skill needs besides its files. */
export interface SkillBuildInput {
  /** `acme/billing/refunds`; its last segment must equal the frontmatter name. */
  path: string;
  files: readonly SkillFileInput[];
  access: McpAccess;
  limits: SkillLimits;
  parseYaml: YamlParse;
  site: string;
  /** Warns about what the SEP only advises against (reserved metadata keys). */
  warn(message: string): void;
}

/**
 * Builds one skill: validates its path, SKILL.md and frontmatter against SEP-2640 and the limits,
 * digests every file, and prepares its resources and directories.
 *
 * @throws SkillDefinitionError naming the skill and what to change.
 */
export function buildSkill(input: SkillBuildInput): SkillRuntime {
  const { path, files, access, limits, site } = input;
  const where = `Skill "${path}" (${site})`;
  const pathProblem = skillPathProblem(path);
  if (pathProblem !== undefined) throw new SkillDefinitionError(`${where}: invalid skill path: ${pathProblem}.`);
  if (files.length > limits.maxFilesPerSkill) {
    throw new SkillDefinitionError(
      `${where} has ${files.length} files; the limit is ${limits.maxFilesPerSkill} (skills.maxFilesPerSkill, SEP-2640 hosts accept 512). Split the skill or raise the limit.`,
    );
  }
  const seen = new Set<string>();
  const prepared = files.map((file) => {
    const problem = filePathProblem(file.path);
    if (problem !== undefined)
      throw new SkillDefinitionError(`${where}: invalid file path ${JSON.stringify(file.path)}: ${problem}.`);
    if (seen.has(file.path))
      throw new SkillDefinitionError(`${where}: file ${JSON.stringify(file.path)} is given twice.`);
    seen.add(file.path);
    const bytes = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : file.content;
    return { path: file.path, bytes, mimeType: file.mimeType ?? skillFileMimeType(file.path) };
  });
  const total = prepared.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  if (total > limits.maxBytesPerSkill) {
    throw new SkillDefinitionError(
      `${where} holds ${total} bytes; the limit is ${limits.maxBytesPerSkill} (skills.maxBytesPerSkill, SEP-2640 hosts accept 16 MiB). Make the files smaller or raise the limit.`,
    );
  }
  const main = prepared.find((file) => file.path === SKILL_FILE);
  const mainText = main && asText(main.bytes);
  if (mainText === undefined)
    throw new SkillDefinitionError(
      `${where} has no ${main ? 'UTF-8 ' : ''}${SKILL_FILE} at its root. Every skill needs one (YAML frontmatter with name and description, then the instructions).`,
    );
  const frontmatter = parseFrontmatter(mainText, input.parseYaml, where);
  const name = frontmatter.name as string;
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (!SKILL_NAME.test(name)) {
    throw new SkillDefinitionError(
      `${where}: name ${JSON.stringify(name)} breaks the Agent Skills naming rules (1-64 lowercase letters, digits and hyphens; no leading, trailing or double hyphen).`,
    );
  }
  if (last !== name)
    throw new SkillDefinitionError(
      `${where}: the last path segment "${last}" must equal the frontmatter name "${name}". Rename the directory or the name.`,
    );
  const metadata = frontmatter.metadata;
  if (typeof metadata === 'object' && metadata !== null) {
    const reserved = Object.keys(metadata).filter((key) => key.startsWith('io.modelcontextprotocol/'));
    if (reserved.length)
      input.warn(
        `${where}: frontmatter metadata keys ${reserved.join(', ')} use the prefix io.modelcontextprotocol/, which MCP extensions reserve.`,
      );
  }
  const root = `skill://${path}`;
  const uri = `${root}/${SKILL_FILE}`;
  // SKILL.md first, then the rest in path order: stable listings and digests across restarts.
  const ordered = [main!, ...prepared.filter((file) => file !== main).sort((a, b) => (a.path < b.path ? -1 : 1))];
  const resources: SkillResourceEntry[] = [];
  const runtimes: ResourceRuntime[] = [];
  for (const file of ordered) {
    const fileUri = `${root}/${file.path}`;
    resources.push({ uri: fileUri, digest: skillDigest(file.bytes), size: file.bytes.byteLength });
    runtimes.push(
      fileResource(
        fileUri,
        file,
        { name, description: frontmatter.description as string, main: file === main },
        access,
      ),
    );
  }
  return {
    uri,
    root,
    name,
    entry: { uri, frontmatter, resources },
    files: runtimes,
    directories: directoriesOf(root, runtimes),
    site,
    requiredScopes: access.requiredScopes,
    authorize: access.authorize,
    conceal: true,
  };
}

function filePathProblem(path: string): string | undefined {
  if (typeof path !== 'string' || path.length === 0) return 'it is empty';
  if (path.includes('\0')) return 'it contains a NUL byte';
  if (path.includes('\\')) return 'it contains "\\"; use "/" as the separator';
  if (path.startsWith('/')) return 'it is absolute; give it relative to the skill root';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'it has an empty, "." or ".." segment';
  if (segments.some((segment) => /[\u0000-\u0020\u007f%?#]/.test(segment)))
    return 'it contains whitespace, control characters, "%", "?" or "#", which cannot appear in a skill:// URI unencoded';
  return undefined;
}

/**
 * One file as a resource. Its read runs the skill's guards itself: it is served by the module,
 * not by a decorated method whose pipeline would.
 */
function fileResource(
  uri: string,
  file: { path: string; bytes: Uint8Array; mimeType: string },
  skill: { name: string; description: string; main: boolean },
  access: McpAccess,
): ResourceRuntime {
  const text =
    file.mimeType.startsWith('text/') ||
    file.mimeType.endsWith('json') ||
    file.mimeType.endsWith('yaml') ||
    file.mimeType.endsWith('xml')
      ? asText(file.bytes)
      : undefined;
  const content: JsonObject =
    text !== undefined
      ? { uri, mimeType: file.mimeType, text }
      : { uri, mimeType: file.mimeType, blob: Buffer.from(file.bytes).toString('base64') };
  // Every file says which skill it belongs to: a client listing resources shows a bare
  // "POLICY.md" otherwise, and the model cannot tell when reading it would help.
  const descriptor: ResourceDescriptor = {
    uri,
    name: skill.main ? skill.name : posix.basename(file.path),
    title: skill.main ? `${skill.name} skill` : `${skill.name} skill: ${file.path}`,
    description: skill.main
      ? skill.description
      : `The file ${file.path} of the ${skill.name} skill (${skill.description}).`,
    mimeType: file.mimeType,
    size: file.bytes.byteLength,
  };
  const result = { contents: [content] };
  const authorize = access.authorize;
  return {
    uri,
    name: descriptor.name,
    descriptor,
    mimeType: file.mimeType,
    requiredScopes: access.requiredScopes,
    authorize,
    conceal: true,
    // A caller the guards refuse gets the era's resource-not-found, as for any URI it cannot see.
    read: (ctx) =>
      defer(() =>
        authorize
          ? authorize(ctx, ctx.method).then(
              () => result,
              () => null,
            )
          : of(result),
      ),
  };
}

/** Every directory under the skill root to its direct children (files and subdirectories). */
function directoriesOf(root: string, files: readonly ResourceRuntime[]): Map<string, DirectoryChild[]> {
  const children = new Map<string, Map<string, DirectoryChild>>([[root, new Map()]]);
  for (const file of files) {
    const relative = file.uri.slice(root.length + 1).split('/');
    let dir = root;
    for (let i = 0; i < relative.length - 1; i++) {
      const sub = `${dir}/${relative[i]}`;
      if (!children.has(sub)) {
        children.set(sub, new Map());
        children.get(dir)!.set(sub, { uri: sub, name: relative[i]!, mimeType: DIRECTORY_MIME_TYPE });
      }
      dir = sub;
    }
    children.get(dir)!.set(file.uri, {
      uri: file.uri,
      name: relative[relative.length - 1]!,
      mimeType: file.mimeType!,
      size: file.descriptor.size,
    });
  }
  const sorted = new Map<string, DirectoryChild[]>();
  for (const [dir, entries] of children)
    sorted.set(
      dir,
      [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    );
  return sorted;
}
