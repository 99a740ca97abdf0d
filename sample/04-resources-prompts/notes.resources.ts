import { Injectable } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Args,
  Complete,
  ErrorCode,
  McpError,
  Resource,
  ResourceTemplate,
  UnsafePathError,
  resolveSafePath,
  type CompletionContext,
} from 'nestjs-model-context';
import { Folder, NoteRefDto } from './dto/notes.dto.js';
import { NotesService } from './notes.service.js';

const MIME_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.txt': 'text/plain',
  '.json': 'application/json',
  '.png': 'image/png',
};

/** Where docs://{+path} reads from: $DOCS_ROOT, else the sample's docs/ folder in the source tree. */
export function docsRoot(): string {
  const candidates = [
    process.env.DOCS_ROOT,
    fileURLToPath(new URL('../../../sample/04-resources-prompts/docs/', import.meta.url)),
    resolve('sample/04-resources-prompts/docs'),
  ];
  return candidates.find((dir): dir is string => dir !== undefined && existsSync(dir)) ?? resolve('docs');
}

/** Records and files as MCP resources. */
@Injectable()
export class NotesResources {
  private readonly root = docsRoot();

  constructor(private readonly notes: NotesService) {}

  /** A fixed URI; an object result is sent as JSON. It changes whenever a note is added. */
  @Resource({
    uri: 'notes://index',
    name: 'notes_index',
    title: 'All notes',
    description: 'Every note: id, folder, title, tags and last update, as JSON.',
    mimeType: 'application/json',
    annotations: { audience: ['assistant'], priority: 0.8 },
  })
  index() {
    return this.notes.list().map(({ id, folder, title, tags, updatedAt }) => ({
      id,
      folder,
      title,
      tags,
      updatedAt,
      uri: `notes://${folder}/${id}`,
    }));
  }

  /** One URI per record. The DTO casts and validates {folder} and {id}; undefined = not found. */
  @ResourceTemplate({
    uriTemplate: 'notes://{folder}/{id}',
    name: 'note',
    title: 'A note',
    description: 'One note as Markdown. Folders: work, personal, ideas.',
    mimeType: 'text/markdown',
  })
  note(@Args() { folder, id }: NoteRefDto): string | undefined {
    const note = this.notes.find(folder, id);
    return note && `# ${note.title}\n\n${note.body}\n\nTags: ${note.tags.join(', ') || 'none'}\n`;
  }

  /** {folder} completes from the enum on its own; {id} needs the folder chosen so far. */
  @Complete({ resourceTemplate: 'notes://{folder}/{id}', argument: 'id' })
  noteIds(value: string, context: CompletionContext): string[] {
    const folder = context.arguments?.folder as Folder | undefined;
    return this.notes
      .list(Object.values(Folder).includes(folder as Folder) ? folder : undefined)
      .map((n) => n.id)
      .filter((id) => id.startsWith(value));
  }

  /**
   * Files under the docs folder. `{+path}` may contain "/", so the value goes through
   * resolveSafePath: "..", absolute paths and NUL bytes are refused before touching the disk.
   */
  @ResourceTemplate({
    uriTemplate: 'docs://{+path}',
    name: 'docs',
    title: 'Sample docs',
    description: 'Files of the sample docs folder, e.g. docs://guides/getting-started.md',
  })
  async doc(@Args('path') path: string) {
    let file: string;
    try {
      file = resolveSafePath(this.root, path);
    } catch (error) {
      if (error instanceof UnsafePathError)
        throw new McpError(ErrorCode.InvalidParams, `Invalid docs path: ${error.message}`);
      throw error;
    }
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const mimeType = MIME_TYPES[extname(file)] ?? 'application/octet-stream';
    const data = await readFile(file);
    return mimeType.startsWith('text/') || mimeType === 'application/json'
      ? { text: data.toString('utf8'), mimeType }
      : { blob: data, mimeType };
  }
}
