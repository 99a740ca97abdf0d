import 'reflect-metadata';
import { ClassSerializerInterceptor, Module, ValidationPipe, VersioningType, type LoggerService } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, NestFactory, Reflector } from '@nestjs/core';
import compress from '@fastify/compress';
import helmet from '@fastify/helmet';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { McpModule } from 'nestjs-model-context';
import { AllExceptionsFilter } from './all-exceptions.filter.js';
import { BearerGuard, Public } from './auth.js';
import { HealthController, OrdersController, OrdersService, OrdersTools } from './orders.js';

@Module({
  imports: [
    ConfigModule.forRoot({
      isGlobal: true,
      ignoreEnvFile: true,
      load: [() => ({ mcp: { name: 'orders', version: '1.0.0' }, auth: { token: 'secret' } })],
    }),
    McpModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        name: config.getOrThrow<string>('mcp.name'),
        version: config.getOrThrow<string>('mcp.version'),
      }),
      controllerDecorators: [Public()],
    }),
  ],
  controllers: [OrdersController, HealthController],
  providers: [
    OrdersService,
    OrdersTools,
    { provide: APP_GUARD, useClass: BearerGuard },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}

/** The app as its main.ts would set it up; tests pass a logger to read the warnings. */
export async function createApp(logger: LoggerService | ['error', 'warn'] = ['error', 'warn']): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger });
  await app.register(helmet);
  await app.register(compress);
  app.setGlobalPrefix('api');
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.useGlobalInterceptors(new ClassSerializerInterceptor(app.get(Reflector)));
  return app;
}
