import { NestFactory } from '@nestjs/core';
import { ConfigService } from '@nestjs/config';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { configureApp } from './setup';

async function bootstrap() {
  const app =
    process.env.HTTP_ADAPTER === 'fastify'
      ? await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter())
      : await NestFactory.create(AppModule);
  configureApp(app);
  await app.listen(app.get(ConfigService).getOrThrow<number>('port'));
}
void bootstrap();
