import { Module } from '@nestjs/common';
import { McpModule } from 'nestjs-model-context';
import { CATALOG_SETS, EnterpriseCatalog } from './enterprise-catalog.js';
import { RoleStore } from './role-store.js';

/** Provides the role store to the McpModule's factory and to the app. */
@Module({ providers: [RoleStore], exports: [RoleStore] })
export class RoleStoreModule {}

/**
 * 300 enterprise tools in 20 sets; each user sees the sets of its roles (from the role store,
 * cached per user for a minute), and `tools/list` shows progressive mode's five discovery tools
 * instead of the catalog (`?mode=full` asks for the catalog itself).
 */
@Module({
  imports: [
    RoleStoreModule,
    McpModule.forRootAsync({
      imports: [RoleStoreModule],
      inject: [RoleStore],
      useFactory: (store: RoleStore) => ({
        name: 'enterprise-tools',
        version: '1.0.0',
        auth: {
          resource: `http://${process.env.HOST ?? '127.0.0.1'}:${process.env.PORT ?? 3000}/mcp`,
          authorizationServers: ['https://auth.example.com'],
          verifyToken: (token: string) => store.tokens[token] ?? null,
        },
        toolSets: {
          sets: CATALOG_SETS,
          select: ({ principal }) => (principal ? store.setsOf(principal.id) : []),
          mode: 'progressive',
          cache: { ttlMs: 60_000 },
        },
      }),
    }),
  ],
  providers: [EnterpriseCatalog],
})
export class AppModule {}
