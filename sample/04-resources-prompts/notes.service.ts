import { Injectable } from '@nestjs/common';
import { Folder, type Note } from './dto/notes.dto.js';

/** The app's own data: nothing MCP-specific here. */
@Injectable()
export class NotesService {
  private readonly notes = new Map<string, Note>();
  private nextId = 1;

  constructor() {
    this.add({
      folder: Folder.Work,
      title: 'Release checklist',
      body: 'Bump the version, tag, publish, announce.',
      tags: ['release', 'process'],
    });
    this.add({ folder: Folder.Work, title: 'Retro notes', body: 'Fewer meetings; more pairing.', tags: ['team'] });
    this.add({
      folder: Folder.Ideas,
      title: 'Resource templates',
      body: 'Serve records by URI: notes://{folder}/{id}.',
      tags: ['mcp', 'design'],
    });
    this.add({ folder: Folder.Personal, title: 'Groceries', body: 'Milk, bread, coffee.', tags: ['shopping'] });
  }

  add(input: { folder: Folder; title: string; body: string; tags?: string[] }): Note {
    const note: Note = {
      id: `n${this.nextId++}`,
      folder: input.folder,
      title: input.title,
      body: input.body,
      tags: input.tags ?? [],
      updatedAt: new Date().toISOString(),
    };
    this.notes.set(note.id, note);
    return note;
  }

  find(folder: Folder, id: string): Note | undefined {
    const note = this.notes.get(id);
    return note?.folder === folder ? note : undefined;
  }

  get(id: string): Note | undefined {
    return this.notes.get(id);
  }

  list(folder?: Folder): Note[] {
    return [...this.notes.values()].filter((n) => folder === undefined || n.folder === folder);
  }

  tags(): string[] {
    return [...new Set(this.list().flatMap((n) => n.tags))].sort();
  }
}
