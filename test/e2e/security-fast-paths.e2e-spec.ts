/**
 * The two shortcuts of a tools/call: arguments a flat DTO's schema decides skip class-transformer
 * and class-validator, and a handler no guard, interceptor or pipe applies to is called without
 * Nest's ExternalContextCreator. From the attacker's side: nothing the full path refuses gets
 * through either shortcut, and any enhancer (global by `useGlobalGuards`, `APP_GUARD`,
 * `APP_INTERCEPTOR` or `APP_PIPE`, on the class, on the method, on a parameter) or custom parameter
 * decorator puts the call back on Nest's path, on both eras and over Express and Fastify.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ForbiddenException,
  HttpException,
  Injectable,
  Module,
  UseGuards,
  UseInterceptors,
  createParamDecorator,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type NestInterceptor,
  type PipeTransform,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { map, of, type Observable } from 'rxjs';
import { Args, Ctx, McpModule, Tool, type McpContext } from '../../lib/index.js';
import { startApp, type RunningApp, type TestPlatform } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';
import { legacySession } from '../utils/legacy-session.js';

type Json = Record<string, any>;

class OrderDto {
  @IsString() @MaxLength(8) sku!: string;
  @IsInt() @Min(1) @Max(5) qty!: number;
  @IsOptional() @IsString() note?: string;
  @IsOptional() @IsInt() @Max(5) limit?: number = 9; // a default its own rule refuses
}

/** Refuses a tool call unless the request carries `x-allow: yes` (the endpoint itself is open). */
@Injectable()
class AllowHeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType<string>() !== 'mcp') return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    if (request.headers['x-allow'] !== 'yes') throw new ForbiddenException('x-allow: yes is required');
    return true;
  }
}

@Injectable()
class StampInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((value) => `stamped:${String(value)}`));
  }
}

@Injectable()
class UpperPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return value && typeof value === 'object' && 'sku' in value
      ? { ...(value as Json), sku: String((value as Json).sku).toUpperCase() }
      : value;
  }
}

const Caller = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string =>
    context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-caller'] ??
    'nobody',
);

@Injectable()
class PlainTools {
  @Tool({ description: 'Orders.' })
  order(@Args() { sku, qty, limit }: OrderDto): string {
    return `${sku}x${qty}/${limit}`;
  }

  @Tool({ description: 'Streams progress, then answers.' })
  steps(@Args() { sku }: OrderDto, @Ctx() ctx: McpContext): Observable<string> {
    ctx.progress(1, 1);
    return of(`done:${sku}`);
  }

  @Tool({ description: 'Fails as HTTP.' })
  refuse(@Args() _args: OrderDto): string {
    throw new HttpException('out of stock', 409);
  }

  @Tool({ description: 'Throws before returning.' })
  crash(@Args() _args: OrderDto): string {
    throw new Error('secret internal detail');
  }

  @Tool({ description: 'Who called.' })
  whoami(@Caller() caller: string): string {
    return `caller:${caller}`;
  }

  @Tool({ description: 'Argument pipe.' })
  piped(@Args(UpperPipe) { sku }: OrderDto): string {
    return sku;
  }
}

@Injectable()
@UseGuards(AllowHeaderGuard)
class GuardedClassTools {
  @Tool({ description: 'Guarded by its class.' })
  classGuarded(@Args() { sku }: OrderDto): string {
    return sku;
  }
}

@Injectable()
class MethodEnhancedTools {
  @Tool({ description: 'Guarded by its method.' })
  @UseGuards(AllowHeaderGuard)
  methodGuarded(@Args() { sku }: OrderDto): string {
    return sku;
  }

  @Tool({ description: 'Intercepted by its method.' })
  @UseInterceptors(StampInterceptor)
  stamped(@Args() { sku }: OrderDto): string {
    return sku;
  }
}

@Module({
  imports: [McpModule.forRoot({ name: 'fast-paths', version: '1.0.0' })],
  providers: [PlainTools, GuardedClassTools, MethodEnhancedTools],
})
class PlainModule {}

@Injectable()
class GlobalTools {
  @Tool({ description: 'No enhancer of its own.' })
  order(@Args() { sku }: OrderDto): string {
    return sku;
  }
}

function globalModule(provider: Provider) {
  @Module({
    imports: [McpModule.forRoot({ name: 'fast-paths-global', version: '1.0.0' })],
    providers: [GlobalTools, provider],
  })
  class GlobalModule {}
  return GlobalModule;
}

/** One tools/call on an era; the tool result, or the JSON-RPC error. */
async function call(
  url: string,
  era: 'modern' | 'legacy',
  name: string,
  args: Json,
  headers: Json = {},
): Promise<Json> {
  const answer =
    era === 'modern'
      ? await modernRpc(url, 'tools/call', { name, arguments: args }, { headers })
      : await rpc(
          url,
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
          {
            sessionId: await legacySession(url, 'attacker', { headers }),
            headers: { 'MCP-Protocol-Version': '2025-11-25', ...headers },
          },
        );
  const body = (answer.json ?? JSON.parse(String(answer.events!.at(-1)!.data))) as Json;
  return body.result ?? body;
}

const text = (result: Json): string => result.content?.[0]?.text ?? JSON.stringify(result);

