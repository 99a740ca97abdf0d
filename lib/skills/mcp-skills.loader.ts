import { packSlice } from '../discovery/mcp-feature.js';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DEFAULT_MAX_SKILLS, MCP_SKILLS_OPTIONS, type McpSkillsOptions } from './mcp-skills-options.interface.js';
import { MCP_SKILL_METADATA, type InlineSkill, type SkillMetadata, type SkillSource } from './skill.decorator.js';
import type { McpAccess } from '../protocol/catalog.js';
import {
  DEFAULT_SKILL_LIMITS,
  SKILL_FILE,
  SkillDefinitionError,
  buildSkill,
  parseFrontmatter,
  type DirectoryChild,
  type SkillFileInput,
  type SkillLimits,
  type SkillRuntime,
  type YamlParse,
} from './skill-entry.js';
import { readSkillFolder } from './skill-folder.js';
import { installSkills, type SkillCatalog } from './skills-feature.js';
import { McpMethodLoader } from '../discovery/mcp-method.loader.js';
import { McpHandlerFactory } from '../execution/mcp-handler.factory.js';
import { McpRegistry } from '../discovery/mcp.registry.js';
import { MCP_FEATURE_OPTIONS, MCP_PAGE_SIZE } from '../common/mcp.constants.js';
import type { McpFeatureOptions } from '../protocol/feature-host.js';

/** One skill before it is built: where it came from, who may see it, and its files. */
interface PendingSkill {
  path: string;
  files: SkillFileInput[];
  access: McpAccess;
  site: string;
}

/**
 * Loads the module's skills at bootstrap (the `skills.directory` folders and every `@Skill()`
 * method), digests them, registers their files as resources and installs SEP-2640 into the
 * dispatcher. A module without skills declares nothing.
 */
@Injectable()
export class McpSkillsLoader extends McpMethodLoader {
  static readonly providers = [packSlice(MCP_SKILLS_OPTIONS, 'skills')];
  readonly kind = 'skills';
  // A skill's scopes gate its listing and every read of it, as a resource's do.
  readonly capabilityKeys = [MCP_SKILL_METADATA];
  private readonly logger = new Logger('McpModule');

  constructor(
    handlers: McpHandlerFactory,
    registry: McpRegistry,
    @Inject(MCP_SKILLS_OPTIONS) private readonly options: McpSkillsOptions | null,
    @Inject(MCP_FEATURE_OPTIONS) private readonly features: McpFeatureOptions,
    @Inject(MCP_PAGE_SIZE) private readonly pageSize: number,
  ) {
    super(handlers, registry);
  }

  protected marks(method: Function): boolean {
    return Reflect.hasMetadata(MCP_SKILL_METADATA, method);
  }

  async settle(): Promise<void> {
    const settings: McpSkillsOptions = this.options ?? {};
    const limits = skillLimits(settings);
    const methods = this.skillMethods();
    const folders =
      settings.directory === undefined
        ? []
        : Array.isArray(settings.directory)
          ? settings.directory
          : [settings.directory];
    if (methods.length === 0 && folders.length === 0 && this.options === null) return;
    const warn = (message: string) => this.logger.warn(message);
    const parseYaml = await loadYaml();
    const pending: PendingSkill[] = [];
    for (const folder of folders) {
      for (const skill of await readSkillFolder(folder, settings.prefix, limits, warn))
        pending.push({ ...skill, access: {}, site: `skills.directory ${folder}` });
    }
    for (const { instance, methodName, metadata, access, site } of methods) {
      const source = (await (instance as Record<string, () => unknown>)[methodName]!()) as SkillSource;
      for (const item of Array.isArray(source) ? source : [source]) {
        if (typeof item === 'string') {
          for (const skill of await readSkillFolder(item, metadata.prefix, limits, warn))
            pending.push({ ...skill, access, site });
        } else if (isInlineSkill(item)) {
          pending.push({ ...inlineSkill(item, metadata.prefix, parseYaml, site), access, site });
        } else {
          throw new SkillDefinitionError(
            `${site} returned ${JSON.stringify(item)?.slice(0, 80)}: a @Skill() method returns a folder path, { files: { 'SKILL.md': ... } }, or a list of these.`,
          );
        }
      }
    }
    const maxSkills = settings.maxSkills ?? DEFAULT_MAX_SKILLS;
    if (pending.length > maxSkills)
      throw new SkillDefinitionError(
        `McpModule would serve ${pending.length} skills; the limit is ${maxSkills} (skills.maxSkills). Serve fewer or raise the limit.`,
      );
    const skills: SkillRuntime[] = [];
    const byUri = new Map<string, SkillRuntime>();
    for (const item of pending) {
      const skill = buildSkill({ ...item, limits, parseYaml, warn });
      const clash = byUri.get(skill.uri);
      if (clash)
        throw new SkillDefinitionError(
          `Skill ${skill.uri} is declared twice: by ${clash.site} and by ${skill.site}. Give one a different path or prefix.`,
        );
      byUri.set(skill.uri, skill);
      skills.push(skill);
    }
    const catalog = new StaticSkillCatalog(skills, () => this.registry.version);
    // A nested skill's files are its enclosing skill's too: each URI is one resource, owned by
    // the outermost skill (whose guards then also cover the nested one's files).
    const owners = [...skills].sort((a, b) => a.root.length - b.root.length);
    const registered = new Set<string>();
    for (const skill of owners) {
      for (const file of skill.files) {
        if (registered.has(file.uri)) continue;
        registered.add(file.uri);
        this.registry.registerResource(file, skill.site);
      }
    }
    installSkills(this.host!, catalog, {
      readCache: this.features.readCache,
      exposeInternalErrors: this.features.exposeInternalErrors,
      logger: { error: (m, t) => this.logger.error(m, t), warn },
      directoryRead: settings.directoryRead ?? true,
      pageSize: this.pageSize,
    });
    this.logger.log(`Serving ${skills.length} skill(s): ${skills.map((s) => s.uri).join(', ') || 'none'}`);
  }

