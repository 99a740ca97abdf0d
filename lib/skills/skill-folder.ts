import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { resolveSafePath } from '../protocol/safe-path.util.js';
import { SKILL_FILE, SkillDefinitionError, type SkillFileInput, type SkillLimits } from './skill-entry.js';

/** The files of one skill found in a folder, before it is built. */
export interface FolderSkill {
  /** Skill path: the folder's path below the tree root, with the prefix in front. */
  path: string;
  files: SkillFileInput[];
}

/**
 * Reads the skills under a folder. A folder holding a SKILL.md is a skill named by the folder;
 * every directory below it holding a SKILL.md is a skill too, at its path (`acme/billing/refunds`,
 * under the folder's name when the folder is a skill), and an enclosing skill's files include
 * those of skills nested in it (SEP-2640: nested content is supporting content; publication is flat). Hidden entries (`.git`, `.DS_Store`) and
 * symbolic links are skipped: a link could lead out of the tree.
 *
 * @throws SkillDefinitionError when the folder is missing, a skill breaks the limits, or the walk
 *   meets more than `limits.maxFolderEntries` entries (a runaway tree fails the bootstrap instead
 *   of exhausting memory).
 */
export async function readSkillFolder(
  folder: string,
  prefix: string | undefined,
  limits: SkillLimits,
  warn: (message: string) => void,
): Promise<FolderSkill[]> {
  const root = resolve(folder);
  // The folder itself may be a link (the app's own choice); links inside it are not followed.
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory())
    throw new SkillDefinitionError(
      `Skills folder ${JSON.stringify(folder)} (resolved to ${root}) is not a directory. Point it at a folder of skill directories, each with a SKILL.md.`,
    );
  const files: string[] = [];
  let visited = 0;
  const walk = async (relative: string): Promise<void> => {
    const dir = relative ? resolveSafePath(root, relative) : root;
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (++visited > limits.maxFolderEntries) {
        throw new SkillDefinitionError(
          `Skills folder ${root} holds more than ${limits.maxFolderEntries} entries (skills.maxFolderEntries). Point it at the skills alone, or raise the limit.`,
        );
      }
      if (entry.name.startsWith('.')) continue;
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink())
        warn(
          `Skills folder ${root}: skipped symbolic link ${path} (links could lead out of the folder; copy the file instead).`,
        );
      else if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  await walk('');
  // A folder holding SKILL.md is a skill named by the folder; skills nested in it (or, without
  // one, every skill below it) are published too, each at its path.
  const base = files.includes(SKILL_FILE) ? basename(root) : undefined;
  const skills: FolderSkill[] = [];
  for (const file of files) {
    if (file !== SKILL_FILE && !file.endsWith(`/${SKILL_FILE}`)) continue;
    const dir = file === SKILL_FILE ? '' : file.slice(0, -SKILL_FILE.length - 1);
    const path = [prefix, base, dir].filter((part) => part).join('/');
    skills.push(await collect(root, dir, path, files, limits));
  }
  return skills;
}

async function collect(
  root: string,
  dir: string,
  path: string,
  all: readonly string[],
  limits: SkillLimits,
): Promise<FolderSkill> {
  const under = dir ? all.filter((file) => file.startsWith(`${dir}/`)) : [...all];
  // Counted before anything is read, so an oversized skill costs no memory.
  if (under.length > limits.maxFilesPerSkill) {
    throw new SkillDefinitionError(
      `Skill "${path}" in ${root} has ${under.length} files; the limit is ${limits.maxFilesPerSkill} (skills.maxFilesPerSkill). Split the skill or raise the limit.`,
    );
  }
  const files: SkillFileInput[] = [];
  let total = 0;
  for (const file of under) {
    const absolute = resolveSafePath(root, file);
    const size = (await lstat(absolute)).size;
    total += size;
    if (total > limits.maxBytesPerSkill) {
      throw new SkillDefinitionError(
        `Skill "${path}" in ${root} holds more than ${limits.maxBytesPerSkill} bytes (skills.maxBytesPerSkill). Make its files smaller or raise the limit.`,
      );
    }
    files.push({ path: dir ? file.slice(dir.length + 1) : file, content: await readFile(absolute) });
  }
  return { path, files };
}