for (const platform of ['express', 'fastify'] as TestPlatform[]) {
  describe(`security: the tools/call shortcuts refuse what the full path refuses (${platform})`, () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(PlainModule, { platform });
    });
    after(() => app?.close());

    for (const era of ['modern', 'legacy'] as const) {
      it(`refuses every argument class-validator refuses, naming the field (${era})`, async () => {
        const refused: [Json, RegExp][] = [
          [{ sku: 'A', qty: 0 }, /qty/],
          [{ sku: 'A', qty: 6 }, /qty/],
          [{ sku: 'A', qty: 2.5 }, /qty/],
          [{ sku: 'A', qty: '2' }, /qty/],
          [{ sku: 'ABCDEFGHI', qty: 1 }, /sku/],
          [{ sku: 7, qty: 1 }, /sku/],
          [{ qty: 1 }, /sku/],
          [{ sku: 'A', qty: 1, note: null, extra: 1 }, /extra/],
          [{ sku: 'A', qty: 1, __proto__: { admin: true } }, /./],
          [{ sku: 'A', qty: 1, limit: 7 }, /limit/],
        ];
        for (const [args, field] of refused) {
          const result = await call(app.url, era, 'order', args);
          assert.equal(result.isError, true, `${JSON.stringify(args)} was accepted: ${JSON.stringify(result)}`);
          assert.match(text(result), field);
        }
      });

      it(`checks a DTO default the arguments did not carry (${era})`, async () => {
        const result = await call(app.url, era, 'order', { sku: 'A', qty: 1 });
        assert.equal(result.isError, true);
        assert.match(text(result), /limit/);
        assert.equal(text(await call(app.url, era, 'order', { sku: 'A', qty: 1, limit: 2 })), 'Ax1/2');
      });

      it(`runs class and method guards and method interceptors (${era})`, async () => {
        for (const name of ['class_guarded', 'method_guarded']) {
          const refused = await call(app.url, era, name, { sku: 'A', qty: 1, limit: 1 });
          // A guard-aware list hides the tool from a caller its guard refuses: unknown, or a tool error.
          assert.ok(
            refused.isError === true || refused.error,
            `${name} ran without its guard: ${JSON.stringify(refused)}`,
          );
          assert.doesNotMatch(JSON.stringify(refused), /"text":"A"/);
          const allowed = await call(app.url, era, name, { sku: 'A', qty: 1, limit: 1 }, { 'x-allow': 'yes' });
          assert.equal(text(allowed), 'A');
        }
        assert.equal(text(await call(app.url, era, 'stamped', { sku: 'A', qty: 1, limit: 1 })), 'stamped:A');
      });

      it(`runs parameter pipes and custom parameter decorators (${era})`, async () => {
        assert.equal(text(await call(app.url, era, 'piped', { sku: 'abc', qty: 1, limit: 1 })), 'ABC');
        assert.equal(text(await call(app.url, era, 'whoami', {}, { 'x-caller': 'mallory' })), 'caller:mallory');
      });

      it(`answers an HttpException as its message and hides a crash's text (${era})`, async () => {
        const refused = await call(app.url, era, 'refuse', { sku: 'A', qty: 1, limit: 1 });
        assert.equal(refused.isError, true);
        assert.match(text(refused), /out of stock/);
        const crashed = await call(app.url, era, 'crash', { sku: 'A', qty: 1, limit: 1 });
        assert.doesNotMatch(JSON.stringify(crashed), /secret internal detail/);
      });

      it(`streams an Observable handler's progress and answers its last value (${era})`, async () => {
        const result = await call(app.url, era, 'steps', { sku: 'A', qty: 1, limit: 1 });
        assert.equal(text(result), 'done:A');
      });
    }
  });

  const globals: [string, Provider, (result: Json) => void][] = [
    [
      'APP_GUARD',
      { provide: APP_GUARD, useClass: AllowHeaderGuard },
      (result) => assert.equal(result.isError, true, 'the global guard did not run'),
    ],
    [
      'APP_INTERCEPTOR',
      { provide: APP_INTERCEPTOR, useClass: StampInterceptor },
      (result) => assert.equal(text(result), 'stamped:A'),
    ],
    ['APP_PIPE', { provide: APP_PIPE, useClass: UpperPipe }, (result) => assert.equal(text(result), 'ABC')],
  ];
  for (const [label, provider, expect] of globals) {
    describe(`security: an app-wide ${label} applies to a tool with no enhancer of its own (${platform})`, () => {
      let app: RunningApp;
      before(async () => {
        app = await startApp(globalModule(provider), { platform });
      });
      after(() => app?.close());
      for (const era of ['modern', 'legacy'] as const) {
        it(era, async () =>
          expect(await call(app.url, era, 'order', { sku: label === 'APP_PIPE' ? 'abc' : 'A', qty: 1, limit: 1 })),
        );
      }
    });
  }

  describe(`security: a guard given to useGlobalGuards() before listen applies to every tool (${platform})`, () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp(PlainModule, {
        platform,
        configure: (nest) => void nest.useGlobalGuards(new AllowHeaderGuard()),
      });
    });
    after(() => app?.close());
    for (const era of ['modern', 'legacy'] as const) {
      it(era, async () => {
        const refused = await call(app.url, era, 'order', { sku: 'A', qty: 1, limit: 1 });
        assert.equal(refused.isError, true, 'the global guard did not run');
        const allowed = await call(app.url, era, 'order', { sku: 'A', qty: 1, limit: 1 }, { 'x-allow': 'yes' });
        assert.equal(text(allowed), 'Ax1/1');
      });
    }
  });
}
