import { Injectable } from '@nestjs/common';
import { Args, McpRegistry, Tool, ToolError } from 'nestjs-model-context';
import { AddNoteDto, PinNoteDto } from './dto/notes.dto.js';
import { NotesService } from './notes.service.js';

/** Tools that change what the resources show, and tell subscribed clients about it. */
@Injectable()
export class NotesTools {
  constructor(
    private readonly notes: NotesService,
    private readonly registry: McpRegistry,
  ) {}

  @Tool({
    title: 'Add a note',
    description: 'Add a note. It is readable at once as notes://{folder}/{id}.',
    annotations: { destructiveHint: false },
  })
  addNote(@Args() input: AddNoteDto) {
    const note = this.notes.add(input);
    // The index resource's content changed: clients subscribed to it are told to read it again.
    this.registry.notifyResourceUpdated('notes://index');
    return { id: note.id, uri: `notes://${note.folder}/${note.id}` };
  }

  @Tool({
    title: 'Pin a note',
    description: 'Pin a note: it gets its own entry in resources/list, as pinned://{id}.',
    annotations: { idempotentHint: true },
  })
  pinNote(@Args() { id }: PinNoteDto): string {
    const note = this.notes.get(id);
    if (!note) throw new ToolError(`Note ${id} does not exist. Read notes://index to see the notes.`);
    const uri = `pinned://${id}`;
    if (this.registry.resource(uri)) return `${uri} is already pinned.`;
    // Registered at runtime through the same checks as @Resource(); clients see the list change.
    this.registry.addResource({
      uri,
      name: `pinned_${id}`,
      title: `Pinned: ${note.title}`,
      mimeType: 'text/markdown',
      cache: { ttlMs: 60_000, cacheScope: 'public' },
      handler: () => `# ${note.title}\n\n${note.body}\n`,
    });
    return `Pinned ${id} as ${uri}.`;
  }
}
