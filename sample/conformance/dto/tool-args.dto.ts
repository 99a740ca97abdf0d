import { IsInt, IsOptional, IsString } from 'class-validator';
import { McpHeader, SchemaProperty } from 'nestjs-model-context';

/**
 * Arguments of `test_x_mcp_header`. Both are optional because the suite calls the first listed
 * tool with `arguments: {}`. `region` must stay a plain `type: "string"` (no `null`, no enum or
 * pattern): the suite looks for exactly that and sends arbitrary strings through it.
 */
export class XMcpHeaderDto {
  @McpHeader('Region')
  @SchemaProperty({
    description: 'A region name; 2026-07-28 clients mirror it in the Mcp-Param-Region header.',
    nullable: false,
  })
  @IsOptional()
  @IsString()
  region?: string;

  @SchemaProperty({ description: 'A verbosity level.', nullable: false })
  @IsOptional()
  @IsInt()
  level?: number;
}

export class SamplingPromptDto {
  @SchemaProperty({ description: 'The prompt to send to the client’s model.' })
  @IsString()
  prompt!: string;
}

export class ElicitationMessageDto {
  @SchemaProperty({ description: 'The message shown to the user in the elicitation form.' })
  @IsString()
  message!: string;
}
