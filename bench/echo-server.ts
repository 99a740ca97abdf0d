/**
 * The benchmark's echo server: this module serving the tool set every server in the bench serves.
 *
 *   npm run bench:server                      # http://127.0.0.1:3000/mcp, stateful legacy sessions
 *   PORT=4000 MCP_SESSIONS=stateless MCP_TOOLS=50 npm run bench:server
 *
 * Tools: `echo` ({ text: string } through `EchoDto`, answers the text `hello`), `progress` (streams
 * 100 progress notifications when the call carries a progressToken, then answers `done`), and
 * `tool_3` … `tool_N` cycling through four DTO shapes, so `tools/list` has `MCP_TOOLS` entries
 * (default 5). Any load generator that speaks Streamable HTTP can drive it; bench/run.mjs does.
 */
import 'reflect-metadata';
import { Injectable, Module, type Type as ClassType } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsEmail,
  IsEnum,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { Args, Ctx, McpContext, McpModule, Tool } from 'nestjs-model-context';

export class EchoDto {
  @IsString()
  text!: string;
}

enum Priority {
  Low = 'low',
  Medium = 'medium',
  High = 'high',
}

class CreateItemDto {
  @IsString()
  @Length(1, 200)
  title!: string;

  @IsOptional()
  @IsEnum(Priority)
  priority?: Priority;

  @IsOptional()
  @IsString({ each: true })
  @ArrayMaxSize(10)
  tags?: string[];
}

class SearchDto {
  @IsString()
  @Length(1, 100)
  query!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  page?: number;
}

class PersonDto {
  @IsString()
  @Length(1, 80)
  name!: string;

  @IsEmail()
  email!: string;
}

class AssignDto {
  @IsUUID()
  id!: string;

  @ValidateNested()
  @Type(() => PersonDto)
  owner!: PersonDto;
}

class SettingsDto {
  @IsBoolean()
  enabled!: boolean;

  @IsNumber()
  @Min(0)
  @Max(1)
  ratio!: number;

  @IsOptional()
  @IsString()
  note?: string;
}

const FILLER_DTOS: ClassType<unknown>[] = [CreateItemDto, SearchDto, AssignDto, SettingsDto];
const PROGRESS_STEPS = 100;

@Injectable()
export class BenchTools {
  @Tool({ description: 'Echoes a text; always answers "hello".' })
  echo(@Args() _input: EchoDto): string {
    return 'hello';
  }

  @Tool({ description: `Reports ${PROGRESS_STEPS} progress steps, then answers "done".` })
  progress(@Args() _input: EchoDto, @Ctx() ctx: McpContext): string {
    for (let step = 1; step <= PROGRESS_STEPS; step++) ctx.progress(step, PROGRESS_STEPS);
    return 'done';
  }
}

/** Adds `tool_3` … `tool_<count>` as real decorated methods, so discovery treats them like any tool. */
function addFillerTools(count: number): void {
  const proto = BenchTools.prototype as unknown as Record<string, unknown>;
  for (let i = 3; i <= count; i++) {
    const key = `tool${i}`;
    Object.defineProperty(proto, key, {
      value: (_input: unknown) => 'ok',
      writable: true,
      configurable: true,
    });
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
    Args()(proto, key, 0);
    Tool({
      name: `tool_${i}`,
      description: `Benchmark filler tool number ${i}.`,
      input: FILLER_DTOS[(i - 3) % FILLER_DTOS.length],
    })(proto, key, descriptor);
  }
}

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const sessions = process.env.MCP_SESSIONS ?? 'stateful';
const tools = Number(process.env.MCP_TOOLS ?? 5);
if (sessions !== 'stateful' && sessions !== 'stateless') {
  throw new Error(`MCP_SESSIONS must be "stateful" or "stateless", got "${sessions}".`);
}
if (!Number.isInteger(tools) || tools < 2) {
  throw new Error(`MCP_TOOLS must be an integer of at least 2 (echo and progress), got "${process.env.MCP_TOOLS}".`);
}
addFillerTools(tools);

@Module({
  imports: [
    McpModule.forRoot({
      name: 'bench-echo',
      version: '1.0.0',
      sessions: { mode: sessions },
      // REDIS_URL puts sessions, events and notifications in Redis (the scale-out setup).
      redis: process.env.REDIS_URL ? { url: process.env.REDIS_URL, keyPrefix: `mcp-bench:${process.pid}:` } : undefined,
    }),
  ],
  providers: [BenchTools],
})
class BenchModule {}

const app = await NestFactory.create(BenchModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks();
await app.listen(port, host);
console.log(`READY http://${host}:${port}/mcp (${sessions}, ${tools} tools)`);
