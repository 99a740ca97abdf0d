import { SetMetadata } from '@nestjs/common';

/** Metadata key of `@Skill()`. */
export const MCP_SKILL_METADATA = 'mcp:skill';

/**
 * A skill given in code: its files by path below the skill root. `SKILL.md` is required and
 * starts with YAML frontmatter holding at least `name` and `description`.
 *
 * @publicApi
 */
export interface InlineSkill {
  /**
   * Skill path below the prefix (`billing/refunds`); its last segment must equal the frontmatter
   * name. @default the frontmatter name
   */
  path?: string;
  /** File contents by path (`SKILL.md`, `references/FORMS.md`); strings are UTF-8. */
  files: Record<string, string | Uint8Array>;
}

/**
 * What a `@Skill()` method returns: a folder (a skill directory holding SKILL.md, or a folder of
 * skill trees), an inline skill, or a list of these; a Promise of it is awaited.
 *
 * @publicApi
 */
export type SkillSource = string | InlineSkill | ReadonlyArray<string | InlineSkill>;

/**
 * Options of `@Skill()`.
 *
 * @publicApi
 */
export interface SkillOptions {
  /** Organizational prefix of the skill paths (`acme/billing` gives `skill://acme/billing/<name>/SKILL.md`). */
  prefix?: string;
}

/** What the discovery reads from a `@Skill()` method. */
export interface SkillMetadata extends SkillOptions {
  methodName: string;
}

/**
 * Publishes Agent Skills (SEP-2640, `io.modelcontextprotocol/skills`) from a provider method.
 * The method runs once at bootstrap and returns a {@link SkillSource}; every file is digested
 * then and served as a `skill://` resource, and the skills are listed by `skills/list`. Guards on
 * the method or its class decide who sees the skill, as they do for tools: a caller they refuse
 * finds it in no list and gets `-32602` for its URIs.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class RunbookSkills {
 *   @Skill({ prefix: 'ops' })
 *   runbooks() {
 *     return join(__dirname, 'skills'); // skills/<name>/SKILL.md, ...
 *   }
 * }
 * ```
 * @publicApi
 */
export function Skill(options: SkillOptions = {}): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    SetMetadata(MCP_SKILL_METADATA, { ...options, methodName: String(propertyKey) } satisfies SkillMetadata)(
      target,
      propertyKey,
      descriptor,
    );
    return descriptor;
  };
}
