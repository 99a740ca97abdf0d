import 'reflect-metadata';
import { ClassSerializerInterceptor, Module, ValidationPipe, VersioningType, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_GUARD, NestFactory, Reflector } from '@nestjs/core';
import compression from 'compression';
import helmet from 'helmet';
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

/** The app as its main.ts would set it up. */
export async function createApp(): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.use(helmet());
  app.use(compression());
  app.setGlobalPrefix('api');
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.useGlobalInterceptors(new ClassSerializerInterceptor(app.get(Reflector)));
  return app;
}
