import {
  ResourceRepository,
  type McpRepositoryPageRequest,
  type McpResourcePage,
  type McpResourceRepository,
} from 'nestjs-model-context';

const PREFIX = 'archive://notes/';

/**
 * A read-only archive of old notes, as large as a database table, served by one provider: it
 * fetches each `resources/list` page itself (here from a formula; in an app, a query with a
 * limit and a keyset cursor) and reads any archived note, with nothing registered per note.
 */
@ResourceRepository({ uriPrefix: PREFIX, mimeType: 'text/markdown' })
export class NotesArchive implements McpResourceRepository {
  static readonly SIZE = 1_000;

  list({ cursor, limit }: McpRepositoryPageRequest): McpResourcePage {
    const offset = cursor === undefined ? 0 : Number(cursor);
    const end = Math.min(offset + limit, NotesArchive.SIZE);
    const resources = [];
    // Each description names its note: a model choosing among a thousand needs them to differ.
    for (let n = offset; n < end; n++) {
      resources.push({
        uri: `${PREFIX}${n}`,
        name: `archived_${n}`,
        title: `Archived note ${n}`,
        description: `Old note number ${n}, kept read-only in the archive for the record.`,
      });
    }
    // The repository's own cursor: the client sees it only inside the module's signed one.
    return { resources, ...(end < NotesArchive.SIZE ? { nextCursor: String(end) } : {}) };
  }

  read(uri: string): string | undefined {
    const n = uri.slice(PREFIX.length);
    if (!/^(0|[1-9]\d*)$/.test(n) || Number(n) >= NotesArchive.SIZE) return undefined; // resource not found
    return `# Archived note ${n}\n\nKept for the record.`;
  }
}
