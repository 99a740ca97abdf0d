import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ApiExcludeController } from '@nestjs/swagger';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpModule } from 'nestjs-model-context';
import { AuthModule } from './auth/auth.module';
import { JwtAuthGuard } from './auth/jwt-auth.guard';
import { RolesGuard } from './auth/roles.guard';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import configuration from './config/configuration';
import { Customer } from './customers/customer.entity';
import { CustomersModule } from './customers/customers.module';
import { SeedService } from './database/seed.service';
import { Order } from './orders/order.entity';
import { OrdersController } from './orders/orders.controller';
import { OrdersModule } from './orders/orders.module';

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true, load: [configuration] }),
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => {
        // SQLite as sql.js (WebAssembly): nothing native to compile when the app is installed.
        const path = config.getOrThrow<string>('database.path');
        return {
          type: 'sqljs' as const,
          ...(path === ':memory:' ? {} : { location: path, autoSave: true }),
          entities: [Customer, Order],
          synchronize: true,
        };
      },
    }),
    ThrottlerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => [{ ttl: config.getOrThrow<number>('throttle.ttl'), limit: config.getOrThrow<number>('throttle.limit') }],
    }),
    AuthModule,
    CustomersModule,
    OrdersModule,
    McpModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        name: 'crm',
        version: '1.0.0',
        instructions: 'Customers and their orders. Look customers up before placing orders for them.',
        // The app's passport guard authenticates the endpoint; the module reads request.user.
        auth: {
          resource: `${config.getOrThrow<string>('publicUrl')}/api/mcp`,
          authorizationServers: [`${config.getOrThrow<string>('publicUrl')}/api/v1/auth`],
          scopesSupported: ['customers:read', 'customers:write', 'orders:read', 'orders:write'],
          resourceName: 'CRM',
        },
        // Tool sets: ?toolsets=orders narrows a client's catalog, ?mode=progressive serves discovery tools.
        toolSets: {
          sets: {
            customers: { title: 'Customers', description: 'Look up, create and delete customers.' },
            orders: { title: 'Orders', description: 'List, read and place orders.' },
          },
        },
        expose: {
          routes: [
            {
              controllers: [OrdersController],
              sets: ['orders'],
              tools: {
                findAll: { name: 'list_orders', requiredScopes: ['orders:read'] },
                findOne: { name: 'get_order', requiredScopes: ['orders:read'] },
                create: { name: 'place_order', requiredScopes: ['orders:write'] },
              },
            },
          ],
        },
      }),
      controllerDecorators: [ApiExcludeController()],
    }),
  ],
  providers: [
    SeedService,
    { provide: APP_GUARD, useClass: ThrottlerGuard },
    { provide: APP_GUARD, useClass: JwtAuthGuard },
    { provide: APP_GUARD, useClass: RolesGuard },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
