import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { Args, Ctx, ErrorCode, McpContext, McpError, Tool, ToolError } from 'nestjs-model-context';

const NAME = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } as const;
const CONFIRM = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'True to go ahead' } },
  required: ['confirm'],
} as const;
const NAME_AND_CONFIRM = {
  type: 'object',
  properties: { name: { type: 'string' }, confirm: { type: 'boolean' } },
} as const;

/**
 * The tools the conformance suite's `io.modelcontextprotocol/tasks` scenarios call (SEP-2663):
 * one synchronous tool, and task tools that finish, fail as a tool, fail as a protocol, ask for
 * input inside the task, and gather input with MRTR before the task exists.
 */
@Injectable()
export class ConformanceTaskTools {
  @Tool({ name: 'greet', description: 'Greets someone, synchronously.', input: NAME })
  greet(@Args() { name }: { name: string }): string {
    return `Hello, ${name}!`;
  }

  @Tool({
    name: 'slow_compute',
    description: 'Waits the given number of seconds, then answers; a task when the client supports tasks.',
    input: {
      type: 'object',
      properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } },
      required: ['seconds'],
    },
    task: 'optional',
  })
  async slowCompute(
    @Args() { seconds, label }: { seconds: number; label?: string },
    @Ctx() ctx: McpContext,
  ): Promise<string> {
    if (seconds > 0) await delay(seconds * 1000, undefined, { signal: ctx.signal });
    return `Computed ${label ?? 'result'} after ${seconds} s.`;
  }

  @Tool({
    name: 'failing_job',
    description: 'Runs as a task and ends with a tool error after about a second.',
    task: 'required',
  })
  async failingJob(@Ctx() ctx: McpContext): Promise<never> {
    await delay(1000, undefined, { signal: ctx.signal });
    throw new ToolError('The job failed: the input could not be processed.');
  }

  @Tool({ name: 'protocol_error_job', description: 'Runs as a task and ends with a JSON-RPC error.', task: 'optional' })
  async protocolErrorJob(@Ctx() ctx: McpContext): Promise<never> {
    await delay(100, undefined, { signal: ctx.signal });
    throw new McpError(ErrorCode.InternalError, 'The job hit an internal protocol error.');
  }

  @Tool({
    name: 'confirm_delete',
    description: 'Asks for confirmation inside the task, then deletes (pretends to) the file.',
    input: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
    task: 'optional',
  })
  async confirmDelete(@Args() { filename }: { filename: string }, @Ctx() ctx: McpContext): Promise<string> {
    const answer = await ctx.elicit<{ confirm: boolean }>(`Delete ${filename}?`, CONFIRM);
    return answer.action === 'accept' && answer.content.confirm ? `Deleted ${filename}.` : `Kept ${filename}.`;
  }

  @Tool({ name: 'multi_input', description: 'Asks two questions at once inside the task.', task: 'optional' })
  async multiInput(@Ctx() ctx: McpContext): Promise<string> {
    const answers = await Promise.all([
      ctx.elicit('First answer?', NAME_AND_CONFIRM),
      ctx.elicit('Second answer?', NAME_AND_CONFIRM),
    ]);
    return `Got ${answers.map((a) => a.action).join(' and ')}.`;
  }

  @Tool({
    name: 'test_tool_with_task',
    description: 'Asks for a name with MRTR, then greets in a task.',
    task: 'required',
  })
  async toolWithTask(@Ctx() ctx: McpContext): Promise<string> {
    const answer = await ctx.elicit<{ name: string }>('What is your name?', NAME, {
      key: 'user_name',
      beforeTask: true,
    });
    const name = answer.action === 'accept' ? answer.content.name : 'stranger';
    await delay(100, undefined, { signal: ctx.signal });
    return `Hello, ${name}! Your task is done.`;
  }
}
