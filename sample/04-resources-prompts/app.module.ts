import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { NotesArchive } from './archive.repository.js';
import { NotesPrompts } from './notes.prompts.js';
import { NotesResources } from './notes.resources.js';
import { NotesService } from './notes.service.js';
import { NotesTools } from './notes.tools.js';

@Module({
  imports: [
    McpModule.forRoot({
      name: 'notes',
      version: '1.0.0',
      title: 'Notes',
      instructions:
        'Notes and docs as resources (notes://index, notes://{folder}/{id}, docs://{+path}, a paged archive under archive://notes/), prompts to summarize and draft notes.',
      cache: { reads: { ttlMs: 5_000, cacheScope: 'public' } },
    }),
  ],
  providers: [NotesService, NotesResources, NotesPrompts, NotesTools, NotesArchive],
})
export class AppModule {}
