import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { x } from 'nestjs-model-context';
class Dto { a!: string }
@Injectable() class S { @Reflect.metadata("k",1) m(d: Dto): number { return x; } }
@Module({ providers: [S] }) class M {}
const app = await NestFactory.create(M, { logger: false });
console.log(Reflect.getMetadata('design:paramtypes', S.prototype, 'm'));
await app.close();
