import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type ArgumentsHost,
  Body,
  Catch,
  Controller,
  Delete,
  type ExceptionFilter,
  Get,
  ImATeapotException,
  Module,
  Param,
  ParseIntPipe,
  Post,
  Put,
  Query,
  Req,
  Res,
  StreamableFile,
  UseFilters,
} from '@nestjs/common';
import { of, type Observable } from 'rxjs';
import { NestFactory } from '@nestjs/core';
import { IsString } from 'class-validator';
import { ExposeRoute, McpModule } from 'nestjs-model-context';
import { AppModule, OrdersAppModule } from '../../sample/07-existing-app/app.module.js';
import { AuditLog } from '../../sample/07-existing-app/orders/audit.js';
import { startApp, type RunningApp } from '../utils/app.js';
import { connectModernClient, connectSdkClient, modernRpc } from '../utils/clients.js';
import { CqrsModule } from '@nestjs/cqrs';
import { GetOrderStatsHandler, GetOrderStatsQuery } from '../../sample/07-existing-app/orders/cqrs.js';
import { OrdersService } from '../../sample/07-existing-app/orders/orders.service.js';

type Json = Record<string, any>;
const AUTH = { Authorization: 'Bearer dev-token' };

function textOf(result: Json): string {
  return (result.content as Json[]).map((c) => c.text).join('\n');
}

