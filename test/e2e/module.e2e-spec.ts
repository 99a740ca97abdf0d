import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Body, Injectable, Module } from '@nestjs/common';
import { IsString } from 'class-validator';
import { NestFactory } from '@nestjs/core';
import { Ctx, McpModule, Prompt, Tool } from 'nestjs-model-context';
import {
  AlphaModule,
  BetaModule,
  GLOBALS,
  OptionsModule,
  OptionsService,
  ProviderKindsModule,
  appWith,
} from '../fixtures/module-variants.js';
import { startApp } from '../utils/app.js';
import { modernRpc, rpc } from '../utils/clients.js';

type Json = Record<string, any>;

async function toolNames(url: string): Promise<string[]> {
  const res = (await modernRpc(url, 'tools/list')).json as Json;
  return res.result.tools.map((t: Json) => t.name);
}

async function bootFails(imports: unknown[], providers: unknown[] = []): Promise<string> {
  @Module({ imports: imports as never[], providers: providers as never[] })
  class Broken {}
  try {
    const app = await NestFactory.create(Broken, { logger: false, abortOnError: false });
    await app.init();
    await app.close();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the bootstrap to fail');
}

describe('McpModule configuration', () => {
  it('forRootAsync with useFactory + inject', async () => {
    const server = await startApp(
      appWith([
        AlphaModule,
        McpModule.forRootAsync({
          imports: [OptionsModule],
          inject: [OptionsService],
          useFactory: (svc: OptionsService) => ({ ...svc.createMcpOptions(), name: 'from-factory' }),
        }),
      ]),
    );
    try {
      const discover = (await modernRpc(server.url, 'server/discover')).json as Json;
      assert.equal(discover.result.serverInfo.name, 'from-factory');
    } finally {
      await server.close();
    }
  });

  it('forRootAsync with useClass and with useExisting, and a custom path', async () => {
    for (const async of [{ useClass: OptionsService }, { imports: [OptionsModule], useExisting: OptionsService }]) {
      const server = await startApp(appWith([AlphaModule, McpModule.forRootAsync({ ...async, path: 'agents/mcp' })]), {
        path: 'agents/mcp',
      });
      try {
        const discover = (await modernRpc(server.url, 'server/discover')).json as Json;
        assert.deepEqual(discover.result.serverInfo, { name: 'from-class', version: '3.0.0' });
      } finally {
        await server.close();
      }
    }
  });

  it('serves two endpoints with separate capability sets (include lists)', async () => {
    const server = await startApp(
      appWith([
        AlphaModule,
        BetaModule,
        McpModule.forRoot({ name: 'a', version: '1', path: 'alpha', include: [AlphaModule] }),
        McpModule.forRoot({ name: 'b', version: '1', path: 'beta', include: [BetaModule] }),
      ]),
    );
    try {
      assert.deepEqual(await toolNames(`${server.base}/alpha`), ['alpha']);
      assert.deepEqual(await toolNames(`${server.base}/beta`), ['beta']);
      const wrong = (await modernRpc(`${server.base}/beta`, 'tools/call', { name: 'alpha', arguments: { name: 'x' } }))
        .json as Json;
      assert.equal(wrong.error.code, -32602);
    } finally {
      await server.close();
    }
  });

  it('finds tools on useValue, useFactory and inherited providers, once despite an alias, skipping null prototypes', async () => {
    const server = await startApp(appWith([ProviderKindsModule, McpModule.forRoot({ name: 'kinds', version: '1' })]));
    try {
      assert.deepEqual((await toolNames(server.url)).sort(), ['from_factory', 'from_value', 'inherited']);
      const res = (await modernRpc(server.url, 'tools/call', { name: 'inherited', arguments: {} })).json as Json;
      assert.equal(res.result.content[0].text, 'inherited by DerivedTools');
    } finally {
      await server.close();
    }
  });

  it('fails the bootstrap on duplicate names, naming both sites', async () => {
    @Injectable()
    class One {
      @Tool({ name: 'same' }) a() {}
    }
    @Injectable()
    class Two {
      @Tool({ name: 'same' }) b() {}
    }
    const message = await bootFails([McpModule.forRoot({ name: 'd', version: '1' })], [One, Two]);
    assert.match(message, /"same"/);
    assert.match(message, /One#a/);
    assert.match(message, /Two#b/);
  });

  it('fails the bootstrap on invalid names, saying how to fix them', async () => {
    @Injectable()
    class Bad {
      @Tool({ name: 'has space' }) a() {}
    }
    const message = await bootFails([McpModule.forRoot({ name: 'd', version: '1' })], [Bad]);
    assert.match(message, /"has space"/);
    assert.match(message, /Bad#a/);
    assert.match(message, /toolNamePattern/);
  });

  it("fails the bootstrap on a parameter another package's decorator fills, naming the method, the index and the decorators to use", async () => {
    // What @nestjs/graphql's @Args() writes (packages/graphql/lib/decorators/param.utils.ts): its
    // ARGS type (3) under Nest's route-arguments key, on the class.
    const GraphqlArgs = (): ParameterDecorator => (target, key, index) => {
      const args = Reflect.getMetadata('__routeArguments__', target.constructor, key!) ?? {};
      Reflect.defineMetadata(
        '__routeArguments__',
        { ...args, [`3:${index}`]: { index, data: undefined, pipes: [] } },
        target.constructor,
        key!,
      );
    };
    class SearchDto {
      @IsString() query!: string;
    }
    @Injectable()
    class SearchTools {
      @Tool({ description: 'Searches.' })
      search(@Ctx() _ctx: unknown, @GraphqlArgs() input: SearchDto) {
        return input.query;
      }
    }
    const message = await bootFails([McpModule.forRoot({ name: 'd', version: '1' })], [SearchTools]);
    assert.match(message, /parameter 1 of tool "SearchTools#search"/);
    assert.match(message, /@Args\(\) \(@nestjs\/graphql\)/);
    assert.match(
      message,
      /@Args\(\) \(the validated arguments.*@Ctx\(\) and @McpRequest\(\) imported from 'nestjs-model-context'/,
    );

    @Injectable()
    class Prompts {
      @Prompt({ description: 'Greets.' })
      greet(@Body() _body: unknown) {
        return 'hi';
      }
    }
    assert.match(
      await bootFails([McpModule.forRoot({ name: 'd', version: '1' })], [Prompts]),
      /parameter 0 of prompt "Prompts#greet".*@Body\(\) \(@nestjs\/common\)/,
    );
  });

  it('fails the bootstrap on invalid options', async () => {
    const message = await bootFails([
      McpModule.forRoot({ name: '', version: '1', sessions: { mode: 'sticky' as never } }),
    ]);
    assert.match(message, /"name" must be a non-empty string/);
    assert.match(message, /sessions\.mode/);
  });

  it('is not corrupted by a global ValidationPipe and a catch-all exception filter', async () => {
    const server = await startApp(appWith([AlphaModule, McpModule.forRoot({ name: 'g', version: '1' })], GLOBALS));
    try {
      const ok = (await modernRpc(server.url, 'tools/call', { name: 'alpha', arguments: { name: 'n' } })).json as Json;
      assert.equal(ok.result.content[0].text, 'alpha n');
      const invalid = (await modernRpc(server.url, 'tools/call', { name: 'alpha', arguments: { name: 1 } }))
        .json as Json;
      assert.equal(invalid.result.isError, true);
      const malformed = await rpc(server.url, '{"broken');
      assert.equal(malformed.status, 400);
      assert.equal((malformed.json as Json).error.code, -32700);
      const unknown = await modernRpc(server.url, 'nope/nope');
      assert.equal(unknown.status, 404);
      assert.equal((unknown.json as Json).error.code, -32601);
    } finally {
      await server.close();
    }
  });
});
