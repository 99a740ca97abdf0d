/**
 * Option shapes an app writes compile against the package's typings as the app imports them, ESM
 * and CommonJS: a `forRootAsync` factory returns an object literal whose type TypeScript infers
 * on its own (no contextual type reaches it), so the options' records must accept what that
 * inference makes of entries with different keys (issue 27 item 10).
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { appCompilerOptions, tscRun } from '../utils/tsc.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** An app module whose factory renames two handlers (and other per-entry records) with no written return type. */
const APP_MODULE = `
import { Controller, Get, Module, UseGuards, type CanActivate } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';

class AuthGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}
export class PlaceOrderCommand {
  constructor(readonly customerId: string, readonly sku: string) {}
}
export class PlaceOrderInput {
  customerId!: string;
  sku!: string;
}
export class StatsQuery {
  tenant?: string;
}

@Controller({ path: 'orders', version: '1' })
export class OrdersController {
  @Get()
  list(): string[] {
    return [];
  }
}

@Controller({ path: 'orders', version: '2' })
export class OrdersV2Controller {
  @Get()
  listV2(): string[] {
    return [];
  }
}

@Module({
  imports: [
    McpModule.forRootAsync({
      useFactory: () => ({
        name: 'orders',
        version: '1.0.0',
        expose: {
          routes: [
            { controllers: [OrdersController], tools: { list: { name: 'list_orders', annotations: { readOnlyHint: true }, argumentDescriptions: { page: 'The page.' } } } },
            { controllers: [OrdersV2Controller], tools: { listV2: { name: 'list_orders_v2', argumentDescriptions: { cursor: 'The cursor.' } } } },
          ],
          commands: [
            {
              message: PlaceOrderCommand,
              decorators: [UseGuards(AuthGuard)],
              input: PlaceOrderInput,
              fromCaller: { customerId: ({ request }) => request.user.id },
              create: (input: PlaceOrderInput) => new PlaceOrderCommand(input.customerId, input.sku),
            },
          ],
          queries: [{ message: StatsQuery, public: true, fromCaller: { tenant: ({ principal }) => principal?.id } }],
        },
      }),
    }),
  ],
  controllers: [OrdersController, OrdersV2Controller],
})
export class AppModule {}
`;

describe('option typings', () => {
  const dir = join(root, 'dist', '.typecheck-options');
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const type of ['module', 'commonjs'] as const) {
    it(`a forRootAsync factory renaming two exposed handlers compiles with no written return type (${type === 'module' ? 'ESM' : 'CommonJS'} typings)`, async () => {
      const app = join(dir, type);
      rmSync(app, { recursive: true, force: true });
      mkdirSync(join(app, 'node_modules'), { recursive: true });
      // An app of its own: the package comes from node_modules, through its "import" or "require" condition.
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: `typecheck-${type}`, private: true, type }));
      symlinkSync(root, join(app, 'node_modules', 'nestjs-model-context'), 'dir');
      writeFileSync(join(app, 'app.module.ts'), APP_MODULE);
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { ...appCompilerOptions, noEmit: true }, include: ['*.ts'] }),
      );
      const checked = await tscRun(join(app, 'tsconfig.json'), app);
      assert.equal(checked.code, 0, `tsc on the forRootAsync factory:\n${checked.output}`);
    });
  }
});
