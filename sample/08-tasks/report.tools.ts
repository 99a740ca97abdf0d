import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { Args, Ctx, McpContext, Tool } from 'nestjs-model-context';
import { ApprovalDto, ReportDto } from './dto/report.dto.js';

/** How long each step of the report takes (REPORT_STEP_MS): long enough to watch, cancel or poll. */
const STEP_MS = Number(process.env.REPORT_STEP_MS ?? 2000);
const STEPS = ['Collecting orders', 'Aggregating revenue', 'Rendering charts'];

/**
 * A report generator that runs as a task: the client gets a task id at once and polls it. Each
 * step's progress becomes the task's status message; a cancel aborts `ctx.signal`, which stops the
 * current step; the approval question moves the task to `input_required` until the client answers
 * it with `tasks/update`.
 */
@Injectable()
export class ReportTools {
  @Tool({
    title: 'Generate the quarterly report',
    description:
      'Generates the quarterly sales report, asks for approval, then publishes it. Takes a while: run it as a task and poll it.',
    // Publishing changes what the board sees, but adds a report rather than removing anything.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    task: 'optional',
  })
  async generateReport(@Args() { quarter }: ReportDto, @Ctx() ctx: McpContext): Promise<string> {
    for (const [i, step] of STEPS.entries()) {
      ctx.progress(i + 1, STEPS.length + 1, `${step} for ${quarter}`);
      await delay(STEP_MS, undefined, { signal: ctx.signal });
    }
    const approval = await ctx.elicit(`The ${quarter} report is ready. Publish it to the board?`, ApprovalDto);
    if (approval.action !== 'accept' || !approval.content.approve) {
      return `The ${quarter} report was kept as a draft${approval.action === 'accept' && approval.content.comment ? `: ${approval.content.comment}` : '.'}`;
    }
    ctx.progress(STEPS.length + 1, STEPS.length + 1, 'Publishing');
    return `The ${quarter} report was published (revenue up 12%).`;
  }
}