describe('sample 07-existing-app: routes and CQRS handlers as tools', () => {
  let server: RunningApp;
  let audit: AuditLog;
  before(async () => {
    server = await startApp(AppModule);
    audit = server.app.get(AuditLog);
  });
  after(() => server.close());

  async function call(
    name: string,
    args: Record<string, unknown>,
    headers: Record<string, string> = AUTH,
  ): Promise<Json> {
    const connection = await connectSdkClient(server.url, { headers });
    try {
      return (await connection.client.callTool({ name, arguments: args })) as Json;
    } finally {
      await connection.close();
    }
  }

  it('lists every exposed route, the command and the query as tools', async () => {
    const connection = await connectSdkClient(server.url, { headers: AUTH });
    try {
      const { tools } = await connection.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'cancel_order',
        'create_order',
        'get_order',
        'get_receipt',
        'list_orders',
        'order_stats',
        'place_order',
      ]);
    } finally {
      await connection.close();
    }
  });

  it('builds each input schema from the route DTOs: required fields, formats, enums, nested objects', async () => {
    const connection = await connectSdkClient(server.url, { headers: AUTH });
    try {
      const tools = new Map((await connection.client.listTools()).tools.map((t) => [t.name, t as Json]));
      const create = tools.get('create_order')!;
      assert.deepEqual([...create.inputSchema.required].sort(), ['customerEmail', 'lines']);
      assert.equal(create.inputSchema.additionalProperties, false);
      assert.equal(create.inputSchema.properties.customerEmail.format, 'email');
      assert.deepEqual(create.inputSchema.properties.priority.enum, ['normal', 'express']);
      const lines = create.inputSchema.properties.lines;
      assert.equal(lines.type, 'array');
      assert.equal(lines.minItems, 1);
      const line = lines.items.$ref
        ? create.inputSchema.$defs[String(lines.items.$ref).split('/').pop()!]
        : lines.items;
      assert.deepEqual([...line.required].sort(), ['quantity', 'sku']);
      assert.equal(line.properties.quantity.type, 'integer');
      assert.equal(line.properties.quantity.minimum, 1);

      const list = tools.get('list_orders')!;
      assert.equal(list.inputSchema.required, undefined);
      assert.equal(list.inputSchema.properties.page.type, 'integer');
      assert.equal(list.inputSchema.properties.page.minimum, 1);
      assert.equal(list.inputSchema.properties.pageSize.maximum, 50);
      assert.deepEqual(list.inputSchema.properties.status.enum, ['open', 'cancelled']);
      assert.equal(list.annotations.readOnlyHint, true);

      const get = tools.get('get_order')!;
      assert.deepEqual(get.inputSchema.required, ['id']);
      assert.equal(get.inputSchema.properties.id.type, 'string');
      assert.equal(get.description, 'One order by id (for example ORD-1).');

      const cancel = tools.get('cancel_order')!;
      assert.deepEqual(cancel.inputSchema.required, ['id']);
      // POST implies nothing; the option's annotations say what the verb cannot.
      assert.deepEqual(cancel.annotations, {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      });
      assert.deepEqual(tools.get('create_order')!.annotations, {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      });
      // Path tokens have no DTO property: the option describes them.
      assert.equal(
        cancel.inputSchema.properties.id.description,
        'The id of the order to cancel, for example ORD-1 (case does not matter).',
      );

      const receipt = tools.get('get_receipt')!;
      assert.deepEqual(receipt.inputSchema.required, ['orderId']);
      assert.equal(receipt.annotations.readOnlyHint, true);

      const place = tools.get('place_order')!;
      assert.deepEqual([...place.inputSchema.required].sort(), ['customerEmail', 'quantity', 'sku']);
      assert.equal(place.inputSchema.properties.customerEmail.format, 'email');
      const stats = tools.get('order_stats')!;
      assert.deepEqual(stats.inputSchema.properties.status.enum, ['open', 'cancelled']);
    } finally {
      await connection.close();
    }
  });

  it("runs the route's guard, pipe, interceptor and serializer for an MCP call (get_order)", async () => {
    const start = audit.entries.length;
    const result = await call('get_order', { id: 'ord-1' });
    assert.equal(result.isError, undefined, textOf(result));
    // The pipe upper-cased the id; ClassSerializerInterceptor dropped the @Exclude()d note.
    assert.equal(result.structuredContent.id, 'ORD-1');
    assert.equal('internalNote' in result.structuredContent, false);
    assert.deepEqual(audit.entries.slice(start), [
      'guard http GET /orders/ord-1',
      'interceptor before OrdersController.get',
      'pipe param id ord-1',
      'interceptor after OrdersController.get',
    ]);
  });

  it('passes the MCP request headers to the guard: no bearer token, no call', async () => {
    const start = audit.entries.length;
    const result = await call('list_orders', {}, {});
    assert.equal(result.isError, true);
    assert.match(textOf(result), /A valid bearer token is required/);
    assert.deepEqual(audit.entries.slice(start), ['guard http GET /orders']);
  });

  it('gives the query DTO to the route through the global ValidationPipe (list_orders paging)', async () => {
    const result = await call('list_orders', { page: 1, pageSize: 1, status: 'open' });
    assert.equal(result.isError, undefined, textOf(result));
    assert.equal(result.structuredContent.page, 1);
    assert.equal(result.structuredContent.pageSize, 1);
    assert.equal(result.structuredContent.items.length, 1);
    const invalid = await call('list_orders', { pageSize: 500 });
    assert.equal(invalid.isError, true);
    assert.match(textOf(invalid), /pageSize must not be greater than 50/);
  });

  it('creates through the body DTO, with @Req() seeing the principal the guard set', async () => {
    const result = await call('create_order', {
      customerEmail: 'bob@example.com',
      lines: [{ sku: 'PEN-2', quantity: 3 }],
      priority: 'express',
    });
    assert.equal(result.isError, undefined, textOf(result));
    assert.equal(result.structuredContent.customerEmail, 'bob@example.com');
    assert.equal(result.structuredContent.priority, 'express');
    assert.equal('internalNote' in result.structuredContent, false);
    const id = result.structuredContent.id as string;
    const rest = await fetch(`${server.base}/orders/${id}/cancel`, { method: 'POST', headers: AUTH });
    assert.equal(rest.status, 200);
    const cancelled = await call('cancel_order', { id: id.toLowerCase() });
    assert.equal(cancelled.isError, undefined, textOf(cancelled));
    assert.equal(cancelled.structuredContent.status, 'cancelled');
  });

  it("reports the route's validation failure as an isError result naming the field", async () => {
    const start = audit.entries.length;
    const result = await call('create_order', {
      customerEmail: 'not-an-email',
      lines: [{ sku: 'PEN-2', quantity: 0 }],
    });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /customerEmail must be an email/);
    assert.match(textOf(result), /lines\.0\.quantity must not be less than 1/);
    // The guard and interceptor ran before the pipe refused, as for an HTTP request.
    assert.deepEqual(audit.entries.slice(start), [
      'guard http POST /orders',
      'interceptor before OrdersController.create',
    ]);
  });

  it('turns an HttpException of the route into an isError result with its message', async () => {
    const result = await call('get_receipt', { orderId: 'ORD-404' });
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Order ORD-404 not found.');
  });

  it('refuses an argument the route has no place for', async () => {
    const result = await call('get_order', { id: 'ORD-1', extra: 1 });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /unknown argument\(s\) "extra"/);
  });

  it('sends the command through the CommandBus and the query through the QueryBus', async () => {
    const start = audit.entries.length;
    const placed = await call('place_order', { customerEmail: 'cy@example.com', sku: 'MUG-7', quantity: 2 });
    assert.equal(placed.isError, undefined, textOf(placed));
    const id = placed.structuredContent.id as string;
    assert.match(id, /^ORD-\d+$/);
    // The app's guard named in the entry's decorators ran first, on the MCP request.
    assert.deepEqual(audit.entries.slice(start), ['guard mcp POST /mcp', 'command PlaceOrderCommand MUG-7']);
    const rest = await fetch(`${server.base}/orders/${id}`, { headers: AUTH });
    assert.equal(((await rest.json()) as Json).lines[0].sku, 'MUG-7');

    const stats = await call('order_stats', { status: 'open' });
    assert.equal(stats.isError, undefined, textOf(stats));
    assert.equal(typeof stats.structuredContent.open, 'number');
    assert.ok(audit.entries.includes('query GetOrderStatsQuery'));

    const invalid = await call('place_order', { customerEmail: 'cy@example.com', sku: 'MUG-7', quantity: 0 });
    assert.equal(invalid.isError, true);
    assert.match(textOf(invalid), /quantity/);
  });

  it('serves the same tools to the 2026-07-28 client', async () => {
    const connection = await connectModernClient(server.url, { headers: AUTH });
    try {
      const result = (await connection.client.callTool({
        name: 'get_receipt',
        arguments: { orderId: 'ORD-1' },
      })) as Json;
      assert.equal(result.isError, undefined);
      assert.match(textOf(result), /Receipt ORD-1 for ada@example.com: 2 x BOOK-1/);
    } finally {
      await connection.close();
    }
  });
});

