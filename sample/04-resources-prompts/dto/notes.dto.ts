import { IsEnum, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { SchemaProperty } from 'nestjs-model-context';

export enum Folder {
  Work = 'work',
  Personal = 'personal',
  Ideas = 'ideas',
}

/** A note as the service stores it. */
export interface Note {
  id: string;
  folder: Folder;
  title: string;
  body: string;
  tags: string[];
  updatedAt: string;
}

/** The variables of `notes://{folder}/{id}`: cast and validated before the method runs. */
export class NoteRefDto {
  @SchemaProperty({ description: 'The folder the note lives in.' })
  @IsEnum(Folder)
  folder!: Folder;

  @SchemaProperty({ description: 'The note id, e.g. "n1".' })
  @Matches(/^n\d+$/)
  id!: string;
}

/** Arguments of the `summarize_folder` prompt. They arrive as strings; the DTO casts them. */
export class SummarizeFolderDto {
  @SchemaProperty({ description: 'Which folder to summarize.' })
  @IsEnum(Folder)
  folder!: Folder;

  @SchemaProperty({ description: 'Bullet points or one paragraph.' })
  @IsOptional()
  @IsIn(['bullets', 'paragraph'])
  style?: 'bullets' | 'paragraph';

  @SchemaProperty({ description: 'Upper bound on the summary length, in words.' })
  @IsOptional()
  @IsInt()
  @Min(10)
  @Max(500)
  maxWords?: number;
}

/** Arguments of the `draft_note` prompt. */
export class DraftNoteDto {
  @SchemaProperty({ description: 'What the note should be about.' })
  @IsString()
  @Length(1, 200)
  topic!: string;

  @SchemaProperty({ description: 'Where the note will go.' })
  @IsOptional()
  @IsEnum(Folder)
  folder?: Folder;
}

/** Input of the `add_note` tool. */
export class AddNoteDto {
  @SchemaProperty({ description: 'The folder to file the note in.' })
  @IsEnum(Folder)
  folder!: Folder;

  @SchemaProperty({ description: 'A one-line title for the note.' })
  @IsString()
  @Length(1, 120)
  title!: string;

  @SchemaProperty({ description: 'The text of the note (plain text or Markdown).' })
  @IsString()
  @Length(1, 10_000)
  body!: string;

  @SchemaProperty({ description: 'Labels to find the note by later.' })
  @IsOptional()
  @IsString({ each: true })
  tags?: string[];
}

/** Input of the `pin_note` tool. */
export class PinNoteDto {
  @SchemaProperty({ description: 'The id of the note to pin, e.g. "n1".' })
  @Matches(/^n\d+$/)
  id!: string;
}
