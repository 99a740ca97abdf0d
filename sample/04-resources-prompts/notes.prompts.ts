import { Injectable } from '@nestjs/common';
import { Args, Complete, Content, Prompt, PromptMessage } from 'nestjs-model-context';
import { DraftNoteDto, SummarizeFolderDto } from './dto/notes.dto.js';
import { NotesService } from './notes.service.js';

/** Prompts: arguments come from DTOs, advertised with their descriptions and cast from strings. */
@Injectable()
export class NotesPrompts {
  constructor(private readonly notes: NotesService) {}

  /** Messages with embedded resources; `folder` completes from its enum, `style` from @IsIn. */
  @Prompt({ title: 'Summarize a folder', description: 'Summarize every note of one folder.' })
  summarizeFolder(@Args() { folder, style = 'bullets', maxWords = 100 }: SummarizeFolderDto) {
    const notes = this.notes.list(folder);
    return [
      PromptMessage.user(
        `Summarize these ${notes.length} notes from the "${folder}" folder as ${style === 'bullets' ? 'bullet points' : 'one paragraph'}, in at most ${maxWords} words.`,
      ),
      ...notes.map((n) =>
        PromptMessage.user(
          Content.resource({
            uri: `notes://${n.folder}/${n.id}`,
            mimeType: 'text/markdown',
            text: `# ${n.title}\n\n${n.body}`,
          }),
        ),
      ),
    ];
  }

  /** A plain string becomes one user message. */
  @Prompt('draft_note', {
    title: 'Draft a note',
    description: 'Draft a new note about a topic, in the style of the existing ones.',
  })
  draft(@Args() { topic, folder }: DraftNoteDto): string {
    return `Draft a short note about "${topic}"${folder ? ` for the ${folder} folder` : ''}. Start with a one-line title.`;
  }

  /** Topics complete from the tags already in use. */
  @Complete({ prompt: 'draft_note', argument: 'topic' })
  topics(value: string): string[] {
    return this.notes.tags().filter((tag) => tag.startsWith(value.toLowerCase()));
  }
}