describe('sample 07-existing-app: the REST API answers exactly as without McpModule', () => {
  let plain: RunningApp;
  let withMcp: RunningApp;
  before(async () => {
    plain = await startApp(OrdersAppModule);
    withMcp = await startApp(AppModule);
  });
  after(async () => {
    await plain.close();
    await withMcp.close();
  });

  const requests: Array<{ method: string; path: string; headers?: Record<string, string>; body?: unknown }> = [
    { method: 'GET', path: '/orders', headers: AUTH },
    { method: 'GET', path: '/orders?page=1&pageSize=5&status=open', headers: AUTH },
    { method: 'GET', path: '/orders?pageSize=500', headers: AUTH },
    { method: 'GET', path: '/orders' },
    { method: 'GET', path: '/orders/ord-1', headers: AUTH },
    { method: 'GET', path: '/orders/ORD-99', headers: AUTH },
    {
      method: 'POST',
      path: '/orders',
      headers: AUTH,
      body: { customerEmail: 'bob@example.com', lines: [{ sku: 'PEN-2', quantity: 3 }] },
    },
    { method: 'POST', path: '/orders', headers: AUTH, body: { customerEmail: 'nope', lines: [] } },
    {
      method: 'POST',
      path: '/orders',
      headers: AUTH,
      body: { customerEmail: 'bob@example.com', lines: [{ sku: 'A', quantity: 1 }], extra: true },
    },
    { method: 'POST', path: '/orders/ORD-2/cancel', headers: AUTH },
    { method: 'GET', path: '/receipts/ORD-2', headers: AUTH },
    { method: 'GET', path: '/receipts/ORD-2' },
  ];

  it('gives the same status and body for every request of a recorded sequence', async () => {
    const run = async (app: RunningApp) => {
      const answers: Array<{ status: number; body: string }> = [];
      for (const r of requests) {
        const response = await fetch(`${app.base}${r.path}`, {
          method: r.method,
          headers: { ...(r.headers ?? {}), ...(r.body ? { 'content-type': 'application/json' } : {}) },
          body: r.body ? JSON.stringify(r.body) : undefined,
        });
        answers.push({ status: response.status, body: await response.text() });
      }
      return answers;
    };
    const expected = await run(plain);
    const actual = await run(withMcp);
    assert.deepEqual(actual, expected);
    // The sequence covers success, validation, not-found and auth failures.
    assert.deepEqual(
      expected.map((a) => a.status),
      [200, 200, 400, 401, 200, 404, 201, 400, 400, 200, 200, 401],
    );
  });
});

