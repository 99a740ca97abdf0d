import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { concat, map, of, timer, type Observable } from 'rxjs';
import {
  Args,
  Content,
  Ctx,
  Emit,
  McpContext,
  McpRegistry,
  Tool,
  ToolError,
  type McpEmission,
} from 'nestjs-model-context';
import { ColorDto, ConfirmDto, NameDto, UserInfoDto } from './dto/elicitation.dto.js';
import { JSON_SCHEMA_2020_12_INPUT, SEP1034_DEFAULTS_FORM, SEP1330_ENUMS_FORM } from './dto/raw-schemas.js';
import { ElicitationMessageDto, SamplingPromptDto, XMcpHeaderDto } from './dto/tool-args.dto.js';
import { PNG_1X1_BASE64, WAV_SILENCE_BASE64 } from './media.js';

const SIMPLE_TEXT = 'This is a simple text response for testing.';

/**
 * The tools the official conformance suite calls, for both protocol eras. Declaration order is
 * `tools/list` order, and the suite treats the first tool specially (it calls it with empty
 * arguments and looks there for an `x-mcp-header` parameter), so `test_x_mcp_header` comes first.
 */
@Injectable()
export class ConformanceTools {
  private throwaway = 0;

  constructor(private readonly registry: McpRegistry) {}

  @Tool({ description: 'Echoes its arguments; "region" is mirrored in the Mcp-Param-Region header on 2026-07-28.' })
  testXMcpHeader(@Args() { region, level }: XMcpHeaderDto): string {
    return `region=${region ?? '(none)'}, level=${level ?? '(none)'}`;
  }

  @Tool({ description: 'Returns one text item.' })
  testSimpleText(): string {
    return SIMPLE_TEXT;
  }

  @Tool({ description: 'Returns one PNG image item.' })
  testImageContent() {
    return Content.image(PNG_1X1_BASE64, 'image/png');
  }

  @Tool({ description: 'Returns one WAV audio item.' })
  testAudioContent() {
    return Content.audio(WAV_SILENCE_BASE64, 'audio/wav');
  }

  @Tool({ description: 'Returns one embedded text resource.' })
  testEmbeddedResource() {
    return Content.resource({
      uri: 'test://embedded-resource',
      mimeType: 'text/plain',
      text: 'This is an embedded resource content.',
    });
  }

  @Tool({ description: 'Returns text, an image and an embedded resource together.' })
  testMultipleContentTypes() {
    return [
      Content.text('Multiple content types test:'),
      Content.image(PNG_1X1_BASE64, 'image/png'),
      Content.resource({
        uri: 'test://mixed-content-resource',
        mimeType: 'application/json',
        text: JSON.stringify({ test: 'data', value: 123 }),
      }),
    ];
  }

  @Tool({ description: 'Sends three log messages on the call’s stream while it runs (2025: after logging/setLevel).' })
  async testToolWithLogging(@Ctx() ctx: McpContext): Promise<string> {
    ctx.log('info', 'Tool execution started');
    await delay(50);
    ctx.log('info', 'Tool processing data');
    await delay(50);
    ctx.log('info', 'Tool execution completed');
    return 'Tool with logging executed successfully';
  }

  @Tool({ description: 'Logs at info level; sent only when the request asked for a log level (2026-07-28).' })
  testLoggingTool(@Ctx() ctx: McpContext): string {
    ctx.log('info', 'test_logging_tool was called');
    return 'Logging tool executed';
  }

  @Tool({ description: 'Reports progress 0, 50 and 100 of 100 before it answers (send a progressToken).' })
  testToolWithProgress(): Observable<McpEmission | string> {
    return concat(
      of(Emit.progress(0, 100, 'Starting')),
      timer(50).pipe(map(() => Emit.progress(50, 100, 'Halfway'))),
      timer(50).pipe(map(() => Emit.progress(100, 100, 'Done'))),
      of('Progress test completed'),
    );
  }

  @Tool({ description: 'Always fails with a tool error (isError), not a protocol error.' })
  testErrorHandling(): never {
    throw new ToolError('This tool intentionally returns an error for testing.');
  }

