/**
 * Options of the Skills extension (`McpModule.forRoot({ skills })`, SEP-2640).
 *
 * @publicApi
 */
export interface McpSkillsOptions {
  /**
   * Folders of skills: a folder holding SKILL.md is one skill; otherwise every directory below it
   * holding a SKILL.md is one, at its path below the folder. Read and digested at bootstrap.
   */
  directory?: string | string[];
  /** Organizational prefix of the folder skills' paths. */
  prefix?: string;
  /** Serve `resources/directory/read` and declare `directoryRead: true`. @default true */
  directoryRead?: boolean;
  /** Most files in one skill, SKILL.md included; more fails the bootstrap. @default 512 (the SEP-2640 host limit) */
  maxFilesPerSkill?: number;
  /** Most bytes in one skill, summed over its files; more fails the bootstrap. @default 16 MiB (the SEP-2640 host limit) */
  maxBytesPerSkill?: number;
  /** Most skills one module serves; more fails the bootstrap. @default 1000 */
  maxSkills?: number;
  /**
   * Most directory entries one walk of a skills folder visits (links and hidden entries
   * included); a larger tree fails the bootstrap instead of being read into memory. @default 100000
   */
  maxFolderEntries?: number;
}

export const DEFAULT_MAX_SKILLS = 1000;

/** The `skills` slice of the module options (null without it). @internal */
export const MCP_SKILLS_OPTIONS = Symbol.for('nestjs-model-context:MCP_SKILLS_OPTIONS');
