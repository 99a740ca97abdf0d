import { Injectable } from '@nestjs/common';
import { Args, Complete, Content, Ctx, McpContext, Prompt, PromptMessage } from 'nestjs-model-context';
import { PromptContextDto } from './dto/elicitation.dto.js';
import { EmbeddedResourcePromptDto, PromptWithArgumentsDto } from './dto/prompt-args.dto.js';
import { PNG_1X1_BASE64 } from './media.js';

const ARG1_SUGGESTIONS = ['paris', 'park', 'party', 'test', 'testing'];

/** The prompts the conformance suite gets, and the completer of `test_prompt_with_arguments`. */
@Injectable()
export class ConformancePrompts {
  @Prompt({ description: 'A simple prompt without arguments.' })
  testSimplePrompt(): string {
    return 'This is a simple prompt for testing.';
  }

  @Prompt({ description: 'A prompt with two required arguments.' })
  testPromptWithArguments(@Args() { arg1, arg2 }: PromptWithArgumentsDto): string {
    return `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`;
  }

  @Complete({ prompt: 'test_prompt_with_arguments', argument: 'arg1' })
  completeArg1(value: string): string[] {
    return ARG1_SUGGESTIONS.filter((s) => s.startsWith(value.toLowerCase()));
  }

  @Prompt({ description: 'A prompt that embeds the resource it is given.' })
  testPromptWithEmbeddedResource(@Args() { resourceUri }: EmbeddedResourcePromptDto) {
    return [
      PromptMessage.user(
        Content.resource({ uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' }),
      ),
      PromptMessage.user('Please process the embedded resource above.'),
    ];
  }

  @Prompt({ description: 'A prompt with an image.' })
  testPromptWithImage() {
    return [
      PromptMessage.user(Content.image(PNG_1X1_BASE64, 'image/png')),
      PromptMessage.user('Please analyze the image above.'),
    ];
  }

  @Prompt({ description: 'Asks the user for context before it renders (2026-07-28: input_required).' })
  async testInputRequiredResultPrompt(@Ctx() ctx: McpContext): Promise<string> {
    const outcome = await ctx.elicit('Please provide context for the prompt.', PromptContextDto, {
      key: 'prompt_context',
    });
    const context = outcome.action === 'accept' ? outcome.content.context : '(none given)';
    return `Use this context to answer: ${context}`;
  }
}