  @Tool({ description: 'Asks the client’s model to answer a prompt (sampling) and returns its text.' })
  async testSampling(@Args() { prompt }: SamplingPromptDto, @Ctx() ctx: McpContext): Promise<string> {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens: 100,
    });
    const content = Array.isArray(result.content) ? result.content[0] : result.content;
    return `LLM response: ${typeof content?.text === 'string' ? content.text : JSON.stringify(content)}`;
  }

  @Tool({ description: 'Asks the user for a user name and email address (form elicitation).' })
  async testElicitation(@Args() { message }: ElicitationMessageDto, @Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit(message, UserInfoDto);
    return outcome.action === 'accept'
      ? `User response: action=accept, content=${JSON.stringify(outcome.content)}`
      : `User response: action=${outcome.action}`;
  }

  @Tool({ description: 'Elicits a form whose fields all carry default values (SEP-1034).' })
  async testElicitationSep1034Defaults(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please review and update the form fields with defaults', SEP1034_DEFAULTS_FORM);
    return describeOutcome(outcome);
  }

  @Tool({ description: 'Elicits a form with the five enum field shapes (SEP-1330).' })
  async testElicitationSep1330Enums(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please select options from the enum fields', SEP1330_ENUMS_FORM);
    return describeOutcome(outcome);
  }

  @Tool('json_schema_2020_12_tool', {
    description: 'Takes arguments described by a JSON Schema 2020-12 document ($defs, $anchor, allOf, if/then/else).',
    input: JSON_SCHEMA_2020_12_INPUT,
  })
  jsonSchema202012Tool(@Args() args: Record<string, unknown>): string {
    return `Received: ${JSON.stringify(args)}`;
  }

  @Tool({ description: 'Closes its SSE stream mid-call; the client gets the result by resuming with Last-Event-ID.' })
  async testReconnection(@Ctx() ctx: McpContext): Promise<string> {
    ctx.log('info', 'Closing the stream; resume with Last-Event-ID to get the result.');
    ctx.closeSseStream();
    await delay(100);
    return 'Reconnection test completed';
  }

  @Tool({ description: 'Needs the client’s sampling capability (2026-07-28: -32021 without it).' })
  async testMissingCapability(@Ctx() ctx: McpContext): Promise<string> {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: 'Say hi.' } }],
      maxTokens: 10,
    });
    return `Sampled with model ${result.model}`;
  }

  @Tool({
    description: 'Asks for a confirmation without ever sending a request on its stream (2026-07-28: input_required).',
  })
  async testStreamingElicitation(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please confirm to continue.', ConfirmDto, { key: 'confirmation' });
    return describeOutcome(outcome);
  }

  @Tool({ description: 'Adds and removes a throwaway tool, so clients are told the tool list changed.' })
  testTriggerToolChange(): string {
    const name = `throwaway_tool_${++this.throwaway}`;
    this.registry.addTool({
      name,
      description: 'Exists for an instant, to announce a list change.',
      handler: () => 'gone',
    });
    this.registry.removeTool(name);
    return 'Triggered notifications/tools/list_changed';
  }

  @Tool({ description: 'Adds and removes a throwaway prompt, so clients are told the prompt list changed.' })
  testTriggerPromptChange(): string {
    const name = `throwaway_prompt_${++this.throwaway}`;
    this.registry.addPrompt({
      name,
      description: 'Exists for an instant, to announce a list change.',
      handler: () => 'gone',
    });
    this.registry.removePrompt(name);
    return 'Triggered notifications/prompts/list_changed';
  }

  @Tool({ description: 'Asks for the user’s name (2026-07-28: input_required with key "user_name").' })
  async testInputRequiredResultElicitation(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('What is your name?', NameDto, { key: 'user_name' });
    return outcome.action === 'accept' ? `Hello, ${outcome.content.name}!` : `No name given (${outcome.action}).`;
  }

  @Tool({ description: 'Asks the client’s model for a completion (2026-07-28: input_required).' })
  async testInputRequiredResultSampling(@Ctx() ctx: McpContext): Promise<string> {
    const result = await ctx.sample(
      {
        messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
        maxTokens: 100,
      },
      { key: 'capital_question' },
    );
    return `The model answered: ${JSON.stringify(result.content)}`;
  }

  @Tool({ description: 'Asks the client for its roots (2026-07-28: input_required).' })
  async testInputRequiredResultListRoots(@Ctx() ctx: McpContext): Promise<string> {
    const roots = await ctx.roots({ key: 'client_roots' });
    return `The client has ${roots.length} root(s): ${roots.map((r) => r.uri).join(', ')}`;
  }

  @Tool({ description: 'Asks for a confirmation and keeps its progress in requestState (2026-07-28).' })
  async testInputRequiredResultRequestState(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please confirm to continue.', ConfirmDto, { key: 'confirmation' });
    return `state-ok: ${describeOutcome(outcome)}`;
  }

  @Tool({ description: 'Asks for a name, a completion and the roots at once (2026-07-28: three input requests).' })
  async testInputRequiredResultMultipleInputs(@Ctx() ctx: McpContext): Promise<string> {
    // Started together, so one round collects all three questions.
    const [name, sample, roots] = await Promise.all([
      ctx.elicit('What is your name?', NameDto, { key: 'user_name' }),
      ctx.sample(
        { messages: [{ role: 'user', content: { type: 'text', text: 'Greet the user.' } }], maxTokens: 100 },
        { key: 'greeting' },
      ),
      ctx.roots({ key: 'client_roots' }),
    ]);
    return `name=${describeOutcome(name)}; model=${sample.model}; roots=${roots.length}`;
  }

  @Tool({ description: 'Asks for a name, then for a colour, in two rounds (2026-07-28).' })
  async testInputRequiredResultMultiRound(@Ctx() ctx: McpContext): Promise<string> {
    const name = await ctx.elicit('What is your name?', NameDto, { key: 'user_name' });
    const color = await ctx.elicit('What is your favourite colour?', ColorDto, { key: 'favorite_color' });
    return `name: ${describeOutcome(name)}; colour: ${describeOutcome(color)}`;
  }

  @Tool({ description: 'Asks for a confirmation; a modified requestState on the retry is refused (2026-07-28).' })
  async testInputRequiredResultTamperedState(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please confirm to continue.', ConfirmDto, { key: 'confirmation' });
    return describeOutcome(outcome);
  }

  @Tool({ description: 'Asks only for what the request’s client capabilities allow (2026-07-28).' })
  async testInputRequiredResultCapabilities(@Ctx() ctx: McpContext): Promise<string> {
    if (ctx.supports('elicitation')) {
      return describeOutcome(await ctx.elicit('What is your name?', NameDto, { key: 'user_name' }));
    }
    if (ctx.supports('sampling')) {
      const result = await ctx.sample(
        { messages: [{ role: 'user', content: { type: 'text', text: 'Pick a name for the user.' } }], maxTokens: 100 },
        { key: 'pick_name' },
      );
      return `Sampled with model ${result.model}`;
    }
    if (ctx.supports('roots')) return `roots: ${(await ctx.roots({ key: 'client_roots' })).length}`;
    return 'The client declared no capability to ask with; nothing was asked.';
  }
}

function describeOutcome(outcome: { action: string; content?: unknown }): string {
  return outcome.action === 'accept'
    ? `action=accept, content=${JSON.stringify(outcome.content)}`
    : `action=${outcome.action}`;
}
