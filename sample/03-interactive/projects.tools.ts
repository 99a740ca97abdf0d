import { Injectable } from '@nestjs/common';
import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';
import { Args, Ctx, McpContext, SchemaProperty, Tool } from 'nestjs-model-context';

export class ProjectNameDto {
  @SchemaProperty({ description: 'The project to delete: apollo, gemini or mercury.' })
  @IsString()
  @Length(1, 60)
  name!: string;
}

/** The form the user fills in before a project is deleted. */
export class ConfirmDeletionDto {
  @IsBoolean()
  @SchemaProperty({ title: 'Delete it', description: 'Tick to confirm the deletion.' })
  confirm!: boolean;

  @IsOptional()
  @IsString()
  @SchemaProperty({ description: 'Why (kept in the audit log).' })
  reason?: string;
}

export class SummarizeDto {
  @SchemaProperty({ description: 'The text to summarize in one sentence.' })
  @IsString()
  @Length(1, 10_000)
  text!: string;
}

/**
 * One API for both protocol eras: on a legacy session `ctx.elicit` / `ctx.sample` send a request
 * to the client and await its answer; on 2026-07-28 the call returns `input_required` and the
 * client's retry re-runs the method, where the same call now returns the answer.
 */
@Injectable()
export class ProjectTools {
  private readonly projects = new Set(['apollo', 'gemini', 'mercury']);

  @Tool({
    title: 'Delete a project',
    description: 'Delete a project after the user confirms it.',
    annotations: { destructiveHint: true },
  })
  async deleteProject(@Args() { name }: ProjectNameDto, @Ctx() ctx: McpContext): Promise<string> {
    if (!this.projects.has(name)) return `There is no project "${name}".`;
    const answer = await ctx.elicit<ConfirmDeletionDto>(
      `Delete project "${name}" and all its data?`,
      ConfirmDeletionDto,
    );
    if (answer.action !== 'accept' || !answer.content.confirm) return `Kept project "${name}".`;
    this.projects.delete(name);
    return `Deleted project "${name}"${answer.content.reason ? ` (${answer.content.reason})` : ''}.`;
  }

  @Tool({
    title: 'Summarize a text',
    description: "Summarize a text with the client's own model (sampling).",
    annotations: { readOnlyHint: true },
  })
  async summarize(@Args() { text }: SummarizeDto, @Ctx() ctx: McpContext): Promise<string> {
    const reply = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: `Summarize in one sentence:\n\n${text}` } }],
      maxTokens: 200,
    });
    const content = reply.content as { type: string; text?: string };
    return content.text ?? '(the model answered without text)';
  }
}