class ClashDto {
  @IsString()
  id!: string;
}

@Controller('files')
class FilesController {
  @Get(':name')
  download(@Param('name') name: string, @Res() response: { send(body: string): void }): void {
    response.send(name);
  }
}

@Controller('clash')
class ClashController {
  @Post()
  @ExposeRoute()
  update(@Body() body: ClashDto, @Query('id') id: string): string {
    return `${body.id}${id}`;
  }
}

describe('route tools that cannot be: bootstrap errors', () => {
  it('refuses a route that takes @Res(), naming the controller, the method and the fix', async () => {
    @Module({
      imports: [
        McpModule.forRoot({ name: 'x', version: '1', expose: { routes: [{ controllers: [FilesController] }] } }),
      ],
      controllers: [FilesController],
    })
    class ResModule {}
    await assert.rejects(
      NestFactory.create(ResModule, { logger: false, abortOnError: false }).then((app) =>
        app.init().finally(() => app.close()),
      ),
      (error: Error) => {
        assert.match(error.message, /route FilesController#download cannot be a tool/);
        assert.match(error.message, /@Res\(\)/);
        assert.match(error.message, /Return the value from the method instead/);
        return true;
      },
    );
  });

  it('refuses a name clash between @Body and @Query, naming both sources and the fix', async () => {
    @Module({ imports: [McpModule.forRoot({ name: 'x', version: '1' })], controllers: [ClashController] })
    class ClashModule {}
    await assert.rejects(
      NestFactory.create(ClashModule, { logger: false, abortOnError: false }).then((app) =>
        app.init().finally(() => app.close()),
      ),
      (error: Error) => {
        assert.match(error.message, /route ClashController#update cannot be a tool/);
        assert.match(error.message, /"id" comes from both @Body\(\) ClashDto and @Query\('id'\)/);
        assert.match(error.message, /Rename one of them/);
        return true;
      },
    );
  });

  it('refuses an argumentDescriptions entry for an argument the route does not have, listing the ones it has', async () => {
    const expose = {
      routes: [
        {
          controllers: [ItemsController],
          include: ['GET /items/:id'],
          tools: { one: { argumentDescriptions: { itemId: 'The item.' } } },
        },
      ],
    };
    @Module({ imports: [McpModule.forRoot({ name: 'x', version: '1', expose })], controllers: [ItemsController] })
    class TypoModule {}
    await assert.rejects(
      NestFactory.create(TypoModule, { logger: false, abortOnError: false }).then((app) =>
        app.init().finally(() => app.close()),
      ),
      /route ItemsController#one has no argument "itemId" to describe \(its arguments: id\)\. Fix the name in "argumentDescriptions"\./,
    );
  });

  it('refuses an expose.routes entry that is not a controller of the app', async () => {
    @Module({
      imports: [
        McpModule.forRoot({ name: 'x', version: '1', expose: { routes: [{ controllers: [FilesController] }] } }),
      ],
    })
    class MissingModule {}
    await assert.rejects(
      NestFactory.create(MissingModule, { logger: false, abortOnError: false }).then((app) =>
        app.init().finally(() => app.close()),
      ),
      /lists FilesController, which is not a controller of the application/,
    );
  });
});

class ItemDto {
  @IsString()
  label!: string;
}

@Catch(ImATeapotException)
class TeapotFilter implements ExceptionFilter {
  catch(_exception: ImATeapotException, host: ArgumentsHost): void {
    host
      .switchToHttp()
      .getResponse<{ status(code: number): { json(body: unknown): void } }>()
      .status(418)
      .json({ message: 'short and stout' });
  }
}

@Controller('items')
class ItemsController {
  readonly removed: string[] = [];

  @Get()
  all(): Observable<{ items: string[] }> {
    // Over HTTP Nest answers with the last value; the tool result is that value too.
    return of({ items: ['draft'] }, { items: ['a', 'b'] });
  }

  @Get(':id')
  one(@Param('id', ParseIntPipe) id: number): { id: number; kind: string } {
    return { id, kind: typeof id };
  }

  @Put(':id')
  replace(@Param('id') id: string, @Body() body: ItemDto): { id: string; label: string } {
    return { id, label: body.label };
  }

  @Delete(':id')
  remove(@Param('id') id: string): { removed: string } {
    this.removed.push(id);
    return { removed: id };
  }

  @Get(':id/file')
  file(): StreamableFile {
    return new StreamableFile(Buffer.from('bytes'));
  }

  @Get('teapot/brew')
  @UseFilters(TeapotFilter)
  brew(): never {
    throw new ImATeapotException();
  }
}

describe('expose.routes selection, verbs, prefix and results', () => {
  let server: RunningApp;
  before(async () => {
    @Module({
      imports: [
        McpModule.forRoot({
          name: 'items',
          version: '1',
          expose: {
            routes: [
              {
                controllers: [ItemsController],
                exclude: ['GET /items/:id/file'],
                tools: { 'DELETE /items/:id': { name: 'delete_item', annotations: { openWorldHint: false } } },
              },
            ],
          },
        }),
      ],
      controllers: [ItemsController],
    })
    class ItemsModule {}
    server = await startApp(ItemsModule, { configure: (app) => void app.setGlobalPrefix('api', { exclude: ['mcp'] }) });
  });
  after(() => server.close());

  async function withClient<T>(run: (client: Json) => Promise<T>): Promise<T> {
    const connection = await connectSdkClient(server.url);
    try {
      return await run(connection.client as unknown as Json);
    } finally {
      await connection.close();
    }
  }

  it('selects by METHOD /path, names from the handler or the map, and derives annotations from the verb', async () => {
    const tools = await withClient(
      async (client) => new Map(((await client.listTools()).tools as Json[]).map((t) => [t.name, t])),
    );
    assert.deepEqual([...tools.keys()].sort(), ['all', 'brew', 'delete_item', 'one', 'replace']);
    assert.deepEqual(tools.get('all')!.annotations, { readOnlyHint: true });
    assert.deepEqual(tools.get('replace')!.annotations, { readOnlyHint: false, idempotentHint: true });
    assert.deepEqual(tools.get('delete_item')!.annotations, {
      readOnlyHint: false,
      idempotentHint: true,
      destructiveHint: true,
      openWorldHint: false,
    });
    // The description names the route as served, global prefix included.
    assert.equal(tools.get('delete_item')!.description, 'DELETE /api/items/:id (ItemsController.remove).');
    assert.equal(tools.get('one')!.inputSchema.properties.id.type, 'integer');
    assert.deepEqual([...tools.get('replace')!.inputSchema.required].sort(), ['id', 'label']);
  });

  it('runs ParseIntPipe, the DELETE handler, and returns the last value of an Observable', async () => {
    await withClient(async (client) => {
      const one = await client.callTool({ name: 'one', arguments: { id: 7 } });
      assert.deepEqual(one.structuredContent, { id: 7, kind: 'number' });
      const bad = await client.callTool({ name: 'one', arguments: { id: 'x7' } });
      assert.equal(bad.isError, true);
      assert.match(textOf(bad), /numeric string is expected/);
      const removed = await client.callTool({ name: 'delete_item', arguments: { id: '3' } });
      assert.deepEqual(removed.structuredContent, { removed: '3' });
      assert.deepEqual(server.app.get(ItemsController).removed, ['3']);
      const all = await client.callTool({ name: 'all', arguments: {} });
      assert.deepEqual(all.structuredContent, { items: ['a', 'b'] });
      const replaced = await client.callTool({ name: 'replace', arguments: { id: '1', label: 'new' } });
      assert.deepEqual(replaced.structuredContent, { id: '1', label: 'new' });
    });
  });

  it("lets the route's own exception filter shape the error, writing to the response as over HTTP", async () => {
    await withClient(async (client) => {
      const brewed = await client.callTool({ name: 'brew', arguments: {} });
      assert.equal(brewed.isError, true);
      assert.equal(textOf(brewed), 'short and stout');
    });
    const rest = await fetch(`${server.base}/api/items/teapot/brew`);
    assert.equal(rest.status, 418);
    assert.deepEqual(await rest.json(), { message: 'short and stout' });
  });
});

@Controller('downloads')
class DownloadsController {
  @Get()
  @ExposeRoute()
  download(): StreamableFile {
    return new StreamableFile(Buffer.from('bytes'));
  }
}

describe('a route returning a StreamableFile', () => {
  it('answers the tool call with an isError result saying what to do instead', async () => {
    @Module({ imports: [McpModule.forRoot({ name: 'x', version: '1' })], controllers: [DownloadsController] })
    class DownloadsModule {}
    const server = await startApp(DownloadsModule);
    try {
      const connection = await connectSdkClient(server.url);
      try {
        const result = (await connection.client.callTool({ name: 'download', arguments: {} })) as Json;
        assert.equal(result.isError, true);
        assert.match(
          textOf(result),
          /returned application\/octet-stream content \(a file or binary stream, such as a StreamableFile\), which a tool cannot return/,
        );
      } finally {
        await connection.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe('sample 07 with the official clients on Express and Fastify', () => {
  const flavours: Array<{
    label: string;
    connect: (url: string) => Promise<{ client: Json; close(): Promise<void> }>;
  }> = [
    { label: '@modelcontextprotocol/sdk 1.32', connect: (url) => connectSdkClient(url, { headers: AUTH }) as never },
    {
      label: '@modelcontextprotocol/sdk 1.12 (legacy)',
      connect: (url) => connectSdkClient(url, { version: 'legacy', headers: AUTH }) as never,
    },
    {
      label: '@modelcontextprotocol/client 2.4 (2026-07-28)',
      connect: (url) => connectModernClient(url, { headers: AUTH }) as never,
    },
  ];
  for (const platform of ['express', 'fastify'] as const) {
    describe(platform, () => {
      let server: RunningApp;
      before(async () => {
        server = await startApp(AppModule, { platform });
      });
      after(() => server.close());

      for (const { label, connect } of flavours) {
        it(`${label}: lists the seven tools and calls a route, the command and the query`, async () => {
          const connection = await connect(server.url);
          try {
            const { tools } = await connection.client.listTools();
            assert.equal(tools.length, 7);
            const order = await connection.client.callTool({ name: 'get_order', arguments: { id: 'ord-1' } });
            assert.match(textOf(order), /"id":\s*"ORD-1"/);
            const invalid = await connection.client.callTool({
              name: 'create_order',
              arguments: { customerEmail: 'x', lines: [] },
            });
            assert.equal(invalid.isError, true);
            assert.match(textOf(invalid), /customerEmail must be an email/);
            const placed = await connection.client.callTool({
              name: 'place_order',
              arguments: { customerEmail: 'z@example.com', sku: 'S', quantity: 1 },
            });
            assert.match(textOf(placed), /ORD-\d+/);
            const stats = await connection.client.callTool({ name: 'order_stats', arguments: {} });
            assert.match(textOf(stats), /"open":\s*\d+/);
          } finally {
            await connection.close();
          }
        });
      }

      it('answers REST on its usual paths', async () => {
        const response = await fetch(`${server.base}/orders/ORD-1`, { headers: AUTH });
        assert.equal(response.status, 200);
        assert.equal(((await response.json()) as Json).id, 'ORD-1');
      });
    });
  }
});

/*
 * @nestjs/swagger 12.0.2 cannot be installed next to TypeScript 7 (its optional peer is
 * typescript ^5.5 || ^6), so these helpers write the metadata its decorators write, under its
 * keys ('swagger/apiOperation', 'swagger/apiResponse', ...), the way its decorators do.
 */
const ApiOperation =
  (options: { summary?: string; description?: string }): MethodDecorator =>
  (_t, _k, d) => {
    Reflect.defineMetadata('swagger/apiOperation', options, d.value as object);
  };
const ApiOkResponse =
  (options: { type: Function }): MethodDecorator =>
  (_t, _k, d) => {
    Reflect.defineMetadata('swagger/apiResponse', { '200': { description: '', ...options } }, d.value as object);
  };
const ApiExcludeEndpoint = (): MethodDecorator => (_t, _k, d) => {
  Reflect.defineMetadata('swagger/apiExcludeEndpoint', { disable: true }, d.value as object);
};
const ApiTags =
  (...tags: string[]): MethodDecorator =>
  (_t, _k, d) => {
    Reflect.defineMetadata('swagger/apiUseTags', tags, d.value as object);
  };
const ApiProperty =
  (options: { description?: string; example?: unknown }): PropertyDecorator =>
  (target, key) => {
    Reflect.defineMetadata('swagger/apiModelProperties', options, target, key);
  };

class NoteDto {
  @ApiProperty({ description: 'The note text', example: 'buy milk' })
  @IsString()
  text!: string;
}

class NoteView {
  @IsString()
  text!: string;
}

@Controller('notes')
class NotesController {
  @Post()
  @ApiTags('notes')
  @ApiOperation({ summary: 'Add a note', description: 'Adds a note and returns it.' })
  @ApiOkResponse({ type: NoteView })
  add(@Body() dto: NoteDto): NoteView {
    return { text: dto.text };
  }

  @Get()
  @ApiTags('notes')
  @ApiExcludeEndpoint()
  hidden(): string {
    return 'hidden';
  }

  @Get('untagged')
  untagged(): string {
    return 'untagged';
  }
}

describe('Swagger metadata on exposed routes', () => {
  it('takes title, description, property docs and output schema from it, and selects by tag and exclusion', async () => {
    @Module({
      imports: [
        McpModule.forRoot({
          name: 'notes',
          version: '1',
          expose: { routes: [{ controllers: [NotesController], tags: ['notes'] }] },
        }),
      ],
      controllers: [NotesController],
    })
    class NotesModule {}
    const server = await startApp(NotesModule);
    try {
      const connection = await connectSdkClient(server.url);
      try {
        const { tools } = (await connection.client.listTools()) as { tools: Json[] };
        assert.deepEqual(
          tools.map((t) => t.name),
          ['add'],
        );
        const [add] = tools;
        assert.equal(add!.title, 'Add a note');
        assert.equal(add!.description, 'Adds a note and returns it.');
        assert.equal(add!.inputSchema.properties.text.description, 'The note text');
        assert.deepEqual(add!.inputSchema.properties.text.examples, ['buy milk']);
        assert.equal(add!.outputSchema.properties.text.type, 'string');
        const result = (await connection.client.callTool({ name: 'add', arguments: { text: 'hi' } })) as Json;
        assert.deepEqual(result.structuredContent, { text: 'hi' });
      } finally {
        await connection.close();
      }
    } finally {
      await server.close();
    }
  });
});

@Controller('me')
class MeController {
  @Get(':section')
  @ExposeRoute()
  me(
    @Param('section') section: string,
    @Req() request: { user?: { id: string }; headers: Record<string, string>; url: string; method: string },
  ): Json {
    return {
      section,
      user: request.user?.id,
      trace: request.headers['x-trace'],
      url: request.url,
      method: request.method,
    };
  }

  @Get(':section/admin')
  admin(): string {
    return 'admin';
  }
}

describe('@Req() of a route tool', () => {
  it("carries the MCP request headers; request.user is the app's own auth's (none here), never the module's principal", async () => {
    @Module({
      imports: [
        McpModule.forRoot({
          name: 'me',
          version: '1',
          auth: {
            resource: 'http://127.0.0.1/mcp',
            authorizationServers: ['https://auth.example.com'],
            verifyToken: (token) => (token === 'alice-token' ? { id: 'alice', scopes: ['orders:read'] } : null),
          },
          expose: {
            routes: [
              {
                controllers: [MeController],
                include: ['GET /me/:section/admin'],
                tools: { 'GET /me/:section/admin': { name: 'me_admin', requiredScopes: ['admin'] } },
              },
            ],
            queries: [{ message: GetOrderStatsQuery, requiredScopes: ['orders:read'] }],
          },
        }),
        CqrsModule.forRoot(),
      ],
      controllers: [MeController],
      providers: [GetOrderStatsHandler, OrdersService, AuditLog],
    })
    class MeModule {}
    const server = await startApp(MeModule);
    try {
      const connection = await connectSdkClient(server.url, {
        headers: { Authorization: 'Bearer alice-token', 'X-Trace': 'trace-42' },
      });
      try {
        const result = (await connection.client.callTool({ name: 'me', arguments: { section: 'profile' } })) as Json;
        // No guard of the app authenticates this route: over HTTP it has no user, and none is made up.
        assert.deepEqual(result.structuredContent, {
          section: 'profile',
          trace: 'trace-42',
          url: '/me/profile',
          method: 'GET',
        });
        // requiredScopes of the options: granted for the query, missing for the admin route.
        const stats = (await connection.client.callTool({ name: 'get_order_stats', arguments: {} })) as Json;
        assert.equal(stats.isError, undefined, textOf(stats));
      } finally {
        await connection.close();
      }
      const refused = await modernRpc(
        server.url,
        'tools/call',
        { name: 'me_admin', arguments: { section: 'x' } },
        { headers: { Authorization: 'Bearer alice-token' } },
      );
      assert.equal(refused.status, 403);
      assert.match(refused.headers.get('www-authenticate')!, /error="insufficient_scope", scope="admin"/);
    } finally {
      await server.close();
    }
  });
});