  private skillMethods(): Array<{
    instance: object;
    methodName: string;
    metadata: SkillMetadata;
    access: McpAccess;
    site: string;
  }> {
    const found: Array<{
      instance: object;
      methodName: string;
      metadata: SkillMetadata;
      access: McpAccess;
      site: string;
    }> = [];
    for (const loaded of this.found) {
      const metadata =
        typeof loaded.method === 'function'
          ? (Reflect.getMetadata(MCP_SKILL_METADATA, loaded.method) as SkillMetadata | undefined)
          : undefined;
      if (!metadata) continue;
      // It runs once at bootstrap: there is no request to scope it to.
      const instance = this.instanceOf(loaded, 'a @Skill() method');
      found.push({
        instance,
        methodName: loaded.methodName,
        metadata,
        access: this.accessOf(instance, loaded, loaded.site),
        site: loaded.site,
      });
    }
    return found;
  }
}

/** The skills of one module, fixed after bootstrap; directory lookups precomputed. */
class StaticSkillCatalog implements SkillCatalog {
  private readonly bySkillUri: ReadonlyMap<string, SkillRuntime>;
  private readonly directories = new Map<string, Array<{ skill: SkillRuntime; children: readonly DirectoryChild[] }>>();

  constructor(
    private readonly list: readonly SkillRuntime[],
    private readonly versionOf: () => number,
  ) {
    this.bySkillUri = new Map(list.map((skill) => [skill.uri, skill]));
    // Outermost first, so the owner of a shared directory comes first (its scopes gate it). Each
    // skill keeps its own children of a shared directory: a caller sees those of the skills it may see.
    for (const skill of [...list].sort((a, b) => a.root.length - b.root.length)) {
      for (const [uri, children] of skill.directories) {
        const known = this.directories.get(uri);
        if (known) known.push({ skill, children });
        else this.directories.set(uri, [{ skill, children }]);
      }
    }
  }

  get version(): number {
    return this.versionOf();
  }

  skills(): readonly SkillRuntime[] {
    return this.list;
  }

  skill(uri: string): SkillRuntime | undefined {
    return this.bySkillUri.get(uri);
  }

  directory(uri: string) {
    return this.directories.get(uri);
  }
}

function skillLimits(settings: McpSkillsOptions): SkillLimits {
  const limits = { ...DEFAULT_SKILL_LIMITS };
  for (const key of ['maxFilesPerSkill', 'maxBytesPerSkill', 'maxFolderEntries'] as const) {
    const value = settings[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new SkillDefinitionError(
        `McpModule option "skills.${key}" must be a positive integer, got ${JSON.stringify(value)}.`,
      );
    limits[key] = value;
  }
  const maxSkills = settings.maxSkills;
  if (maxSkills !== undefined && (!Number.isSafeInteger(maxSkills) || maxSkills < 1))
    throw new SkillDefinitionError(
      `McpModule option "skills.maxSkills" must be a positive integer, got ${JSON.stringify(maxSkills)}.`,
    );
  return limits;
}

function isInlineSkill(value: unknown): value is InlineSkill {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as InlineSkill).files === 'object' &&
    (value as InlineSkill).files !== null
  );
}

function inlineSkill(
  skill: InlineSkill,
  prefix: string | undefined,
  parseYaml: YamlParse,
  site: string,
): { path: string; files: SkillFileInput[] } {
  const files = Object.entries(skill.files).map(([path, content]) => ({ path, content }));
  let path = skill.path;
  if (path === undefined) {
    const main = skill.files[SKILL_FILE];
    if (typeof main !== 'string' && !(main instanceof Uint8Array))
      throw new SkillDefinitionError(`${site}: the inline skill has no ${SKILL_FILE} in its files.`);
    path = parseFrontmatter(typeof main === 'string' ? main : Buffer.from(main).toString('utf8'), parseYaml, site)
      .name as string;
  }
  return { path: prefix ? `${prefix}/${path}` : path, files };
}

/** The `yaml` package's parser, an optional peer loaded only when the module serves skills. */
async function loadYaml(): Promise<YamlParse> {
  try {
    const loaded = (await import('yaml' as string)) as { parse?: YamlParse; default?: { parse?: YamlParse } };
    const parse = loaded.parse ?? loaded.default?.parse;
    if (typeof parse !== 'function') throw new Error('it exports no parse function');
    return (text) => parse(text);
  } catch (error) {
    throw new Error(
      `McpModule serves skills, and reading their SKILL.md frontmatter needs the "yaml" package (${error instanceof Error ? error.message : String(error)}). Install it: npm install yaml@2`,
    );
  }
}
